"""Directories that vanish behind the runtime's back, and the review fixes around them (workspace spec §3, §6-§8).

- An active execution root whose folder is deleted never moves the agent into another workspace's
  checkout: the projection falls back to the agent home and GetWorkspaceState carries ``projection_repair``.
- RemoveWorktree cleans up a worktree whose folder is gone (git still listing it as prunable, or no longer).
- CreateWorktree refuses non-repositories and ``refs/``-prefixed branch names clearly.
- A repository attached through a symlink is the same workspace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _git_support import commit, git, pwd, state
from _support import err, ok

from holon_nb import Runtime

_ADD = "*** Begin Patch\n*** Add File: {name}\n+written\n*** End Patch"


def _reason(result, reason: str) -> dict:
    e = err(result, "tool_execution_failed")
    assert e["details"]["reason"] == reason, e
    return e


def _make(rt: Runtime, ws: str, branch: str = "feat", activate: bool = True) -> dict:
    return ok(
        rt.call("CreateWorktree", {"workspace_id": ws, "branch": branch, "base_ref": "main", "activate": activate})
    )


def _root(st: dict, root_id: str) -> dict:
    return next(r for r in st["execution_roots"] if r["execution_root_id"] == root_id)


# ---------------------------------------------------------------- 1. projection repair


def test_deleted_active_worktree_falls_back_to_agent_home_not_the_checkout(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r)
    wt = made["worktree_path"]
    shutil.rmtree(wt)
    home = rt.home / "agents" / "default"
    assert pwd(rt) == str(home)  # never the canonical checkout R
    ok(rt.call("ApplyPatch", {"patch": _ADD.format(name="new.txt")}))
    assert (home / "new.txt").is_file() and not (repo / "new.txt").exists()
    res = rt.call("GetWorkspaceState", {})
    st = ok(res)
    repair = st["projection_repair"]
    assert (repair["from_execution_root_id"], repair["from_path"], repair["reason"]) == (
        made["execution_root_id"],
        wt,
        "execution_root_missing",
    )
    assert repair["repaired_at"] and repair["to_execution_root_id"] == "canonical_root:agent_home:default"
    assert "projection_repair" not in st["active"]
    assert st["active"]["workspace_id"] == "agent_home:default"
    assert json.loads(res.receipt)["projection_repair"]["from_path"] == wt  # the model sees it
    # the vanished root's occupancy was released; the audit event is kept
    assert all(o["execution_root_id"] != made["execution_root_id"] for o in st["occupancies"])
    events = [e for e in rt.workspaces.tables.audit_events("default") if e["event"] == "workspace_projection_repaired"]
    assert events[-1]["data"]["from_execution_root_id"] == made["execution_root_id"]
    # it stays visible until the agent chooses a projection
    assert state(rt)["projection_repair"] == repair
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    assert "projection_repair" not in state(rt)


def test_deleted_canonical_root_falls_back_to_agent_home(rt: Runtime, workspace: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "deep").mkdir(parents=True)
    ws = ok(rt.call("AttachWorkspace", {"path": str(plain)}))["workspace"]["workspace_id"]
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws, "cwd": "deep"}))
    (plain / "deep").rmdir()
    assert pwd(rt) == str(plain)  # cwd gone inside a live root: the root itself
    repair = state(rt)["projection_repair"]
    assert (repair["reason"], repair["from_path"], repair["to_cwd"]) == ("cwd_missing", str(plain / "deep"), str(plain))
    plain.rmdir()
    home = rt.home / "agents" / "default"
    assert pwd(rt) == str(home)  # root gone: the agent home, not the notebook's directory W
    st = state(rt)
    assert st["active"]["cwd"] == str(home) and st["projection_repair"]["reason"] == "execution_root_missing"
    assert len([o for o in st["occupancies"] if o["holder_agent_id"] == "default"]) == 1


def test_restored_projection_whose_worktree_vanished_falls_back_to_agent_home(
    tmp_path: Path, workspace: Path, repo: Path
) -> None:
    home = tmp_path / "home-v"
    with Runtime(home=home, workspace=workspace) as rt1:
        ws = ok(rt1.call("AttachWorkspace", {"path": str(repo)}))["workspace"]["workspace_id"]
        made = _make(rt1, ws)
    shutil.rmtree(made["worktree_path"])  # while no runtime was running
    with Runtime(home=home, workspace=workspace) as rt2:
        assert pwd(rt2) == str(home / "agents" / "default")
        assert state(rt2)["projection_repair"]["from_execution_root_id"] == made["execution_root_id"]


# ---------------------------------------------------------------- 2. removal of a vanished worktree


def test_state_reports_a_missing_worktree_directory(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    shutil.rmtree(made["worktree_path"])
    cleanup = _root(state(rt), made["execution_root_id"])["worktree"]["last_cleanup"]
    assert cleanup["status"] == "missing"
    assert "no longer exists" in cleanup["error"] and "prunable" in cleanup["error"]
    git(repo, "worktree", "prune")
    cleanup = _root(state(rt), made["execution_root_id"])["worktree"]["last_cleanup"]
    assert cleanup["status"] == "missing" and "no longer lists" in cleanup["error"]


def test_remove_worktree_whose_directory_vanished_while_git_lists_it(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r)
    rid, wt = made["execution_root_id"], made["worktree_path"]
    shutil.rmtree(wt)
    other = repo.parent / "other-wt"
    git(repo, "worktree", "add", "-q", "-b", "other", str(other))
    shutil.rmtree(other)  # another vanished worktree this removal must not touch
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": rid}))
    assert (res["disposition"], res["removed"], res["branch_deleted"], res["branch"]) == (
        "removed",
        True,
        False,
        "feat",
    )
    assert "already gone" in res["error"]
    listed = git(repo, "worktree", "list", "--porcelain")
    assert wt not in listed and str(other) in listed
    assert rt.workspaces.tables.root(rid)["removed_at"]
    assert rid not in {r["execution_root_id"] for r in state(rt)["execution_roots"] if "removed_at" not in r}
    assert git(repo, "rev-parse", "--verify", "refs/heads/feat")  # keep: the branch stays
    assert ok(rt.call("RemoveWorktree", {"execution_root_id": rid}))["disposition"] == "already_removed"
    assert not rt.store.query("SELECT * FROM ws_cleanup_leases")


def test_remove_vanished_worktree_with_branch_deletion_needs_the_merge_proof(
    rt: Runtime, repo: Path, ws_r: str
) -> None:
    made = _make(rt, ws_r, activate=False)
    rid, wt = made["execution_root_id"], Path(made["worktree_path"])
    tip = commit(wt, "feature.txt")
    shutil.rmtree(wt)
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
    assert str(wt) in git(repo, "worktree", "list", "--porcelain")  # refusals changed nothing
    git(repo, "merge", "-q", "--ff-only", "feat")
    res = ok(
        rt.call(
            "RemoveWorktree", {"execution_root_id": rid, "branch_policy": "delete_if_merged", "merged_into": "main"}
        )
    )
    assert (res["disposition"], res["removed"], res["branch_deleted"], res["branch_tip"]) == (
        "removed",
        True,
        True,
        tip,
    )
    assert git(repo, "rev-parse", "--verify", "--quiet", "refs/heads/feat", check=False) == ""
    # the branch is free again: CreateWorktree makes a new worktree instead of a conflict
    assert _make(rt, ws_r, activate=False)["disposition"] == "created"


def test_remove_vanished_worktree_after_a_manual_prune(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    rid = made["execution_root_id"]
    shutil.rmtree(made["worktree_path"])
    git(repo, "worktree", "prune")
    res = ok(rt.call("RemoveWorktree", {"execution_root_id": rid}))
    assert (res["disposition"], res["removed"], res["branch"]) == ("removed", True, "feat")
    assert "no longer listed" in res["error"]
    assert rt.workspaces.tables.root(rid)["removed_at"]
    # keep policy: the branch stays, so a new CreateWorktree reports the branch-only conflict (§7 rule 11)
    again = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}))
    assert again["conflict"] == "branch exists without a live linked worktree"


def test_remove_vanished_worktree_after_prune_can_delete_a_merged_branch(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    wt = Path(made["worktree_path"])
    commit(wt, "f.txt")
    shutil.rmtree(wt)
    git(repo, "worktree", "prune")
    _reason(
        rt.call(
            "RemoveWorktree",
            {
                "execution_root_id": made["execution_root_id"],
                "branch_policy": "delete_if_merged",
                "merged_into": "main",
            },
        ),
        "not_merged",
    )
    git(repo, "merge", "-q", "--ff-only", "feat")
    res = ok(
        rt.call(
            "RemoveWorktree",
            {
                "execution_root_id": made["execution_root_id"],
                "branch_policy": "delete_if_merged",
                "merged_into": "main",
            },
        )
    )
    assert (res["disposition"], res["branch_deleted"]) == ("removed", True)
    assert git(repo, "rev-parse", "--verify", "--quiet", "refs/heads/feat", check=False) == ""


def test_vanished_worktree_whose_branch_is_checked_out_elsewhere_keeps_the_branch(
    rt: Runtime, repo: Path, ws_r: str, tmp_path: Path
) -> None:
    made = _make(rt, ws_r, activate=False)
    shutil.rmtree(made["worktree_path"])
    git(repo, "worktree", "prune")
    elsewhere = tmp_path / "elsewhere"
    git(repo, "worktree", "add", "-q", str(elsewhere), "feat")
    res = ok(
        rt.call(
            "RemoveWorktree",
            {
                "execution_root_id": made["execution_root_id"],
                "branch_policy": "delete_if_merged",
                "merged_into": "main",
            },
        )
    )
    assert (res["disposition"], res["removed"], res["branch_deleted"]) == ("removed_branch_retained", True, False)
    assert str(elsewhere) in res["error"]
    assert git(repo, "rev-parse", "--verify", "refs/heads/feat")


def test_another_agent_in_the_vanished_worktree_does_not_block_its_removal(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    rt.store.ensure_agent("other", "public_named")
    ok(rt.call("AttachWorkspace", {"path": str(repo)}, agent="other"))
    ok(rt.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}, agent="other"))
    shutil.rmtree(made["worktree_path"])
    assert ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}))["removed"] is True
    theirs = state(rt, "other")
    assert theirs["active"]["workspace_id"] == "agent_home:other"  # its own home, not R
    assert theirs["projection_repair"]["from_execution_root_id"] == made["execution_root_id"]


def test_vanished_locked_worktree_is_refused(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    git(repo, "worktree", "lock", "--reason", "on usb", made["worktree_path"])
    shutil.rmtree(made["worktree_path"])
    _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "worktree_locked")
    assert made["worktree_path"] in git(repo, "worktree", "list", "--porcelain")


def test_git_never_runs_in_a_missing_directory(rt: Runtime, repo: Path, ws_r: str) -> None:
    made = _make(rt, ws_r, activate=False)
    shutil.rmtree(made["worktree_path"])
    shutil.rmtree(repo)  # the anchor too
    cleanup = _root(state(rt), made["execution_root_id"])["worktree"]["last_cleanup"]
    assert cleanup["status"] == "missing"
    e = _reason(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}), "git_failed")
    assert "could not run git" not in e["message"] and str(repo) in e["message"]
    e = _reason(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "x", "base_ref": "main"}), "not_a_git_repository"
    )
    assert "no longer exists" in e["message"]


# ---------------------------------------------------------------- 3, 4. CreateWorktree refusals


def test_create_worktree_refuses_a_plain_directory_and_the_agent_home(rt: Runtime, workspace: Path) -> None:
    w_id = state(rt)["attached_workspace_ids"][1]
    e = _reason(
        rt.call("CreateWorktree", {"workspace_id": w_id, "branch": "a", "base_ref": "HEAD"}), "not_a_git_repository"
    )
    assert "not a git repository" in e["message"] and e["details"]["workspace_anchor"] == str(workspace)
    e = _reason(
        rt.call("CreateWorktree", {"workspace_id": "agent_home", "branch": "a", "base_ref": "HEAD"}),
        "not_a_git_repository",
    )
    assert "agent home" in e["message"]
    assert not (workspace.parent / f".holon-worktrees-{workspace.name}").exists()


def test_create_worktree_refuses_a_subdirectory_of_an_enclosing_repository(rt: Runtime, repo: Path) -> None:
    inner = repo / "plain-inside"
    inner.mkdir()
    # attached as a plain directory by an older registry: its anchor is not a repository root
    state(rt)
    with rt.store.tx() as db:
        ws = rt.workspaces.view("default").ensure_workspace_for(db, str(inner))
        st = rt.workspaces.tables.agent_state("default")
        rt.workspaces.tables.put_agent_state(db, "default", [*st["attached"], ws["workspace_id"]], st["active"])
    _reason(
        rt.call("CreateWorktree", {"workspace_id": ws["workspace_id"], "branch": "a", "base_ref": "HEAD"}),
        "not_a_git_repository",
    )


def test_branch_with_refs_prefix_is_refused(rt: Runtime, repo: Path, ws_r: str) -> None:
    for branch in ("refs/heads/foo", "refs/foo"):
        e = err(
            rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": branch, "base_ref": "main"}),
            "invalid_tool_input",
        )
        assert e["details"]["field"] == "branch" and "without refs/heads/" in e["message"]
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/heads") == "refs/heads/main"


# ---------------------------------------------------------------- 5. symlinked anchors


def test_repository_attached_through_a_symlink_is_the_same_workspace(
    rt: Runtime, repo: Path, ws_r: str, tmp_path: Path
) -> None:
    link = tmp_path / "R-link"
    link.symlink_to(repo)
    res = ok(rt.call("AttachWorkspace", {"path": str(link)}))
    assert res["already_attached"] is True and res["workspace"]["workspace_id"] == ws_r
    res = ok(rt.call("AttachWorkspace", {"path": str(link / "src")}))
    assert res["workspace"]["workspace_id"] == ws_r
    sw = ok(rt.call("SwitchWorkspace", {"path": str(link / "src")}))
    assert (sw["workspace_id"], sw["execution_root"], sw["cwd"]) == (ws_r, str(repo), str(repo / "src"))
    assert len([w for w in state(rt)["workspaces"] if w["workspace_anchor"] == str(repo)]) == 1
