"""Work-item tools (agents spec §3, §5.11-§5.16): cases 48, 53-59, 61, 62, 71, 72, 75 and more."""

from __future__ import annotations

from pathlib import Path

from _support import err, ok
from work_helpers import count

from holon_nb.runtime import Runtime


def _create(rt: Runtime, objective: str = "ship v2", agent: str | None = None, **kw) -> str:
    return ok(rt.call("CreateWorkItem", {"objective": objective, **kw}, agent=agent))["work_item"]["id"]


def _rev(rt: Runtime, wid: str) -> int:
    return rt.work.record(wid)["revision"]


def test_create_seeds_record_plan_and_view(rt: Runtime) -> None:
    r = rt.call(
        "CreateWorkItem",
        {
            "objective": "  ship v2  ",
            "plan": "step one\n",
            "plan_status": "ready",
            "todo_list": [{"text": " a ", "state": "pending"}],
        },
    )
    item = ok(r)["work_item"]
    assert item["objective"] == "ship v2" and item["state"] == "open" and item["plan_status"] == "ready"
    assert item["todo_list"] == [{"text": "a", "state": "pending"}]
    assert "revision" not in item and item["readiness"] == "runnable"
    art = item["plan_artifact"]
    assert art["relative_path"] == f"work-items/{item['id']}/plan.md" and art["workspace_alias"] == "agent_home"
    assert Path(art["path"]).read_text() == "step one" and art["preview"] == "step one"
    assert art["hash"].startswith("sha256:") and art["bytes"] == len("step one")
    assert rt.work.record(item["id"])["revision"] == 1


def test_plan_edits_on_disk_show_in_the_view(rt: Runtime) -> None:
    wid = _create(rt)
    path = Path(rt.work.record(wid)["plan_artifact"]["path"])
    path.write_text("x" * 2000)
    art = ok(rt.call("GetWorkItem", {"work_item_id": wid}))["work_item"]["plan_artifact"]
    assert art["bytes"] == 2000 and len(art["preview"]) == 1600 and art["preview_complete"] is False


def test_create_rejects_blank_objective_and_todo_text(rt: Runtime) -> None:
    e = err(rt.call("CreateWorkItem", {"objective": "   "}), "invalid_tool_input")
    assert e["details"]["field"] == "objective" and e["details"]["validation_error"] == "must not be empty"
    e = err(
        rt.call(
            "CreateWorkItem",
            {"objective": "a", "todo_list": [{"text": "x", "state": "pending"}, {"text": " ", "state": "pending"}]},
        ),
        "invalid_tool_input",
    )
    assert e["details"]["field"] == "todo_list[1].text"
    assert count(rt, "SELECT COUNT(*) FROM work_items") == 0


def test_case71_create_takes_focus_when_none(rt: Runtime) -> None:
    item = ok(rt.call("CreateWorkItem", {"objective": "a"}))["work_item"]
    assert item["is_current"] is True and item["focus"] == "current"
    assert rt.work.agent_summary("default")["current_work_item_id"] == item["id"]
    if "GetAgent" in rt.registry:
        agent = ok(rt.call("GetAgent", {}))["agent"]
        assert agent["agent"]["current_work_item_id"] == item["id"]


def test_case72_create_keeps_existing_focus_and_tasks(rt: Runtime) -> None:
    w = _create(rt, "a")
    tid = ok(rt.call("ExecCommand", {"cmd": "sleep 0.2", "yield_time_ms": 0}))["task_handle"]["task_id"]
    item = ok(rt.call("CreateWorkItem", {"objective": "b"}))["work_item"]
    assert item["is_current"] is False and item["focus"] == "queued"
    assert rt.work.agent_summary("default")["current_work_item_id"] == w
    assert rt.store.task(tid)["work_item_id"] == w
    rt.wait_for_tasks(10)
    assert rt.store.task(tid)["work_item_id"] == w


