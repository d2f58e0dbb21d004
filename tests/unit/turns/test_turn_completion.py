"""CompleteWorkItem and PickWorkItem inside a model turn: turn-loop cases 13, 14, 40; agents §7 cases 49-51, 60."""

from __future__ import annotations

import json

from turn_helpers import REF, count, create_item, execution_status, hooked, receipt, run, script, turn

from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnRequest, UserText
from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime


def _briefs(rt: Runtime) -> list:
    return rt.store.query("SELECT * FROM briefs ORDER BY created_at")


def test_case13_and_agents49_same_round_text_is_promoted(rt: Runtime, workspace) -> None:
    w = create_item(rt, "ship v2")
    revision = rt.work.record(w)["revision"]
    step = Step.response(
        [
            TextBlock("Shipped v2; tests green."),
            ToolUseBlock("c1", "CompleteWorkItem", {"work_item_id": w}),
            ToolUseBlock("x1", "ExecCommand", {"cmd": "touch after.txt"}),
        ]
    )
    r, p = turn(rt, step, Step.text("unused"))
    assert p.request_count() == 1
    call = r.rounds[0].tool_calls[0]
    res = call.envelope["result"]
    assert call.envelope["status"] == "success"
    assert res["completed_transition"] is True and res["completion_report_promoted"] is True
    assert res["completion_report_source"] == "same_assistant_round_preceding_text"
    rec = rt.work.record(w)
    assert rec["state"] == "completed" and rec["revision"] == revision + 1
    assert [b["text"] for b in _briefs(rt)] == ["Shipped v2; tests green."]
    assert r.rounds[0].tool_calls[1].status == "not_executed" and not (workspace / "after.txt").exists()
    assert r.terminal == "completed" and r.final_text == "Shipped v2; tests green."
    assert r.reason == "work_item_completed"


def test_report_is_only_the_text_after_the_previous_call(rt: Runtime) -> None:
    w = create_item(rt)
    step = Step.response(
        [
            TextBlock("Looking first."),
            ToolUseBlock("g1", "GetAgent", {}),
            TextBlock("  "),
            TextBlock("All done."),
            ToolUseBlock("c1", "CompleteWorkItem", {"work_item_id": w}),
        ]
    )
    r, _ = turn(rt, step)
    assert r.final_text == "All done." and [b["text"] for b in _briefs(rt)] == ["All done."]


def test_case14_deferred_completion_with_two_violations_aborts(rt: Runtime) -> None:
    w = create_item(rt)
    r, p = turn(
        rt,
        Step.tool_use("c1", "CompleteWorkItem", {"work_item_id": w}),
        Step.tool_use("g1", "GetAgent", {}),
        Step.tool_use("g2", "GetAgent", {}),
    )
    first = r.rounds[0].tool_calls[0]
    assert first.envelope["status"] == "deferred"
    assert first.envelope["result"]["disposition"] == "awaiting_completion_report"
    assert first.envelope["result"]["expected_output"] == "final_text_only"
    corrective = p.requests()[2].conversation[-1]
    assert isinstance(corrective, UserText) and "completion report expected" in corrective.text
    assert p.request_count() == 3 and r.terminal == "aborted"
    assert rt.work.record(w)["state"] == "open" and _briefs(rt) == []
    assert execution_status(rt, first.execution_id) == "interrupted"


def test_case40_and_agents50_deferred_completion_commits_with_the_next_text(rt: Runtime, workspace) -> None:
    w = create_item(rt)
    step = Step.tool_uses([("c1", "CompleteWorkItem", {"work_item_id": w}), ("x1", "ExecCommand", {"cmd": "touch x"})])
    r, p = turn(rt, step, Step.text("Done."))
    assert p.request_count() == 2
    results = p.requests()[1].conversation[-1].results
    assert [b.tool_use_id for b in results] == ["c1", "x1"]
    assert json.loads(results[1].content)["kind"] == "not_executed_after_terminal_transition"
    assert not (workspace / "x").exists()
    call = r.rounds[0].tool_calls[0]
    assert call.status == "success"
    assert call.settled_envelope["result"]["completion_report_source"] == "followup_final_text"
    assert r.terminal == "completed" and r.final_text == "Done."
    assert rt.work.record(w)["state"] == "completed" and [b["text"] for b in _briefs(rt)] == ["Done."]
    assert execution_status(rt, call.execution_id) == "success"


def test_agents51_revision_change_invalidates_the_report_request(rt: Runtime) -> None:
    w = create_item(rt)

    async def revise(req: TurnRequest) -> None:  # the control API edits W before the text round
        res = await rt.async_call("UpdateWorkItem", {"work_item_id": w, "objective": "changed"})
        assert res.ok, res.envelope

    hooked(rt, Step.tool_use("c1", "CompleteWorkItem", {"work_item_id": w}), Step.text("Done."), before={2: revise})
    r = rt.run_turn("go", model=REF)
    call = r.rounds[0].tool_calls[0]
    assert call.status == "interrupted" and execution_status(rt, call.execution_id) == "interrupted"
    err = call.settled_envelope["error"]
    assert err["kind"] == "completion_report_request_invalidated"
    assert err["details"]["reason"] == "work_item_revision_changed"
    assert r.terminal == "aborted" and rt.work.record(w)["state"] == "open" and _briefs(rt) == []


def test_agents60_pick_in_an_activation_ends_the_turn(rt: Runtime) -> None:
    a = create_item(rt, "a")
    b = create_item(rt, "b")
    pick = {"work_item_id": b, "reason": "urgent"}
    p = script(rt, Step.tool_uses([("p1", "PickWorkItem", pick), ("g1", "GetAgent", {})]), Step.text("unused"))
    r = run(rt, "continue a", work_item_id=a)  # the message is attributed to A: the turn's binding names A
    res = r.rounds[0].tool_calls[0].envelope["result"]
    assert res["transition"]["switch_kind"] == "yield_current" and res["terminal_transition"] is True
    assert res["continuation_created"]["active_work_item_id"] == b
    assert p.request_count() == 1 and r.terminal == "completed" and r.reason == "terminal_transition"
    assert r.rounds[0].tool_calls[1].status == "not_executed"
    assert count(rt, "SELECT COUNT(*) FROM turns WHERE status='running'") == 0


def test_already_completed_item_is_idempotent_and_not_terminal(rt: Runtime) -> None:
    w = create_item(rt)
    assert rt.call("CompleteWorkItem", {"work_item_id": w}, context={"report": "first"}).ok
    r, p = turn(rt, Step.tool_use("c1", "CompleteWorkItem", {"work_item_id": w}), Step.text("ok"))
    res = r.rounds[0].tool_calls[0].envelope["result"]
    assert res["completed_transition"] is False and p.request_count() == 2 and r.final_text == "ok"
    assert receipt(r.rounds[0].tool_calls[0])["status"] == "success"
