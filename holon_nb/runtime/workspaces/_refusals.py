"""Workspace refusals: kind ``tool_execution_failed`` with ``details.reason`` (workspace spec §1.6)."""

from __future__ import annotations

from typing import Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure

__all__ = ["refuse"]


def refuse(reason: str, message: str, hint: str | None = None, **details: Any) -> ToolFailure:
    """A deliberate workspace refusal: kind ``tool_execution_failed`` with ``details.reason`` (workspace spec §1.6)."""
    return ToolFailure(
        ToolError(
            kind="tool_execution_failed", message=message, details={"reason": reason, **details}, recovery_hint=hint
        )
    )