def test_update_changes_only_given_fields_and_bumps_revision(rt: Runtime) -> None:
    wid = _create(rt, todo_list=[{"text": "a", "state": "pending"}])
    r = ok(rt.call("UpdateWorkItem", {"work_item_id": wid, "plan_status": "needs_input"}))["work_item"]
    assert r["plan_status"] == "needs_input" and r["objective"] == "ship v2"
    assert r["readiness"] == "waiting_for_operator" and r["is_current"] is True  # focus kept (§5.12 rule 4)
    assert _rev(rt, wid) == 2
    ok(rt.call("UpdateWorkItem", {"work_item_id": wid}))  # nothing given: nothing written
    assert _rev(rt, wid) == 2
    ok(rt.call("UpdateWorkItem", {"work_item_id": wid, "todo_list": []}))
    assert rt.work.record(wid)["todo_list"] == [] and _rev(rt, wid) == 3
    revs = [
        r[0]
        for r in rt.store.query(
            "SELECT revision FROM work_item_revisions WHERE work_item_id=? ORDER BY revision", (wid,)
        )
    ]
    assert revs == [1, 2, 3]


def test_update_expected_revision_from_context(rt: Runtime) -> None:
    wid = _create(rt)
    e = err(
        rt.call("UpdateWorkItem", {"work_item_id": wid, "objective": "x"}, context={"expected_revision": 7}),
        "revision_conflict",
    )
    assert e["domain"] == "conflict" and e["retryable"] is True
    assert e["details"] == {"record_type": "work_item", "record_id": wid, "expected_revision": 7, "actual_revision": 1}
    assert e["recovery_hint"] == "retry with fresh state"
    ok(rt.call("UpdateWorkItem", {"work_item_id": wid, "objective": "x"}, context={"expected_revision": 1}))


def test_update_refuses_result_and_wait_fields(rt: Runtime) -> None:
    wid = _create(rt)
    for key in ("blocked_by", "plan", "recheck_after_ms"):
        e = err(rt.call("UpdateWorkItem", {"work_item_id": wid, key: "x"}), "invalid_tool_input")
        assert f"unknown field `{key}`" in e["details"]["parse_error"]
    assert _rev(rt, wid) == 1


def test_case57_update_completed_item(rt: Runtime) -> None:
    wid = _create(rt)
    ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "done"}))
    e = err(rt.call("UpdateWorkItem", {"work_item_id": wid, "objective": "x"}), "work_item_not_open")
    assert e["details"]["state"] == "completed"


def test_case58_bad_todo_state_hint_lists_states(rt: Runtime) -> None:
    wid = _create(rt)
    e = err(
        rt.call("UpdateWorkItem", {"work_item_id": wid, "todo_list": [{"text": "a", "state": "done"}]}),
        "invalid_tool_input",
    )
    assert "unknown variant" in e["details"]["parse_error"]
    for state in ("pending", "in_progress", "completed"):
        assert state in e["recovery_hint"]


def test_todo_list_as_json_string_is_coerced(rt: Runtime) -> None:
    wid = _create(rt)
    ok(rt.call("UpdateWorkItem", {"work_item_id": wid, "todo_list": '[{"text": "a", "state": "completed"}]'}))
    assert rt.work.record(wid)["todo_list"] == [{"text": "a", "state": "completed"}]


def test_update_foreign_and_unknown(rt: Runtime) -> None:
    rt.store.ensure_agent("other", "public_named")
    foreign = _create(rt, agent="other")
    err(rt.call("UpdateWorkItem", {"work_item_id": foreign, "objective": "x"}), "work_item_access_denied")
    err(rt.call("UpdateWorkItem", {"work_item_id": "work_000000000000000", "objective": "x"}), "work_item_not_found")


def test_case59_clear_blocker_needs_reason(rt: Runtime) -> None:
    wid = _create(rt)
    e = err(rt.call("PickWorkItem", {"work_item_id": wid, "clear_blocker": True}), "invalid_tool_input")
    assert e["details"]["field"] == "reason"
    err(rt.call("PickWorkItem", {"work_item_id": wid, "clear_blocker": True, "reason": "  "}), "invalid_tool_input")


