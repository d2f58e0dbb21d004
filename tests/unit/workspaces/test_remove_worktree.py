"""RemoveWorktree (workspace spec §8): acceptance cases 34-40, occupancy, identity checks."""

from __future__ import annotations

import os
from pathlib import Path

from _git_support import commit, git, state
from _support import err, ok

from holon_nb import Runtime


def _reason(result, reason: str) -> dict:
    e = err(result, "tool_execution_failed")
    assert e["details"]["reason"] == reason, e
    return e


def _make(rt: Runtime, ws: str, branch: str = "feat", activate: bool = True, agent: str | None = None) -> dict:
    return ok(
        rt.call(
            "CreateWorktree",
            {"workspace_id": ws, "branch": branch, "base_ref": "main", "activate": activate},
            agent=agent,
        )
    )


def _root(rt: Runtime, root_id: str) -> dict:
    return rt.workspaces.tables.root(root_id)


def test_dirty_active_worktree_is_retained_in_place(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 34
    made = _make(rt, ws_r)
    Path(made["worktree_path"], "scratch.txt").write_text("wip\n")
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"], "return_to": "canonical"}))
    assert (res["disposition"], res["removed"], res["switched"]) == ("retained_dirty", False, False)
    assert res["changed_files"] == ["scratch.txt"]
    assert state(rt)["active"]["execution_root_id"] == made["execution_root_id"]
    assert os.path.isdir(made["worktree_path"])
    cleanup = _root(rt, made["execution_root_id"])["worktree"]["last_cleanup"]
    assert cleanup["status"] == "retained_dirty" and cleanup["changed_files"] == ["scratch.txt"]


def test_changed_files_name_modified_renamed_and_spaced_paths_whole(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    wt = Path(made["worktree_path"])
    Path(wt, "src", "mod.py").write_text("print('changed')\n")  # status " M": a leading space
    git(wt, "mv", "README", "READ ME")
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}))
    assert res["disposition"] == "retained_dirty"
    assert res["changed_files"] == ["READ ME", "README", "src/mod.py"]


def test_active_target_needs_a_different_return_to(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 35
    made = _make(rt, ws_r)
    rid = made["execution_root_id"]
    _reason(rt.call("RemoveWorktree", {"execution_root_id": rid}), "return_to_required")
    _reason(rt.call("RemoveWorktree", {"execution_root_id": rid, "return_to": rid}), "return_to_invalid")
    _reason(
        rt.call("RemoveWorktree", {"execution_root_id": rid, "return_to": "canonical_root:ws_000000000000000"}),
        "execution_root_not_found",
    )
    e = err(rt.call("RemoveWorktree", {"execution_root_id": rid, "return_to": "--force"}), "invalid_tool_input")
    assert e["details"]["field"] == "return_to"
    assert os.path.isdir(made["worktree_path"]) and state(rt)["active"]["execution_root_id"] == rid
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": rid, "return_to": "agent_home"}))
    assert (res["disposition"], res["switched"], res["removed"]) == ("removed", True, True)
    assert state(rt)["active"]["workspace_id"] == "agent_home:default"


def test_canonical_roots_cannot_be_removed(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 36
    _reason(rt.call("RemoveWorktree", {"execution_root_id": f"canonical_root:{ws_r}"}), "canonical_root_not_removable")
    _reason(rt.call("RemoveWorktree", {"execution_root_id": "nope"}), "execution_root_not_found")
    assert os.path.isdir(repo)


def test_branch_deletion_needs_a_merge_proof(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 37
    made = _make(rt, ws_r, activate=False)
    rid, wt = made["execution_root_id"], Path(made["worktree_path"])
    tip = commit(wt, "feature.txt")
    _reason(
        rt.call("RemoveWorktree", {"execution_root_id": rid, "branch_policy": "delete_if_merged"}),
        "merge_proof_required",
    )
    _reason(
        rt.call(
            "RemoveWorktree", {"execution_root_id": rid, "branch_policy": "delete_if_merged", "merged_into": "main"}
        ),
        "not_merged",
    )
    assert wt.is_dir()
    git(repo, "merge", "-q", "--ff-only", "feat")
    res = ok(
        rt.call(
            "RemoveWorktree", {"execution_root_id": rid, "branch_policy": "delete_if_merged", "merged_into": "main"}
        )
    )
    assert (res["disposition"], res["removed"], res["branch_deleted"]) == ("removed", True, True)
    assert (res["branch"], res["branch_tip"]) == ("feat", tip)
    assert "changed_files" not in res
    assert _root(rt, rid)["removed_at"]
    assert not wt.exists()
    assert git(repo, "rev-parse", "--verify", "--quiet", "refs/heads/feat", check=False) == ""
    assert [e["event"] for e in rt.workspaces.tables.audit_events("default")][-1] == "worktree_cleanup_removed"


def test_keep_policy_keeps_the_branch(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}))
    assert (res["disposition"], res["branch_deleted"]) == ("removed", False)
    assert git(repo, "rev-parse", "--verify", "refs/heads/feat")


def test_artifact_of_another_agent_is_not_authorized(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 38
    rt.store.ensure_agent("other", "public_named")
    ok(rt.call("AttachWorkspace", {"path": str(repo)}, agent="other"))
    made = _make(rt, ws_r, activate=False, agent="other")
    e = _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "not_authorized")
    assert e["details"]["registered_by_agent_id"] == "other"
    assert os.path.isdir(made["worktree_path"])
    # reusing it does not grant removal rights either (§7 rule 10)
    assert (
        ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main", "activate": False}))[
            "disposition"
        ]
        == "reused"
    )
    _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "not_authorized")


