"""Approval questions nobody answers time out (``RuntimeSettings.approval_timeout_s``), and the expected
failures — no asker, a failing asker, a timeout — log one warning line without a traceback."""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import pytest

from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime, RuntimeSettings
from holon_nb.runtime.agents._approvals import ApprovalRequest
from holon_nb.tools._context import CallContext
from holon_nb.tools._spec import Profile

REF = "scripted@default/scripted"


def _check(rt: Runtime, name: str, args: Any) -> dict[str, Any] | None:
    names = frozenset(s.name for s in rt.registry.model_facing(Profile.PUBLIC_NAMED))
    ctx = rt.tool_context(
        CallContext(
            agent_id="default",
            profile=Profile.PUBLIC_NAMED,
            exposed=names,
            round=1,
            execution_id="tool_000000000000001",
        ),
    )
    return rt._loop.call(rt.approvals.check, name, args, ctx)


class Silent:
    """Answers after ``delay`` seconds (``approve_once``), unless cancelled first."""

    def __init__(self, delay: float = 60.0):
        self.delay = delay
        self.cancelled = threading.Event()

    async def __call__(self, request: ApprovalRequest) -> str:
        try:
            await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        return "approve_once"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "holon_nb.approvals" and r.levelno >= logging.WARNING]


def test_default_timeout_and_forever() -> None:
    assert RuntimeSettings().approval_timeout_s == 120.0


def test_unanswered_question_is_denied_after_the_timeout_in_a_turn(rt: Runtime, caplog) -> None:
    rt.settings = rt.settings.replace(approval="always", approval_timeout_s=0.2)
    asker = Silent()
    rt.approvals.asker = asker
    rt.providers.register(REF, ScriptedProvider([Step.tool_use("c1", "GetAgent", {}), Step.text("went on")]))
    with caplog.at_level(logging.WARNING):
        result = rt.run_turn("go", model=REF)
    assert result.terminal == "completed" and result.final_text == "went on"  # a headless run does not hang
    env = result.tool_calls[0].envelope
    assert env["status"] == "error" and env["error"]["kind"] == "approval_denied"
    assert "no answer came within 0.2 s" in env["error"]["message"]
    assert env["error"]["details"]["decided_by"] == "timeout" and env["error"]["details"]["timeout_s"] == 0.2
    assert asker.cancelled.is_set()
    assert [(r.decision, r.source) for r in rt.approvals.history] == [("deny", "timeout")]
    [line] = _warnings(caplog)
    assert not line.exc_info and "\n" not in line.getMessage() and "GetAgent" in line.getMessage()


def test_zero_or_negative_timeout_waits_for_the_answer(rt: Runtime) -> None:
    for value in (0, -1):
        rt.settings = rt.settings.replace(approval="always", approval_timeout_s=value)
        assert rt.approvals.timeout_s is None
        rt.approvals.asker = Silent(delay=0.3)  # longer than a zero timeout would allow
        assert _check(rt, "GetAgent", {}) is None  # approved once the answer came
    assert [r.source for r in rt.approvals.history] == ["asker", "asker"]


def test_no_asker_and_failing_asker_log_one_line_without_traceback(rt: Runtime, caplog) -> None:
    rt.settings = rt.settings.replace(approval="always")
    with caplog.at_level(logging.WARNING):
        env = _check(rt, "GetAgent", {})
        assert env is not None and env["error"]["details"]["decided_by"] == "no_asker"

        def broken(request: ApprovalRequest) -> str:
            raise RuntimeError("the widget is gone")

        rt.approvals.asker = broken
        env = _check(rt, "GetAgent", {})
        assert env is not None and env["error"]["details"]["decided_by"] == "asker_failed"
    lines = _warnings(caplog)
    assert len(lines) == 2 and not any(r.exc_info for r in lines)
    assert "no approval prompt is installed" in lines[0].getMessage()
    assert "the widget is gone" in lines[1].getMessage() and "Traceback" not in caplog.text