def test_pick_yields_runnable_current_and_completion_resumes_it(rt: Runtime) -> None:
    a = _create(rt, "a")
    b = _create(rt, "b")
    res = ok(rt.call("PickWorkItem", {"work_item_id": b, "reason": "urgent"}))
    tr = res["transition"]
    assert tr["switch_kind"] == "yield_current" and tr["previous_work_item_id"] == a
    assert res["terminal_transition"] is False and res["current_work_item_id"] == b  # direct call: applies now
    assert res["continuation_created"]["suspended_work_item_id"] == a
    assert res["current_work_item"]["revision"] == 1 and res["previous_work_item"]["id"] == a
    listed = ok(rt.call("ListWorkItems", {"filter": "yielded"}))
    assert [w["id"] for w in listed["work_items"]] == [a]
    done = ok(rt.call("CompleteWorkItem", {"work_item_id": b}, context={"report": "b done"}))
    assert done["continuation_resumed"]["suspended_work_item_id"] == a
    assert rt.work.agent_summary("default")["current_work_item_id"] == a
    assert ok(rt.call("GetWorkItem", {"work_item_id": a}))["work_item"]["readiness"] == "runnable"


def test_pick_back_to_suspended_item_resumes_its_frame(rt: Runtime) -> None:
    a = _create(rt, "a")
    b = _create(rt, "b")
    ok(rt.call("PickWorkItem", {"work_item_id": b, "reason": "urgent"}))
    res = ok(rt.call("PickWorkItem", {"work_item_id": a, "reason": "back"}))
    assert res["transition"]["switch_kind"] == "explicit_yield_return"
    assert res["continuation_resolved"]["suspended_work_item_id"] == a
    assert count(rt, "SELECT COUNT(*) FROM continuation_frames WHERE state='active'") == 0
    same = ok(rt.call("PickWorkItem", {"work_item_id": a}))
    assert same["transition"]["switch_kind"] == "same_work_item"


def test_pick_clear_blocker_cancels_waits(rt: Runtime) -> None:
    wid = _create(rt)
    wait = ok(rt.call("WaitFor", {"reason": "ci", "wake": "external", "delivery": "silent"}))["wait_condition"]
    res = ok(rt.call("PickWorkItem", {"work_item_id": wid, "clear_blocker": True, "reason": "ci is green"}))
    assert res["transition"]["blocker_cleared"] is True
    assert res["transition"]["cancelled_wait_condition_ids"] == [wait["id"]]
    rec = rt.work.record(wid)
    assert rec["blocked_by"] is None and rec["revision"] == 3
    assert rt.work.waits_of("default", ("cancelled",))[0]["id"] == wait["id"]
    assert res["transition"]["current_focus_mode"] == "runnable"


def test_pick_blocked_item_is_inspection(rt: Runtime) -> None:
    wid = _create(rt)
    ok(rt.call("WaitFor", {"reason": "ci", "wake": "external", "delivery": "silent"}))
    other = _create(rt, "other")  # the blocked item keeps focus, so the new item does not take it
    res = ok(rt.call("PickWorkItem", {"work_item_id": wid}))
    assert res["transition"]["current_focus_mode"] == "inspection"
    res = ok(rt.call("PickWorkItem", {"work_item_id": other}))
    assert res["transition"]["switch_kind"] == "explicit_focus_override"


def test_case61_get_unknown_and_foreign(rt: Runtime) -> None:
    err(rt.call("GetWorkItem", {"work_item_id": "work_nope"}), "unknown_work_item")
    rt.store.ensure_agent("other", "public_named")
    foreign = _create(rt, agent="other")
    e = err(rt.call("GetWorkItem", {"work_item_id": foreign}), "unknown_work_item")
    assert e["domain"] == "not_found"


