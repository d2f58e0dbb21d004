"""Fixtures of the workspace tests: a real git repository R (``main``, ``src/``) and helpers.

Git runs with a fixed identity and no global or system configuration, so the
tests behave the same on every machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _git_support import git
from _support import ok

from holon_nb import Runtime


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed git identity and an empty global configuration for every git process (ours and the runtime's)."""
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


@pytest.fixture
def repo(tmp_path: Path, git_env: None) -> Path:
    """R: a git repository with branch ``main``, ``README`` and ``src/mod.py`` committed."""
    r = tmp_path / "R"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "src").mkdir()
    (r / "src" / "mod.py").write_text("print('hi')\n")
    (r / "README").write_text("R\n")
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "init")
    return r


@pytest.fixture
def ws_r(rt: Runtime, repo: Path) -> str:
    """R attached to the default agent; returns its workspace id."""
    return ok(rt.call("AttachWorkspace", {"path": str(repo)}))["workspace"]["workspace_id"]
