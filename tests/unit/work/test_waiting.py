"""WaitFor and the waiting plane (agents spec §4, §5.1): cases 1-8, 13-23, 74, the five wakes."""

from __future__ import annotations

import pytest
from _support import err, eventually, ok
from work_helpers import count, view

from holon_nb.runtime import Runtime
from holon_nb.tools._errors import ToolFailure


def _create(rt: Runtime, objective: str = "w", agent: str | None = None) -> str:
    return ok(rt.call("CreateWorkItem", {"objective": objective}, agent=agent))["work_item"]["id"]


def _no_waits(rt: Runtime) -> bool:
    return count(rt, "SELECT COUNT(*) FROM waits") == 0


def _task(rt: Runtime, cmd: str = "sleep 30", agent: str | None = None) -> str:
    return ok(rt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 0}, agent=agent))["task_handle"]["task_id"]


def _stop(rt: Runtime, tid: str, agent: str | None = None) -> None:
    rt.call("TaskStop", {"task_id": tid}, agent=agent)
    rt.wait_for_tasks(10)


def test_case1_delivery_is_required(rt: Runtime) -> None:
    e = err(rt.call("WaitFor", {"reason": "ci", "wake": "external"}), "invalid_tool_input")
    assert "missing field `delivery`" in e["details"]["parse_error"]
    assert _no_waits(rt)


def test_case2_unknown_delivery(rt: Runtime) -> None:
    e = err(rt.call("WaitFor", {"reason": "ci", "wake": "external", "delivery": "loud"}), "invalid_tool_input")
    assert "unknown variant" in e["details"]["parse_error"]


def test_case3_blank_reason(rt: Runtime) -> None:
    e = err(rt.call("WaitFor", {"reason": "  ", "wake": "operator_input", "delivery": "silent"}), "invalid_tool_input")
    assert e["details"]["field"] == "reason" and e["details"]["validation_error"] == "must not be empty"


@pytest.mark.parametrize("wake,resource", [("task_result", None), ("timer", "   ")])
def test_case4_case5_resource_required(rt: Runtime, wake: str, resource: str | None) -> None:
    args = {"reason": "x", "wake": wake, "delivery": "silent"}
    if resource is not None:
        args["resource"] = resource
    e = err(rt.call("WaitFor", args), "invalid_tool_input")
    d = e["details"]
    assert d["field"] == "resource" and d["wake"] == wake and d["validation_error"] == "required"
    assert _no_waits(rt)


def test_case6_unknown_field(rt: Runtime) -> None:
    e = err(
        rt.call("WaitFor", {"reason": "x", "wake": "system", "delivery": "silent", "summary": "s"}),
        "invalid_tool_input",
    )
    assert "unknown field `summary`" in e["details"]["parse_error"]


def test_case7_operator_wait_on_focused_item(rt: Runtime) -> None:
    w = _create(rt)
    r = rt.call("WaitFor", {"reason": "need approval", "wake": "operator_input", "delivery": "silent"})
    res = ok(r)
    assert res["scope"] == "work_item" and res["owner"] == {"kind": "work_item", "work_item_id": w}
    wc = res["wait_condition"]
    assert wc["kind"] == "operator" and wc["status"] == "active" and wc["wake_sources"] == [{"kind": "operator_input"}]
    item = res["work_item"]
    assert item["blocked_by"] == "need approval" and item["readiness"] == "waiting_for_operator"
    assert rt.work.record(w)["revision"] == 2
    assert rt.work.agent_summary("default")["current_work_item_id"] is None  # focus released
    assert count(rt, "SELECT COUNT(*) FROM briefs") == 0 and "final_brief_id" not in res
    assert r.envelope["summary_text"] == "waiting on work item: need approval"


def test_case8_agent_scope_without_owner(rt: Runtime) -> None:
    res = ok(rt.call("WaitFor", {"reason": "r", "wake": "external", "delivery": "silent"}))
    assert res["scope"] == "agent" and res["owner"] == {"kind": "agent_lifecycle", "agent_id": "default"}
    assert "work_item" not in res
    assert res["wait_condition"]["external_recoverability"] == "weak"
    rec = ok(rt.call("WaitFor", {"reason": "r2", "wake": "external", "delivery": "silent", "recheck_after_ms": 60000}))
    assert rec["wait_condition"]["external_recoverability"] == "recoverable" and rec["recheck_at"]
    assert rec["cancelled_wait_condition_ids"] == [res["wait_condition"]["id"]]