def test_get_context_and_todos(rt: Runtime) -> None:
    wid = _create(rt, todo_list=[{"text": "a", "state": "pending"}])
    res = ok(rt.call("GetWorkItem", {"work_item_id": wid}))
    assert res["context"] == {"current_work_item_id": wid} and "todo_list" not in res["work_item"]
    res = ok(rt.call("GetWorkItem", {"work_item_id": wid, "include_todo_list": True}))
    assert res["work_item"]["todo_list"] == [{"text": "a", "state": "pending"}]


def test_case62_list_limit_clamps_and_counts(rt: Runtime) -> None:
    for i in range(150):
        _create(rt, f"item {i}")
    small = ok(rt.call("ListWorkItems", {"limit": 0}))
    assert small["limit"] == 1 and small["returned"] == 1 and small["total_matching"] == 150
    big = ok(rt.call("ListWorkItems", {"limit": 1000, "filter": "open"}))
    assert big["limit"] == 100 and big["returned"] == 100 and big["total_matching"] == 150
    assert big["work_items"][0]["candidate_class"] == "current_runnable"
    queued = [w["created_at"] for w in big["work_items"][1:]]
    assert queued == sorted(queued)  # queued_runnable: oldest first


def test_list_filters(rt: Runtime) -> None:
    a = _create(rt, "a")
    b = _create(rt, "b")
    c = _create(rt, "c")
    ok(rt.call("WaitFor", {"reason": "x", "wake": "external", "delivery": "silent", "work_item_id": b}))
    ok(rt.call("CompleteWorkItem", {"work_item_id": c}, context={"report": "ok"}))

    def ids(flt: str) -> list[str]:
        return [w["id"] for w in ok(rt.call("ListWorkItems", {"filter": flt}))["work_items"]]

    assert ids("current") == [a] and ids("blocked") == [b] and ids("completed") == [c]
    assert ids("runnable") == [a] and ids("queued") == [] and set(ids("open")) == {a, b}
    assert ids("all") == [a, b, c]  # current_runnable, blocked, completed_recent
    done = ok(rt.call("ListWorkItems", {"filter": "completed"}))["work_items"][0]
    assert done["completion_report"] == {
        "text": "ok",
        "source": "result_brief",
        "brief_id": done["completion_report"]["brief_id"],
        "created_at": done["completion_report"]["created_at"],
    }


def test_case75_complete_with_and_without_report(rt: Runtime) -> None:
    wid = _create(rt)
    e = err(rt.call("CompleteWorkItem", {"work_item_id": wid}), "missing_completion_report")
    assert e["domain"] == "validation"
    assert rt.work.record(wid)["state"] == "open" and count(rt, "SELECT COUNT(*) FROM briefs") == 0
    r = rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "  Done.  "})
    res = ok(r)
    assert r.status == "success" and res["completed_transition"] is True and res["completion_report_promoted"] is True
    rec = rt.work.record(wid)
    assert rec["state"] == "completed" and rec["revision"] == 2
    brief = rt.store.query("SELECT * FROM briefs WHERE id=?", (rec["result_brief_id"],))[0]
    assert brief["text"] == "Done." and brief["kind"] == "result" and brief["work_item_id"] == wid
    assert res["work_item"]["completion_report"]["text"] == "Done."
    assert rec["completion_intent"]["report_state"] == "bound"
    assert rt.work.agent_summary("default")["current_work_item_id"] is None  # focus released


def test_case53_complete_is_idempotent(rt: Runtime) -> None:
    wid = _create(rt)
    ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "a"}))
    res = ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "b"}))
    assert res["completed_transition"] is False and res["completion_report_promoted"] is False
    assert _rev(rt, wid) == 2 and count(rt, "SELECT COUNT(*) FROM briefs") == 1


def test_case48_complete_foreign_item(rt: Runtime) -> None:
    rt.store.ensure_agent("other", "public_named")
    w2 = _create(rt, agent="other")
    e = err(rt.call("CompleteWorkItem", {"work_item_id": w2}, context={"report": "x"}), "work_item_access_denied")
    assert e["domain"] == "policy"
    assert rt.work.record(w2)["state"] == "open" and count(rt, "SELECT COUNT(*) FROM briefs") == 0


