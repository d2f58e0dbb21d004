"""What the memory plane consumes: the ports :class:`~.service.MemoryService` is built with.

The runtime's composition root (``Runtime._compose``) passes them; the memory plane sees nothing else of the
runtime (the workspace plane only as :class:`WorkspaceStates`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

__all__ = ["MemoryLoop", "MemorySettings", "Scrub", "WorkspaceStates"]


class MemorySettings(Protocol):
    """The runtime options the memory plane reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def memory_index_interval_s(self) -> float:
        """Seconds between the background indexer's passes (0: searches catch up on their own)."""
        ...


class MemoryLoop(Protocol):
    """The runtime's loop thread as the memory plane uses it: the background indexer runs there."""

    def portal_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the loop, from another thread, waited for."""
        ...

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start ``fn(*args)`` in the loop's task group (from the loop thread)."""
        ...

    def quiet_for(self) -> float:
        """Seconds since the runtime's last tool call ended, 0.0 while one runs (read on the loop thread)."""
        ...


class Scrub(Protocol):
    """D6: ``text`` with the secret values the runtime knows replaced (applied to what the index keeps)."""

    def __call__(self, text: str, /) -> str:
        """The scrubbed text."""
        ...


class WorkspaceStates(Protocol):
    """The workspace plane's stored state of an agent (read without creating any)."""

    def agent_state(self, agent_id: str) -> dict[str, Any] | None:
        """``{"attached": [ids], "active": ActiveWorkspaceEntry}`` of an agent, or None when never seen."""
        ...
