"""Helpers of the agent-creation tests (imported by name: conftest puts this directory on sys.path)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from holon_nb.runtime import Runtime


def eventually(check: Callable[[], Any], timeout: float = 20.0, step: float = 0.02) -> Any:
    """Poll ``check`` until it returns a truthy value; fail after ``timeout`` seconds (not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached within {timeout} s")
        time.sleep(step)


def task(rt: Runtime, task_id: str) -> dict[str, Any]:
    rec = rt.store.task(task_id)
    assert rec is not None
    return rec


def terminal(rt: Runtime, task_id: str) -> dict[str, Any]:
    """Wait until the task is terminal and return it."""
    return eventually(lambda: (r := task(rt, task_id))["status"] in ("completed", "failed", "cancelled",
                                                                      "interrupted") and r)


def results(rt: Runtime, agent: str = "default") -> list[dict[str, Any]]:
    """The agent's ``TaskResult`` messages (queue view, JSON columns decoded)."""
    return [m for m in rt.work.queued(agent) if m["kind"] == "TaskResult"]


def state(path: Path) -> dict[str, list]:
    """Every table except the tool-execution log and the (derived) memory index."""
    db = sqlite3.connect(path)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                 if r[0] != "tool_executions" and not r[0].startswith(("memory_", "sqlite_"))]
        return {n: sorted(map(repr, db.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
    finally:
        db.close()
