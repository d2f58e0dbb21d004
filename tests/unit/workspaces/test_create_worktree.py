"""CreateWorktree (workspace spec §7): acceptance cases 29-33 with a real repository."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from _git_support import commit, git, state
from _support import err, ok

from holon_nb import Runtime


def _worktrees(repo: Path) -> str:
    return git(repo, "worktree", "list", "--porcelain")


def test_existing_branch_without_worktree_is_a_conflict(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 29
    git(repo, "branch", "feat")
    before_list, before_active = _worktrees(repo), state(rt)["active"]
    res = rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"})
    out = ok(res)
    assert out["disposition"] == "conflict" and out["conflict"] == "branch exists without a live linked worktree"
    assert (out["created"], out["reused"], out["activated"], out["base_ref_applied"]) == (False,) * 4
    assert out["branch_tip"] == git(repo, "rev-parse", "feat") and "execution_root_id" not in out
    assert "candidates" not in out
    assert _worktrees(repo) == before_list and state(rt)["active"] == before_active


def test_reuse_keeps_the_branch_tip_and_error_policy_reports_it(
    rt: Runtime, repo: Path, ws_r: str, tmp_path: Path
) -> None:  # case 30
    wt = tmp_path / "wt-feat"
    git(repo, "worktree", "add", "-q", "-b", "feat", str(wt))
    old_tip = git(wt, "rev-parse", "HEAD")
    new_main = commit(repo, "later.txt")
    res = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}))
    assert (res["disposition"], res["reused"], res["created"], res["base_ref_applied"]) == (
        "reused",
        True,
        False,
        False,
    )
    assert res["branch_tip"] == old_tip and res["resolved_base_commit"] == new_main
    assert res["worktree_path"] == str(wt) and res["activated"] is True
    assert git(wt, "rev-parse", "HEAD") == old_tip  # no reset, checkout or branch move
    root = next(r for r in state(rt)["execution_roots"] if r["execution_root_id"] == res["execution_root_id"])
    assert root["worktree"]["provenance"] == "discovered"
    assert (root["worktree"]["requested_base_ref"], root["worktree"]["resolved_base_commit"]) == ("main", new_main)
    again = ok(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main", "on_existing": "error"})
    )
    assert again["disposition"] == "already_exists" and again["activated"] is False
    assert again["worktree_path"] == str(wt) and again["conflict"] == "matching live worktree already exists"


def test_branch_checked_out_by_the_anchor_is_a_conflict(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 31
    res = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "main", "base_ref": "main"}))
    assert res["disposition"] == "conflict" and res["conflict"] == "branch is checked out by the canonical workspace"
    assert res["worktree_path"] == str(repo)


def test_git_arguments_are_checked_before_anything_happens(rt: Runtime, repo: Path, ws_r: str) -> None:  # 32
    managed = repo.parent / f".holon-worktrees-{repo.name}"
    e = err(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "--upload-pack=x", "base_ref": "main"}),
        "invalid_tool_input",
    )
    assert e["details"]["field"] == "branch"
    err(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "ok", "base_ref": "-main"}), "invalid_tool_input")
    e = err(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "bad..name", "base_ref": "main"}),
        "invalid_tool_input",
    )
    assert "check-ref-format" in e["details"]["validation_error"]
    err(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "@{-1}", "base_ref": "main"}), "invalid_tool_input")
    e = err(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "nope"}), "tool_execution_failed"
    )
    assert e["details"]["reason"] == "base_ref_unresolved"
    assert not managed.exists()
    assert "feat" not in git(repo, "branch", "--list")


def test_new_worktree_is_created_beside_the_repository_and_activated(rt: Runtime, repo: Path, ws_r: str) -> None:  # 33
    res = ok(
        rt.call(
            "CreateWorktree",
            {"workspace_id": ws_r, "branch": "feat-1224", "base_ref": "main", "label": "feature/issue 1224"},
        )
    )
    path = Path(res["worktree_path"])
    assert path.parent == repo.parent / f".holon-worktrees-{repo.name}"
    assert path.name.startswith("feature-issue-1224-wt_") and len(path.name) == len("feature-issue-1224-wt_") + 15
    assert (res["disposition"], res["created"], res["activated"], res["base_ref_applied"]) == (
        "created",
        True,
        True,
        True,
    )
    assert res["execution_root_id"] == f"git_worktree_root:{ws_r}:{path}"
    assert res["branch_ref"] == "refs/heads/feat-1224" and res["branch_tip"] == git(repo, "rev-parse", "main")
    active = state(rt)["active"]
    assert (active["execution_root_id"], active["access_mode"], active["projection_kind"]) == (
        res["execution_root_id"],
        "exclusive_write",
        "git_worktree_root",
    )
    root = next(r for r in state(rt)["execution_roots"] if r["execution_root_id"] == res["execution_root_id"])
    wt = root["worktree"]
    assert wt["provenance"] == "runtime_created" and wt["registered_by_agent_id"] == "default"
    assert wt["authorized_agent_ids"] == ["default"]
    assert wt["git_common_dir"] == str(repo / ".git") and wt["git_dir"].startswith(str(repo / ".git" / "worktrees"))
    assert wt["last_cleanup"]["status"] == "clean"  # live overlay (§3 rule 3)
    events = [e for e in rt.workspaces.tables.audit_events("default") if e["event"] == "worktree_created"]
    assert events and events[-1]["data"]["activated"] is True


def test_create_without_activation_and_label_defaults(rt: Runtime, repo: Path, ws_r: str) -> None:
    before = state(rt)["active"]
    res = ok(
        rt.call(
            "CreateWorktree",
            {"workspace_id": ws_r, "branch": "x/y", "base_ref": "HEAD", "activate": False, "label": "///"},
        )
    )
    assert res["activated"] is False and Path(res["worktree_path"]).name.startswith("worktree-wt_")
    assert state(rt)["active"] == before
    res2 = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "z", "base_ref": "main", "activate": False}))
    assert Path(res2["worktree_path"]).name.startswith("z-wt_")


def test_activation_failure_keeps_the_artifact(rt: Runtime, repo: Path, ws_r: str) -> None:
    rt.store.ensure_agent("other", "public_named")
    ok(rt.call("AttachWorkspace", {"path": str(repo)}, agent="other"))
    made = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}, agent="other"))
    res = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}))
    assert res["disposition"] == "reused" and res["activated"] is False
    assert "exclusive_write" in res["activation_error"]
    assert res["execution_root_id"] == made["execution_root_id"]
    assert os.path.isdir(made["worktree_path"])


def test_workspace_must_be_attached_and_known(rt: Runtime, repo: Path, ws_r: str) -> None:
    e = err(
        rt.call("CreateWorktree", {"workspace_id": "ws_000000000000000", "branch": "a", "base_ref": "main"}),
        "tool_execution_failed",
    )
    assert e["details"]["reason"] == "workspace_not_attached"
    rt.store.ensure_agent("other", "public_named")
    e = err(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "a", "base_ref": "main"}, agent="other"),
        "tool_execution_failed",
    )
    assert e["details"]["reason"] == "workspace_not_attached"
    e = err(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": " ", "base_ref": "main"}), "invalid_tool_input")
    assert e["details"]["validation_error"] == "must not be empty"
    err(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "a", "base_ref": "main", "activate": None}),
        "invalid_tool_input",
    )
    err(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "a", "base_ref": "main", "on_existing": "x"}),
        "invalid_tool_input",
    )


def test_plain_directory_is_not_a_repository(rt: Runtime, workspace: Path) -> None:
    w_id = state(rt)["attached_workspace_ids"][1]
    e = err(
        rt.call("CreateWorktree", {"workspace_id": w_id, "branch": "a", "base_ref": "main"}), "tool_execution_failed"
    )
    assert e["details"]["reason"] == "not_a_git_repository"  # not "base_ref main does not resolve"


def test_string_scalars_stay_strings(rt: Runtime, repo: Path, ws_r: str) -> None:
    res = ok(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "1234", "base_ref": "main", "activate": "false"})
    )
    assert res["branch"] == "1234" and res["activated"] is False


def test_missing_backing_path_and_ambiguous_matches_are_conflicts(
    rt: Runtime, repo: Path, ws_r: str, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    git(repo, "worktree", "add", "-q", "-b", "dup", str(one))
    git(repo, "worktree", "add", "-q", "-f", str(two), "dup")  # the same branch twice (forced by the test only)
    ok(rt.call("SwitchWorkspace", {"path": str(one)}))  # registers one of them
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    res = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "dup", "base_ref": "main"}))
    assert res["disposition"] == "conflict" and res["conflict"] == "multiple live worktrees match the requested branch"
    assert [c["filesystem_path"] for c in res["candidates"]] == [str(one)]
    git(repo, "worktree", "remove", str(two))
    shutil.rmtree(one)  # git still lists it (prunable)
    res = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "dup", "base_ref": "main"}))
    assert res["disposition"] == "conflict" and res["conflict"] == "matching worktree backing path is missing"
    assert res["worktree_path"] == str(one)
    root = next(r for r in state(rt)["execution_roots"] if r["filesystem_path"] == str(one))
    assert root["worktree"]["last_cleanup"]["status"] == "missing"  # its directory is gone
    assert state(rt)["active"]["execution_root"] == str(repo)
