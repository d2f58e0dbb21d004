"""ApplyPatch: input surfaces, handler and text receipt (commands spec §10).

The engine lives in :mod:`holon_nb.tools.patching`; this module adapts it to
the tool surface. The advertised schema is ``{patch: string}`` on every route;
what else is accepted depends on the surface of the call's model route
(commands spec §10.1): a bare JSON string and raw (non-JSON) patch text are the patch on
both surfaces (raw text on the unified surface goes beyond commands spec §10.1: dispatch
would otherwise refuse it naming its internal ``_raw`` wrapper); on the
``codex_dsl_freeform`` surface an ``{input: …}`` wrapper is accepted too,
while on ``unified_diff_json`` an ``input`` field is refused with a hint
naming ``patch``. Text that starts like JSON (``{``, ``[``) but does not parse
stays a JSON error on the unified surface.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from ...render.human import receipt_body
from .._coerce import IntegerTooLong, parse_int_literal
from .._context import CallContext, ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, Rendering, ToolSpec
from ..patching import (
    CODEX_SURFACE,
    PathPolicy,
    apply_patch,
    render_receipt,
    surface_for_route,
)
from .results._workspaces import ApplyPatchResult

__all__ = ["SPECS", "ApplyPatchInput", "prepare_input"]

_LOCK = threading.Lock()  # patches commit one at a time, so two calls never interleave on one file
_INPUT_HINT = (
    'ApplyPatch expects exactly {"patch": "--- a/path\\n+++ b/path\\n@@ -1,1 +1,1 @@\\n-old\\n+new\\n"}. '
    'Do not use "input".'
)


class ApplyPatchInput(BaseModel):
    """Arguments of ApplyPatch (commands spec §10.1): the patch text."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    patch: str = Field(description="A unified diff: --- a/path, +++ b/path, then @@ hunks.")


def _invalid(message: str, field: str, hint: str, **details: Any) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=message,
            details={"tool_name": "ApplyPatch", "field": field, **details},
            recovery_hint=hint,
        )
    )


def _empty(field: str) -> ToolFailure:
    return _invalid(
        f"ApplyPatch requires a non-empty `{field}`",
        field,
        "Send the patch text: a unified diff with ---/+++ headers and @@ hunks.",
        validation_error="must not be empty",
    )


def prepare_input(raw: Any, call: CallContext) -> Any:
    """Normalise raw ApplyPatch arguments for the call's surface, before validation (commands spec §10.1).

    Args:
        raw: The arguments as given (dict, JSON text, raw text or bytes).
        call: The call context; ``call.model_route`` picks the surface.

    Returns:
        Arguments for strict validation (``{"patch": …}`` where the surface allows another shape).

    Raises:
        ToolFailure: ``invalid_tool_input`` for ``input`` on the unified surface (``details.field="input"``,
            ``expected_field="patch"``), for text that starts like JSON but does not parse (unified surface),
            and for a non-string or empty ``input`` on the Codex surface.
    """
    codex = surface_for_route(call.model_route) == CODEX_SURFACE
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("utf-8", errors="replace")
    if isinstance(raw, str):
        if codex and not raw.strip():
            raise _empty("input")
        try:
            value = json.loads(raw, parse_int=parse_int_literal) if raw.strip() else None
        except IntegerTooLong:  # JSON no tool can take: dispatch's parser refuses it (invalid_tool_input)
            return raw
        except ValueError as exc:
            if not codex and raw.lstrip().startswith(("{", "[")):  # broken JSON arguments, not a patch
                raise _invalid(
                    "ApplyPatch arguments are not valid JSON",
                    "patch",
                    "Send the arguments as one JSON object. " + _INPUT_HINT,
                    parse_error=f"arguments are not valid JSON ({exc})",
                ) from None
            return {"patch": raw}  # raw patch text is the patch on both surfaces
        if isinstance(value, str):  # a bare JSON string is the patch, unless it is a stringified object
            inner = value.lstrip()
            if inner.startswith("{"):
                try:
                    obj = json.loads(inner)
                except ValueError:
                    obj = None
                if isinstance(obj, dict):
                    value = obj
            if isinstance(value, str):
                value = {"patch": value}
        if not isinstance(value, dict):
            return raw
        raw = value
    if isinstance(raw, dict) and set(raw) == {"_raw"} and isinstance(raw["_raw"], str):
        raw = {"patch": raw["_raw"]}  # dispatch's wrapper for non-JSON text: the text is the patch
    if isinstance(raw, dict) and "input" in raw and "patch" not in raw:
        if not codex:
            raise _invalid("ApplyPatch expects `patch`, not `input`", "input", _INPUT_HINT, expected_field="patch")
        text = raw["input"]
        if not isinstance(text, str):
            raise _invalid(
                "ApplyPatch input must be a string",
                "input",
                "Submit raw *** Begin Patch / *** End Patch text directly.",
            )
        raw = {**{k: v for k, v in raw.items() if k != "input"}, "patch": text}
    if codex and isinstance(raw, dict) and isinstance(raw.get("patch"), str) and not raw["patch"].strip():
        raise _empty("input")
    return raw


def _normalize(args: ApplyPatchInput, tool_name: str) -> ApplyPatchInput:
    """Post-parse checks (commands spec §2.4): the patch is non-empty and encodable as UTF-8.

    The text is not rewritten: the engine trims it for parsing but keeps
    trailing spaces of the last line, which belong to its content.
    """
    if not args.patch.strip():
        raise _empty("patch")
    try:
        args.patch.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _invalid(
            "ApplyPatch `patch` is not valid Unicode text",
            "patch",
            "Send the patch as plain UTF-8 text (it contains a lone surrogate code point).",
            validation_error=f"lone surrogate at character {exc.start}",
        ) from None
    return args


def _run(
    patch: str, execution_root: str, bound_roots: tuple[str, ...], allow_outside: bool, cwd: str, surface: str
) -> dict[str, Any]:
    policy = PathPolicy(execution_root=execution_root, bound_roots=bound_roots, allow_outside=allow_outside, cwd=cwd)
    with _LOCK:
        return apply_patch(patch, policy, surface)


async def apply_patch_handler(args: ApplyPatchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ApplyPatch: confine (per D3), apply all or nothing (per D2), off the loop thread.

    Returns:
        The ``ApplyPatchResult`` payload (commands spec §10.7).
    """
    ws = ctx.workspaces
    roots = tuple(str(r) for r in ws.bound_roots())
    result = await anyio.to_thread.run_sync(
        _run,
        args.patch,
        str(ws.execution_root),
        roots,
        bool(ctx.setting("patch_outside_workspace")),
        str(ctx.cwd),
        surface_for_route(ctx.call.model_route),
    )
    # an identical command still running from before this edit is not reused by ExecCommand (issue 26)
    ctx.commands.note_edits(str(ws.execution_root), list(result.get("changed_paths") or ()))
    return result


SPECS = (
    ToolSpec(
        name="ApplyPatch",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=ApplyPatchInput,
        handler=apply_patch_handler,
        result_name="ApplyPatchResult",
        output_model=ApplyPatchResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_receipt,
        normalize=_normalize,
        prepare=prepare_input,
        human=receipt_body(render_receipt),
        related_surfaces=("workspace/runtime file APIs",),
    ),
)