def test_case13_stale_settlement(rt: Runtime) -> None:
    w = _create(rt)
    v = view(rt)
    staged = v.stage_wait("ci", "external", "silent", None, None, None)
    assert staged.owner_work_item_id == w
    ok(rt.call("UpdateWorkItem", {"work_item_id": w, "objective": "other writer"}))
    with pytest.raises(ToolFailure) as exc:
        v.settle_wait(staged)
    error = exc.value.error.to_dict()
    assert error["kind"] == "wait_settlement_stale" and error["details"]["reason"] == "work_item_revision_changed"
    assert error["domain"] == "conflict" and error["retryable"] is True
    assert _no_waits(rt) and rt.work.record(w)["blocked_by"] is None


def test_wake_arrived_and_interjection_fences(rt: Runtime) -> None:
    w = _create(rt)
    v = view(rt)
    staged = v.stage_wait("ok?", "operator_input", "silent", None, w, None)
    rt.work.operator_prompt("default", "yes", work_item_id=w)
    with pytest.raises(ToolFailure) as exc:
        v.settle_wait(staged)
    assert exc.value.error.details["reason"] == "wake_arrived"
    staged = v.stage_wait("ci", "external", "silent", None, w, None)
    rt.work.operator_prompt("default", "stop", priority="interject")
    with pytest.raises(ToolFailure) as exc:
        v.settle_wait(staged)
    assert exc.value.error.details["reason"] == "interjection_arrived"
    assert _no_waits(rt)


def test_case14_task_of_another_agent(rt: Runtime) -> None:
    rt.store.ensure_agent("other", "public_named")
    tid = _task(rt, agent="other")
    try:
        e = err(
            rt.call("WaitFor", {"reason": "x", "wake": "task_result", "resource": tid, "delivery": "silent"}),
            "task_agent_mismatch",
        )
        assert e["details"]["task_id"] == tid and _no_waits(rt)
    finally:
        _stop(rt, tid, agent="other")


def test_case15_unknown_task(rt: Runtime) -> None:
    e = err(
        rt.call("WaitFor", {"reason": "x", "wake": "task_result", "resource": "task_nope", "delivery": "silent"}),
        "task_not_found",
    )
    assert e["domain"] == "not_found"


def test_case16_case17_finished_task_fast_paths(rt: Runtime) -> None:
    tid = _task(rt, "true")
    rt.wait_for_tasks(10)
    args = {"reason": "x", "wake": "task_result", "resource": tid, "delivery": "final"}  # delivery ignored
    r = rt.call("WaitFor", args)
    res = ok(r)
    msg = next(m for m in rt.messages() if m["origin_task_id"] == tid)
    assert res == {"disposition": "task_result_queued", "task_id": tid, "result_message_id": msg["id"]}
    assert r.envelope["summary_text"] == f"task result already completed; queued exact result message {msg['id']}"
    rt.work.process_message(msg["id"])
    res = ok(rt.call("WaitFor", args))
    assert res["disposition"] == "task_result_already_consumed" and _no_waits(rt)


def test_case18_task_wait_owned_by_captured_work_item(rt: Runtime) -> None:
    w1 = _create(rt, "one")
    tid = _task(rt)
    try:
        assert rt.store.task(tid)["work_item_id"] == w1
        w2 = _create(rt, "two")
        ok(rt.call("PickWorkItem", {"work_item_id": w2, "reason": "switch"}))
        res = ok(rt.call("WaitFor", {"reason": "build", "wake": "task_result", "resource": tid, "delivery": "silent"}))
        assert res["owner"] == {"kind": "work_item", "work_item_id": w1}
        assert rt.work.record(w1)["blocked_by"] == "build"
        two = rt.work.record(w2)
        assert two["blocked_by"] is None and two["revision"] == 1
        assert rt.store.task(tid)["work_item_id"] == w1
        # case 19: an explicit different work item, or an execution bound to W2
        args = {"reason": "b", "wake": "task_result", "resource": tid, "delivery": "silent"}
        err(rt.call("WaitFor", {**args, "work_item_id": w2}), "task_work_item_mismatch")
        e = err(rt.call("WaitFor", args, context={"binding": {"work_item_id": w2}}), "wait_owner_binding_mismatch")
        assert e["domain"] == "policy"
        assert len(rt.work.waits_of("default")) == 1
    finally:
        _stop(rt, tid)


