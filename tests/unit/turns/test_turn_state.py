"""TurnState (issue 27 item 5): the transitions and readings of a turn's mutable state, without a runtime."""

from __future__ import annotations

from holon_nb.providers.base import TokenUsage, ToolUseBlock
from holon_nb.runtime.turns._calls import Obligation, ToolCallRecord
from holon_nb.runtime.turns._records import RoundRecord
from holon_nb.runtime.turns._state import TurnState


def _round(number: int, text: str = "") -> RoundRecord:
    return RoundRecord(number, (), text, "end_turn", TokenUsage(1, 1))


def test_the_first_settlement_and_the_first_cancel_reason_stay() -> None:
    state = TurnState()
    assert state.request_cancel("user") and not state.request_cancel("again")
    assert state.cancel_requested == "user"
    state.settle("completed", None, "end_turn")
    state.settle("aborted", "late", "cancelled")
    assert (state.settled, state.terminal, state.final_text, state.reason) == (True, "completed", "", "end_turn")


def test_usage_adds_up_and_aggregated_falls_back_to_the_round() -> None:
    state = TurnState()
    state.add_usage(TokenUsage(3, 4))
    state.add_usage(TokenUsage(1, 1), TokenUsage(5, 5))
    assert state.usage == TokenUsage(4, 5) and state.aggregated == TokenUsage(8, 9)


def test_last_text_skips_obligation_rounds_and_completed_text_joins_truncated_ones() -> None:
    state = TurnState()
    for rnd in (_round(1, "first"), _round(2, "brief attempt"), _round(3)):
        state.push(rnd)
    state.obligation_rounds.add(2)
    assert state.next_round == 4 and state.last_text() == "first"
    state.note_truncated("part one")
    state.note_truncated("")
    assert state.recoveries == 2 and state.completed_text("part two") == "part one\n\npart two"
    assert state.completed_text("") == "part one"


def test_a_batch_opens_and_closes_and_an_obligation_is_taken_once() -> None:
    state = TurnState()
    rnd = _round(1)
    block = ToolUseBlock("call_1", "WaitFor", {})
    state.open_batch(rnd, [block])
    assert state.open_round is rnd and state.open_calls == [block]
    assert state.close_batch() is rnd and state.open_round is None and state.open_calls == []
    assert state.close_batch() is None
    ob = Obligation(kind="final_brief", tool_use_id="call_1")
    state.obligation = ob
    assert state.take_obligation() is ob and state.take_obligation() is None


def test_deferred_record_finds_the_deferred_call() -> None:
    state = TurnState()
    rnd = _round(1)
    record = ToolCallRecord("call_1", "WaitFor", {}, {}, "", False, "tool_1", 0, "deferred")
    rnd.tool_calls.append(record)
    state.push(rnd)
    assert state.deferred_record(Obligation(kind="final_brief", tool_use_id="call_1")) is record
    assert state.deferred_record(Obligation(kind="final_brief", tool_use_id="call_2")) is None
