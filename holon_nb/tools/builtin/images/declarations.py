"""Image tools: ViewImage and GenerateImage (workspace spec §12, §13).

Input models, input normalisation (§0.4 trimming; §13 rule 1 enumerations, rule 2 name sanitising),
handlers and the two text receipts. The work lives in the runtime's image plane, reached through
``ctx.images`` (``holon_nb.runtime.images.service.AgentImages``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...context import ToolContext
from ...envelope import ToolError
from ...errors import ToolFailure
from ...human import receipt_body
from ...spec import Family, Rendering, Stability, ToolSpec

__all__ = [
    "ViewImageInput",
    "GenerateImageInput",
    "render_view_image_receipt",
    "render_generate_image_receipt",
    "ENUMS",
    "SPECS",
]

#: The allowed values of GenerateImage's enumerated fields (§13; validated here, typed as strings in the schema).
ENUMS: dict[str, tuple[str, ...]] = {
    "size": ("1024x1024", "1536x1024", "1024x1536"),
    "background": ("auto", "transparent", "opaque"),
    "output_format": ("png", "jpeg", "webp"),
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ViewImageInput(_Strict):
    """Arguments of ViewImage (§12)."""

    path: str = Field(description="Image file path; absolute, or relative to the active cwd.")
    prompt: str = Field(description="What to inspect in the image.")


class GenerateImageInput(_Strict):
    """Arguments of GenerateImage (§13)."""

    prompt: str = Field(description="Detailed image-generation prompt.")
    size: str | None = Field(None, description="One of 1024x1024, 1536x1024, 1024x1536.")
    background: str | None = Field(None, description="One of auto, transparent, opaque.")
    output_format: str | None = Field(None, description="One of png, jpeg, webp.")
    name: str | None = Field(None, description="Filename stem hint for the saved image.")


def _invalid(tool: str, field: str, problem: str, hint: str, **details: Any) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"{tool}: `{field}` {problem}",
            details={"tool_name": tool, "field": field, "validation_error": problem, **details},
            recovery_hint=hint,
        )
    )


def _required(tool: str, field: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise _invalid(tool, field, "must not be empty", f"Pass a non-empty `{field}`.")
    if "\x00" in value:
        raise _invalid(tool, field, "must not contain a NUL character", f"Remove the NUL character from `{field}`.")
    return value


def _normalize_view(args: ViewImageInput, tool: str) -> ViewImageInput:
    return args.model_copy(
        update={"path": _required(tool, "path", args.path), "prompt": _required(tool, "prompt", args.prompt)}
    )


def _normalize_generate(args: GenerateImageInput, tool: str) -> GenerateImageInput:
    update: dict[str, Any] = {"prompt": _required(tool, "prompt", args.prompt)}
    for field, allowed in ENUMS.items():
        value = getattr(args, field)
        if value is None:
            continue
        if not value.strip():  # §13 rule 1: a supplied enumerated value that is empty is an error
            raise _invalid(
                tool,
                field,
                "must not be empty",
                f"Omit `{field}` or pass one of {', '.join(allowed)}.",
                value=value,
                allowed_values=list(allowed),
            )
        if value.strip() not in allowed:
            raise _invalid(
                tool,
                field,
                "is not an allowed value",
                f"Pass one of {', '.join(allowed)}.",
                value=value,
                allowed_values=list(allowed),
            )
        update[field] = value.strip()
    if args.name is not None:
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", args.name.strip()).strip("_")
        if not stem:
            raise _invalid(
                tool,
                "name",
                "has no usable filename character",
                "Use letters, digits, '-' or '_' in `name`, or omit it.",
                value=args.name,
            )
        update["name"] = stem
    return args.model_copy(update=update)


async def view_image(args: ViewImageInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ViewImage (§12): the path joins the active cwd when relative and is normalised lexically
    (reads are not confined, §2.3); the plane checks the file and asks the vision model."""
    path = Path(os.path.normpath(os.path.join(ctx.cwd, os.path.expanduser(args.path))))
    return await ctx.images.view(path, args.prompt)


async def generate_image(args: GenerateImageInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of GenerateImage (§13); writes under ``<agent home>/media/generated/``."""
    return await ctx.images.generate(
        args.prompt,
        size=args.size,
        background=args.background,
        output_format=args.output_format,
        name=args.name,
        agent_home=ctx.agent_home,
    )


def _size(size: dict[str, Any] | None) -> str:
    size = size or {}
    w, h = size.get("width"), size.get("height")
    return f"{w if w is not None else 'unknown'}x{h if h is not None else 'unknown'}"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def render_view_image_receipt(env: dict[str, Any], context: Any = None) -> str:
    """ViewImage's text receipt (§12 "Receipt"), one item per line."""
    result = env["result"]
    ref, obs = result["visual_reference"], result["observation"]
    by = obs.get("generated_by", {})
    who = "/".join(x for x in (by.get("provider"), by.get("model")) if x) or "unknown"
    lines = [
        env.get("summary_text") or "ViewImage",
        f"Reference: {ref['id']} {ref['mime']} {ref['byte_count']} bytes sha256 {ref['sha256']} {ref['path']}",
        f"Size: {_size(ref.get('size'))}",
        f"Generated by: {who} ({by.get('mode', result.get('selected_mode'))})",
        f"Prompt: {obs.get('prompt', '')}",
        f"Summary: {obs.get('summary', '')}",
    ]
    for key, label in (("ocr", "OCR"), ("elements", "Elements"), ("relations", "Relations"), ("issues", "Issues")):
        if obs.get(key):
            lines.append(f"{label}: {_compact(obs[key])}")
    if obs.get("uncertainties"):
        lines.append("Uncertainties: " + "; ".join(obs["uncertainties"]))
    if obs.get("external_sources"):
        lines.append(f"External sources: {_compact(obs['external_sources'])}")
    return "\n".join(lines)


def render_generate_image_receipt(env: dict[str, Any], context: Any = None) -> str:
    """GenerateImage's text receipt (§13 "Receipt")."""
    result = env["result"]
    lines = [
        env.get("summary_text") or "GenerateImage",
        f"Provider/model: {result['provider']}/{result['model']}",
        f"Prompt: {result['prompt']}",
    ]
    for img in result.get("images", []):
        lines.append(
            f"Image: {img['id']} ({img['mime']}, {img['byte_count']} bytes, sha256 {img['sha256']}, uri {img['uri']})"
        )
        lines.append(f"Size: {_size(img.get('size'))}")
    return "\n".join(lines)


SPECS = (
    ToolSpec(
        name="ViewImage",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=ViewImageInput,
        handler=view_image,
        result_name="ViewImageResult",
        stability=Stability.EXPERIMENTAL,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_view_image_receipt,
        normalize=_normalize_view,
        human=receipt_body(render_view_image_receipt),
    ),
    ToolSpec(
        name="GenerateImage",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=GenerateImageInput,
        handler=generate_image,
        result_name="GenerateImageResult",
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_generate_image_receipt,
        normalize=_normalize_generate,
        human=receipt_body(render_generate_image_receipt),
    ),
)
