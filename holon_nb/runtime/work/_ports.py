"""What the work plane consumes: the ports :class:`~.service.WorkService` is built with.

The runtime's composition root (``Runtime._compose``) passes the memory plane as :class:`MemoryIndex`, the
workspace plane as :class:`ActiveWorkspace`, the loop thread as :class:`WorkLoop`; the work plane sees
nothing else of the runtime.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

    from ...render._scrubbing import Scrubber
    from ...tools._context import CallContext

__all__ = ["ActiveWorkspace", "EventSink", "MemoryIndex", "ScrubberSource", "WorkLoop"]


class EventSink(Protocol):
    """Publishes a runtime event ``(kind, task_id, **data)`` to the runtime's subscribers."""

    def __call__(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Deliver the event."""
        ...


class ScrubberSource(Protocol):
    """The runtime's current D6 scrubber."""

    def __call__(self) -> Scrubber:
        """The scrubber to apply now."""
        ...


class WorkLoop(Protocol):
    """The runtime's loop thread as the work plane uses it: publish there, start the timer scheduler there."""

    @property
    def alive(self) -> bool:
        """True while the loop thread runs."""
        ...

    @property
    def portal(self) -> BlockingPortal | None:
        """The blocking portal into the loop (None before it starts)."""
        ...

    def in_loop_thread(self) -> bool:
        """True on the loop thread itself."""
        ...

    def portal_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the loop, from another thread, waited for."""
        ...

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start ``fn(*args)`` in the loop's task group (from the loop thread)."""
        ...


class MemoryIndex(Protocol):
    """The memory plane's index, written in the caller's transaction (work items and briefs are searchable)."""

    def index(
        self,
        db: sqlite3.Connection,
        *,
        agent_id: str,
        source_ref: str,
        source_kind: str,
        text: str,
        title: str | None = None,
        updated_at: str | None = None,
        workspace_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Index (or re-index) one document in the open transaction ``db``."""
        ...


class ActiveWorkspace(Protocol):
    """The workspace plane: which workspace a call's agent works in (a new work item records it)."""

    def active_workspace_id(self, call: CallContext) -> str | None:
        """The id of the active workspace of ``call``'s agent, or None (the agent home)."""
        ...
