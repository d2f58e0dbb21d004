"""Enqueue, SendAgentMessage and the queue (agents spec §1.4, §5.3-§5.4): cases 26-30 and C10."""

from __future__ import annotations

from _support import err, eventually, ok
from work_helpers import count

from holon_nb.runtime import Runtime


def _agents(rt: Runtime) -> None:
    rt.store.ensure_agent("P", "public_named")
    rt.store.ensure_agent("C", "private_child", parent_id="P")
    rt.store.ensure_agent("pub2", "public_named")


def test_case26_private_child_reaches_only_its_parent(rt: Runtime) -> None:
    _agents(rt)
    e = err(
        rt.call("SendAgentMessage", {"agent_id": "pub2", "message": "hi"}, agent="C"), "agent_message_not_authorized"
    )
    assert e["domain"] == "policy"
    assert e["details"] == {"agent_id": "pub2", "caller_profile_preset": "private_child", "target_visibility": "public"}
    assert rt.messages("pub2") == []


def test_case27_child_to_parent(rt: Runtime) -> None:
    _agents(rt)
    r = rt.call("SendAgentMessage", {"agent_id": "P", "message": " done "}, agent="C")
    res = ok(r)
    assert res["agent_id"] == "P" and res["priority"] == "normal" and res["enqueued"] is True
    assert r.envelope["summary_text"] == "sent message to P"
    msg = rt.work.queued("P")[0]
    assert msg["id"] == res["message_id"] and msg["kind"] == "internal_followup" and msg["text"] == "done"
    assert msg["origin"] == {"kind": "system", "subsystem": "agent_message"}
    assert msg["authority"] == "operator_instruction"  # the calling (direct) turn's authority
    assert msg["metadata"] == {"sender_agent_id": "C"} and msg["work_item_id"] is None


def test_parent_to_child_and_public_to_public(rt: Runtime) -> None:
    _agents(rt)
    ok(rt.call("SendAgentMessage", {"agent_id": "C", "message": "go", "priority": "next"}, agent="P"))
    ok(rt.call("SendAgentMessage", {"agent_id": "pub2", "message": "hello"}, agent="P"))
    err(rt.call("SendAgentMessage", {"agent_id": "C", "message": "x"}, agent="pub2"), "agent_message_not_authorized")
    assert [m["text"] for m in rt.work.queued("C")] == ["go"]


def test_case28_self_target(rt: Runtime) -> None:
    e = err(rt.call("SendAgentMessage", {"agent_id": "default", "message": "x"}), "invalid_tool_input")
    assert e["details"]["field"] == "agent_id" and "Enqueue" in e["recovery_hint"]


def test_unknown_target_and_bad_priority(rt: Runtime) -> None:
    err(rt.call("SendAgentMessage", {"agent_id": "ghost", "message": "x"}), "agent_not_found")
    e = err(
        rt.call("SendAgentMessage", {"agent_id": "ghost", "message": "x", "priority": "interject"}),
        "invalid_tool_input",
    )
    assert "unknown variant" in e["details"]["parse_error"]


def test_case29_enqueue_legacy_interrupt(rt: Runtime) -> None:
    r = rt.call("Enqueue", {"text": "check CI", "priority": "interrupt"})
    res = ok(r)
    assert res == {"enqueued": True, "priority": "interject", "follow_up_text": "check CI"}
    assert r.envelope["summary_text"] == "enqueued follow-up: check CI"
    msg = rt.work.queued("default")[0]
    assert msg["kind"] == "internal_followup" and msg["priority"] == "interject"
    assert msg["origin"] == {"kind": "system", "subsystem": "tool_enqueue"}


def test_case30_enqueue_blank_text(rt: Runtime) -> None:
    e = err(rt.call("Enqueue", {"text": ""}), "invalid_tool_input")
    assert e["details"]["field"] == "text"
    assert count(rt, "SELECT COUNT(*) FROM messages") == 0


def test_queue_order_is_priority_then_arrival(rt: Runtime) -> None:
    for text, prio in (("bg", "background"), ("n1", "normal"), ("nx", None), ("ij", "interject"), ("n2", "normal")):
        ok(rt.call("Enqueue", {"text": text, **({"priority": prio} if prio else {})}))
    assert [m["text"] for m in rt.work.queued("default")] == ["ij", "nx", "n1", "n2", "bg"]


def test_enqueue_carries_the_binding_work_item(rt: Runtime) -> None:
    w = ok(rt.call("CreateWorkItem", {"objective": "w"}))["work_item"]["id"]
    ok(rt.call("Enqueue", {"text": "later"}, context={"binding": {"work_item_id": w}}))
    assert rt.work.queued("default")[0]["work_item_id"] == w


def test_c10_sibling_task_results_are_all_delivered(rt: Runtime) -> None:
    """C10: three promoted tasks under one work item, a wait on one: every TaskResult is kept."""
    w = ok(rt.call("CreateWorkItem", {"objective": "three builds"}))["work_item"]["id"]
    tids = [
        ok(rt.call("ExecCommand", {"cmd": f"sleep {s}; echo build-{i}", "yield_time_ms": 0}))["task_handle"]["task_id"]
        for i, s in enumerate((0.3, 0.5, 0.9))
    ]
    assert {rt.store.task(t)["work_item_id"] for t in tids} == {w}
    ok(rt.call("WaitFor", {"reason": "last build", "wake": "task_result", "resource": tids[2], "delivery": "silent"}))
    assert rt.wait_for_tasks(20) == []
    results = eventually(lambda: len(rt.messages(kind="TaskResult")) == 3 and rt.messages(kind="TaskResult"))
    assert sorted(m["origin_task_id"] for m in results) == sorted(tids)
    assert all(m["status"] == "queued" and m["work_item_id"] == w for m in results)
    assert [m["origin_task_id"] for m in rt.work.queued("default")] == tids  # arrival order, none dropped
    wait = rt.work.waits_of("default", ("triggered",))[0]
    last = next(m for m in results if m["origin_task_id"] == tids[2])
    assert wait["trigger_message_id"] == last["id"]
    for m in results:  # processing the siblings resolves nothing; the awaited one unblocks the item
        adm = rt.work.process_message(m["id"])
        assert (adm["consumed_wait_id"] is not None) == (m["id"] == last["id"])
    assert rt.work.record(w)["blocked_by"] is None
    assert len(rt.messages(kind="TaskResult")) == 3 and rt.work.queued("default") == []
    for i, t in enumerate(tids):
        assert f"build-{i}" in next(m for m in results if m["origin_task_id"] == t)["text"]


def test_task_result_before_the_wait_is_not_lost(rt: Runtime) -> None:
    ok(rt.call("CreateWorkItem", {"objective": "w"}))
    tid = ok(rt.call("ExecCommand", {"cmd": "true", "yield_time_ms": 0}))["task_handle"]["task_id"]
    rt.wait_for_tasks(10)
    res = ok(rt.call("WaitFor", {"reason": "r", "wake": "task_result", "resource": tid, "delivery": "silent"}))
    assert res["disposition"] == "task_result_queued"
    assert count(rt, "SELECT COUNT(*) FROM waits") == 0
