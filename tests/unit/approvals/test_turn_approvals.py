"""Approvals inside scripted model turns (issue 5): the turn waits for the answer; a denial is an envelope."""

from __future__ import annotations

import concurrent.futures
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.agents._approvals import ApprovalRequest

REF = "scripted@default/scripted"


class GatedAsker:
    """An asker that waits until the test answers (as a notebook widget would)."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []
        self.asked = threading.Semaphore(0)
        self._answers: list[str] = []
        self._ready = threading.Event()

    def answer(self, decision: str) -> None:
        self._answers.append(decision)
        self._ready.set()

    async def __call__(self, request: ApprovalRequest) -> str:
        self.requests.append(request)
        self.asked.release()
        while not self._answers:
            self._ready.clear()
            await anyio.to_thread.run_sync(self._ready.wait, 0.05)
        return self._answers.pop(0)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "other"
    d.mkdir()
    return d


def _script(rt: Runtime, *steps: Step) -> ScriptedProvider:
    p = ScriptedProvider(list(steps))
    rt.providers.register(REF, p)
    return p


def _attached(rt: Runtime) -> list[str]:
    return rt.workspaces.state("default")["attached_workspace_ids"]


def test_on_request_waits_for_the_answer_and_deny_gives_approval_denied(rt: Runtime, outside: Path) -> None:
    rt.settings = rt.settings.replace(approval="on_request")
    asker = GatedAsker()
    rt.approvals.asker = asker
    _script(rt, Step.tool_use("call_1", "AttachWorkspace", {"path": str(outside)}), Step.text("could not attach"))
    before = _attached(rt)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(rt.run_turn, "attach the other checkout", model=REF)
        assert asker.asked.acquire(timeout=30)
        assert not fut.done()  # the turn waits for the user
        [req] = asker.requests
        assert req.tool_name == "AttachWorkspace" and req.family == "authority_expanding"
        assert req.arguments == {"path": str(outside)} and req.policy == "on_request" and req.round == 1
        asker.answer("deny")
        result = fut.result(timeout=60)
    assert result.terminal == "completed" and result.final_text == "could not attach"  # the turn went on
    [call] = result.tool_calls
    env = call.envelope
    assert env["status"] == "error" and env["error"]["kind"] == "approval_denied"
    assert env["error"]["domain"] == "policy" and env["error"]["details"]["decided_by"] == "asker"
    assert call.is_error and "approval_denied" in call.receipt
    assert _attached(rt) == before  # nothing attached
    row = rt.store.query("SELECT status, tool_name FROM tool_executions WHERE id=?", (call.execution_id,))[0]
    assert (row["status"], row["tool_name"]) == ("error", "AttachWorkspace")


def test_approve_for_session_is_not_asked_again(rt: Runtime, outside: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    second.mkdir()
    rt.settings = rt.settings.replace(approval="on_request")
    asker = GatedAsker()
    rt.approvals.asker = asker
    _script(
        rt,
        Step.tool_use("call_1", "AttachWorkspace", {"path": str(outside)}),
        Step.tool_use("call_2", "AttachWorkspace", {"path": str(second)}),
        Step.text("attached both"),
    )
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(rt.run_turn, "attach both", model=REF)
        assert asker.asked.acquire(timeout=30)
        asker.answer("approve_session")
        result = fut.result(timeout=60)
    assert [c.envelope["status"] for c in result.tool_calls] == ["success", "success"]
    assert len(asker.requests) == 1
    assert len(_attached(rt)) >= 4  # home, notebook dir, and both new checkouts
    # a later turn of the same session is not asked either
    attached = result.tool_calls[1].envelope["result"]
    ws_id = attached.get("workspace_id") or attached["workspace"]["workspace_id"]
    _script(rt, Step.tool_use("call_3", "DetachWorkspace", {"workspace_id": ws_id}), Step.text("ok"))
    asker2 = GatedAsker()
    rt.approvals.asker = asker2
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(rt.run_turn, "detach the second", model=REF)
        assert asker2.asked.acquire(timeout=30)  # DetachWorkspace is another tool: asked
        asker2.answer("approve_once")
        result = fut.result(timeout=60)
    assert result.tool_calls[0].envelope["status"] == "success" and ws_id not in _attached(rt)
    _script(rt, Step.tool_use("call_4", "AttachWorkspace", {"path": str(second)}), Step.text("ok"))
    result = rt.run_turn("attach again", model=REF)
    assert result.tool_calls[0].envelope["status"] == "success" and len(asker2.requests) == 1


def test_never_asks_nothing(rt: Runtime, outside: Path) -> None:
    asker = GatedAsker()
    rt.approvals.asker = asker
    _script(rt, Step.tool_use("call_1", "AttachWorkspace", {"path": str(outside)}), Step.text("done"))
    result = rt.run_turn("attach", model=REF)
    assert result.tool_calls[0].envelope["status"] == "success" and asker.requests == []


def test_always_asks_for_get_agent_too(rt: Runtime) -> None:
    rt.settings = rt.settings.replace(approval="always")
    asker = GatedAsker()
    rt.approvals.asker = asker
    _script(rt, Step.tool_use("call_1", "GetAgent", {}), Step.text("done"))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(rt.run_turn, "who are you", model=REF)
        assert asker.asked.acquire(timeout=30)
        asker.answer("approve_once")
        result = fut.result(timeout=60)
    assert [r.tool_name for r in asker.requests] == ["GetAgent"]
    assert result.tool_calls[0].envelope["status"] == "success"


def test_no_asker_denies_and_direct_calls_are_never_asked(rt: Runtime, outside: Path) -> None:
    rt.settings = rt.settings.replace(approval="always")
    _script(rt, Step.tool_use("call_1", "ExecCommand", {"cmd": "echo hi"}), Step.text("done"))
    result = rt.run_turn("run it", model=REF)
    env: dict[str, Any] = result.tool_calls[0].envelope
    assert env["error"]["kind"] == "approval_denied" and env["error"]["details"]["decided_by"] == "no_asker"
    assert "no approval prompt is installed" in env["error"]["message"]
    assert rt.call("AttachWorkspace", {"path": str(outside)}).envelope["status"] == "success"  # the user acts
