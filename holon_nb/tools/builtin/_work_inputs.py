"""Shared input pieces of the work-plane tools: the strict base, integer slots, trimming rules,
and the receipt-budget helpers the work and memory tools use to fit their own results.

Semantic validation failures follow agents spec §0.1 rule 5: kind
``invalid_tool_input`` with ``details {tool_name, field, validation_error}``
and a recovery hint; a blank required string is ``must not be empty``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ...render import render_json_receipt
from .._envelope import ToolError, success_envelope
from .._errors import ToolFailure

__all__ = [
    "Strict",
    "UInt",
    "UInt64",
    "budget_chars",
    "check_context_text",
    "invalid",
    "receipt_chars",
    "storable",
    "trim_optional",
    "trim_required",
]

UInt64 = Annotated[int, Field(ge=0, le=2**64 - 1, json_schema_extra={"format": "uint64"})]
UInt = Annotated[int, Field(ge=0, le=2**64 - 1, json_schema_extra={"format": "uint"})]


class Strict(BaseModel):
    """Base of the work-plane input models: unknown keys refused, strict types, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


def invalid(tool: str, field: str, error: str, hint: str | None = None, **extra: Any) -> ToolFailure:
    """An ``invalid_tool_input`` failure naming ``field`` and its ``validation_error``."""
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"invalid `{field}` for {tool}: {error}",
            details={"tool_name": tool, "field": field, "validation_error": error, **extra},
            recovery_hint=hint or f"Pass a valid `{field}`; see the {tool} description.",
        )
    )


def storable(text: str) -> str:
    """Text SQLite can store and look up: lone surrogates become U+FFFD (they cannot be UTF-8 encoded)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def trim_required(args: BaseModel, tool: str, *fields: str, hint: str | None = None) -> dict[str, Any]:
    """Trimmed values of required string fields; a blank one is ``must not be empty``.

    Returns:
        ``{field: trimmed value}`` for each of ``fields``.
    """
    out = {}
    for name in fields:
        value = storable(getattr(args, name)).strip()
        if not value:
            raise invalid(tool, name, "must not be empty", hint)
        out[name] = value
    return out


def trim_optional(value: str | None) -> str | None:
    """Trim an optional string; blank means absent (None)."""
    if value is None:
        return None
    value = storable(value).strip()
    return value or None


def check_context_text(execution: dict[str, Any], tool: str, key: str) -> None:
    """Refuse an execution-context text (D11: ``report``, ``brief``) that is present but not a string.

    A missing or blank value is left to the tool's own error (``missing_completion_report``,
    ``empty_final_brief``); a value of another type is a caller mistake named as such.

    Raises:
        ToolFailure: ``invalid_tool_input`` with ``details {field: key, validation_error:
            "must be a string", received_type}``.
    """
    value = execution.get(key)
    if value is None or isinstance(value, str):
        return
    kind = type(value).__name__
    raise ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"execution context `{key}` for {tool} must be a string, not {kind}",
            details={"tool_name": tool, "field": key, "validation_error": "must be a string", "received_type": kind},
            recovery_hint=f"Pass the text itself, e.g. context={{'{key}': '…'}}.",
        )
    )


def budget_chars(budget_tokens: int) -> int:
    """Receipt characters a tool may use under ``budget_tokens``, less a margin for D6 scrubbing.

    The projection guard estimates ``(chars + 3) // 4`` tokens (agents spec §0.4), which is
    within ``budget`` exactly when ``chars <= 4 * budget``. Tools measure their receipt
    exactly (:func:`receipt_chars`), so the margin only covers the scrubber, whose
    ``[redacted]`` is longer than a secret of 8 or 9 characters.
    """
    limit = 4 * max(budget_tokens, 0)
    return limit - 16 - limit // 100


def receipt_chars(tool: str, payload: dict[str, Any]) -> int:
    """Length of the canonical JSON success receipt of ``payload`` (``summary_text`` lifted)."""
    return len(render_json_receipt(success_envelope(tool, payload)))