def test_case54_case55_execution_binding(rt: Runtime) -> None:
    w1 = _create(rt, "one")
    w2 = _create(rt, "two")
    err(
        rt.call("CompleteWorkItem", {"work_item_id": w2}, context={"binding": {"work_item_id": w1}, "report": "x"}),
        "work_item_execution_binding_mismatch",
    )
    e = err(
        rt.call("CompleteWorkItem", {"work_item_id": w2}, context={"binding": None, "report": "x"}),
        "work_item_execution_binding_missing",
    )
    assert e["domain"] == "policy"
    assert rt.work.record(w2)["state"] == "open"
    ok(rt.call("CompleteWorkItem", {"work_item_id": w2}, context={"binding": {"work_item_id": w2}, "report": "x"}))


def test_case56_unfinished_todos_warning(rt: Runtime) -> None:
    wid = _create(
        rt,
        todo_list=[
            {"text": "a", "state": "pending"},
            {"text": "b", "state": "pending"},
            {"text": "c", "state": "completed"},
        ],
    )
    res = ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "partial"}))
    w = res["warnings"][0]
    assert w["kind"] == "unfinished_todos" and w["pending_count"] == 2 and w["in_progress_count"] == 0
    assert [s["text"] for s in w["sample"]] == ["a", "b"]
    assert rt.work.record(wid)["state"] == "completed"


def test_completion_cancels_waits(rt: Runtime) -> None:
    wid = _create(rt)
    wait = ok(rt.call("WaitFor", {"reason": "x", "wake": "system", "delivery": "silent"}))["wait_condition"]
    ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "done anyway"}))
    assert rt.work.waits_of("default", ("cancelled",))[0]["id"] == wait["id"]
    assert rt.work.record(wid)["blocked_by"] is None


def test_events_follow_commits(rt: Runtime) -> None:
    seen: list[tuple[str, dict]] = []
    rt.subscribe(lambda e: seen.append((e.kind, e.data)))
    wid = _create(rt)
    kinds = [k for k, _ in seen]
    assert "work_item_changed" in kinds and "focus_changed" in kinds
    changed = next(d for k, d in seen if k == "work_item_changed")
    assert changed["work_item_id"] == wid and changed["revision"] == 1


def test_board_rows(rt: Runtime) -> None:
    wid = _create(rt, todo_list=[{"text": "a", "state": "pending"}])
    ok(rt.call("WaitFor", {"reason": "approval", "wake": "operator_input", "delivery": "silent"}))
    row = rt.work.board("default")[0]
    assert row["id"] == wid and row["blocked_by"] == "approval" and row["readiness"] == "waiting_for_operator"
    assert row["todo_list"] == [{"text": "a", "state": "pending"}] and row["waits"][0]["kind"] == "operator"


def test_list_page_matches_full_derivation(rt: Runtime) -> None:
    """The SQL-ordered page agrees with deriving and sorting every item (all filters, mixed states)."""
    import random

    from holon_nb.runtime.work._views import (
        FILTERS,
        derive,
        list_page,
        load_context,
        matches_filter,
        order_views,
    )

    rnd = random.Random(3)
    ids = [_create(rt, f"item {i}") for i in range(40)]
    for wid in ids:
        roll = rnd.random()
        if roll < 0.15:
            ok(
                rt.call(
                    "WaitFor",
                    {
                        "reason": "x",
                        "wake": rnd.choice(["external", "operator_input", "system"]),
                        "delivery": "silent",
                        "work_item_id": wid,
                    },
                )
            )
        elif roll < 0.3:
            ok(rt.call("UpdateWorkItem", {"work_item_id": wid, "plan_status": "needs_input"}))
        elif roll < 0.45:
            ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "done"}))
    ok(rt.call("PickWorkItem", {"work_item_id": ids[-1], "reason": "yield"}))  # a frame: one item yielded
    rt.work.system_tick("default")  # triggers one system wait, if any
    db = rt.work.reader()
    ctx = load_context(db.execute, "default")
    recs = [dict(r) for r in db.execute("SELECT * FROM work_items WHERE agent_id='default'")]
    for flt in FILTERS:
        full = order_views([(r, derive(r, ctx)) for r in recs if matches_filter(flt, r, derive(r, ctx))])
        for limit in (1, 7, 100):
            total, page = list_page(db, "default", ctx, flt, limit)
            assert total == len(full), flt
            assert [r["id"] for r, _ in page] == [r["id"] for r, _ in full[:limit]], (flt, limit)