def test_case20_second_wait_replaces_first(rt: Runtime) -> None:
    w = _create(rt)
    first = ok(rt.call("WaitFor", {"reason": "a", "wake": "external", "delivery": "silent"}))["wait_condition"]["id"]
    res = ok(rt.call("WaitFor", {"reason": "b", "wake": "external", "delivery": "silent", "work_item_id": w}))
    assert res["cancelled_wait_condition_ids"] == [first]
    statuses = {r["id"]: r["status"] for r in rt.store.query("SELECT id, status FROM waits")}
    assert statuses[first] == "cancelled" and statuses[res["wait_condition"]["id"]] == "active"
    assert rt.work.record(w)["blocked_by"] == "b"


def test_case21_completed_owner(rt: Runtime) -> None:
    w = _create(rt)
    ok(rt.call("CompleteWorkItem", {"work_item_id": w}, context={"report": "done"}))
    err(
        rt.call("WaitFor", {"reason": "x", "wake": "external", "delivery": "silent", "work_item_id": w}),
        "work_item_completed",
    )
    err(
        rt.call("WaitFor", {"reason": "x", "wake": "external", "delivery": "silent", "work_item_id": "work_nope"}),
        "work_item_not_found",
    )


def test_case22_cancelled_timer(rt: Runtime) -> None:
    x = ok(rt.call("CreateTimer", {"duration_ms": 60000}))["timer"]["id"]
    ok(rt.call("CancelTimer", {"timer_id": x}))
    err(rt.call("WaitFor", {"reason": "x", "wake": "timer", "resource": x, "delivery": "silent"}), "timer_not_active")
    err(
        rt.call("WaitFor", {"reason": "x", "wake": "timer", "resource": "timer_nope", "delivery": "silent"}),
        "timer_not_found",
    )


def test_case23_timer_fire_triggers_then_processing_resolves(rt: Runtime) -> None:
    w = _create(rt)
    x = ok(rt.call("CreateTimer", {"duration_ms": 150}))["timer"]
    res = ok(rt.call("WaitFor", {"reason": "tick", "wake": "timer", "resource": x["id"], "delivery": "silent"}))
    assert res["wait_condition"]["wake_sources"] == [{"kind": "timer", "wake_at": x["next_fire_at"]}]
    wait_id = res["wait_condition"]["id"]
    eventually(lambda: rt.work.waits_of("default", ("triggered",)))
    wait = rt.work.waits_of("default", ("triggered",))[0]
    tick = rt.messages(kind="timer_tick")[0]
    assert wait["id"] == wait_id and wait["trigger_message_id"] == tick["id"] and tick["work_item_id"] == w
    assert ok(rt.call("ListWorkItems", {}))["work_items"][0]["candidate_class"] == "triggered_blocked"
    adm = rt.work.process_message(tick["id"])
    assert adm["trigger_kind"] == "timer_fire" and adm["consumed_wait_id"] == wait_id
    assert adm["continuation_class"] == "resume_expected_wait"
    rec = rt.work.record(w)
    assert rec["blocked_by"] is None and rec["revision"] == 3
    assert ok(rt.call("GetWorkItem", {"work_item_id": w}))["work_item"]["readiness"] == "runnable"
    assert rt.work.waits_of("default", ("resolved",))[0]["id"] == wait_id


def test_operator_wake(rt: Runtime) -> None:
    w = _create(rt)
    ok(rt.call("WaitFor", {"reason": "approve?", "wake": "operator_input", "delivery": "silent"}))
    rt.work.operator_prompt("default", "unrelated agent-level input")  # other owner: no match
    assert not rt.work.waits_of("default", ("triggered",))
    msg = rt.work.operator_prompt("default", "approved", work_item_id=w)
    assert msg["triggered_wait_id"] == rt.work.waits_of("default", ("triggered",))[0]["id"]
    adm = rt.work.process_message(msg["id"])
    assert adm["trigger_kind"] == "operator_input" and adm["work_item"]["blocked_by"] is None


