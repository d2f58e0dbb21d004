"""``rt.turns.cancel`` takes effect while the turn waits: on a provider that never answers, on an approval
question nobody answers (turn-loop spec §1.3). The bounds below are generous: without the fix the turns
would wait for the server or the asker (a minute and more)."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Iterator

import anyio
import pytest
from turn_helpers import REF, receipt, script
from unit.providers.payloads import chat_text
from unit.providers.servers import Reply, WireServer

from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.agents._approvals import ApprovalRequest

VLLM = "vllm/Qwen/Qwen3-8B"


@pytest.fixture
def hung(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireServer]:
    """A wire server whose first reply comes after 120 s (released when the server closes)."""
    with WireServer() as srv:
        monkeypatch.setenv("HOLON_VLLM_BASE_URL", srv.base_url + "/v1")
        srv.script(Reply(delay_s=120, json=chat_text("too late")))
        yield srv


def _wait_until(predicate, what: str) -> None:  # noqa: ANN001
    done = threading.Event()
    for _ in range(600):
        if predicate():
            return
        done.wait(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_cancel_interrupts_a_provider_that_never_answers(rt: Runtime, hung: WireServer) -> None:
    events: list = []
    rt.subscribe(lambda e: events.append(e) if e.kind == "turn_terminal" else None)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(rt.run_turn, "are you there?", model=VLLM)
        _wait_until(lambda: len(hung.requests) == 1, "the provider request")
        assert not fut.done()
        assert rt.turns.cancel(reason="stopped by the user") is True
        result = fut.result(timeout=20)
    assert result.terminal == "aborted" and result.reason == "stopped by the user"
    assert result.rounds == [] and result.error is None
    row = rt.conversations.turn(result.turn_id)
    assert (row["terminal_kind"], row["terminal_reason"]) == ("aborted", "stopped by the user")
    assert events and events[-1].data["terminal"] == "aborted"
    assert rt.turns.active() is None and len(hung.requests) == 1  # no retry after the cancel


class SilentAsker:
    """An approval asker that does not answer (a notebook nobody looks at) — for 60 s, so a regression fails
    instead of hanging the suite."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.cancelled = threading.Event()

    async def __call__(self, request: ApprovalRequest) -> str:
        self.asked.set()
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        return "deny"


def test_cancel_withdraws_an_unanswered_approval_question(rt: Runtime) -> None:
    rt.settings = rt.settings.replace(approval="always", approval_timeout_s=0)  # wait forever
    asker = SilentAsker()
    rt.approvals.asker = asker
    decided: list = []
    rt.subscribe(lambda e: decided.append(e.data) if e.kind == "approval_decided" else None)
    script(
        rt, Step.tool_uses([("c1", "ExecCommand", {"cmd": "touch nope"}), ("c2", "GetAgent", {})]), Step.text("never")
    )
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(rt.run_turn, "go", model=REF)
        assert asker.asked.wait(30)
        assert not fut.done()
        assert rt.turns.cancel() is True
        result = fut.result(timeout=20)
    assert result.terminal == "aborted" and result.reason == "cancelled"
    assert asker.cancelled.is_set()
    calls = result.rounds[0].tool_calls
    assert [c.status for c in calls] == ["not_executed", "not_executed"]
    assert [receipt(c)["kind"] for c in calls] == ["turn_cancelled", "turn_cancelled"]
    assert not (rt.workspace / "nope").exists()
    assert [(d["tool_name"], d["decision"], d["source"]) for d in decided] == [("ExecCommand", "deny", "cancelled")]
    # the stored transcript answers both calls, so the next turn's history is valid
    script(rt, Step.text("fresh start"))
    rt.settings = rt.settings.replace(approval="never")
    again = rt.run_turn("again", model=REF)
    assert again.terminal == "completed" and again.final_text == "fresh start"


def test_cancel_from_the_runtime_thread_still_stops_before_the_next_call(rt: Runtime) -> None:
    """A cancel raised while a provider answers without waiting (a scripted step) keeps the old contract."""
    from turn_helpers import hooked

    async def cancel(req) -> None:  # noqa: ANN001
        assert rt.turns.cancel() is True

    hooked(rt, Step.tool_uses([("c1", "GetAgent", {})]), Step.text("never"), before={1: cancel})
    r = rt.run_turn("go", model=REF)
    assert r.terminal == "aborted" and r.reason == "cancelled"
