"""What a turn's tool executor consumes of the turn that runs it: :class:`RunningTurn`.

:class:`~.loop.TurnLoop` satisfies it; the executor (:mod:`.tools`) sees the turn only through it, so it
neither imports the loop nor probes the turn for optional members.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import anyio

    from ...tools.spec import Profile
    from .state import TurnState

__all__ = ["RunningTurn"]


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
