"""Bindings and the default workspace: GetWorkspaceState, AttachWorkspace, DetachWorkspace (workspace spec §1, §3-§5).

Acceptance cases 19-21, 27 and 28, plus the default workspace, restart
durability and the D3 bound roots.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from _git_support import git, pwd, state
from _support import err, ok

from holon_nb import Runtime
from holon_nb.runtime.workspaces._paths import workspace_id_for


def test_first_sight_binds_agent_home_and_the_notebook_directory(rt: Runtime, workspace: Path) -> None:
    st = state(rt)
    home = str(rt.home / "agents" / "default")
    w_id = workspace_id_for(str(workspace))
    assert st["agent_id"] == "default"
    assert st["attached_workspace_ids"] == ["agent_home:default", w_id]
    by_id = {w["workspace_id"]: w for w in st["workspaces"]}
    assert by_id["agent_home:default"] == {
        **by_id["agent_home:default"],
        "workspace_alias": "agent_home",
        "workspace_kind": "agent_home",
        "owner_agent_id": "default",
        "workspace_anchor": home,
        "repo_name": "AgentHome",
    }
    assert by_id[w_id]["workspace_anchor"] == str(workspace)
    active = st["active"]
    assert active["workspace_id"] == w_id and active["cwd"] == str(workspace)
    assert active["execution_root_id"] == f"canonical_root:{w_id}"
    assert (active["projection_kind"], active["access_mode"]) == ("canonical_root", "shared_read")
    assert [o["occupancy_id"] for o in st["occupancies"]] == [active["occupancy_id"]]
    assert pwd(rt) == str(workspace)


def test_notebook_in_a_repository_subdirectory_binds_the_repository(tmp_path: Path, repo: Path) -> None:
    with Runtime(home=tmp_path / "h2", workspace=repo / "src") as rt:
        st = state(rt)
        assert st["attached_workspace_ids"][1] == workspace_id_for(str(repo))
        assert st["active"]["execution_root"] == str(repo) and st["active"]["cwd"] == str(repo / "src")
        assert pwd(rt) == str(repo / "src")


def test_notebook_in_a_linked_worktree_starts_there_with_exclusive_write(tmp_path: Path, repo: Path) -> None:
    wt = tmp_path / "wt-feat"
    git(repo, "worktree", "add", "-q", "-b", "feat", str(wt))
    with Runtime(home=tmp_path / "h2", workspace=wt) as rt:
        active = state(rt)["active"]
        assert active["workspace_anchor"] == str(repo) and active["execution_root"] == str(wt)
        assert (active["projection_kind"], active["access_mode"]) == ("git_worktree_root", "exclusive_write")
        root = next(r for r in state(rt)["execution_roots"] if r["execution_root_id"] == active["execution_root_id"])
        assert root["worktree"]["branch"] == "feat" and root["worktree"]["git_dir"].endswith(".git/worktrees/wt-feat")
        # a second agent cannot take the same worktree exclusively: it starts at the anchor instead
        rt.store.ensure_agent("other", "public_named")
        other = state(rt, "other")["active"]
        assert (other["execution_root"], other["access_mode"]) == (str(repo), "shared_read")


def test_get_workspace_state_takes_no_arguments(rt: Runtime) -> None:  # case 19 (first half)
    e = err(rt.call("GetWorkspaceState", {"x": 1}), "invalid_tool_input")
    assert "unknown field `x`" in e["details"]["parse_error"]


def test_receipt_bounds_many_roots_and_leads_with_the_active_one(rt: Runtime, tmp_path: Path) -> None:  # case 19
    roots = []
    for i in range(30):
        d = tmp_path / "many" / f"dir-{i:02d}-{'x' * 60}"
        d.mkdir(parents=True)
        ws = ok(rt.call("AttachWorkspace", {"path": str(d)}))["workspace"]["workspace_id"]
        roots.append(ok(rt.call("SwitchWorkspace", {"workspace_id": ws}))["execution_root_id"])
    ok(rt.call("SwitchWorkspace", {"execution_root_id": roots[4]}))
    res = rt.call("GetWorkspaceState", {})
    full = ok(res)
    assert len(full["execution_roots"]) == 32  # the 30, the agent home and the notebook directory
    assert not res.projected
    receipt = json.loads(res.receipt)
    assert (len(res.receipt) + 3) // 4 <= 2500
    section = receipt["execution_roots"]
    assert section["total"] == 32 and section["returned"] <= 10 and section["truncated"] is True
    assert section["selection"] == "active_then_occupied_then_recent"
    assert section["items"][0]["execution_root_id"] == roots[4]
    assert receipt["output_ref"] == f"tool_execution:{res.execution_id}:output"
    assert receipt["provider_projection_truncated"] is True
    assert receipt["active"]["execution_root_id"] == roots[4]


def test_attach_repository_subdirectory_binds_the_root_without_switching(rt: Runtime, repo: Path) -> None:  # case 20
    before = state(rt)["active"]
    res = ok(rt.call("AttachWorkspace", {"path": str(repo / "src")}))
    assert res["workspace"]["workspace_anchor"] == str(repo)
    assert res["workspace"]["workspace_id"] == workspace_id_for(str(repo))
    assert res["discovered_execution_root"] == str(repo)
    assert res["discovered_projection_kind"] == "canonical_root"
    assert res["active_unchanged"] is True and res["already_attached"] is False
    again = ok(rt.call("AttachWorkspace", {"path": str(repo)}))
    assert again["already_attached"] is True and again["active_unchanged"] is True
    st = state(rt)
    assert st["active"] == before
    assert st["attached_workspace_ids"].count(res["workspace"]["workspace_id"]) == 1


def test_attach_relative_path_joins_the_active_cwd(rt: Runtime, workspace: Path) -> None:
    res = ok(rt.call("AttachWorkspace", {"path": "sub"}))
    assert res["workspace"]["workspace_anchor"] == str(workspace / "sub")


def test_attach_linked_worktree_binds_its_origin(rt: Runtime, repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt-x"
    git(repo, "worktree", "add", "-q", "-b", "x", str(wt))
    res = ok(rt.call("AttachWorkspace", {"path": str(wt)}))
    assert res["workspace"]["workspace_anchor"] == str(repo)
    assert res["discovered_projection_kind"] == "git_worktree_root"
    assert res["discovered_execution_root"] == str(wt)


def test_attach_refuses_missing_paths_files_and_nul(rt: Runtime, workspace: Path) -> None:
    e = err(rt.call("AttachWorkspace", {"path": str(workspace / "nope")}), "invalid_tool_input")
    assert e["details"]["path"] == str(workspace / "nope") and e["details"]["field"] == "path"
    e = err(rt.call("AttachWorkspace", {"path": "a.txt"}), "invalid_tool_input")
    assert e["details"]["validation_error"] == "is not a directory"
    err(rt.call("AttachWorkspace", {"path": "  "}), "invalid_tool_input")
    err(rt.call("AttachWorkspace", {"path": "sub\x00x"}), "invalid_tool_input")
    err(rt.call("AttachWorkspace", {"path": "sub\ud800"}), "invalid_tool_input")
    assert len(state(rt)["attached_workspace_ids"]) == 2


def test_attach_prunes_bindings_whose_anchor_vanished(rt: Runtime, tmp_path: Path) -> None:
    gone, keep = tmp_path / "gone", tmp_path / "keep"
    gone.mkdir()
    keep.mkdir()
    gone_id = ok(rt.call("AttachWorkspace", {"path": str(gone)}))["workspace"]["workspace_id"]
    gone.rmdir()
    keep_id = ok(rt.call("AttachWorkspace", {"path": str(keep)}))["workspace"]["workspace_id"]
    attached = state(rt)["attached_workspace_ids"]
    assert gone_id not in attached and keep_id in attached
    events = rt.workspaces.tables.audit_events("default")
    assert {"workspace_id": gone_id, "reason": "stale_workspace_anchor"} in [e["data"] for e in events]


def test_private_child_cannot_expand_or_reshape_authority(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 21
    rt.store.ensure_agent("child_x", "private_child", parent_id="default")
    before = state(rt, "child_x")
    assert ws_r in before["attached_workspace_ids"]  # a child inherits its parent's bindings (§1.5)
    other = repo.parent / "elsewhere"
    other.mkdir()
    for name, args in (
        ("AttachWorkspace", {"path": str(other)}),
        ("AttachWorkspace", {"bogus": 1}),
        ("DetachWorkspace", {"workspace_id": ws_r}),
        ("RemoveWorktree", {"execution_root_id": f"canonical_root:{ws_r}"}),
    ):
        e = err(rt.call(name, args, agent="child_x"), "unsupported_agent_profile_capability")
        assert e["details"] == {
            "tool_name": name,
            "required_family": "authority_expanding",
            "profile_preset": "private_child",
        }
    assert state(rt, "child_x")["attached_workspace_ids"] == before["attached_workspace_ids"]
    # local_environment tools stay open to the child
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}, agent="child_x"))
    assert pwd(rt, "child_x") == str(repo)


def test_agent_home_is_protected(rt: Runtime) -> None:  # case 27
    for ws in ("agent_home", "agent_home:default", " agent_home "):
        e = err(rt.call("DetachWorkspace", {"workspace_id": ws}), "protected_workspace")
        assert e["retryable"] is False
    assert state(rt)["attached_workspace_ids"][0] == "agent_home:default"


def test_detach_unknown_binding_is_not_attached(rt: Runtime) -> None:
    e = err(rt.call("DetachWorkspace", {"workspace_id": "ws_000000000000000"}), "tool_execution_failed")
    assert e["details"]["reason"] == "not_attached"


def test_detach_inactive_workspace_keeps_the_projection(rt: Runtime, repo: Path, ws_r: str) -> None:
    before = state(rt)["active"]
    res = ok(rt.call("DetachWorkspace", {"workspace_id": ws_r}))
    assert res == {
        "workspace_id": ws_r,
        "detached": True,
        "switched_to_agent_home": False,
        "retained_execution_roots": [],
    }
    st = state(rt)
    assert ws_r not in st["attached_workspace_ids"] and st["active"] == before


def test_detach_active_workspace_with_worktree_returns_home(rt: Runtime, repo: Path, ws_r: str) -> None:  # case 28
    made = ok(rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main"}))
    res = ok(rt.call("DetachWorkspace", {"workspace_id": ws_r}))
    assert res["switched_to_agent_home"] is True
    assert [r["execution_root_id"] for r in res["retained_execution_roots"]] == [made["execution_root_id"]]
    assert os.path.isdir(made["worktree_path"])
    assert git(repo, "rev-parse", "--verify", "refs/heads/feat")
    st = state(rt)
    assert st["active"]["workspace_id"] == "agent_home:default" and ws_r not in st["attached_workspace_ids"]
    assert pwd(rt) == str(rt.home / "agents" / "default")
    # the worktree stays visible because this agent registered it (§3 rule 1)
    assert made["execution_root_id"] in [r["execution_root_id"] for r in st["execution_roots"]]


def test_bound_roots_follow_bindings_and_live_roots(rt: Runtime, workspace: Path, repo: Path, ws_r: str) -> None:
    view = rt.workspaces.view("default")
    home = rt.home / "agents" / "default"
    assert view.bound_roots() == [home, workspace, repo]
    made = ok(
        rt.call("CreateWorktree", {"workspace_id": ws_r, "branch": "feat", "base_ref": "main", "activate": False})
    )
    assert view.bound_roots() == [home, workspace, repo, Path(made["worktree_path"])]
    ok(rt.call("RemoveWorktree", {"execution_root_id": made["execution_root_id"]}))
    assert view.bound_roots() == [home, workspace, repo]
    ok(rt.call("DetachWorkspace", {"workspace_id": ws_r}))
    assert view.bound_roots() == [home, workspace]
    assert view.execution_root == workspace and view.cwd == workspace


def test_restart_keeps_bindings_projection_registry_and_occupancy(tmp_path: Path, workspace: Path, repo: Path) -> None:
    home = tmp_path / "home-r"
    with Runtime(home=home, workspace=workspace) as rt1:
        ws = ok(rt1.call("AttachWorkspace", {"path": str(repo)}))["workspace"]["workspace_id"]
        made = ok(rt1.call("CreateWorktree", {"workspace_id": ws, "branch": "feat", "base_ref": "main"}))
        ok(rt1.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"], "cwd": "src"}))
        before = state(rt1)
    with Runtime(home=home, workspace=workspace) as rt2:
        after = state(rt2)
        for key in ("attached_workspace_ids", "active", "occupancies", "workspaces"):
            assert after[key] == before[key], key
        assert [r["execution_root_id"] for r in after["execution_roots"]] == [
            r["execution_root_id"] for r in before["execution_roots"]
        ]
        assert pwd(rt2) == str(Path(made["worktree_path"]) / "src")
        # the restored occupancy still excludes another agent
        rt2.store.ensure_agent("other", "public_named")
        ok(rt2.call("AttachWorkspace", {"path": str(repo)}, agent="other"))
        e = err(
            rt2.call("SwitchWorkspace", {"execution_root_id": made["execution_root_id"]}, agent="other"),
            "tool_execution_failed",
        )
        assert e["details"]["reason"] == "occupancy_conflict"


def test_visibility_follows_bindings_and_registration(rt: Runtime, repo: Path) -> None:
    rt.store.ensure_agent("other", "public_named")
    ws = ok(rt.call("AttachWorkspace", {"path": str(repo)}, agent="other"))["workspace"]["workspace_id"]
    made = ok(rt.call("CreateWorktree", {"workspace_id": ws, "branch": "feat", "base_ref": "main"}, agent="other"))
    mine = state(rt)
    assert ws not in {w["workspace_id"] for w in mine["workspaces"]}
    assert made["execution_root_id"] not in {r["execution_root_id"] for r in mine["execution_roots"]}
    assert all(o["holder_agent_id"] == "default" for o in mine["occupancies"])
    theirs = state(rt, "other")
    assert made["execution_root_id"] in {r["execution_root_id"] for r in theirs["execution_roots"]}
    assert theirs["active"]["execution_root_id"] == made["execution_root_id"]


def test_notebook_read_api_matches_the_tool(rt: Runtime, repo: Path, ws_r: str) -> None:
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_r}))
    direct = rt.workspaces.state("default")
    tool = state(rt)
    for key in ("agent_id", "attached_workspace_ids", "workspaces", "active", "occupancies"):
        assert direct[key] == tool[key], key
    assert direct["summary_text"] == "workspace bindings, active projection, and worktree artifacts"
