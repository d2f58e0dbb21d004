"""SwitchWorkspace and the active projection (workspace spec §1.4, §6): acceptance cases 22-26, occupancy."""

from __future__ import annotations

import os
from pathlib import Path

from _git_support import git, pwd, state
from _support import err, ok

from holon_nb import Runtime


def _reason(result, reason: str) -> dict:
    e = err(result, "tool_execution_failed")
    assert e["details"]["reason"] == reason, e
    return e


def test_unbound_path_is_refused_and_projection_kept(rt: Runtime, tmp_path: Path) -> None:  # case 22
    unbound = tmp_path / "unbound"
    unbound.mkdir()
    before = state(rt)["active"]
    e = _reason(rt.call("SwitchWorkspace", {"path": str(unbound)}), "workspace_not_attached")
    assert e["details"]["workspace_anchor"] == str(unbound) and str(unbound) in e["message"]
    assert state(rt)["active"] == before


def test_exactly_one_selector(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 23
    e = err(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "path": str(repo)}), "invalid_tool_input")
    assert e["details"]["selector_count"] == 2
    assert e["details"]["fields"] == ["workspace_id", "execution_root_id", "path"]
    assert err(rt.call("SwitchWorkspace", {}), "invalid_tool_input")["details"]["selector_count"] == 0
    # empty strings count as absent (§0.4)
    assert (
        err(rt.call("SwitchWorkspace", {"workspace_id": " ", "path": ""}), "invalid_tool_input")["details"][
            "selector_count"
        ]
        == 0
    )
    assert ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "path": None}))["disposition"] == "switched"


def test_cwd_cannot_escape_the_root(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 24
    before = state(rt)["active"]
    e = _reason(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": "../.."}), "cwd_outside_execution_root")
    assert e["details"]["resolved_cwd"] == str(repo.parent.parent)
    _reason(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": str(repo.parent)}), "cwd_outside_execution_root")
    assert state(rt)["active"] == before


def test_symlinked_cwd_out_of_the_root_is_refused(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 25
    (repo / "link").symlink_to("/etc")
    _reason(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": "link"}), "cwd_outside_execution_root")
    # a path is its realpath (/etc here), which belongs to no attached workspace
    _reason(rt.call("SwitchWorkspace", {"path": str(repo / "link")}), "workspace_not_attached")
    # a symlink that stays inside the root is fine
    (repo / "inner").symlink_to(repo / "src")
    assert ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": "inner"}))["cwd"] == str(repo / "inner")


def test_switch_twice_is_a_no_op_and_path_keeps_the_subdirectory(rt: Runtime, repo: Path, ws_r: str) -> None:  # 26
    first = ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    assert first["disposition"] == "switched" and first["cwd"] == str(repo)
    occ = state(rt)["active"]["occupancy_id"]
    second = rt.call("SwitchWorkspace", {"workspace_id": ws_r})
    assert (
        ok(second)["disposition"] == "no_op" and second.envelope["summary_text"] == "no_op active workspace projection"
    )
    assert state(rt)["active"]["occupancy_id"] == occ
    sub = ok(rt.call("SwitchWorkspace", {"path": str(repo / "src")}))
    assert sub == {
        "disposition": "switched",
        "workspace_id": ws_r,
        "workspace_anchor": str(repo),
        "execution_root_id": f"canonical_root:{ws_r}",
        "execution_root": str(repo),
        "cwd": str(repo / "src"),
        "projection_kind": "canonical_root",
        "access_mode": "shared_read",
    }
    assert state(rt)["active"]["occupancy_id"] == occ  # same root, holder and mode: the same occupancy (§1.4 rule 2)
    assert pwd(rt) == str(repo / "src")
    assert ok(rt.call("SwitchWorkspace", {"path": "."}))["disposition"] == "no_op"  # relative to the active cwd


def test_agent_home_switch_and_no_op(rt: Runtime) -> None:
    home = str(rt.home / "agents" / "default")
    res = ok(rt.call("SwitchWorkspace", {"workspace_id": "agent_home"}))
    assert (res["disposition"], res["workspace_id"], res["cwd"]) == ("switched", "agent_home:default", home)
    assert ok(rt.call("SwitchWorkspace", {"workspace_id": "agent_home:default"}))["disposition"] == "no_op"
    assert ok(rt.call("SwitchWorkspace", {"workspace_id": "agent_home", "cwd": "task-output"}))["cwd"] == os.path.join(
        home, "task-output"
    )
    assert pwd(rt) == os.path.join(home, "task-output")
    assert [e["event"] for e in rt.workspaces.tables.audit_events("default")][-1] == "workspace_used"


def test_unknown_and_unattached_ids(rt: Runtime, repo: Path, ws_r: str) -> None:
    _reason(rt.call("SwitchWorkspace", {"workspace_id": "ws_000000000000000"}), "workspace_not_found")
    _reason(
        rt.call("SwitchWorkspace", {"execution_root_id": "canonical_root:ws_000000000000000"}),
        "execution_root_not_found",
    )
    rt.store.ensure_agent("other", "public_named")
    _reason(rt.call("SwitchWorkspace", {"workspace_id": ws_r}, agent="other"), "workspace_not_attached")
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    _reason(
        rt.call("SwitchWorkspace", {"execution_root_id": f"canonical_root:{ws_r}"}, agent="other"),
        "workspace_not_attached",
    )
    _reason(rt.call("SwitchWorkspace", {"workspace_id": "agent_home:default"}, agent="other"), "workspace_not_attached")


def test_cwd_must_be_an_existing_directory(rt: Runtime, repo: Path, ws_r: str) -> None:
    e = err(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": "missing"}), "invalid_tool_input")
    assert e["details"]["field"] == "cwd"
    err(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": "README"}), "invalid_tool_input")
    err(rt.call("SwitchWorkspace", {"path": str(repo / "README")}), "invalid_tool_input")


def test_exec_command_follows_switch_and_create_worktree(rt: Runtime, repo: Path, ws_r: str, workspace: Path) -> None:
    assert pwd(rt) == str(workspace)
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r, "cwd": "src"}))
    assert pwd(rt) == str(repo / "src")
    made = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}))
    assert pwd(rt) == made["worktree_path"]
    assert ok(rt.call("ExecCommand", {"cmd": "git rev-parse --abbrev-ref HEAD"}))["stdout_preview"].strip() == "feat"
    # a relative workdir joins the worktree cwd
    assert ok(rt.call("ExecCommand", {"cmd": "pwd", "workdir": "src"}))["stdout_preview"].strip() == os.path.join(
        made["worktree_path"], "src"
    )


def test_exclusive_write_conflicts_and_release(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}))
    rt.store.ensure_agent("other", "public_named")
    ok(rt.call("AttachWorkspace", {"path": str(repo)}, agent="other"))
    before = state(rt, "other")["active"]
    _reason(
        rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}, agent="other"),
        "occupancy_conflict",
    )
    _reason(rt.call("SwitchWorkspace", {"path": made["worktree_path"]}, agent="other"), "occupancy_conflict")
    assert state(rt, "other")["active"] == before
    # shared_read never conflicts; leaving the worktree releases its occupancy
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}, agent="other"))
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    res = ok(rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}, agent="other"))
    assert res["access_mode"] == "exclusive_write"
    holders = {(o["execution_root_id"], o["holder_agent_id"]) for o in state(rt)["occupancies"]}
    assert (made["execution_root_id"], "other") in holders and (made["execution_root_id"], "default") not in holders


