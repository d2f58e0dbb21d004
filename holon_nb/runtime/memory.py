"""Memory sources, FTS5 search and source_ref resolution (agents spec §5.17-§5.18, §6).

Placeholder until the plane lands: the runtime constructs one service per
runtime and handlers reach it through ``ToolContext``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tools.context import CallContext
    from .core import Runtime

__all__ = ["MemoryService"]


class MemoryService:
    """Memory sources, FTS5 search and source_ref resolution (agents spec §5.17-§5.18, §6).

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

    def index(self, db: Any, *, agent_id: str, source_ref: str, source_kind: str, text: str,
              title: str | None = None, updated_at: str | None = None) -> None:
        """Add or replace one searchable document inside the caller's open transaction ``db``.

        Producers (work items, plans, briefs, notes) call this in the same transaction as
        the write that changed the source, so search never sees a half-applied state.
        """

    async def close(self) -> None:
        """Awaited on the loop thread while the runtime closes, before task runners stop."""
