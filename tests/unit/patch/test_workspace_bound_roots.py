"""D3 with the real workspace plane: bound roots are the agent home, attached anchors and live
execution roots (workspace spec §2.3, case 49), and relative paths follow the active execution root."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from _git_support import git
from _support import err, ok

from holon_nb import Runtime


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """R: a git repository (``main``) with ``src/mod.py``; git runs with a fixed identity and no global config."""
    cfg = tmp_path / "gitconfig"
    cfg.write_text("")
    for key, value in {
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.org",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.org",
        "GIT_CONFIG_GLOBAL": str(cfg),
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)
    r = tmp_path / "R"
    (r / "src").mkdir(parents=True)
    (r / "src" / "mod.py").write_text("print('hi')\n")
    git(r, "init", "-q", "-b", "main")
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "init")
    return r


def _modify(path: str) -> str:
    return f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-print('hi')\n+print('patched')\n"


def test_case49_linked_worktree_and_anchor(rt: Runtime, repo: Path, apply) -> None:
    ws = ok(rt.call("AttachWorkspace", {"path": str(repo)}))["workspace"]["workspace_id"]
    created = ok(rt.call("CreateWorktree", {"workspace_id": ws, "branch": "feat", "base_ref": "main"}))
    worktree = Path(created["worktree_path"])
    assert created["activated"] is True and worktree.parent != repo
    # absolute path inside the active linked worktree: a bound root
    ok(apply(_modify(str(worktree / "src" / "mod.py"))))
    assert (worktree / "src" / "mod.py").read_text() == "print('patched')\n"
    # the anchor of the attached workspace is bound too
    ok(apply(_modify(str(repo / "src" / "mod.py"))))
    assert (repo / "src" / "mod.py").read_text() == "print('patched')\n"
    # relative paths resolve against the active execution root (the worktree now)
    res = ok(apply("--- /dev/null\n+++ b/NEW.md\n@@ -0,0 +1 @@\n+new\n"))
    assert res["changed_paths"] == [str(worktree / "NEW.md")]
    outside = Path("/tmp") / f"holon-49-{uuid.uuid4().hex}.txt"
    err(apply(f"--- /dev/null\n+++ {outside}\n@@ -0,0 +1 @@\n+x\n"), "path_escape")
    assert not outside.exists()