def test_external_wake_needs_correlation(rt: Runtime) -> None:
    ok(
        rt.call(
            "WaitFor", {"reason": "pr merged", "wake": "external", "delivery": "silent", "resource": "github:o/r#1"}
        )
    )
    wait = rt.work.waits_of("default")[0]
    assert wait["wake_sources"] == [{"kind": "external_ingress", "external_trigger_id": None}]
    tick = rt.work.system_tick("default")  # uncorrelated: a liveness nudge only
    assert tick["triggered_wait_id"] is None
    assert rt.work.process_message(tick["id"])["continuation_class"] == "liveness_only"
    assert rt.work.callback_event("default", "merged", wait_id="wait_other")["triggered_wait_id"] is None
    assert rt.work.callback_event("default", "merged", wait_id=wait["id"])["triggered_wait_id"] == wait["id"]


def test_system_wake(rt: Runtime) -> None:
    ok(rt.call("WaitFor", {"reason": "nightly", "wake": "system", "delivery": "silent"}))
    wait = rt.work.waits_of("default")[0]
    msg = rt.work.system_tick("default")
    assert msg["triggered_wait_id"] == wait["id"]
    assert rt.work.process_message(msg["id"])["consumed_wait_id"] == wait["id"]
    with pytest.raises(ToolFailure):
        rt.work.process_message(msg["id"])  # already processed


def test_task_wake(rt: Runtime) -> None:
    w = _create(rt)
    tid = _task(rt, "sleep 0.3")
    ok(rt.call("WaitFor", {"reason": "build", "wake": "task_result", "resource": tid, "delivery": "silent"}))
    rt.wait_for_tasks(10)
    wait = eventually(lambda: rt.work.waits_of("default", ("triggered",)))[0]
    msg = next(m for m in rt.messages(kind="TaskResult") if m["origin_task_id"] == tid)
    assert wait["trigger_message_id"] == msg["id"] and msg["work_item_id"] == w
    rt.work.process_message(msg["id"])
    assert rt.work.record(w)["blocked_by"] is None


def test_message_from_the_waiting_turn_does_not_trigger(rt: Runtime) -> None:
    binding = {"turn_id": "turn_000000000000001"}
    ok(rt.call("WaitFor", {"reason": "n", "wake": "system", "delivery": "silent"}, context={"binding": binding}))
    msg = rt.work.enqueue("default", "system_tick", "tick", turn_id="turn_000000000000001")
    assert msg["triggered_wait_id"] is None
    assert rt.work.system_tick("default")["triggered_wait_id"] is not None


def test_case74_final_direct_call(rt: Runtime) -> None:
    args = {"reason": "ci", "wake": "external", "delivery": "final"}
    e = err(rt.call("WaitFor", args), "empty_final_brief")
    assert e["details"]["field"] == "brief" and e["domain"] == "validation"
    err(rt.call("WaitFor", args, context={"brief": "   "}), "empty_final_brief")
    assert _no_waits(rt) and count(rt, "SELECT COUNT(*) FROM briefs") == 0
    r = rt.call("WaitFor", args, context={"brief": "Waiting on CI."})
    res = ok(r)
    assert r.status == "success" and res["delivery"] == "final"
    brief = rt.store.query("SELECT * FROM briefs")[0]
    assert res["final_brief_id"] == brief["id"] and brief["text"] == "Waiting on CI." and brief["kind"] == "result"
    assert brief["wait_id"] == res["wait_condition"]["id"]
    assert [w["status"] for w in rt.work.waits_of("default")] == ["active"]


def test_final_brief_belongs_to_the_work_item(rt: Runtime) -> None:
    w = _create(rt)
    ok(rt.call("WaitFor", {"reason": "ci", "wake": "system", "delivery": "final"}, context={"brief": "b"}))
    assert rt.store.query("SELECT work_item_id FROM briefs")[0][0] == w


def test_agent_summary_reports_waits(rt: Runtime) -> None:
    ok(rt.call("WaitFor", {"reason": "r", "wake": "system", "delivery": "silent"}))
    s = rt.work.agent_summary("default")
    assert s["active_wait_count"] == 1 and s["active_wait_conditions"][0]["waiting_for"] == "r"