def test_switch_by_path_registers_an_unknown_worktree(rt: Runtime, repo: Path, ws_r: str, tmp_path: Path) -> None:
    wt = tmp_path / "manual"
    git(repo, "worktree", "add", "-q", "-b", "manual", str(wt))
    res = ok(rt.call("SwitchWorkspace", {"path": str(wt / "src")}))
    assert res["execution_root_id"] == f"git_worktree_root:{ws_r}:{wt}"
    assert (res["cwd"], res["execution_root"], res["access_mode"]) == (str(wt / "src"), str(wt), "exclusive_write")
    root = next(r for r in state(rt)["execution_roots"] if r["execution_root_id"] == res["execution_root_id"])
    assert root["worktree"]["provenance"] == "discovered"
    assert root["worktree"]["registered_by_agent_id"] == "default"
    assert root["worktree"]["authorized_agent_ids"] == ["default"]


def test_worktree_missing_from_git(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = ok(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main", "activate": False})
    )
    git(repo, "worktree", "remove", made["worktree_path"])
    os.makedirs(made["worktree_path"])  # the directory exists, git no longer knows it
    _reason(rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}), "worktree_missing_from_git")


def test_path_inside_an_attached_plain_directory(rt: Runtime, workspace: Path, tmp_path: Path) -> None:
    # upstream would refuse (a plain directory is its own anchor); fixed: the attached anchor containing it is used
    res = ok(rt.call("SwitchWorkspace", {"path": "sub"}))
    assert (res["execution_root"], res["cwd"]) == (str(workspace), str(workspace / "sub"))
    assert pwd(rt) == str(workspace / "sub")
    # a repository nested in it is a different workspace and must be attached first
    nested = workspace / "nested"
    nested.mkdir()
    git(nested, "init", "-q", "-b", "main")
    _reason(rt.call("SwitchWorkspace", {"path": str(nested)}), "workspace_not_attached")


def test_cleanup_lease_blocks_entering_and_is_dropped_at_restart(tmp_path: Path, workspace: Path, repo: Path) -> None:
    home = tmp_path / "home-lease"
    with Runtime(home=home, workspace=workspace) as rt:
        ws = ok(rt.call("AttachWorkspace", {"path": str(repo)}))["workspace"]["workspace_id"]
        made = ok(
            rt.call("CreateWorktree", {"workspace_id": ws, "branch": "feat", "base_ref": "main", "activate": False})
        )
        with rt.store.tx() as db:  # as if a removal were in progress
            assert rt.workspaces.tables.grant_lease(db, made["execution_root_id"], "default")
        _reason(rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}), "root_being_removed")
    with Runtime(home=home, workspace=workspace) as rt:  # no removal survives its runtime
        assert (
            ok(rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}))["disposition"]
            == "switched"
        )
