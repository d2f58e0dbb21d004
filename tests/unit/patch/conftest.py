"""Fixtures for the ApplyPatch tests: patch calls, calls under a model route, whole-tree digests."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from holon_nb import Runtime
from holon_nb.tools import render_receipt
from holon_nb.tools._context import CallContext
from holon_nb.tools._dispatch import dispatch


@dataclass
class Dispatched:
    """The parts of a ToolResult the shared ``ok``/``err`` helpers read."""

    envelope: dict[str, Any]
    full_receipt: str


@pytest.fixture
def apply(rt: Runtime) -> Callable[..., Any]:
    """``apply(text)`` → ``rt.call("ApplyPatch", {"patch": text})``."""
    return lambda text: rt.call("ApplyPatch", {"patch": text})


@pytest.fixture
def call_as(rt: Runtime) -> Callable[..., Dispatched]:
    """``call_as(args, **call_fields)``: dispatch ApplyPatch with a custom CallContext (model route,
    stop reason, exposure) on the runtime's loop, as the turn loop does."""

    def run(args: Any, **fields: Any) -> Dispatched:
        call = CallContext(agent_id="default", **fields)
        env = rt._loop.call(dispatch, "ApplyPatch", args, rt.tool_context(call))
        return Dispatched(env, render_receipt(env))

    return run


def digest_tree(root: Path, skip: tuple[str, ...] = ("home",)) -> dict[str, tuple[str, str]]:
    """Every entry under ``root`` (files, dirs, symlinks; hidden ones too) → (sha256/type, mode/target).

    Top-level entries named in ``skip`` (the runtime's holon home, whose database changes) are left out.
    """
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames[:] = [d for d in dirnames if d not in skip]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", oct(stat.S_IMODE(st.st_mode)))
            else:
                data = Path(p).read_bytes()
                out[rel] = (hashlib.sha256(data).hexdigest(), oct(stat.S_IMODE(st.st_mode)))
    return out


@pytest.fixture
def tree() -> Callable[..., dict[str, tuple[str, str]]]:
    """``tree(root)``: a digest of every entry under ``root`` (compare before/after a failed patch)."""
    return digest_tree


#: A file-state entry: bytes (a 0644 file), ``("link", target)``, ``("mode", bytes, mode)`` or None (absent).
Entry = Any


def _materialize(root: Path, files: dict[str, Entry]) -> None:
    """Make ``root`` hold ``files`` (see :data:`Entry`); None removes the entry."""
    for name, spec in files.items():
        p = root / name
        if p.is_symlink() or p.exists():
            p.unlink()
        if spec is None:
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, tuple) and spec[0] == "link":
            p.symlink_to(spec[1])
        elif isinstance(spec, tuple):
            p.write_bytes(spec[1])
            p.chmod(spec[2])
        else:
            p.write_bytes(spec)
            p.chmod(0o644)


def _assert_state(root: Path, files: dict[str, Entry]) -> None:
    """Assert every entry named in ``files`` is as described (None: absent, not even a dangling link)."""
    for name, spec in files.items():
        p = root / name
        if spec is None:
            assert not os.path.lexists(p), name
        elif isinstance(spec, tuple) and spec[0] == "link":
            assert p.is_symlink() and os.readlink(p) == spec[1], name
        else:
            data = spec[1] if isinstance(spec, tuple) else spec
            assert not p.is_symlink() and p.read_bytes() == data, (name, p.read_bytes())


@pytest.fixture
def materialize() -> Callable[[Path, dict[str, Entry]], None]:
    """``materialize(root, files)``: write a file state (see :data:`Entry`)."""
    return _materialize


@pytest.fixture
def assert_state() -> Callable[[Path, dict[str, Entry]], None]:
    """``assert_state(root, files)``: check a file state (see :data:`Entry`)."""
    return _assert_state


def run_git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with no user or system configuration; return stdout (UTF-8)."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return done.stdout.decode("utf-8")


@pytest.fixture
def git_diff(tmp_path: Path) -> Callable[..., str]:
    """``git_diff(before, after, *flags)``: the real ``git diff --cached -M HEAD`` between two states.

    A fresh repository under ``tmp_path`` gets ``before`` committed, then ``after`` staged
    (``git add -A``); the diff text is returned exactly as git prints it.
    """
    counter = iter(range(1_000))

    def make(before: dict[str, Entry], after: dict[str, Entry], *flags: str) -> str:
        repo = tmp_path / f"git-{next(counter)}"
        repo.mkdir()
        run_git(repo, "init", "-q", ".")
        run_git(repo, "config", "core.autocrlf", "false")
        _materialize(repo, before)
        run_git(repo, "add", "-A")
        run_git(repo, "commit", "-q", "--allow-empty", "-m", "before")
        _materialize(repo, after)
        run_git(repo, "add", "-A")
        return run_git(repo, "diff", "--cached", "-M", "HEAD", *flags)

    return make


@pytest.fixture
def git_roundtrip(workspace: Path, apply: Callable[..., Any], git_diff: Callable[..., str]) -> Callable[..., Any]:
    """``git_roundtrip(before, after, *flags)``: put ``before`` into W, apply git's diff to ``after``
    with ApplyPatch, assert W now holds ``{**before, **after}``; return ``(result, diff_text)``."""
    from _support import ok

    def run(before: dict[str, Entry], after: dict[str, Entry], *flags: str) -> tuple[dict[str, Any], str]:
        diff = git_diff(before, after, *flags)
        _materialize(workspace, before)
        result = ok(apply(diff))
        _assert_state(workspace, {**before, **after})
        return result, diff

    return run
