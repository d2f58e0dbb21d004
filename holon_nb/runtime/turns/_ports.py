"""What the turn plane consumes: the ports :class:`~.service.TurnService` is built with, and what a turn's tool
executor consumes of the turn that runs it (:class:`RunningTurn`).

The runtime's composition root (``Runtime._compose``; the turn service is built on first use, by
``Runtime.turns``) passes each port; the turn plane sees nothing else of the runtime. The work plane is given
as its service (``WorkService``): a model's calls see it through views the turn plane builds on it
(``TurnWork``, an ``AgentWork``), which take the service itself.

:class:`~.loop.TurnLoop` satisfies :class:`RunningTurn`; the executor (:mod:`.tools`) sees the turn only
through it, so it neither imports the loop nor probes the turn for optional members.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import anyio
    from anyio.from_thread import BlockingPortal

    from ...render import Scrubber
    from ...tools._context import CallContext, ToolContext
    from ...tools._spec import Profile
    from ..core._events import RuntimeEvent
    from ..core._result import ToolResult
    from ..work._agent import AgentWork
    from ._records import TurnResult
    from ._state import TurnState

__all__ = [
    "ToolServers",
    "AgentSummaries",
    "ApprovalCheck",
    "CallFinisher",
    "EventSink",
    "FollowedRuntime",
    "FollowedTurns",
    "OpenCheck",
    "RunningTurn",
    "ScrubberSource",
    "ToolContexts",
    "TurnLoopThread",
    "TurnSettings",
    "WaitReader",
    "XSearchAvailable",
]


class TurnSettings(Protocol):
    """The runtime options the turn plane reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def prompt_budget_tokens(self) -> int | None:
        """Estimated-token budget of one request (None or ``<= 0``: unlimited)."""
        ...

    @property
    def providers(self) -> Mapping[str, Any]:
        """Provider configuration by id (the provider registry reads it)."""
        ...

    @property
    def notebook_tools(self) -> bool:
        """The opt-in Notebook family (issue 28) is offered to every public agent."""
        ...

    @property
    def notebook_tools_agents(self) -> tuple[str, ...]:
        """Agents the Notebook family is offered to even when ``notebook_tools`` is off."""
        ...


class EventSink(Protocol):
    """Publishes a runtime event ``(kind, task_id, **data)`` to the runtime's subscribers (turn events)."""

    def __call__(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Deliver the event."""
        ...


class ScrubberSource(Protocol):
    """The runtime's current D6 scrubber (transcripts, requests and synthetic receipts are scrubbed)."""

    def __call__(self) -> Scrubber:
        """The scrubber to apply now."""
        ...


class OpenCheck(Protocol):
    """Raises ``RuntimeClosed`` after the runtime closed, ``RuntimeDied`` when its loop thread died."""

    def __call__(self) -> None:
        """Check."""
        ...


class TurnLoopThread(Protocol):
    """The runtime's loop thread as the turn service uses it: run a turn there, cancel it there."""

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

    def call(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """``await fn(*args)`` on the loop, from another thread, waited for."""
        ...


class XSearchAvailable(Protocol):
    """True when the web plane can serve XSearch (it is then advertised to the model)."""

    def __call__(self) -> bool:
        """Whether XSearch is configured."""
        ...


class ApprovalCheck(Protocol):
    """The approval broker: asks the user before a model's call when the policy says so (``rt.approvals``)."""

    async def check(self, name: str, args: Any, ctx: ToolContext | CallContext) -> dict[str, Any] | None:
        """None when the call may run, else the error envelope it gets instead."""
        ...


class CallFinisher(Protocol):
    """Records a finished call and renders its receipt exactly as for a direct call (``Runtime._finish_call``)."""

    def __call__(
        self,
        env: dict[str, Any],
        args: Any,
        agent_id: str,
        execution_id: str,
        duration_ms: int,
        budget_tokens: int | None = None,
    ) -> ToolResult:
        """The call's :class:`~holon_nb.runtime.core._result.ToolResult` (its record written off the path)."""
        ...


class ToolContexts(Protocol):
    """The ``ToolContext`` a call made as ``call`` sees, its ``work`` view built by ``work_view`` (a model turn's
    calls see a ``TurnWork``)."""

    def __call__(
        self, call: CallContext, /, *, work_view: Callable[[CallContext], AgentWork] | None = None
    ) -> ToolContext:
        """The context of ``call``."""
        ...


class AgentSummaries(Protocol):
    """The agent plane's GetAgent summary (a turn's result carries the closure read from it)."""

    def __call__(self, agent_id: str, fallback_profile: str | None = None) -> dict[str, Any] | None:
        """The ``AgentSummary`` of ``agent_id``, or None when unknown."""
        ...


class FollowedTurns(Protocol):
    """The turn service as :class:`~.follow.TurnFollower` uses it (``TurnService`` satisfies it)."""

    def run_sync(
        self,
        message: str,
        agent: str | None = None,
        model: str | None = None,
        max_rounds: int | None = None,
        **kwargs: Any,
    ) -> TurnResult:
        """Run one turn and wait for it (not on the runtime thread)."""
        ...

    def cancel(self, agent: str | None = None, reason: str = "cancelled") -> bool:
        """Stop the agent's running turn; True when one was running."""
        ...


class WaitReader(Protocol):
    """The work plane's waits and queued messages of an agent, as a follower reads them."""

    def waits_of(self, agent_id: str, statuses: tuple[str, ...] = ("active", "triggered")) -> list[dict[str, Any]]:
        """The agent's waits in ``statuses``."""
        ...

    def queued(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's queued messages, in queue order."""
        ...


class FollowedRuntime(Protocol):
    """What a :class:`~.follow.TurnFollower` uses of the runtime it is given (``Runtime`` satisfies it): its
    turn service, the work plane's waits, and its events. A follower is made per run by its caller (the
    ``%%agent --follow`` magic, ``Runtime.run_turns``), not by the composition root."""

    @property
    def turns(self) -> FollowedTurns:
        """The turn service."""
        ...

    @property
    def work(self) -> WaitReader:
        """The work plane."""
        ...

    def subscribe(self, fn: Callable[[RuntimeEvent], None]) -> Callable[[], None]:
        """Subscribe to runtime events; returns the unsubscribe function."""
        ...


class RunningTurn(Protocol):
    """The running turn as its tool calls see it: who calls, with which binding, and how the turn settles."""

    turn_id: str
    agent_id: str
    profile: Profile
    #: the turn's mutable state: ``binding`` (the D11 execution binding of its calls), ``authority`` and
    #: ``cancel_requested`` (why the turn was asked to stop, or None) are what its calls read
    state: TurnState
    #: the tools advertised to the model this turn
    exposed: frozenset[str]
    #: a receipt budget for this turn's calls (tokens); None: the runtime's setting
    tool_output_budget: int | None

    @property
    def model_route(self) -> str:
        """The route ref tools see (ApplyPatch picks its surface from it)."""
        ...

    def new_id(self, prefix: str) -> str:
        """An id from the turn's (injectable) generator."""
        ...

    def settle_in(self, db: sqlite3.Connection, kind: str, final_text: str | None, reason: str | None) -> bool:
        """Write the turn's one terminal record inside the open transaction ``db``."""
        ...

    def interruptible(self) -> AbstractContextManager[anyio.CancelScope]:
        """A cancel scope around a wait that cancelling the turn interrupts."""
        ...


class ToolServers(Protocol):
    """Start the configured MCP servers before a public named agent's turn, so their tools are offered to it
    (``McpPlane.start_all``; issue 29). A server that cannot start is left out of the turn's tools."""

    async def __call__(self) -> object: ...
