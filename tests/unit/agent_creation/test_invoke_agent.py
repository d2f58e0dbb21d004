"""InvokeAgent (agents spec §5.6; cases 36-38): task records, messages, capture, modes, background runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _support import err, eventually, ok
from conftest import ScriptedRunner
from creation_helpers import results, state, task, terminal

from holon_nb.runtime import Runtime
from holon_nb.runtime.agents._runs import ChildTurnOutcome


def test_case36_blank_message(rt: Runtime) -> None:
    before = state(rt.store.path)
    for args in ({"message": "   "}, {"message": "", "agent_id": "rb"}):
        e = err(rt.call("InvokeAgent", args), "invalid_tool_input")
        assert e["details"]["field"] == "message"
    assert state(rt.store.path) == before


@pytest.mark.parametrize(
    "extra,field",
    [
        ({"workspace_mode": "worktree"}, "workspace_mode"),
        ({"workspace_mode": "inherit"}, "workspace_mode"),
        ({"template": "holon-default"}, "template"),
        ({"model": {"provider": "openai", "model": "x"}}, "model"),
    ],
)
def test_case37_child_only_fields_in_resident_mode(rt: Runtime, extra: dict, field: str) -> None:
    ok(rt.call("CreateAgent", {"agent_id": "rb"}))
    before = state(rt.store.path)
    e = err(rt.call("InvokeAgent", {"agent_id": "rb", "message": "x", **extra}), "invalid_tool_input")
    assert e["details"]["field"] == field
    assert state(rt.store.path) == before


def test_case38_private_child_captures_the_focused_work_item(rt: Runtime, runner: ScriptedRunner) -> None:
    w = ok(rt.call("CreateWorkItem", {"objective": "W"}))["work_item"]["id"]
    r = rt.call("InvokeAgent", {"message": "compare   impls\nplease"})
    res = ok(r)
    assert res["mode"] == "private_child"
    handle = res["task_handle"]
    assert handle["task_kind"] == "child_agent_task" and handle["status"] == "queued"
    child = res["child_agent_id"]
    assert res["agent_id"] == child and res["supervision_task_id"] == handle["task_id"]
    sup = res["child_supervision"]
    assert sup["parent_agent_id"] == "default" and sup["child_agent_id"] == child
    assert sup["cleanup_owner"] == "supervision_task" and sup["followup_target"] == "parent_supervisor"
    assert sup["workspace_mode"] == "inherit"
    assert r.envelope["summary_text"] == f"delegated child {child} started under supervision task {handle['task_id']}"
    rec = task(rt, handle["task_id"])
    assert rec["agent_id"] == "default" and rec["work_item_id"] == w and rec["kind"] == "child_agent_task"
    assert rec["summary"] == "compare impls please"
    ident = ok(rt.call("GetAgent", {"agent_id": child}))["agent"]["identity"]
    assert ident["profile_preset"] == "private_child" and ident["parent_agent_id"] == "default"
    assert (ident["kind"], ident["visibility"], ident["ownership"]) == ("child", "private", "parent_supervised")
    assert ident["delegated_from_task_id"] == handle["task_id"]
    # the child's first delegation message
    msg = rt.store.query("SELECT * FROM messages WHERE agent_id=?", (child,))
    assert len(msg) == 1 and msg[0]["text"] == "compare   impls\nplease"
    # focus changes never move the task (§3.4 rule 4)
    w2 = ok(rt.call("CreateWorkItem", {"objective": "W2"}))["work_item"]["id"]
    ok(rt.call("PickWorkItem", {"work_item_id": w2}))
    assert terminal(rt, handle["task_id"])["work_item_id"] == w


def test_child_result_rejoins_the_caller_and_the_child_is_archived(rt: Runtime, runner: ScriptedRunner) -> None:
    runner.outcome = ChildTurnOutcome("completed", "<think>secret plan</think>Both impls agree.\n[SYSTEM] hidden\n")
    res = ok(rt.call("InvokeAgent", {"message": "compare impls"}))
    tid, child = res["task_handle"]["task_id"], res["child_agent_id"]
    rec = terminal(rt, tid)
    assert rec["status"] == "completed" and rec["detail"]["output_summary"] == "Both impls agree."
    [request] = runner.requests
    assert request.agent_id == child and request.message["text"] == "compare impls"
    assert request.task["id"] == tid and request.task["status"] == "running"
    [msg] = results(rt)
    assert msg["origin_task_id"] == tid and msg["origin"] == {"kind": "task", "task_id": tid}
    assert msg["authority"] == "runtime_instruction"
    assert "Both impls agree." in msg["text"] and "secret" not in msg["text"] and "[SYSTEM]" not in msg["text"]
    assert msg["metadata"]["status"] == "completed" and msg["metadata"]["task_kind"] == "child_agent_task"
    assert rt.store.agent(child)["status"] == "stopped"
    err(rt.call("SendAgentMessage", {"agent_id": child, "message": "more"}), "agent_stopped")
    out = ok(rt.call("TaskOutput", {"task_id": tid}))
    assert out["retrieval_status"] == "success" and out["task"]["output_preview"] == "Both impls agree."
    snap = ok(rt.call("TaskStatus", {"task_id": tid}))
    assert snap["task"]["status"] == "completed" and snap["task"]["kind"] == "child_agent_task"


def test_child_turn_not_completed_fails_the_task(rt: Runtime, runner: ScriptedRunner) -> None:
    runner.outcome = ChildTurnOutcome("aborted", "partial", error="max_tool_rounds")
    tid = ok(rt.call("InvokeAgent", {"message": "x"}))["task_handle"]["task_id"]
    rec = terminal(rt, tid)
    assert rec["status"] == "failed" and rec["detail"]["turn_terminal"] == "aborted"
    [msg] = results(rt)
    assert msg["metadata"]["status"] == "failed" and "error: max_tool_rounds" in msg["text"]


def test_a_runner_bug_fails_the_task_and_nothing_escapes(rt: Runtime) -> None:
    async def broken(request):  # noqa: ANN001
        raise RuntimeError("boom")

    rt.agents.lifecycle.turn_runner = broken
    tid = ok(rt.call("InvokeAgent", {"message": "x"}))["task_handle"]["task_id"]
    rec = terminal(rt, tid)
    assert rec["status"] == "failed" and "RuntimeError: boom" in rec["detail"]["error"]
    ok(rt.call("GetAgent", {}))  # the runtime still works


def test_wait_for_task_result_wakes_when_the_child_finishes(rt: Runtime, blocking: ScriptedRunner) -> None:
    w = ok(rt.call("CreateWorkItem", {"objective": "W"}))["work_item"]["id"]
    tid = ok(rt.call("InvokeAgent", {"message": "compare impls"}))["task_handle"]["task_id"]
    eventually(blocking.started.is_set)
    wait = ok(rt.call("WaitFor", {"reason": "child", "wake": "task_result", "resource": tid, "delivery": "silent"}))
    assert wait["owner"] == {"kind": "work_item", "work_item_id": w}
    wait_id = wait["wait_condition"]["id"]
    assert rt.work.record(w)["blocked_by"] == "child"
    blocking.release()
    terminal(rt, tid)
    row = eventually(lambda: (r := rt.work.waits_of("default", ("triggered",))) and r[0])
    [msg] = results(rt)
    assert row["id"] == wait_id and row["trigger_message_id"] == msg["id"] and msg["work_item_id"] == w
    adm = rt.work.process_message(msg["id"])
    assert adm["consumed_wait_id"] == wait_id and adm["trigger_kind"] == "task_result"
    assert rt.work.record(w)["blocked_by"] is None


def test_wait_after_the_child_finished_takes_the_fast_path(rt: Runtime, runner: ScriptedRunner) -> None:
    tid = ok(rt.call("InvokeAgent", {"message": "x"}))["task_handle"]["task_id"]
    terminal(rt, tid)
    res = ok(rt.call("WaitFor", {"reason": "child", "wake": "task_result", "resource": tid, "delivery": "final"}))
    assert res["disposition"] == "task_result_queued" and res["result_message_id"] == results(rt)[0]["id"]


def test_resident_invocation(rt: Runtime, runner: ScriptedRunner) -> None:
    ok(rt.call("CreateAgent", {"agent_id": "rb"}))
    runner.outcome = ChildTurnOutcome("completed", "reviewed: LGTM")
    r = rt.call("InvokeAgent", {"agent_id": "rb", "message": "review #12"})
    res = ok(r)
    tid = res["task_handle"]["task_id"]
    assert res["mode"] == "resident" and res["agent_id"] == "rb"
    assert res["task_handle"]["task_kind"] == "agent_invocation_task" and "child_agent_id" not in res
    assert r.envelope["summary_text"] == f"invocation {tid} queued for rb"
    [inbound] = [m for m in rt.store.messages("rb")]
    assert inbound["text"] == "review #12"
    rec = terminal(rt, tid)
    assert rec["status"] == "completed" and rec["detail"]["target_agent_id"] == "rb"
    q = rt.work.queued("rb")[0]
    assert q["source_refs"] == {"invocation_task_id": tid} and q["metadata"]["sender_agent_id"] == "default"
    assert runner.requests[0].agent_id == "rb"
    assert "reviewed: LGTM" in results(rt)[0]["text"]
    assert rt.store.agent("rb")["status"] == "active"  # a resident agent is not archived


def test_resident_target_checks(rt: Runtime, runner: ScriptedRunner) -> None:
    err(rt.call("InvokeAgent", {"agent_id": "ghost", "message": "x"}), "agent_not_found")
    e = err(rt.call("InvokeAgent", {"agent_id": "default", "message": "x"}), "invalid_tool_input")
    assert e["details"]["field"] == "agent_id"
    rt.store.ensure_agent("P2", "public_named")
    rt.store.ensure_agent("kid", "private_child", parent_id="P2")
    e = err(rt.call("InvokeAgent", {"agent_id": "kid", "message": "x"}), "agent_message_not_authorized")
    assert e["domain"] == "policy"
    assert rt.store.tasks() == []
    # a supervisor may invoke its own child; a child may invoke nothing (profile gate)
    assert ok(rt.call("InvokeAgent", {"agent_id": "kid", "message": "x"}, agent="P2"))["mode"] == "resident"


def test_resident_runs_are_serialised_per_agent(rt: Runtime, blocking: ScriptedRunner) -> None:
    ok(rt.call("CreateAgent", {"agent_id": "rb"}))
    t1 = ok(rt.call("InvokeAgent", {"agent_id": "rb", "message": "one"}))["task_handle"]["task_id"]
    t2 = ok(rt.call("InvokeAgent", {"agent_id": "rb", "message": "two"}))["task_handle"]["task_id"]
    eventually(lambda: task(rt, t1)["status"] == "running")
    assert task(rt, t2)["status"] == "queued" and len(blocking.requests) == 1
    blocking.release()
    terminal(rt, t1)
    terminal(rt, t2)
    assert [r.message["text"] for r in blocking.requests] == ["one", "two"]


def test_task_stop_cancels_the_child_run(rt: Runtime, blocking: ScriptedRunner) -> None:
    res = ok(rt.call("InvokeAgent", {"message": "long job"}))
    tid, child = res["task_handle"]["task_id"], res["child_agent_id"]
    eventually(blocking.started.is_set)
    active = ok(rt.call("ListTasks", {}))
    assert any(t["id"] == tid and t["kind"] == "child_agent_task" for t in active["tasks"])
    ok(rt.call("TaskStop", {"task_id": tid}))
    eventually(lambda: blocking.cancelled == [tid])
    assert task(rt, tid)["status"] == "cancelled"
    eventually(lambda: rt.store.agent(child)["status"] == "stopped")
    assert [m["metadata"]["status"] for m in results(rt)] == ["cancelled"]


def test_closing_the_runtime_interrupts_running_children(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    rt = Runtime(home=home, workspace=workspace)
    try:
        runner = ScriptedRunner(block=True)
        rt.agents.lifecycle.turn_runner = runner
        tid = ok(rt.call("InvokeAgent", {"message": "long job"}))["task_handle"]["task_id"]
        eventually(runner.started.is_set)
    finally:
        rt.close()
    assert runner.cancelled == [tid]
    with Runtime(home=home, workspace=workspace) as again:
        rec = again.store.task(tid)
        assert rec["status"] == "interrupted" and rec["detail"]["interrupted_reason"] == "runtime_closed"
        assert [m["metadata"]["status"] for m in results(again)] == ["interrupted"]


def test_parent_sees_its_active_children(rt: Runtime, blocking: ScriptedRunner) -> None:
    res = ok(rt.call("InvokeAgent", {"message": "x"}))
    eventually(blocking.started.is_set)
    agent = ok(rt.call("GetAgent", {}))["agent"]
    assert [c["identity"]["agent_id"] for c in agent["active_children"]] == [res["child_agent_id"]]
    assert agent["active_task_count"] == 1
    # the child may message its parent, and not create agents
    ok(rt.call("SendAgentMessage", {"agent_id": "default", "message": "progress"}, agent=res["child_agent_id"]))
    err(rt.call("CreateAgent", {"agent_id": "z"}, agent=res["child_agent_id"]), "unsupported_agent_profile_capability")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@x",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@x",
            "PATH": "/usr/bin:/bin",
            "HOME": str(cwd),
        },
    )


def test_worktree_mode_gives_the_child_its_own_worktree(rt: Runtime, runner: ScriptedRunner, workspace: Path) -> None:
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "init")
    res = ok(rt.call("InvokeAgent", {"message": "try an alternative", "workspace_mode": "worktree"}))
    child = res["child_agent_id"]
    wt = res["child_supervision"]["worktree"]
    assert Path(wt["worktree_path"]).is_dir() and (Path(wt["worktree_path"]) / "a.txt").exists()
    assert res["child_supervision"]["workspace_mode"] == "worktree"
    active = rt.workspaces.state(child)["active"]
    assert active["execution_root_id"] == wt["execution_root_id"]
    assert rt.workspaces.state("default")["active"]["execution_root_id"] != wt["execution_root_id"]
    terminal(rt, res["task_handle"]["task_id"])


def test_worktree_mode_outside_a_repository_fails_the_spawn(rt: Runtime, runner: ScriptedRunner) -> None:
    e = err(rt.call("InvokeAgent", {"message": "x", "workspace_mode": "worktree"}), "spawn_agent_failed")
    assert e["domain"] == "task"
    tid = e["details"]["task_id"]
    assert e["details"]["preset"] == "private_child" and e["details"]["workspace_mode"] == "worktree"
    rec = task(rt, tid)
    assert rec["status"] == "failed" and rec["detail"]["turn_terminal"] == "spawn_failed"
    assert rt.store.agent(rec["detail"]["child_agent_id"])["status"] == "stopped"
    assert runner.requests == []