def test_hostile_text_is_stored_or_refused_never_an_internal_error(rt: Runtime) -> None:
    bad = "a\ud800b\x00c"
    calls = [
        ("CreateWorkItem", {"objective": bad, "plan": bad, "todo_list": [{"text": bad, "state": "pending"}]}),
        ("UpdateWorkItem", {"work_item_id": bad, "objective": bad}),
        ("GetWorkItem", {"work_item_id": bad}),
        ("PickWorkItem", {"work_item_id": bad, "reason": bad, "clear_blocker": True}),
        ("CompleteWorkItem", {"work_item_id": bad}),
        ("WaitFor", {"reason": bad, "wake": "external", "delivery": "final", "resource": bad}),
        ("WaitFor", {"reason": bad, "wake": "timer", "delivery": "silent", "resource": bad, "work_item_id": bad}),
        ("CreateTimer", {"duration_ms": 100000, "summary": bad}),
        ("CreateTimer", {"fire_at": bad}),
        ("GetTimer", {"timer_id": bad}),
        ("CancelTimer", {"timer_id": bad}),
        ("Enqueue", {"text": bad}),
        ("SendAgentMessage", {"agent_id": bad, "message": bad}),
    ]
    for name, args in calls:
        r = rt.call(name, args, context={"brief": bad, "report": bad})
        assert r.status in ("success", "error")
        assert r.status == "success" or r.envelope["error"]["kind"] != "internal_error", r.full_receipt
    ok(rt.call("ListWorkItems", {"include_todo_list": True}))


def test_case60_pick_in_an_activation_is_terminal(rt: Runtime) -> None:
    a = _create(rt, "a")
    b = _create(rt, "b")
    binding = {
        "turn_id": "turn_00000000000000a",
        "source_message_id": "msg_00000000000000a",
        "activation_id": "act_1",
        "work_item_id": a,
    }
    rt.work.begin_execution("default", binding)
    res = ok(rt.call("PickWorkItem", {"work_item_id": b, "reason": "urgent"}, context={"binding": binding}))
    assert res["transition"]["switch_kind"] == "yield_current" and res["terminal_transition"] is True
    assert res["continuation_created"]["active_work_item_id"] == b
    assert rt.work.agent_summary("default")["current_work_item_id"] == a  # B takes effect next activation
    assert "next activation" in res["binding_note"]
    # a stale binding (another turn is current) fences completion
    rt.work.begin_execution("default", {**binding, "turn_id": "turn_00000000000000b"})
    err(
        rt.call("CompleteWorkItem", {"work_item_id": a}, context={"binding": binding, "report": "x"}),
        "work_item_execution_binding_stale",
    )
    rt.work.end_execution("default", "turn_00000000000000b")
    assert rt.work.agent_summary("default")["current_turn_work_item_id"] is None


def _snapshot(rt: Runtime) -> list:
    tables = (
        "work_items",
        "work_item_revisions",
        "continuation_frames",
        "agent_work_state",
        "waits",
        "timers",
        "briefs",
        "messages",
        "tasks",
        "agents",
    )
    return [[tuple(r) for r in rt.store.query(f"SELECT * FROM {t} ORDER BY 1")] for t in tables]


