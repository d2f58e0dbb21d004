"""GetAgent and its hidden alias AgentGet (agents spec §5.2, §1.3 rule 6; cases 24, 25, 77)."""

from __future__ import annotations

from _support import err, ok, store_state

from holon_nb.tools._context import CallContext
from holon_nb.tools._dispatch import dispatch
from holon_nb.tools._registry import REGISTRY


def test_case_24_caller_summary_changes_nothing(rt) -> None:
    rt.call("ExecCommand", {"cmd": "true"})
    before = store_state(rt.store.path)
    agent = ok(rt.call("GetAgent", {}))["agent"]
    ident = agent["identity"]
    assert ident["agent_id"] == "default" and ident["profile_preset"] == "public_named"
    assert (ident["kind"], ident["visibility"], ident["ownership"], ident["status"]) == (
        "default",
        "public",
        "self_owned",
        "active",
    )
    assert ident["is_default_agent"] is True
    assert agent["active_task_count"] == 0
    assert agent["agent"]["status"] in ("booting", "awake_idle", "awake_running", "awaiting_task", "asleep", "stopped")
    assert agent["scheduling_posture"]["posture"] in (
        "unknown",
        "stopped",
        "active_turn",
        "has_queued_input",
        "has_runnable_work",
        "waiting_for_task",
        "waiting_for_external",
        "waiting_for_operator",
        "blocked",
        "idle",
    )
    assert agent["lifecycle"]["accepts_external_messages"] is True
    for key in (
        "model",
        "token_usage",
        "closure",
        "execution",
        "loaded_agents_md",
        "skills",
        "active_external_triggers",
        "recent_brief_count",
        "recent_event_count",
    ):
        assert key in agent, key
    ok(rt.call("GetAgent", {"agent_id": "default"}))
    assert store_state(rt.store.path) == before


def test_case_25_unknown_agent(rt) -> None:
    e = err(rt.call("GetAgent", {"agent_id": "ghost"}), "agent_not_found")
    assert e["domain"] == "not_found" and e["details"] == {"agent_id": "ghost"}
    err(rt.call("GetAgent", {"agent_id": ""}), "agent_not_found")
    e = err(rt.call("GetAgent", {"agent": "ghost"}), "invalid_tool_input")
    assert "unknown field `agent`" in e["details"]["parse_error"]


def test_case_77_agent_get_alias(rt) -> None:
    new = rt.call("GetAgent", {})
    old = rt.call("AgentGet", {})
    assert old.envelope["tool_name"] == "AgentGet" and new.envelope["tool_name"] == "GetAgent"
    assert old.envelope["result"] == new.envelope["result"]
    spec = REGISTRY.get("AgentGet")
    assert spec is not None and spec.alias_of == "GetAgent" and not spec.model_facing
    assert "AgentGet" not in [s.name for s in REGISTRY.model_facing()]
    assert "GetAgent" in [s.name for s in REGISTRY.model_facing()]


def test_case_77_model_round_calling_agent_get_is_not_exposed(rt) -> None:
    exposed = frozenset(s.name for s in REGISTRY.model_facing())
    call = CallContext(agent_id="default", exposed=exposed, round=1)

    async def model_call(name: str) -> dict:
        return await dispatch(name, {}, rt.tool_context(call))

    e = rt._loop.call(model_call, "AgentGet")
    assert e["status"] == "error" and e["error"]["kind"] == "tool_not_exposed_for_round"
    assert e["tool_name"] == "AgentGet"
    assert rt._loop.call(model_call, "GetAgent")["status"] == "success"


def test_private_child_and_lineage(rt) -> None:
    rt.store.ensure_agent("child_x", "private_child", parent_id="default")
    child = ok(rt.call("GetAgent", {}, agent="child_x"))["agent"]["identity"]
    assert child == {
        "agent_id": "child_x",
        "kind": "child",
        "visibility": "private",
        "ownership": "parent_supervised",
        "profile_preset": "private_child",
        "status": "active",
        "is_default_agent": False,
        "parent_agent_id": "default",
        "lineage_parent_agent_id": "default",
    }
    # readable by id from the parent (local trusted boundary), and listed as an active child
    assert ok(rt.call("GetAgent", {"agent_id": "child_x"}))["agent"]["identity"]["agent_id"] == "child_x"
    parent = ok(rt.call("GetAgent", {}))["agent"]
    assert [c["identity"]["agent_id"] for c in parent["active_children"]] == ["child_x"]
    assert ok(rt.call("GetAgent", {}, agent="child_x"))["agent"]["lifecycle"]["accepts_external_messages"] is False


