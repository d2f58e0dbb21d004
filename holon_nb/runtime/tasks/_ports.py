"""What the task plane consumes, and nothing more: the ports :class:`~.service.TaskService` is built with.

The runtime's composition root (``Runtime._compose`` in :mod:`holon_nb.runtime._facade`) passes each port to
the constructor; the task plane never sees the runtime, nor the planes that implement its ports (the work
plane's message queue behind :class:`TaskResults`, the trigger plane behind :class:`AgentEnv`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...render._scrubbing import Scrubber

__all__ = ["AgentEnv", "DiskGrant", "EventSink", "ScrubberSource", "StartSoon", "TaskResults", "TaskSettings"]


class TaskSettings(Protocol):
    """The runtime options the task plane reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def max_task_log_bytes(self) -> int:
        """Cap of each task log and output spool (bytes)."""
        ...

    @property
    def command_env_unset(self) -> tuple[str, ...]:
        """Variable names removed from every command's environment."""
        ...

    @property
    def shell_snapshot(self) -> bool:
        """Run login-shell commands through a snapshot of the login profile."""
        ...


class EventSink(Protocol):
    """Publishes a runtime event ``(kind, task_id, **data)`` (called on the loop thread)."""

    def __call__(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Deliver the event to the runtime's subscribers."""
        ...


class StartSoon(Protocol):
    """Starts a coroutine function in the runtime's task group, supervised (from the loop thread)."""

    def __call__(self, fn: Callable[..., Awaitable[Any]], /, *args: Any) -> None:
        """Start ``fn(*args)`` in the background."""
        ...


class ScrubberSource(Protocol):
    """The runtime's current D6 scrubber (rebuilt when the environment or the secret settings change)."""

    def __call__(self) -> Scrubber:
        """The scrubber to apply now."""
        ...


class DiskGrant(Protocol):
    """Issue 25 item 3a: how many of ``n`` bytes a spool write may add under the home's size cap."""

    def __call__(self, n: int, /) -> int:
        """Between 0 and ``n``: the bytes that may be written."""
        ...


class AgentEnv(Protocol):
    """Variables added to an agent's commands (the trigger plane's ``HOLON_EXTERNAL_TRIGGER_URL``)."""

    def __call__(self, agent_id: str, /) -> dict[str, str]:
        """``{name: value}`` for ``agent_id``'s commands (empty when there is nothing to add)."""
        ...


class TaskResults(Protocol):
    """Where a task's results go (the work plane's message queue, agents spec §3.4 rule 3 and §4.6)."""

    def enqueue_task_message(
        self,
        db: sqlite3.Connection,
        agent_id: str,
        kind: str,
        text: str,
        task_id: str | None,
        metadata: dict[str, Any] | None,
    ) -> str:
        """Queue a ``TaskResult`` message (and trigger the wait it matches) in the open transaction ``db``;
        return the message's id."""
        ...

    def flush_task_events(self) -> None:
        """Publish the events of the messages queued above, once their transaction committed."""
        ...

    def captured_work_item(self, agent_id: str) -> str | None:
        """The work item a new task of ``agent_id`` records at creation (turn binding, else focus, else None)."""
        ...