def test_reads_change_no_state(rt: Runtime) -> None:
    """C09: inspection (list, get, board, GetAgent facts) writes nothing."""
    wid = _create(rt, todo_list=[{"text": "a", "state": "pending"}])
    timer = ok(rt.call("CreateTimer", {"duration_ms": 3600000}))["timer"]["id"]
    ok(rt.call("WaitFor", {"reason": "r", "wake": "timer", "resource": timer, "delivery": "silent"}))
    before = _snapshot(rt)
    for name, args in (
        ("ListWorkItems", {"include_todo_list": True}),
        ("GetWorkItem", {"work_item_id": wid}),
        ("ListTimers", {}),
        ("GetTimer", {"timer_id": timer}),
    ):
        ok(rt.call(name, args))
    rt.work.board("default")
    rt.work.agent_summary("default")
    rt.work.queued("default")
    assert _snapshot(rt) == before


def test_default_list_of_twenty_planned_items_fits_the_budget(rt: Runtime) -> None:
    """Review fix: list views are compact (departure from §5.15 recorded in runtime/work/_views.py)."""
    todos = [{"text": "write the migration", "state": "completed"}, {"text": "run it on staging", "state": "pending"}]
    ids = [
        _create(rt, f"objective {i}: make the nightly build reproducible", plan="- step\n" * 300, todo_list=todos)
        for i in range(20)
    ]
    for wid in ids[:4]:
        ok(
            rt.call(
                "WaitFor",
                {
                    "reason": "waiting for the upstream release to land",
                    "wake": "external",
                    "delivery": "silent",
                    "work_item_id": wid,
                    "resource": "github:o/r#7",
                },
            )
        )
    r = rt.call("ListWorkItems", {})
    listed = ok(r)
    assert r.projected is False, len(r.full_receipt)
    assert listed["returned"] == listed["total_matching"] == 20
    item = next(w for w in listed["work_items"] if w["id"] == ids[0])
    assert item["plan_artifact"] == {"bytes": len("- step\n" * 300) - 1}  # the plan is stored trimmed
    assert "agent_id" not in item and "scheduling_state" not in item and item["reason_code"] == "active_external_wait"
    (wait,) = item["active_wait_conditions"]
    assert wait["kind"] == "external" and wait["status"] == "active" and wait["subject_ref"] == "github:o/r#7"
    assert wait["waiting_for"] == "waiting for the upstream release to land" and "continuation" not in wait
    # GetWorkItem keeps the full view
    full = ok(rt.call("GetWorkItem", {"work_item_id": ids[0]}))["work_item"]
    assert len(full["plan_artifact"]["preview"]) == 1600 and full["plan_artifact"]["preview_complete"] is False
    assert "continuation" in full["active_wait_conditions"][0]


def test_report_of_the_wrong_type_is_an_input_error(rt: Runtime) -> None:
    wid = _create(rt)
    for bad, type_name in ((123, "int"), (["done"], "list"), (True, "bool")):
        e = err(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": bad}), "invalid_tool_input")
        assert e["details"]["field"] == "report" and e["details"]["validation_error"] == "must be a string"
        assert type_name in e["message"]
    assert rt.work.record(wid)["state"] == "open"
    err(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": "  "}), "missing_completion_report")


def test_list_shortens_long_completion_reports(rt: Runtime) -> None:
    wid = _create(rt)
    report = "Done. " + "details " * 100
    ok(rt.call("CompleteWorkItem", {"work_item_id": wid}, context={"report": report}))
    (item,) = ok(rt.call("ListWorkItems", {"filter": "completed"}))["work_items"]
    short = item["completion_report"]
    assert short["text_truncated"] is True and len(short["text"]) == 200 and short["text"].endswith("…")
    assert report.strip().startswith(short["text"][:-1])
    full = ok(rt.call("GetWorkItem", {"work_item_id": wid}))["work_item"]["completion_report"]
    assert full["text"] == report.strip() and "text_truncated" not in full
