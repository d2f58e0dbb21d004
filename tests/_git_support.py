"""Helpers of the workspace tests: git in a subprocess, commits, workspace state, where commands run."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from _support import ok

from holon_nb import Runtime


def git(cwd: Path | str, *args: str, check: bool = True) -> str:
    """Run git in ``cwd`` and return its stripped stdout."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def commit(repo: Path, name: str, text: str = "x\n", message: str | None = None) -> str:
    """Write ``name`` in ``repo``, commit it and return the new HEAD."""
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message or f"add {name}")
    return git(repo, "rev-parse", "HEAD")


def state(rt: Runtime, agent: str | None = None) -> dict[str, Any]:
    """The canonical GetWorkspaceState result of ``agent``."""
    return ok(rt.call("GetWorkspaceState", {}, agent=agent))


def pwd(rt: Runtime, agent: str | None = None) -> str:
    """Where ExecCommand runs for ``agent`` (``pwd``)."""
    return ok(rt.call("ExecCommand", {"cmd": "pwd"}, agent=agent))["stdout_preview"].strip()
