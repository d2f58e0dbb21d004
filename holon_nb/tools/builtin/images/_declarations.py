"""Image tools: ViewImage and GenerateImage (workspace spec §12, §13).

Input models, input normalisation (workspace spec §0.4 trimming; workspace spec §13 rule 1 enumerations, rule 2 name sanitising),
handlers and the two text receipts. The work lives in the runtime's image plane, reached through
``ctx.images`` (``holon_nb.runtime.images._service.AgentImages``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ....render.human import aligned, wrap
from ..._context import ToolContext
from ..._envelope import ToolError
from ..._errors import ToolFailure
from ..._spec import Family, Rendering, Stability, ToolSpec
from ..results._services import GenerateImageResult, ViewImageResult

__all__ = [
    "ViewImageInput",
    "GenerateImageInput",
    "render_view_image_receipt",
    "render_generate_image_receipt",
    "view_image_human",
    "generate_image_human",
    "ENUMS",
    "SPECS",
]

#: The allowed values of GenerateImage's enumerated fields (workspace spec §13; validated here, typed as strings in the schema).
ENUMS: dict[str, tuple[str, ...]] = {
    "size": ("1024x1024", "1536x1024", "1024x1536"),
    "background": ("auto", "transparent", "opaque"),
    "output_format": ("png", "jpeg", "webp"),
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ViewImageInput(_Strict):
    """Arguments of ViewImage (workspace spec §12)."""

    path: str = Field(description="Image file path; absolute, or relative to the active cwd.")
    prompt: str = Field(description="What to inspect in the image.")


class GenerateImageInput(_Strict):
    """Arguments of GenerateImage (workspace spec §13)."""

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
        if not value.strip():  # workspace spec §13 rule 1: a supplied enumerated value that is empty is an error
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
    """Handler of ViewImage (workspace spec §12): the path joins the active cwd when relative and is normalised lexically
    (reads are not confined, workspace spec §2.3); the plane checks the file and asks the vision model."""
    path = Path(os.path.normpath(os.path.join(ctx.cwd, os.path.expanduser(args.path))))
    return await ctx.images.view(path, args.prompt)


async def generate_image(args: GenerateImageInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of GenerateImage (workspace spec §13); writes under ``<agent home>/media/generated/``."""
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
    """ViewImage's text receipt (workspace spec §12 "Receipt"), one item per line."""
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
    """GenerateImage's text receipt (workspace spec §13 "Receipt")."""
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


def _describe(item: Any) -> str:
    """One element, relation or issue as a person reads it: its description (or its text), else compact JSON."""
    if isinstance(item, dict):
        for key in ("description", "text", "summary", "label", "name"):
            if isinstance(item.get(key), str) and item[key].strip():
                extra = {k: v for k, v in item.items() if k != key and v not in (None, "", [], {})}
                return item[key] + (f" ({_compact(extra)})" if extra else "")
        return _compact(item)
    return str(item)


def view_image_human(result: dict[str, Any]) -> list[str]:
    """ViewImage's human receipt: the image (path whole, size, bytes), who observed it, the prompt, the
    summary whole, then elements, relations, text read, issues and uncertainties as bullet lists."""
    ref, obs = result.get("visual_reference") or {}, result.get("observation") or {}
    by = obs.get("generated_by") or {}
    who = "/".join(x for x in (by.get("provider"), by.get("model")) if x) or "unknown"
    mode = by.get("mode") or result.get("selected_mode")
    pairs = [
        ("image", str(ref.get("path", "?"))),  # whole: it is what the cell is about
        (
            "reference",
            f"{ref.get('id', '?')}  {ref.get('mime', '?')}  {_size(ref.get('size'))}  {ref.get('byte_count', '?')} bytes",
        ),
        ("observed by", f"{who} ({mode})" if mode else who),
    ]
    if obs.get("prompt"):
        pairs.append(("prompt", wrap(obs["prompt"], max_lines=8)))
    if obs.get("summary"):
        pairs.append(("summary", wrap(obs["summary"], max_lines=12)))
    lines = aligned(pairs, "  ")
    for key, label in (
        ("elements", "elements"),
        ("relations", "relations"),
        ("ocr", "text read"),
        ("issues", "issues"),
        ("uncertainties", "uncertainties"),
        ("external_sources", "external sources"),
    ):
        items = obs.get(key)
        if not items:
            continue
        items = items if isinstance(items, list) else [items]
        lines.append(f"  {label}:")
        for item in items[:25]:
            first, *more = wrap(_describe(item), max_lines=6).split("\n")
            lines += [f"    - {first}", *(f"      {line}" for line in more)]
        if len(items) > 25:
            lines.append(f"    … {len(items) - 25} more")
    return lines


def generate_image_human(result: dict[str, Any]) -> list[str]:
    """GenerateImage's human receipt: provider and model, the prompt, then each image's file (its
    ``workspace://`` URI and path whole: the generated name is what the cell is about), size and bytes."""
    lines = aligned(
        [
            ("model", f"{result.get('provider', '?')}/{result.get('model', '?')}"),
            ("prompt", wrap(result.get("prompt", ""), max_lines=8)),
        ],
        "  ",
    )
    for img in result.get("images") or []:
        lines.append(f"  image {img.get('id', '?')}:")
        pairs = [("uri", str(img.get("uri", "?")))]
        if img.get("path"):
            pairs.append(("path", str(img["path"])))
        pairs.append(("file", f"{img.get('mime', '?')}  {_size(img.get('size'))}  {img.get('byte_count', '?')} bytes"))
        lines += aligned(pairs, "    ")
    return lines


SPECS = (
    ToolSpec(
        name="ViewImage",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=ViewImageInput,
        handler=view_image,
        result_name="ViewImageResult",
        output_model=ViewImageResult,
        stability=Stability.EXPERIMENTAL,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_view_image_receipt,
        normalize=_normalize_view,
        human=view_image_human,
    ),
    ToolSpec(
        name="GenerateImage",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=GenerateImageInput,
        handler=generate_image,
        result_name="GenerateImageResult",
        output_model=GenerateImageResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_generate_image_receipt,
        normalize=_normalize_generate,
        human=generate_image_human,
    ),
)
