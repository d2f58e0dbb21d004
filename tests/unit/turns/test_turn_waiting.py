"""WaitFor inside a model turn: turn-loop cases 9-12, 39; agents §7 cases 9-12, 16, 73, 76."""

from __future__ import annotations

from turn_helpers import REF, count, create_item, execution_status, hooked, receipt, turn

from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnRequest, UserText
from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime

SILENT = {"reason": "need approval", "wake": "operator_input", "delivery": "silent"}
FINAL = {"reason": "review", "wake": "operator_input", "delivery": "final"}


def _waits(rt: Runtime, status: str = "active") -> list:
    return rt.store.query("SELECT * FROM waits WHERE status=?", (status,))


def _briefs(rt: Runtime) -> list:
    return rt.store.query("SELECT * FROM briefs ORDER BY created_at")


def test_case9_silent_wait_settles_the_turn_after_one_request(rt: Runtime) -> None:
    r, p = turn(rt, Step.tool_use("w1", "WaitFor", SILENT), Step.text("never asked"))
    assert p.request_count() == 1 and p.remaining_steps() == 1
    assert r.terminal == "completed" and r.final_text == "" and r.reason == "wait_for_silent"
    waits = _waits(rt)
    assert len(waits) == 1 and waits[0]["turn_id"] == r.turn_id  # the wait names the turn it settled
    row = rt.conversations.turn(r.turn_id)
    assert row["status"] == "settled" and row["terminal_kind"] == "completed" and row["final_text"] == ""
    assert _briefs(rt) == []  # silent: no brief
    assert r.rounds[0].tool_calls[0].envelope["status"] == "success"


def test_case10_final_wait_commits_with_the_text_only_round(rt: Runtime) -> None:
    r, p = turn(rt, Step.tool_use("w1", "WaitFor", FINAL), Step.text("Waiting on your review."))
    assert p.request_count() == 2
    call = r.rounds[0].tool_calls[0]
    assert call.envelope["status"] == "deferred"
    assert call.envelope["result"]["disposition"] == "awaiting_final_brief"
    assert r.terminal == "completed" and r.final_text == "Waiting on your review."
    assert len(_waits(rt)) == 1
    briefs = _briefs(rt)
    assert [b["text"] for b in briefs] == ["Waiting on your review."]
    assert call.status == "success" and call.settled_envelope["result"]["final_brief_id"] == briefs[0]["id"]
    assert execution_status(rt, call.execution_id) == "success"


def test_case11_two_violations_abort_and_discard_the_staged_wait(rt: Runtime) -> None:
    r, p = turn(
        rt,
        Step.tool_use("w1", "WaitFor", FINAL),
        Step.tool_use("c2", "GetAgent", {}),
        Step.tool_use("c3", "GetAgent", {}),
    )
    assert p.request_count() == 3
    corrective = p.requests()[2].conversation[-1]
    assert isinstance(corrective, UserText) and "final brief expected" in corrective.text
    # the violating calls were answered, never executed
    second = r.rounds[1].tool_calls[0]
    assert second.status == "not_executed" and receipt(second)["kind"] == "tool_call_not_allowed"
    assert r.terminal == "aborted" and r.reason.startswith("final_brief_protocol_abandoned")
    assert _waits(rt) == [] and _briefs(rt) == []
    call = r.rounds[0].tool_calls[0]
    assert call.status == "interrupted" and execution_status(rt, call.execution_id) == "interrupted"


def test_case12_mixed_rounds_follow_the_seed(rt: Runtime) -> None:
    step = Step.tool_uses([("c1", "ExecCommand", {"cmd": "echo ran > ran.txt"}), ("w1", "WaitFor", SILENT)])
    r, p = turn(rt, step, Step.text("left over"))
    assert p.request_count() == 1 and p.remaining_steps() == 1
    assert r.rounds[0].tool_calls[0].envelope["status"] == "success"
    assert r.terminal == "completed" and len(_waits(rt)) == 1
    assert (rt.workspace / "ran.txt").exists()


