"""Following an agent past its waits: the next turn starts when a wait it declared is woken.

A turn that ends on ``WaitFor`` (or leaves another wait active) stops the agent until something
wakes the wait: a task result, a timer tick, an operator message, an external callback. Holon's
runtime then runs the agent again with the waking message as the turn's input (turn-loop spec
§1.1: a turn is "one activation of an agent (a notebook cell run, a queued message, a timer
wake)"). :class:`TurnFollower` does that for one agent, on request: it runs the first turn, then
waits (on runtime events, no polling) for a queued message that triggered a wait one of its own
turns declared, and runs a turn admitting that message (``source_message_id``), until no wait of
its turns is open, a turn does not complete, ``max_wakes`` wake turns have run, the wait for a
wake exceeds ``timeout_s``, or :meth:`TurnFollower.stop` is called. Waits left by earlier runs
are not followed. The run is a "one-shot run" of ``max_turns = max_wakes + 1`` turns (agents spec
§2): from turn ``max_turns - 1`` on, each turn's first request carries a runtime budget warning
(:data:`BUDGET_HEADER`), and a run that reaches the limit with a wait still open ends
``max_turns_exceeded``.

Example::

    follower = TurnFollower(rt, "default", max_wakes=3)
    results = follower.run("Run the tests in the background and report when they finish.",
                           model="openai/gpt-5.4")
    [r.reason for r in results]   # ["wait_for_silent", "work_item_completed"]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._ports import FollowedRuntime
    from ._records import TurnResult

__all__ = ["BUDGET_HEADER", "TurnFollower", "wake_text"]

#: First line of the turn budget warning a run's last turns carry (agents spec §2, ``max_turns``).
BUDGET_HEADER = "[Runtime turn budget warning]"


def wake_text(message: dict[str, Any]) -> str:
    """The input text of a turn a queued message woke: a header naming the message, then its body."""
    return (
        f"[Runtime message {message['id']} ({message['kind']}) woke a wait of yours]\n\n"
        f"{str(message.get('text') or '').strip()}"
    )


class TurnFollower:
    """Run an agent's turn, then each turn its woken waits start (module docstring).

    Args:
        rt: The runtime, as :class:`~.ports.FollowedRuntime` (its turn service, the work plane's waits and its
            events; ``Runtime`` satisfies it).
        agent: The agent id (None: the default agent).
        max_wakes: Most turns started by wakes after the first turn (≥ 0).
        timeout_s: Longest wait for one wake in seconds; None waits until :meth:`stop`.

    Attributes:
        results: The turn results so far, oldest first.
        ended_because: Why following ended: ``idle`` (no open wait of this run's turns), ``turn_not_completed``,
            ``max_turns_exceeded`` (a wait is still open after ``max_wakes`` wake turns; agents spec §2),
            ``timeout``, ``stopped``; empty while running.

    Raises:
        ValueError: ``max_wakes`` below 0 or ``timeout_s`` not positive.
    """

    def __init__(
        self, rt: FollowedRuntime, agent: str | None = None, *, max_wakes: int = 5, timeout_s: float | None = None
    ):
        from ..core._ids import DEFAULT_AGENT_ID

        if not isinstance(max_wakes, int) or isinstance(max_wakes, bool) or max_wakes < 0:
            raise ValueError(f"max_wakes must be an int of 0 or more, got {max_wakes!r}")
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive or None, got {timeout_s!r}")
        self.rt = rt
        self.agent = agent or DEFAULT_AGENT_ID
        self.max_wakes = max_wakes
        self.timeout_s = timeout_s
        self.results: list[TurnResult] = []
        self.ended_because = ""
        self._stopped = threading.Event()
        self._changed = threading.Event()

    def stop(self, reason: str = "stopped") -> None:
        """Stop following: the running turn is cancelled with ``reason``; no further turn starts."""
        self._stopped.set()
        self._changed.set()
        self.rt.turns.cancel(self.agent, reason=reason)

    def _turn_ids(self) -> list[str]:
        return [r.turn_id for r in self.results if r.turn_id]

    def next_wake(self) -> dict[str, Any] | None:
        """The oldest queued message that triggered a wait one of this run's turns declared, or None.

        Waits of earlier runs (a timer left by an earlier ``%%agent --follow`` cell) are not followed: their
        messages stay queued for whoever runs the agent next.
        """
        turns = set(self._turn_ids())
        if not turns:
            return None
        woken = {
            w["trigger_message_id"] for w in self.rt.work.waits_of(self.agent, ("triggered",)) if w["turn_id"] in turns
        }
        queued = sorted((m for m in self.rt.work.queued(self.agent) if m["id"] in woken), key=lambda m: m["seq"])
        return {k: queued[0][k] for k in ("id", "kind", "text")} if queued else None

    def open_waits(self) -> int:
        """How many waits declared by this run's turns are active or triggered."""
        turns = set(self._turn_ids())
        return sum(1 for w in self.rt.work.waits_of(self.agent) if w["turn_id"] in turns) if turns else 0

    def run(
        self,
        message: str,
        *,
        on_wake: Callable[[dict[str, Any]], None] | None = None,
        on_waiting: Callable[[int], None] | None = None,
        **turn_kwargs: Any,
    ) -> list[TurnResult]:
        """Run the first turn with ``message``, then the turns its wakes start (blocking; not on the runtime thread).

        Args:
            message: The operator's message of the first turn.
            on_wake: Called with the waking message (``{id, kind, text}``) before each wake turn starts.
            on_waiting: Called with the number of open waits (active or triggered) once per wake, when following
                starts waiting for it, even when the wake already came.
            **turn_kwargs: For every turn: ``model``, ``max_rounds``, ``hooks``, ``provider`` (see
                ``TurnService.run``).

        Returns:
            :attr:`results`.

        Raises:
            As ``TurnService.run`` (for the first turn; a later turn's exception propagates too).
        """
        unsubscribe = self.rt.subscribe(self._on_event)
        try:
            self.results.append(
                self.rt.turns.run_sync(message, agent=self.agent, runtime_notes=self._budget_note(), **turn_kwargs)
            )
            self.ended_because = self._follow(on_wake, on_waiting, turn_kwargs)
        finally:
            unsubscribe()
        return self.results

    def _follow(
        self,
        on_wake: Callable[[dict[str, Any]], None] | None,
        on_waiting: Callable[[int], None] | None,
        turn_kwargs: dict[str, Any],
    ) -> str:
        wakes = 0
        while True:
            if self._stopped.is_set():
                return "stopped"
            if self.results[-1].terminal != "completed":
                return "turn_not_completed"
            if wakes >= self.max_wakes:
                return "max_turns_exceeded" if self.next_wake() is not None or self.open_waits() else "idle"
            woken = self._await_wake(on_waiting)
            if isinstance(woken, str):
                return woken
            wakes += 1
            if on_wake is not None:
                on_wake(woken)
            self.results.append(
                self.rt.turns.run_sync(
                    wake_text(woken),
                    agent=self.agent,
                    source_message_id=woken["id"],
                    runtime_notes=self._budget_note(),
                    **turn_kwargs,
                )
            )

    def _budget_note(self) -> tuple[str, ...]:
        """The runtime budget warning of the next turn, from turn ``max_turns - 1`` on (agents spec §2)."""
        turn, max_turns = len(self.results) + 1, self.max_wakes + 1
        if turn < max_turns - 1:
            return ()
        left = max_turns - turn
        then = (
            "this is the last one: a wait woken after it starts no further turn, so finish what you can now "
            "or leave the work where the operator can pick it up"
            if left == 0
            else "one more turn can follow this one"
        )
        return (f"{BUDGET_HEADER}\nThis run allows {max_turns} turn(s) and this is turn {turn}; {then}.",)

    def _await_wake(self, on_waiting: Callable[[int], None] | None = None) -> dict[str, Any] | str:
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        told = False
        while True:
            self._changed.clear()  # cleared before looking, so a change after the look still wakes us
            if self._stopped.is_set():
                return "stopped"
            # told before the wake is looked for: a wake that came before this first look is still preceded by
            # the "waiting" report, so what a follow shows does not depend on timing (open waits count the
            # triggered one)
            open_waits = self.open_waits()
            if on_waiting is not None and open_waits and not told:
                told = True
                on_waiting(open_waits)
            woken = self.next_wake()
            if woken is not None:
                return woken
            if open_waits == 0:
                return "idle"
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return "timeout"
            self._changed.wait(left)

    def _on_event(self, ev: Any) -> None:
        if ev.data.get("agent_id") == self.agent and ev.kind in ("message_enqueued", "wait_changed"):
            self._changed.set()
