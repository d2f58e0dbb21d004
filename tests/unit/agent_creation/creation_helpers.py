"""Helpers of the agent-creation tests (imported by name: conftest puts this directory on sys.path)."""

from __future__ import annotations

from typing import Any

from _support import eventually, store_state

from holon_nb.runtime import Runtime


def task(rt: Runtime, task_id: str) -> dict[str, Any]:
    rec = rt.store.task(task_id)
    assert rec is not None
    return rec


def terminal(rt: Runtime, task_id: str) -> dict[str, Any]:
    """Wait until the task is terminal and return it."""
    return eventually(
        lambda: (r := task(rt, task_id))["status"] in ("completed", "failed", "cancelled", "interrupted") and r
    )


def results(rt: Runtime, agent: str = "default") -> list[dict[str, Any]]:
    """The agent's ``TaskResult`` messages (queue view, JSON columns decoded)."""
    return [m for m in rt.work.queued(agent) if m["kind"] == "TaskResult"]


state = store_state