def test_case12_calls_after_a_silent_wait_get_synthetic_results(rt: Runtime) -> None:
    step = Step.tool_uses([("w1", "WaitFor", SILENT), ("c1", "ExecCommand", {"cmd": "echo ran > ran.txt"})])
    r, p = turn(rt, step)
    assert p.request_count() == 1 and r.terminal == "completed"
    skipped = r.rounds[0].tool_calls[1]
    rec = receipt(skipped)
    assert skipped.status == "not_executed" and skipped.execution_id is None
    assert rec["kind"] == "not_executed_after_terminal_transition" and rec["retryable"] is False
    assert "WaitFor" in rec["message"]
    assert not (rt.workspace / "ran.txt").exists()
    # the transcript answers both calls, so the next turn's history is valid
    stored = [m for m in rt.conversations.history("default") if m.type == "user_tool_results"]
    assert [b.tool_use_id for b in stored[0].results] == ["w1", "c1"]


def test_case39_and_agents73_same_round_text_is_not_the_brief(rt: Runtime) -> None:
    args = {"reason": "ci", "wake": "external", "delivery": "final"}
    step = Step.response([TextBlock("Shipping now."), ToolUseBlock("w1", "WaitFor", args)])
    r, p = turn(rt, step, Step.text("Waiting on your review."))
    assert r.rounds[0].tool_calls[0].envelope["status"] == "deferred"
    assert p.request_count() == 2
    assert r.final_text == "Waiting on your review."
    assert [b["text"] for b in _briefs(rt)] == ["Waiting on your review."]


def test_agents9_final_wait_on_the_focused_item(rt: Runtime) -> None:
    w = create_item(rt, "nightly")
    seen: dict = {}

    async def before_text_round(req: TurnRequest) -> None:
        seen["waits"] = len(_waits(rt))

    args = {"reason": "nightly job", "wake": "system", "delivery": "final"}
    hooked(
        rt,
        Step.tool_use("w1", "WaitFor", args),
        Step.text("Waiting for the nightly job"),
        before={2: before_text_round},
    )
    r = rt.run_turn("go", model=REF)
    call = r.rounds[0].tool_calls[0]
    result = call.envelope["result"]
    assert call.envelope["status"] == "deferred" and result["disposition"] == "awaiting_final_brief"
    assert result["owner"] == {"kind": "work_item", "work_item_id": w}
    assert result["expected_output"] == "final_text_only"
    assert seen["waits"] == 0  # nothing registered before the text arrives
    waits = _waits(rt)
    assert len(waits) == 1 and waits[0]["work_item_id"] == w
    brief = _briefs(rt)[0]
    assert brief["text"] == "Waiting for the nightly job" and brief["kind"] == "result"
    assert call.settled_envelope["result"]["final_brief_id"] == brief["id"]
    assert execution_status(rt, call.execution_id) == "success" and r.terminal == "completed"


def test_agents10_tool_calls_in_the_final_round_twice_abandon_the_wait(rt: Runtime) -> None:
    w = create_item(rt)
    revision = rt.work.record(w)["revision"]
    args = {"reason": "r", "wake": "system", "delivery": "final"}
    r, _ = turn(
        rt,
        Step.tool_use("w1", "WaitFor", args),
        Step.tool_use("x1", "ExecCommand", {"cmd": "touch x1"}),
        Step.tool_use("x2", "ExecCommand", {"cmd": "touch x2"}),
    )
    assert r.terminal == "aborted"
    assert _waits(rt) == [] and _briefs(rt) == []
    assert rt.work.record(w)["revision"] == revision and rt.work.record(w)["blocked_by"] is None
    assert execution_status(rt, r.rounds[0].tool_calls[0].execution_id) == "interrupted"
    assert not (rt.workspace / "x1").exists() and not (rt.workspace / "x2").exists()


