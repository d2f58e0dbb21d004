"""Fixtures for the ApplyPatch tests: patch calls, calls under a model route, whole-tree digests."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from holon_nb import Runtime
from holon_nb.runtime.core import _Context
from holon_nb.tools.context import CallContext
from holon_nb.tools.dispatch import dispatch
from holon_nb.tools.receipts import render_receipt


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
        env = rt._loop.call(dispatch, "ApplyPatch", args, _Context(rt, call))
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