def test_tasks_and_queued_messages(rt) -> None:
    r = ok(rt.call("ExecCommand", {"cmd": "sleep 30", "yield_time_ms": 0}))
    agent = ok(rt.call("GetAgent", {}))["agent"]
    assert agent["active_task_count"] == 1
    ok(rt.call("TaskStop", {"task_id": r["task_handle"]["task_id"]}))
    assert rt.wait_for_tasks(30) == []
    agent = ok(rt.call("GetAgent", {}))["agent"]
    assert agent["active_task_count"] == 0
    assert agent["agent"]["pending"] >= 1  # the TaskResult message is queued
    assert agent["recent_event_count"] >= 1
    assert agent["scheduling_posture"]["posture"] in ("has_queued_input", "has_runnable_work")


def test_brief_count_comes_from_memory(rt) -> None:
    with rt.store.tx() as db:
        for i in range(3):
            rt.memory.index(db, agent_id="default", source_ref=f"brief:brief_{i}", source_kind="brief", text="b")
    assert ok(rt.call("GetAgent", {}))["agent"]["recent_brief_count"] >= 3


def test_deleting_and_deleted_agents(rt) -> None:
    # the agents table grows a lifecycle status when deletion lands; GetAgent already honours it
    rt.store.ensure_agent("going", "public_named")
    rt.store.ensure_agent("gone", "public_named")
    with rt.store.tx() as db:
        if "status" not in {r[1] for r in db.execute("PRAGMA table_info(agents)")}:
            db.execute("ALTER TABLE agents ADD COLUMN status TEXT")
        db.execute("UPDATE agents SET status='deleting' WHERE id='going'")
        db.execute("UPDATE agents SET status='deleted' WHERE id='gone'")
    e = err(rt.call("GetAgent", {"agent_id": "going"}), "agent_deleting")
    assert e["details"] == {"agent_id": "going", "status": "deleting"}
    err(rt.call("GetAgent", {"agent_id": "gone"}), "agent_deleted")


def test_an_agent_named_in_a_direct_call_is_recorded(rt) -> None:
    err(rt.call("GetAgent", {"agent_id": "scratch"}), "agent_not_found")
    ident = ok(rt.call("GetAgent", {}, agent="scratch"))["agent"]["identity"]
    assert ident["agent_id"] == "scratch" and ident["profile_preset"] == "public_named"
    # Runtime.call records an agent the first time it is named, so other agents can address it
    assert ok(rt.call("GetAgent", {"agent_id": "scratch"}))["agent"]["identity"]["agent_id"] == "scratch"


def test_work_facts_come_from_the_work_service(rt) -> None:
    work_id = ok(rt.call("CreateWorkItem", {"objective": "ship the quokka release"}))["work_item"]["id"]
    agent = ok(rt.call("GetAgent", {}))["agent"]
    assert agent["agent"]["current_work_item_id"] == work_id  # case 71 (per D9)
    assert agent["runnable_work_item_count"] == 1
    assert agent["scheduling_posture"]["posture"] == "has_runnable_work"
    ok(rt.call("WaitFor", {"reason": "need approval", "wake": "operator_input", "delivery": "silent"}))
    agent = ok(rt.call("GetAgent", {}))["agent"]
    assert agent["scheduling_posture"]["posture"] == "waiting_for_operator"
    assert [w["kind"] for w in agent["active_wait_conditions"]] == ["operator"]
    assert agent["agent"]["status"] == "asleep"


def test_unstorable_agent_id_is_just_unknown(rt) -> None:
    err(rt.call("GetAgent", '{"agent_id": "\\ud800x"}'), "invalid_tool_input")  # a lone surrogate is no text
    err(rt.call("GetAgent", {"agent_id": "a\x00b"}), "agent_not_found")
