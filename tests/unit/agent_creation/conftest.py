"""Fixtures of the agent-creation tests: a swappable child turn runner the test drives."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from holon_nb.runtime import Runtime
from holon_nb.runtime.agents._runs import ChildTurnOutcome, ChildTurnRequest


class ScriptedRunner:
    """A child turn runner: records each request, optionally blocks until released, then answers.

    Attributes:
        requests: The requests it got, in order.
        outcome: What it answers (default: a completed turn saying ``done``).
        gate: When set, each run waits for ``release()`` (or a cancellation) before answering.
        cancelled: Task ids whose run was cancelled while waiting.
    """

    def __init__(self, outcome: ChildTurnOutcome | None = None, block: bool = False):
        self.requests: list[ChildTurnRequest] = []
        self.outcome = outcome or ChildTurnOutcome("completed", "done")
        self.gate = threading.Event() if block else None
        self.started = threading.Event()
        self.cancelled: list[str] = []

    def release(self) -> None:
        assert self.gate is not None
        self.gate.set()

    async def __call__(self, request: ChildTurnRequest) -> ChildTurnOutcome:
        self.requests.append(request)
        self.started.set()
        if self.gate is not None:
            try:
                while not self.gate.is_set():
                    await anyio.sleep(0.01)
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(request.task["id"])
                raise
        return self.outcome


@pytest.fixture
def runner(rt: Runtime) -> ScriptedRunner:
    """A completed-turn runner installed on ``rt`` (tests replace ``runner.outcome`` or install their own)."""
    r = ScriptedRunner()
    rt.agents.lifecycle.turn_runner = r
    return r


@pytest.fixture
def blocking(rt: Runtime) -> Iterator[ScriptedRunner]:
    """A runner that waits until the test releases it."""
    r = ScriptedRunner(block=True)
    rt.agents.lifecycle.turn_runner = r
    yield r
    r.gate.set()  # type: ignore[union-attr]
