"""Work items, the waiting plane and timers (agents spec §3-§5).

Placeholder until the plane lands: the runtime constructs one service per
runtime and handlers reach it through ``ToolContext``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tools.context import CallContext
    from .core import Runtime

__all__ = ["WorkService"]


class WorkService:
    """Work items, the waiting plane and timers (agents spec §3-§5).

    Args:
        rt: The owning runtime (its store, home, settings, event bus and loop).
    """

    def __init__(self, rt: "Runtime"):
        self._rt = rt

    def start(self) -> None:
        """Called (from the constructing thread) once the loop thread runs; re-arm durable state here."""

    def bind(self, call: "CallContext") -> Any:
        """The view one tool call sees (its agent, profile and execution context)."""
        return self

    def agent_summary(self, agent_id: str) -> dict[str, Any]:
        """Work-item, wait and timer facts GetAgent reports for ``agent_id`` (agents spec §5.2)."""
        return {}

    async def close(self) -> None:
        """Awaited on the loop thread while the runtime closes, before task runners stop."""
