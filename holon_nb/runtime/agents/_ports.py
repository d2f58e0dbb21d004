"""What the agent plane consumes: the ports :class:`~.plane.AgentPlane` and :class:`~.approvals.ApprovalBroker`
are built with.

The runtime's composition root (``Runtime._compose``) passes them; the agent plane sees nothing else of the
runtime. The turn plane sits above the agents (the import-linter layers of ``pyproject.toml``): an invoked
agent's turn is started through :class:`TurnStarter`, which the composition root fills with the turn service
(built on first use, hence given as a :class:`TurnPlane` that returns it), so no agent module imports ``turns``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...render import Scrubber
    from ...tools._context import CallContext, ToolContext
    from ..core._events import RuntimeEvent
    from ..work._agent import AgentWork
    from ..work._queue import MessageQueue
    from ..work._records import Tx
    from ..workspaces._service import AgentWorkspaces
    from ..workspaces._store import WorkspaceTables

__all__ = [
    "AgentHomeDirs",
    "AgentTriggers",
    "AgentWorkPlane",
    "AgentWorkspacePlane",
    "ApprovalSettings",
    "EventSink",
    "EventSubscriptions",
    "InstalledModels",
    "ModelCatalog",
    "ScrubberSource",
    "StartSoon",
    "TaskOwner",
    "ToolContexts",
    "TurnOutcome",
    "TurnPlane",
    "TurnStarter",
]


class ApprovalSettings(Protocol):
    """The runtime options the approval broker reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def approval(self) -> str:
        """The approval policy (``never``, ``on_request`` or ``always``)."""
        ...

    @property
    def approval_timeout_s(self) -> float:
        """Seconds to wait for an answer (``<= 0``: forever)."""
        ...


class EventSink(Protocol):
    """Publishes a runtime event ``(kind, task_id, **data)`` to the runtime's subscribers."""

    def __call__(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Deliver the event."""
        ...


class ScrubberSource(Protocol):
    """The runtime's current D6 scrubber (a question shows the call's arguments scrubbed)."""

    def __call__(self) -> Scrubber:
        """The scrubber to apply now."""
        ...


class ToolContexts(Protocol):
    """The ``ToolContext`` a call made as ``call`` sees (the approval rules read its workspace)."""

    def __call__(self, call: CallContext, /) -> ToolContext:
        """The context of ``call``."""
        ...


class EventSubscriptions(Protocol):
    """Subscribes ``fn`` to the runtime's events (called on the loop thread); returns the unsubscribe function."""

    def __call__(self, fn: Callable[[RuntimeEvent], None], /) -> Callable[[], None]:
        """Subscribe."""
        ...


class StartSoon(Protocol):
    """Starts a coroutine function in the runtime's task group, supervised (from the loop thread)."""

    def __call__(self, fn: Callable[..., Awaitable[Any]], /, *args: Any) -> None:
        """Start ``fn(*args)`` in the background."""
        ...


class AgentHomeDirs(Protocol):
    """``agent_id -> Path``: an agent's home directory, made on first use (a template is written into it)."""

    def __call__(self, agent_id: str, /) -> Path:
        """The home of ``agent_id``."""
        ...


class TaskOwner(Protocol):
    """The task plane's owner token of this runtime (an InvokeAgent task is recorded as owned by it)."""

    @property
    def owner(self) -> str:
        """The owner token written in each task row."""
        ...


class AgentWorkPlane(Protocol):
    """The work plane as the agent plane uses it: one transaction with the message queue, work facts."""

    @property
    def queue(self) -> MessageQueue:
        """The message queue (its ``enqueue`` writes in the caller's :class:`~holon_nb.runtime.work._records.Tx`)."""
        ...

    def bind(self, call: CallContext) -> AgentWork:
        """The work view of one call (its authority, binding, message rules)."""
        ...

    def tx(self) -> AbstractContextManager[Tx]:
        """One write transaction whose events are published once it commits."""
        ...

    def reader(self) -> Any:
        """A read-only ``execute`` over the store (``message_count`` reads the queue through it)."""
        ...

    def captured_work_item(self, agent_id: str) -> str | None:
        """The work item a task created now by ``agent_id`` is attributed to (agents spec §3.4 rule 3)."""
        ...

    def agent_summary(self, agent_id: str) -> dict[str, Any]:
        """The agent's work facts (current work item, waits, timers…) GetAgent merges in."""
        ...


class AgentWorkspacePlane(Protocol):
    """The workspace plane as the agent plane uses it: each agent's view, and its tables for inheritance."""

    @property
    def tables(self) -> WorkspaceTables:
        """The workspace plane's records API (agent states)."""
        ...

    def view(self, agent_id: str) -> AgentWorkspaces:
        """The workspace view of ``agent_id`` (ensure, active, create_worktree)."""
        ...


class ModelCatalog(Protocol):
    """The model catalog: which providers and models are available (a requested model is checked)."""

    def providers(self) -> list[dict[str, Any]]:
        """``ListModelProviders`` entries."""
        ...

    def provider_models(self, provider: str) -> list[dict[str, Any]]:
        """``ListProviderModels`` entries of ``provider``."""
        ...


class InstalledModels(Protocol):
    """The model refs of the providers installed on the runtime (``rt.providers.register``; a scripted one)."""

    def __call__(self) -> Collection[str]:
        """The installed refs."""
        ...


class AgentTriggers(Protocol):
    """The trigger plane's public records of an agent (GetAgent lists the active ones)."""

    def list(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's external triggers (never their tokens)."""
        ...


class TurnOutcome(Protocol):
    """How a turn ended, as the agent plane reads it (``TurnResult`` of the turn plane has these)."""

    @property
    def turn_id(self) -> str:
        """The turn's id."""
        ...

    @property
    def terminal(self) -> str | None:
        """The terminal kind (``completed``, ``aborted``, …)."""
        ...

    @property
    def reason(self) -> str | None:
        """Why the turn ended."""
        ...

    @property
    def final_text(self) -> str | None:
        """The turn-final text."""
        ...

    @property
    def error(self) -> str | None:
        """Why the turn did not complete, if known."""
        ...


class TurnStarter(Protocol):
    """The turn plane as the agent plane uses it: run an invoked agent's turn (the agents -> turns call).

    ``TurnService`` satisfies it; the composition root gives it, so the agent plane never imports the turn plane.
    """

    def active(self, agent: str | None = None) -> object | None:
        """The running turn of ``agent``, or None."""
        ...

    async def run(
        self, message: str, *, agent: str | None = None, model: str | None = None, source_message_id: str | None = None
    ) -> TurnOutcome:
        """Run one turn of ``agent`` admitting the queued message ``source_message_id`` (runtime thread)."""
        ...


class TurnPlane(Protocol):
    """The turn service, built on first use: called when an invoked agent's turn starts."""

    def __call__(self) -> TurnStarter:
        """The runtime's turn service."""
        ...
