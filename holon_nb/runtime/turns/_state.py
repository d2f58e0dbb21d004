"""The mutable state of one turn: :class:`TurnState` (issue 27 item 5).

:class:`~holon_nb.runtime.turns._loop.TurnLoop` keeps what a turn is given (message, agent, model,
tools, hooks, provider, history) as its own attributes and everything that changes while the turn
runs here, on ``loop.state``: the execution binding, the rounds, the text-only obligation, the
counters, the cancel request, the usage, and the terminal outcome once the turn has settled. The
transitions that only touch this state (settling, a cancel request, recording usage, opening and
closing a round's batch of calls) are methods of the state; the loop does the I/O around them
(transactions, events, the provider).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...providers.base import TokenUsage, ToolUseBlock
from ._calls import Obligation, ToolCallRecord
from ._records import RoundRecord

__all__ = ["TurnState"]


@dataclass
class TurnState:
    """Everything about one turn that changes while it runs.

    Attributes:
        authority: The authority of the turn's input message (``operator_instruction`` unless the
            turn admits a queued message with another).
        binding: The execution binding (``turn_id``, ``source_message_id``, ``activation_id``, and
            ``work_item_id`` when the message is owned by a work item); set when the turn starts.
        turn_index: The turn's index in the agent's conversation; set when the turn starts.
        pre_turn: Texts sent after the message in every request of this turn (the runtime's notes,
            then interjections queued before the turn started).
        rounds: The rounds pushed so far, oldest first.
        obligation: The pending text-only reply (a deferred ``WaitFor delivery=final`` or
            ``CompleteWorkItem``), or None.
        obligation_rounds: Numbers of the rounds that answered an obligation (brief or report
            attempts: not the turn's "last text").
        recoveries: How many output-limit continuations were sent.
        text_history: The texts of output-limit-truncated rounds, joined into the final text.
        last_work_update_round: The last round that updated a work item (for the stale reminder).
        open_round: The round whose tool calls are running, or None.
        open_calls: That round's calls.
        usage: The winning attempts' usage, summed over the rounds.
        aggregated: Every attempt's usage (retries and fallbacks included).
        cancel_requested: The reason of a cancel request, or None.
        settled: Whether the turn's terminal record is written.
        terminal: The terminal kind once settled.
        final_text: The final text once settled.
        reason: The terminal reason once settled.
        error: The provider error or budget explanation, if any.
        sleep_duration_ms: For a turn ended by a round of ``Sleep`` calls, its last positive delay.
    """

    authority: str = "operator_instruction"
    binding: dict[str, Any] = field(default_factory=dict)
    turn_index: int = 0
    pre_turn: list[str] = field(default_factory=list)
    rounds: list[RoundRecord] = field(default_factory=list)
    obligation: Obligation | None = None
    obligation_rounds: set[int] = field(default_factory=set)
    recoveries: int = 0
    text_history: list[str] = field(default_factory=list)
    last_work_update_round: int = 0
    open_round: RoundRecord | None = None
    open_calls: list[ToolUseBlock] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    aggregated: TokenUsage = field(default_factory=TokenUsage)
    cancel_requested: str | None = None
    settled: bool = False
    terminal: str | None = None
    final_text: str = ""
    reason: str | None = None
    error: str | None = None
    sleep_duration_ms: int | None = None

    # ------------------------------------------------------------ transitions
    def settle(self, kind: str, final_text: str | None, reason: str | None) -> None:
        """Record the terminal outcome (after the terminal record was written); only the first one counts."""
        if not self.settled:
            self.settled, self.terminal, self.final_text, self.reason = True, kind, final_text or "", reason

    def request_cancel(self, reason: str) -> bool:
        """Ask the turn to stop with ``reason``; False when a cancel was already requested (its reason stays)."""
        if self.cancel_requested:
            return False
        self.cancel_requested = reason
        return True

    def add_usage(self, usage: TokenUsage, aggregated: TokenUsage | None = None) -> None:
        """Add a round's usage (``aggregated``: every attempt's, when the provider reported it; else ``usage``)."""
        self.usage = self.usage + usage
        self.aggregated = self.aggregated + (aggregated if aggregated is not None else usage)

    def note_truncated(self, text: str) -> None:
        """A round cut off at the output limit gets a continuation: count it and keep its text for the final text."""
        self.recoveries += 1
        if text:
            self.text_history.append(text)

    def open_batch(self, rnd: RoundRecord, calls: list[ToolUseBlock]) -> None:
        """The round's tool calls start running (a cancellation answers those not yet answered)."""
        self.open_round, self.open_calls = rnd, list(calls)

    def close_batch(self) -> RoundRecord | None:
        """The running batch is over; return its round (None if none was open)."""
        rnd, self.open_round, self.open_calls = self.open_round, None, []
        return rnd

    def take_obligation(self) -> Obligation | None:
        """Clear the pending obligation and return it."""
        ob, self.obligation = self.obligation, None
        return ob

    def push(self, rnd: RoundRecord) -> None:
        """Add a finished round to the turn."""
        self.rounds.append(rnd)

    # ------------------------------------------------------------ reading
    @property
    def next_round(self) -> int:
        """The 1-based number of the next round."""
        return len(self.rounds) + 1

    def last_text(self) -> str:
        """The last assistant text of this turn, brief or report attempts that were never committed left out."""
        for rnd in reversed(self.rounds):
            if rnd.text and rnd.round not in self.obligation_rounds:
                return rnd.text
        return ""

    def deferred_record(self, ob: Obligation) -> ToolCallRecord | None:
        """The recorded call that deferred with ``ob``, or None."""
        for rnd in reversed(self.rounds):
            for rec in rnd.tool_calls:
                if rec.tool_use_id == ob.tool_use_id and rec.status == "deferred":
                    return rec
        return None

    def completed_text(self, text: str) -> str:
        """The final text of a turn completed by a round with ``text``: the truncated rounds' texts before it."""
        return "\n\n".join([*self.text_history, text] if text else self.text_history)