def test_recheck_after_ms_fires_a_correlated_system_tick(rt: Runtime) -> None:
    w = _create(rt)
    res = ok(
        rt.call("WaitFor", {"reason": "deploy", "wake": "external", "delivery": "silent", "recheck_after_ms": 100})
    )
    assert res["recheck_at"] and res["work_item"]["recheck_at"] == res["recheck_at"]
    wait = eventually(lambda: rt.work.waits_of("default", ("triggered",)))[0]
    tick = rt.messages(kind="system_tick")
    assert len(tick) == 1 and wait["trigger_message_id"] == tick[0]["id"] and tick[0]["work_item_id"] == w
    rec = rt.work.record(w)
    assert rec["recheck_consumed_at"] and rec["revision"] == 3
    rt.work.process_message(tick[0]["id"])
    assert rt.work.record(w)["blocked_by"] is None


def test_memory_search_finds_work_items_and_briefs(rt: Runtime) -> None:
    if "MemorySearch" not in rt.registry:
        pytest.skip("memory tools not registered")
    w = ok(rt.call("CreateWorkItem", {"objective": "deploy the frobnicator"}))["work_item"]["id"]
    ok(rt.call("CompleteWorkItem", {"work_item_id": w}, context={"report": "frobnicator shipped"}))
    refs = {r["source_ref"] for r in ok(rt.call("MemorySearch", {"query": "frobnicator"}))["results"]}
    brief = rt.work.record(w)["result_brief_id"]
    assert {f"work_item:{w}", f"brief:{brief}"} <= refs


def test_brief_of_the_wrong_type_is_an_input_error(rt: Runtime) -> None:
    _create(rt)
    e = err(
        rt.call("WaitFor", {"reason": "r", "wake": "operator_input", "delivery": "final"}, context={"brief": 123}),
        "invalid_tool_input",
    )
    assert e["details"]["field"] == "brief" and e["details"]["validation_error"] == "must be a string"
    assert "int" in e["message"]
    assert _no_waits(rt)


def test_two_work_items_waiting_on_one_timer_are_both_woken(rt: Runtime) -> None:
    """Review fix over §4.6 rule 1: a tick triggers every active wait bound to its timer."""
    a, b = _create(rt, "a"), _create(rt, "b")
    timer = ok(rt.call("CreateTimer", {"duration_ms": 300}))["timer"]["id"]
    waits = {
        wid: ok(
            rt.call(
                "WaitFor",
                {
                    "reason": f"tick for {wid}",
                    "wake": "timer",
                    "resource": timer,
                    "delivery": "silent",
                    "work_item_id": wid,
                },
            )
        )["wait_condition"]["id"]
        for wid in (a, b)
    }
    triggered = eventually(
        lambda: len(rt.work.waits_of("default", ("triggered",))) == 2 and rt.work.waits_of("default", ("triggered",))
    )
    (tick,) = rt.messages(kind="timer_tick")
    assert {w["id"] for w in triggered} == set(waits.values())
    assert {w["trigger_message_id"] for w in triggered} == {tick["id"]}
    adm = rt.work.process_message(tick["id"])
    assert sorted(adm["consumed_wait_ids"]) == sorted(waits.values())
    assert adm["consumed_wait_id"] in waits.values()
    for wid in (a, b):
        assert rt.work.record(wid)["blocked_by"] is None
        assert ok(rt.call("GetWorkItem", {"work_item_id": wid}))["work_item"]["readiness"] == "runnable"
    assert {w["id"] for w in rt.work.waits_of("default", ("resolved",))} == set(waits.values())


def test_unbound_timer_waits_keep_the_most_recent_rule(rt: Runtime) -> None:
    """Waits with no subject_ref (legacy records) still take one tick each, most recent first."""
    a, b = _create(rt, "a"), _create(rt, "b")
    timer = ok(rt.call("CreateTimer", {"duration_ms": 3_600_000}))["timer"]["id"]
    for wid in (a, b):
        ok(
            rt.call(
                "WaitFor",
                {
                    "reason": f"tick for {wid}",
                    "wake": "timer",
                    "resource": timer,
                    "delivery": "silent",
                    "work_item_id": wid,
                },
            )
        )
    with rt.store.tx() as db:
        db.execute("UPDATE waits SET subject_ref=NULL")
    newest = rt.work.waits_of("default", ("active",))[-1]  # registered last: the most recently updated
    with rt.store.tx() as db:
        db.execute("UPDATE timers SET next_fire_at=? WHERE id=?", ("2000-01-01T00:00:00.000000Z", timer))
    rt.work.notify_timers()
    (trig,) = eventually(lambda: rt.work.waits_of("default", ("triggered",)))
    assert trig["work_item_id"] == newest["work_item_id"]