def test_old_generation_id_never_touches_a_newer_worktree(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 39
    made = _make(rt, ws_r, activate=False)
    old, path = made["execution_root_id"], made["worktree_path"]
    assert ok(rt.call("RemoveWorktree", {"execution_root_id": old}))["disposition"] == "removed"
    again = ok(rt.call("RemoveWorktree", {"execution_root_id": old}))
    assert (again["disposition"], again["removed"], again["branch"]) == ("already_removed", False, "feat")
    git(repo, "worktree", "add", "-q", "-b", "feat2", path)
    new = ok(rt.call("SwitchWorkspace", {"path": path}))["execution_root_id"]
    assert new.startswith(old + ":gen_") and len(new) == len(old) + len(":gen_") + 15
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    assert ok(rt.call("RemoveWorktree", {"execution_root_id": old}))["disposition"] == "already_removed"
    assert os.path.isdir(path)
    assert ok(rt.call("RemoveWorktree", {"execution_root_id": new}))["disposition"] == "removed"
    assert not os.path.exists(path)


def test_locked_worktree_is_refused(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 40
    made = _make(rt, ws_r, activate=False)
    git(repo, "worktree", "lock", "--reason", "in use", made["worktree_path"])
    root = next(r for r in state(rt)["execution_roots"] if r["execution_root_id"] == made["execution_root_id"])
    assert root["worktree"]["last_cleanup"]["error"] == "worktree is locked: in use"
    e = _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "worktree_locked")
    assert e["details"]["lock_reason"] == "in use"
    assert os.path.isdir(made["worktree_path"])
    # the live overlay was not persisted (§3 rule 5)
    assert "last_cleanup" not in _root(rt, made["execution_root_id"])["worktree"]


def test_occupied_by_another_agent(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    rt.store.ensure_agent("other", "public_named")
    ok(rt.call("AttachWorkspace", {"path": str(repo)}, agent="other"))
    ok(rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}, agent="other"))
    e = _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "occupied")
    assert e["details"]["holders"] == ["other"]
    ok(rt.call("SwitchWorkspace", {"workspace_id": "agent_home"}, agent="other"))
    assert ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}))["removed"] is True
    assert not rt.workspaces.tables.store.query("SELECT * FROM ws_cleanup_leases")  # lease released


def test_detached_head_needs_merged_into(rt: Runtime, repo: Path, ws_r: str, tmp_path: Path) -> None:
    wt = tmp_path / "detached"
    git(repo, "worktree", "add", "-q", "--detach", str(wt), "main")
    rid = ok(rt.call("SwitchWorkspace", {"path": str(wt)}))["execution_root_id"]
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    _reason(rt.call("RemoveWorktree", {"execution_root_id": rid}), "merge_proof_required")
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": rid, "merged_into": "main"}))
    assert res["removed"] is True and "branch" not in res


def test_identity_mismatches_are_refused(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    wt = made["worktree_path"]
    git(wt, "checkout", "-q", "-b", "other-branch")
    _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "checkout_mismatch")
    # a record without git identity cannot be removed
    with rt.store.tx() as db:
        entry = _root(rt, made["execution_root_id"])
        rt.workspaces.tables.upsert_root(
            db, {**entry, "worktree": {"registered_by_agent_id": "default", "authorized_agent_ids": ["default"]}}
        )
    _reason(
        rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "artifact_identity_unavailable"
    )


def test_git_refusal_is_a_failed_disposition(rt: Runtime, repo: Path, ws_r: str, tmp_path: Path) -> None:
    made = _make(rt, ws_r, activate=False)
    wt = Path(made["worktree_path"])
    sub = tmp_path / "S"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    commit(sub, "s.txt")
    # a clean worktree holding a submodule: `git worktree remove` (never --force) refuses it
    git(wt, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(wt, "commit", "-q", "-m", "add submodule")
    assert git(wt, "status", "--porcelain") == ""
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}))
    assert (res["disposition"], res["removed"], res["switched"]) == ("failed", False, False)
    assert "submodules" in res["error"]
    assert _root(rt, made["execution_root_id"])["worktree"]["last_cleanup"]["status"] == "failed"
    assert "removed_at" not in _root(rt, made["execution_root_id"]) and wt.is_dir()
    assert not rt.store.query("SELECT * FROM ws_cleanup_leases")
