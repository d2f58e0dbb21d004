"""%%patch, %workspace and %worktree in IPython's in-process shell (real files, real git)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _git_support import git
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from holon_nb.notebook._workspace_magics import restore_blank_context

RESULT = "application/vnd.holon.tool-result+json"

PATCH = """--- a/notes.txt
+++ b/notes.txt
@@ -1,4 +1,4 @@
 title
\x20
-draft
+final
 end
"""


@pytest.fixture
def notes(ip: Any, tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"title\n\ndraft\nend\n")
    return path


def _cell(ip: Any, source: str) -> list[dict[str, Any]]:
    """Run a whole cell as a user would (history, input transformers) and return its display bundles."""
    with capture_output() as cap:
        result = ip.run_cell(source, store_history=True)
    assert result.error_in_exec is None and result.error_before_exec is None
    return [o.data for o in cap.outputs]


def test_patch_cell_with_a_blank_context_line_applies(ip: Any, notes: Path) -> None:
    # IPython empties the whitespace-only context line " " before the magic sees the body
    (bundle,) = _cell(ip, "%%patch\n" + PATCH)
    env = bundle[RESULT]
    assert env["status"] == "success", env
    assert notes.read_bytes() == b"title\n\nfinal\nend\n"
    assert bundle["text/plain"].startswith("ApplyPatch · success · ")
    assert "\n  Success. Updated the following files:\n  M notes.txt" in bundle["text/plain"]
    html = bundle["text/html"]
    assert "holon-diff" in html and "+final" in html and "-draft" in html


def test_patch_magic_without_history_reads_empty_hunk_lines_by_the_counts(run: Any, notes: Path) -> None:
    bundles = run("patch", "", PATCH.replace("\n \n", "\n\n"))
    assert bundles[0][RESULT]["status"] == "success"
    assert notes.read_bytes() == b"title\n\nfinal\nend\n"


def test_restore_blank_context_keeps_trailing_blank_lines_outside_hunks() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\n\n"
    assert restore_blank_context(text, "") == text
    raw = "%%patch\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n \n-b\n+B"
    assert restore_blank_context(raw.split("\n", 1)[1].replace("\n \n", "\n\n") + "\n", raw).endswith(" a\n \n-b\n+B\n")


def test_failed_patch_cell_is_an_error_receipt_and_changes_nothing(run: Any, notes: Path) -> None:
    before = notes.read_bytes()
    bundles = run("patch", "", PATCH.replace(" title", " no such line"))
    assert bundles[0][RESULT]["error"]["kind"] == "context_not_found"
    assert notes.read_bytes() == before
    with pytest.raises(UsageError):
        run("patch", "", "   \n")


def test_workspace_state_is_a_readable_table(run: Any, tmp_path: Path) -> None:
    (bundle,) = run("workspace")
    text = bundle["text/plain"]
    first, second = text.split("\n\n", 2)[:2]
    assert re.fullmatch(r"GetWorkspaceState · success · \d+ ms — .+", first), first  # like every receipt (issue 26 #7)
    assert second.startswith("active projection of agent default")
    assert "workspaces" in text and "execution roots" in text
    assert str(tmp_path) not in text  # the workspace's own paths read relative to it, the holon home as a label
    assert re.search(r"^execution_root +\.$", text, re.M), text
    assert bundle[RESULT]["tool_name"] == "GetWorkspaceState"


def test_workspace_attach_switch_and_worktree_lifecycle(
    ip: Any, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "Test")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "test@example.invalid")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    ip.user_ns["repo_dir"] = str(repo)

    attached = run("workspace", "attach $repo_dir")[0][RESULT]
    assert attached["status"] == "success" and attached["result"]["workspace"]["workspace_anchor"] == str(repo)
    switched = run("workspace", "switch --path $repo_dir")[0][RESULT]
    assert switched["result"]["execution_root"] == str(repo)

    created = run("worktree", "create try-it --base main")[0][RESULT]
    assert created["status"] == "success" and created["result"]["disposition"] == "created", created
    wt_path, wt_id = Path(created["result"]["worktree_path"]), created["result"]["execution_root_id"]
    assert created["result"]["activated"] is True

    listing = run("worktree", "list")[0]["text/plain"]
    assert "try-it" in listing and "active" in listing

    (wt_path / "scratch.txt").write_text("wip\n")
    ip.user_ns["wt_id"] = wt_id
    dirty = run("worktree", "remove {wt_id} --return-to canonical")[0][RESULT]
    assert dirty["result"]["disposition"] == "retained_dirty" and dirty["result"]["changed_files"] == ["scratch.txt"]
    (wt_path / "scratch.txt").unlink()
    run("workspace", "switch --path $repo_dir")
    removed = run("worktree", "remove {wt_id}")[0][RESULT]
    assert removed["result"]["disposition"] == "removed" and not wt_path.exists()
    with pytest.raises(UsageError):
        run("worktree", "create")


def test_paths_and_root_ids_with_spaces_stay_whole(
    ip: Any, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "Test")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "test@example.invalid")
    repo = tmp_path / "my  repo"  # two spaces
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    ip.user_ns["spaced"] = str(repo)
    assert run("workspace", "attach $spaced")[0][RESULT]["status"] == "success"
    switched = run("workspace", "switch $spaced")[0][RESULT]
    assert switched["result"]["execution_root"] == str(repo)
    created = run("worktree", "create spaced-branch --base main --no-activate")[0][RESULT]
    ip.user_ns["root_id"] = created["result"]["execution_root_id"]
    assert " " in created["result"]["execution_root_id"]
    removed = run("worktree", "remove {root_id}")[0][RESULT]
    assert removed["result"]["disposition"] == "removed", removed
