"""What a turn returns and records: :class:`TurnResult`, :class:`RoundRecord`, :class:`TurnHooks`.

Turn-loop spec §1.1 (vocabulary, terminal kinds), turn-loop spec §1.11 (events), turn-loop spec §2.3 (usage).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...providers.base import Block, TokenUsage, to_dict
from ...tools._errors import HolonNBError
from ._calls import ToolCallRecord

__all__ = ["RoundRecord", "TurnHooks", "TurnResult", "TurnError", "TURN_EVENT_KINDS"]

#: Event kinds a turn publishes on ``rt.events`` (turn-loop spec §1.11), in the order they can occur.
TURN_EVENT_KINDS = (
    "turn_started",
    "round_started",
    "provider_attempt",
    "text_delta",
    "assistant_round",
    "tool_call",
    "tool_result",
    "interjection",
    "turn_terminal",
)


class TurnError(HolonNBError, RuntimeError):
    """Raised by :meth:`TurnResult.raise_for_error` for a turn that failed (carries the result)."""

    def __init__(self, result: TurnResult):
        super().__init__(f"turn {result.turn_id} {result.terminal}: {result.error or result.reason}")
        self.result = result


@dataclass
class RoundRecord:
    """One round: a successful provider response, its tool calls and their results.

    Attributes:
        round: 1-based within the turn.
        blocks: The assistant blocks as the provider returned them.
        text: Non-blank text blocks joined by a blank line.
        stop_reason: The provider's stop reason.
        usage: The winning attempt's usage.
        tool_calls: Each call with its envelope and receipt, in emitted order.
        follow_ups: Runtime texts sent after the round (``(reason, text)``: continuation prompts,
            corrective prompts, interjections).
        timeline: The provider attempt timeline of the round (JSON form), if any.
    """

    round: int
    blocks: tuple[Block, ...]
    text: str
    stop_reason: str | None
    usage: TokenUsage
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    follow_ups: list[tuple[str, str]] = field(default_factory=list)
    timeline: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "round": self.round,
            "blocks": to_dict(self.blocks),
            "text": self.text,
            "stop_reason": self.stop_reason,
            "usage": self.usage.to_dict(),
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "follow_ups": [{"reason": r, "text": t} for r, t in self.follow_ups],
            "timeline": self.timeline,
        }


@dataclass
class TurnResult:
    """The outcome of :meth:`Runtime.run_turn` (turn-loop spec §1.8).

    Attributes:
        turn_id: ``turn_<15 hex>``.
        agent_id: The agent that ran.
        turn_index: 1-based per agent.
        terminal: ``completed``, ``aborted``, ``baseline_over_budget``, ``deferred_to_fallback`` or
            ``provider_failed_needs_recovery``.
        reason: Why it ended (``end_turn``, ``wait_for_silent``, ``work_item_completed``, ``max_tool_rounds``,
            ``provider_error``, ``cancelled``, …).
        final_text: The turn-final text (the brief or the completion report when one was committed; empty
            for a silent wait and when a brief or report was refused; never an uncommitted attempt).
        rounds: Every round, with its tool calls and their envelopes.
        usage: Winning attempts' tokens of this turn (what agent totals add).
        aggregated_usage: Every attempt's tokens (failed ones included).
        model_ref: The requested model ref.
        error: The provider failure's message for a turn that failed, else None.
        totals: The agent's totals after the turn (``total_input_tokens``, ``total_output_tokens``,
            ``total_model_rounds``, ``turns``).
        sleep_duration_ms: For a turn ended by a round of legacy ``Sleep`` calls (reason ``sleep``), the
            last positive ``duration_ms`` among them (milliseconds), else None (turn-loop spec §1.8.4).
        closure: The turn's ``ClosureOutcome`` (agents spec §2): ``{"outcome": "completed" | "continuable" |
            "failed" | "waiting", "waiting_reason"?: …, "turn_id": …}``, from the agent's state at the end.
    """

    turn_id: str
    agent_id: str
    turn_index: int
    terminal: str
    reason: str | None
    final_text: str
    rounds: list[RoundRecord]
    usage: TokenUsage
    aggregated_usage: TokenUsage
    model_ref: str
    error: str | None = None
    totals: dict[str, int] = field(default_factory=dict)
    sleep_duration_ms: int | None = None
    closure: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True for a ``completed`` turn."""
        return self.terminal == "completed"

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        """Every tool call of the turn, in order."""
        return [c for r in self.rounds for c in r.tool_calls]

    def raise_for_error(self) -> TurnResult:
        """Return self, or raise :class:`TurnError` when the turn did not complete."""
        if not self.ok:
            raise TurnError(self)
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "turn_id": self.turn_id,
            "agent_id": self.agent_id,
            "turn_index": self.turn_index,
            "terminal": self.terminal,
            "reason": self.reason,
            "final_text": self.final_text,
            "rounds": [r.to_dict() for r in self.rounds],
            "usage": self.usage.to_dict(),
            "aggregated_usage": self.aggregated_usage.to_dict(),
            "model_ref": self.model_ref,
            "error": self.error,
            "totals": dict(self.totals),
        }

    def __repr__(self) -> str:
        return (
            f"<TurnResult {self.turn_id} {self.terminal} rounds={len(self.rounds)} final_text={self.final_text[:60]!r}>"
        )


@dataclass
class TurnHooks:
    """Injectable pieces of a turn (the cassette seam, issue 5 H3↔H4).

    Attributes:
        sleep: ``await sleep(seconds)`` for provider backoff (default ``anyio.sleep``).
        new_id: ``new_id(prefix) -> "<prefix>_<15 hex>"`` for turn and tool-execution ids.
        now: Wall clock (aware UTC ``datetime``) for turn records and the attempt timeline.
        monotonic: Seconds counter for attempt durations.
        wrap_provider: Applied to the head's attempt provider inside the lineage (``CassetteProvider``).
        wrap_tool_executor: Applied to the tool runner ``async run(call) -> ToolOutcome | (envelope,
            receipt, is_error)``; ``call`` has ``id``, ``tool_use_id``, ``name``, ``input``, ``round``,
            ``stop_reason`` and ``report``.
    """

    sleep: Callable[[float], Awaitable[Any]] | None = None
    new_id: Callable[[str], str] | None = None
    now: Callable[[], datetime] | None = None
    monotonic: Callable[[], float] | None = None
    wrap_provider: Callable[[Any], Any] | None = None
    wrap_tool_executor: Callable[[Any], Any] | None = None