def test_agents11_empty_text_then_valid_text_commits_after_one_retry(rt: Runtime) -> None:
    args = {"reason": "r", "wake": "system", "delivery": "final"}
    r, p = turn(rt, Step.tool_use("w1", "WaitFor", args), Step.text("   "), Step.text("Now waiting."))
    assert p.request_count() == 3
    assert r.rounds[1].follow_ups[0][0] == "final_brief_expected"
    assert r.terminal == "completed" and r.final_text == "Now waiting."
    assert len(_waits(rt)) == 1 and [b["text"] for b in _briefs(rt)] == ["Now waiting."]


def test_agents12_interjection_before_the_brief_fences_the_wait(rt: Runtime) -> None:
    w = create_item(rt)

    async def interject(req: TurnRequest) -> None:
        rt.turns.interject("stop, change of plan")

    args = {"reason": "r", "wake": "system", "delivery": "final"}
    hooked(rt, Step.tool_use("w1", "WaitFor", args), Step.text("Waiting."), before={2: interject})
    r = rt.run_turn("go", model=REF)
    assert r.terminal == "aborted" and "interjection_arrived" in r.reason
    assert _waits(rt) == [] and _briefs(rt) == []
    call = r.rounds[0].tool_calls[0]
    assert execution_status(rt, call.execution_id) == "interrupted"
    assert call.settled_envelope["error"]["kind"] == "wait_settlement_stale"
    assert rt.work.record(w)["blocked_by"] is None
    queued = [m for m in rt.work.queued("default") if m["priority"] == "interject"]
    assert len(queued) == 1  # processed by the next activation, not this turn


def test_agents16_finished_task_result_is_queued_and_ends_the_turn(rt: Runtime) -> None:
    started = rt.call("ExecCommand", {"cmd": "true", "yield_time_ms": 0})
    tid = started.result["task_handle"]["task_id"]
    rt.wait_for_tasks(10)
    args = {"reason": "x", "wake": "task_result", "resource": tid, "delivery": "final"}
    r, p = turn(rt, Step.tool_uses([("w1", "WaitFor", args), ("g1", "GetAgent", {})]), Step.text("unused"))
    result = r.rounds[0].tool_calls[0].envelope["result"]
    assert result["disposition"] == "task_result_queued" and result["task_id"] == tid
    assert p.request_count() == 1 and r.terminal == "completed"  # no final-brief round
    assert _waits(rt) == [] and _briefs(rt) == []
    assert r.rounds[0].tool_calls[1].status == "not_executed"


def test_agents76_enqueue_after_a_silent_wait_is_not_executed(rt: Runtime) -> None:
    step = Step.tool_uses([("w1", "WaitFor", SILENT), ("e1", "Enqueue", {"text": "later"})])
    r, _ = turn(rt, step)
    assert r.terminal == "completed"
    assert receipt(r.rounds[0].tool_calls[1])["kind"] == "not_executed_after_terminal_transition"
    assert count(rt, "SELECT COUNT(*) FROM messages WHERE kind='internal_followup'") == 0


def test_interjection_reaches_the_model_at_the_next_safe_point(rt: Runtime) -> None:
    async def interject(req: TurnRequest) -> None:
        rt.turns.interject("also check the tests")

    p = hooked(rt, Step.tool_use("g1", "GetAgent", {}), Step.text("done"), before={1: interject})
    events: list = []
    unsubscribe = rt.subscribe(lambda e: events.append(e) if e.kind == "interjection" else None)
    try:
        r = rt.run_turn("go", model=REF)
    finally:
        unsubscribe()
    last = p.requests()[1].conversation[-1]
    assert isinstance(last, UserText)
    assert last.text.startswith("[Operator message received while this turn was in progress]")
    assert last.text.endswith("also check the tests")
    assert r.rounds[0].follow_ups[0][0] == "interjection" and len(events) == 1
    assert [m for m in rt.work.queued("default") if m["priority"] == "interject"] == []
