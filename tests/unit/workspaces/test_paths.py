"""Pure workspace rules: normalisation, discovery, ids, label sanitising, porcelain parsing, receipt bounds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from _git_support import git

from holon_nb.render._receipt import ReceiptContext
from holon_nb.runtime.workspaces._git import parse_worktree_porcelain, sanitize_label
from holon_nb.runtime.workspaces._paths import (
    contains,
    discover,
    normalize,
    real_contains,
    workspace_id_for,
    worktree_identity,
    worktree_root_id,
)
from holon_nb.tools.builtin._workspace_receipt import render_workspace_state_receipt, workspace_state_receipt


def test_normalize_is_lexical() -> None:
    assert normalize("/../etc") == "/etc"
    assert normalize("a/./b/../c", "/base") == "/base/a/c"
    assert normalize("//x//y/") == "/x/y"
    assert normalize("/") == "/"


def test_containment_is_component_wise(tmp_path: Path) -> None:
    assert contains("/a/b", "/a/b") and contains("/a/b", "/a/b/c")
    assert not contains("/a/b", "/a/bc") and not contains("/a/b", "/a")
    assert contains("/", "/anything")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "out").symlink_to(tmp_path)
    assert contains(str(tmp_path / "root"), str(tmp_path / "root" / "out"))
    assert not real_contains(str(tmp_path / "root"), str(tmp_path / "root" / "out"))
    assert real_contains(str(tmp_path / "root"), str(tmp_path / "root" / "missing" / "deeper"))


def test_workspace_ids_are_deterministic() -> None:
    digest = hashlib.sha256(b"/srv/repo").hexdigest()[:15]
    assert workspace_id_for("/srv/repo") == f"ws_{digest}"
    assert worktree_root_id("ws_x", "/srv/wt/../wt2") == "git_worktree_root:ws_x:/srv/wt2"


def test_discovery_rules(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    d = discover(str(plain))
    assert (d.anchor, d.execution_root, d.projection_kind, d.cwd) == (str(plain),) * 2 + ("canonical_root", str(plain))
    d = discover(str(repo / "src"))
    assert (d.anchor, d.execution_root, d.projection_kind, d.cwd) == (
        str(repo),
        str(repo),
        "canonical_root",
        str(repo / "src"),
    )
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wtb", str(wt))
    d = discover(str(wt / "src"))
    assert (d.anchor, d.execution_root, d.projection_kind, d.cwd) == (
        str(repo),
        str(wt),
        "git_worktree_root",
        str(wt / "src"),
    )
    ident = worktree_identity(str(wt))
    assert ident["branch"] == "wtb" and ident["git_common_dir"] == str(repo / ".git") and not ident["detached"]
    # a .git file of another shape (a submodule) is not a linked worktree: the walk goes on to a .git directory
    (repo / "mod").mkdir()
    (repo / "mod" / ".git").write_text("gitdir: ../.git/modules/mod\n")
    d = discover(str(repo / "mod"))
    assert (d.anchor, d.projection_kind) == (str(repo), "canonical_root")


def test_sanitize_label() -> None:
    assert sanitize_label("feature/issue 1224") == "feature-issue-1224"
    assert sanitize_label("///") == "worktree"
    assert sanitize_label("--a--b--") == "a-b"
    assert sanitize_label("ünïcode_ok") == "n-code_ok"
    assert sanitize_label("x" * 100) == "x" * 64


def test_parse_porcelain() -> None:
    text = (
        "worktree /tmp/repo\nHEAD abc\nbranch refs/heads/main\n\n"
        "worktree /tmp/wt\nHEAD def\ndetached\nlocked reason here\n\n"
        "worktree /tmp/wt2\nHEAD 123\nbranch refs/heads/x\nlocked\n"
    )
    main, wt, wt2 = parse_worktree_porcelain(text)
    assert (main.path, main.head, main.branch_ref, main.detached, main.locked) == (
        "/tmp/repo",
        "abc",
        "refs/heads/main",
        False,
        None,
    )
    assert (wt.detached, wt.branch_ref, wt.locked) == (True, None, "reason here")
    assert wt2.locked == ""


def _state(n_roots: int, n_occ: int) -> dict:
    roots = [
        {
            "execution_root_id": f"canonical_root:ws_{i:03d}",
            "workspace_id": f"ws_{i:03d}",
            "filesystem_path": "/p/" + "x" * 200,
            "root_kind": "canonical_root",
            "created_at": f"2026-01-01T00:00:{i:02d}.000000Z",
        }
        for i in range(n_roots)
    ]
    occ = [
        {
            "occupancy_id": f"occ_{i:03d}",
            "execution_root_id": roots[i % n_roots]["execution_root_id"],
            "workspace_id": "ws",
            "holder_agent_id": "a" * 100,
            "access_mode": "shared_read",
            "acquired_at": f"2026-01-01T00:01:{i:02d}.000000Z",
        }
        for i in range(n_occ)
    ]
    return {
        "agent_id": "default",
        "attached_workspace_ids": [r["workspace_id"] for r in roots],
        "workspaces": [],
        "active": {"execution_root_id": roots[min(7, n_roots - 1)]["execution_root_id"], "cwd": "/p"},
        "execution_roots": roots,
        "occupancies": occ,
    }


def _render(state: dict, budget: int) -> dict:
    text = render_workspace_state_receipt(
        {"tool_name": "GetWorkspaceState", "status": "success", "result": state}, ReceiptContext("tool_test", budget)
    )
    assert (len(text) + 3) // 4 <= budget or budget < 200
    return json.loads(text)


def test_receipt_halving_order() -> None:
    state = _state(12, 30)
    big = _render(state, 100_000)
    assert big["execution_roots"]["returned"] == 10 and big["occupancies"]["returned"] == 20
    assert big["execution_roots"]["items"][0]["execution_root_id"] == "canonical_root:ws_007"
    assert big["output_ref"] == "tool_execution:tool_test:output"
    # occupancies shrink first (20, 10, 5, 2, 1, 0), roots only once no occupancy is shown (10, 5, 2, 1, 0)
    no_occ = json.dumps(
        workspace_state_receipt(state, "tool_execution:tool_test:output", 10, 0, 20),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    fits = _render(state, (len(no_occ) + 3) // 4)
    assert fits["occupancies"]["returned"] == 0 and fits["execution_roots"]["returned"] == 10
    mid = _render(state, (len(no_occ) + 3) // 4 - 1)
    assert mid["occupancies"]["returned"] == 0 and mid["execution_roots"]["returned"] == 5
    assert mid["execution_roots"]["items"][0]["execution_root_id"] == "canonical_root:ws_007"
    assert mid["workspaces"]["total"] == 0
    tiny = _render(state, 1)
    assert tiny["execution_roots"]["returned"] == 0 and tiny["occupancies"]["returned"] == 0
    assert tiny["attached_workspace_ids_total"] == 12 and len(tiny["attached_workspace_ids"]) == 12


def test_receipt_without_render_context_uses_defaults() -> None:
    state = _state(3, 1)
    text = render_workspace_state_receipt({"tool_name": "GetWorkspaceState", "status": "success", "result": state})
    receipt = json.loads(text)
    assert receipt["output_ref"] == "tool_execution:unknown:output" and (len(text) + 3) // 4 <= 2500
    assert receipt["occupancies"]["items"][0]["occupancy_id"] == "occ_000"


def test_receipt_caps_long_strings() -> None:
    state = _state(8, 0)
    state["agent_id"] = "z" * 2000
    receipt = _render(state, 100_000)
    assert len(receipt["agent_id"]) == 512 and receipt["agent_id"].endswith("…")


def test_receipt_root_selection_is_active_then_occupied_then_recent() -> None:
    state = _state(5, 0)
    state["active"]["execution_root_id"] = "canonical_root:ws_000"
    state["occupancies"] = [
        {
            "occupancy_id": "occ_1",
            "execution_root_id": "canonical_root:ws_002",
            "workspace_id": "ws",
            "holder_agent_id": "b",
            "access_mode": "exclusive_write",
            "acquired_at": "2026-01-01T00:00:00.000000Z",
        }
    ]
    items = _render(state, 100_000)["execution_roots"]["items"]
    assert [i["execution_root_id"][-3:] for i in items] == ["000", "002", "004", "003", "001"]
