"""Following an agent past its waits (runtime/turns/_follow.py, Runtime.run_turns): a woken wait starts the next
turn with the waking message as input, until the agent has nothing left to wait for."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from _support import eventually
from turn_helpers import REF, script

from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnResponse, UserText, UserToolResults
from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.turns._follow import TurnFollower

WAIT_FOR_GO = Step.tool_use(
    "w1", "WaitFor", {"reason": "need the go-ahead", "wake": "operator_input", "delivery": "silent"}
)


def _in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def test_an_operator_message_wakes_the_next_turn(rt: Runtime) -> None:
    provider = script(rt, WAIT_FOR_GO, Step.text("thanks, all done"))
    follower = TurnFollower(rt, max_wakes=3, timeout_s=30)
    woken: list[dict[str, Any]] = []
    thread, box = _in_thread(lambda: follower.run("ask me first", model=REF, on_wake=woken.append))
    eventually(lambda: len(follower.results) == 1 and follower.open_waits() == 1)
    assert follower.results[0].reason == "wait_for_silent"
    msg = rt.work.operator_prompt("default", "go ahead")
    thread.join(30)
    assert "error" not in box and len(box["value"]) == 2
    assert [w["id"] for w in woken] == [msg["id"]]
    second = box["value"][1]
    assert second.terminal == "completed" and second.final_text == "thanks, all done"
    text = provider.requests()[1].conversation[-1]
    assert isinstance(text, UserText) and text.text.startswith(f"[Runtime message {msg['id']} (operator_prompt)")
    assert text.text.endswith("go ahead")
    assert follower.ended_because == "idle" and follower.open_waits() == 0


def test_a_wake_that_came_before_following_looked_still_reports_the_wait(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view a follow draws does not depend on timing: a wake queued between the end of the turn and the
    follower's first look is still preceded by ``on_waiting`` (a saved notebook showed the line or not, by luck)."""
    script(rt, WAIT_FOR_GO, Step.text("thanks, all done"))
    run_sync = rt.turns.run_sync

    def answered_at_once(*args: Any, **kwargs: Any) -> Any:
        result = run_sync(*args, **kwargs)
        if "source_message_id" not in kwargs:  # the first turn: the operator answers before the follower looks
            rt.work.operator_prompt("default", "go ahead")
        return result

    monkeypatch.setattr(rt.turns, "run_sync", answered_at_once)
    told: list[Any] = []
    follower = TurnFollower(rt, max_wakes=3, timeout_s=30)
    results = follower.run(
        "ask me first", model=REF, on_waiting=lambda n: told.append(n), on_wake=lambda m: told.append(m["kind"])
    )
    assert [r.final_text for r in results] == ["", "thanks, all done"]
    assert told == [1, "operator_prompt"] and follower.ended_because == "idle"


class _TestsInBackground:
    """Starts a background command, waits for its result, then reports what the woken turn was told."""

    route_ref = "scripted@default/background"

    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def complete_turn(self, req: Any) -> TurnResponse:
        self.requests.append(req)
        last = req.conversation[-1]
        if len(self.requests) == 1:
            return TurnResponse(
                blocks=(
                    ToolUseBlock("c1", "ExecCommand", {"cmd": "sleep 0.3; echo suite-finished", "yield_time_ms": 0}),
                )
            )
        if len(self.requests) == 2:
            receipt = last.results[0].content if isinstance(last, UserToolResults) else ""
            task_id = receipt.split("Task: ", 1)[1].split()[0]
            return TurnResponse(
                blocks=(
                    ToolUseBlock(
                        "c2",
                        "WaitFor",
                        {"reason": "the tests", "wake": "task_result", "resource": task_id, "delivery": "silent"},
                    ),
                )
            )
        told = last.text if isinstance(last, UserText) else ""
        return TurnResponse(blocks=(TextBlock("woken: " + ("finished" if "suite-finished" in told else told[:200])),))


def test_a_task_result_wakes_the_agent_and_following_ends_idle(rt: Runtime) -> None:
    rt.providers.register(_TestsInBackground.route_ref, _TestsInBackground())
    results = rt.run_turns("run the tests in the background", model=_TestsInBackground.route_ref, timeout_s=30)
    assert [r.reason for r in results] == ["wait_for_silent", "end_turn"]
    assert results[1].final_text == "woken: finished"
    waits = rt.store.query("SELECT status FROM waits WHERE agent_id='default'")
    assert [w["status"] for w in waits] == ["resolved"]


def test_no_wake_turns_past_max_wakes(rt: Runtime) -> None:
    script(rt, WAIT_FOR_GO)
    follower = TurnFollower(rt, max_wakes=0)
    assert len(follower.run("ask me first", model=REF)) == 1 and follower.ended_because == "max_turns_exceeded"


def test_a_wake_that_never_comes_times_out(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait for a wake lasts its timeout on the follower's clock (``follow.time``), the test's here: while
    it stands still the follower keeps waiting, however often it looks; moved past the timeout, the run ends
    with ``timeout``. How soon it returns after that is measured by benchmarks/bench_prompt_returns.py."""
    from holon_nb.runtime.turns import _follow as follow

    now, reads = [1000.0], [0]

    def monotonic() -> float:
        reads[0] += 1
        return now[0]

    monkeypatch.setattr(follow, "time", SimpleNamespace(monotonic=monotonic))
    script(rt, WAIT_FOR_GO)
    follower = TurnFollower(rt, timeout_s=0.3)
    thread, box = _in_thread(lambda: follower.run("ask me first", model=REF))
    eventually(lambda: reads[0] >= 4, timeout=60)  # the turn ended waiting; the follower looked several times
    assert thread.is_alive() and not box  # ... and waits on: none of its timeout has passed
    now[0] += 0.3
    thread.join(60)
    assert "error" not in box and len(box["value"]) == 1 and follower.ended_because == "timeout"


def test_stop_ends_following_while_it_waits(rt: Runtime) -> None:
    script(rt, WAIT_FOR_GO)
    follower = TurnFollower(rt)
    thread, box = _in_thread(lambda: follower.run("ask me first", model=REF))
    eventually(lambda: len(follower.results) == 1 and follower.open_waits() == 1)
    follower.stop()
    thread.join(10)
    assert not thread.is_alive() and follower.ended_because == "stopped" and len(box["value"]) == 1


def test_a_turn_that_needs_no_wait_ends_at_once_and_a_failed_turn_stops_following(rt: Runtime) -> None:
    script(rt, Step.text("nothing to wait for"))
    follower = TurnFollower(rt, timeout_s=30)
    assert len(follower.run("hi", model=REF)) == 1 and follower.ended_because == "idle"
    script(rt, Step(failure_message="the model fell over"))
    follower = TurnFollower(rt, timeout_s=30)
    (result,) = follower.run("hi", model=REF)
    assert result.terminal != "completed" and follower.ended_because == "turn_not_completed"


@pytest.mark.parametrize("kwargs", [{"max_wakes": -1}, {"max_wakes": True}, {"timeout_s": 0}])
def test_bad_arguments(rt: Runtime, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        TurnFollower(rt, **kwargs)


def test_a_note_queued_before_a_turn_is_in_its_first_request(rt: Runtime) -> None:
    msg = rt.turns.interject("PRE-TURN NOTE: use the staging database")
    provider = script(rt, Step.text("noted"))
    r = rt.run_turn("migrate the table", model=REF)
    assert r.terminal == "completed" and provider.request_count() == 1  # no extra round for the note
    first = provider.requests()[0].conversation
    assert [m.text.splitlines()[0] for m in first] == [
        "migrate the table",
        "[Operator message sent before this turn started]",
    ]
    assert f"message_id={msg['id']}" in first[1].text and first[1].text.endswith("use the staging database")
    assert "admission_context=pre_turn" in first[1].text
    # the note is part of the conversation's history for the next turn
    provider = script(rt, Step.text("again"))
    rt.run_turn("and now?", model=REF)
    history = [m.text for m in provider.requests()[0].conversation if isinstance(m, UserText)]
    assert any("PRE-TURN NOTE" in t for t in history)


def test_a_wait_left_by_an_earlier_run_is_not_followed(rt: Runtime) -> None:
    script(rt, WAIT_FOR_GO)
    first = TurnFollower(rt, max_wakes=0)
    first.run("ask me first", model=REF)
    assert first.ended_because == "max_turns_exceeded" and first.open_waits() == 1
    stale = rt.work.operator_prompt("default", "an answer to the earlier question")  # wakes the old wait
    provider = script(rt, Step.text("a fresh answer"))
    follower = TurnFollower(rt, timeout_s=5)
    results = follower.run("a new question", model=REF)
    assert [r.final_text for r in results] == ["a fresh answer"] and follower.ended_because == "idle"
    assert provider.request_count() == 1
    queued = rt.store.query("SELECT status FROM messages WHERE id=?", (stale["id"],))[0]["status"]
    assert queued == "queued"  # left for whoever runs the agent next


def test_each_turn_reports_its_closure_and_get_agent_shows_the_last(rt: Runtime) -> None:
    assert rt.call("GetAgent").result["agent"]["closure"] == {"outcome": None}
    script(rt, WAIT_FOR_GO, Step.text("done"))
    waiting = rt.run_turn("ask me first", model=REF)
    assert waiting.closure == {
        "outcome": "waiting",
        "waiting_reason": "awaiting_operator_input",
        "turn_id": waiting.turn_id,
    }
    assert rt.call("GetAgent").result["agent"]["closure"] == waiting.closure
    done = rt.run_turn("go ahead", model=REF)  # an operator prompt answers the wait
    assert done.closure == {"outcome": "completed", "turn_id": done.turn_id}
    rt.call("CreateWorkItem", {"objective": "still to do"})
    script(rt, Step.text("later"))
    assert rt.run_turn("anything else?", model=REF).closure["outcome"] == "continuable"
    script(rt, Step(failure_message="the model fell over"))
    failed = rt.run_turn("again", model=REF)
    assert failed.terminal != "completed" and failed.closure["outcome"] == "failed"


def test_the_last_turns_of_a_run_carry_the_turn_budget_warning(rt: Runtime) -> None:
    from holon_nb.runtime.turns._follow import BUDGET_HEADER

    again = Step.tool_use("w", "WaitFor", {"reason": "more input", "wake": "operator_input", "delivery": "silent"})
    provider = script(rt, WAIT_FOR_GO, again, again)
    follower = TurnFollower(rt, max_wakes=2, timeout_s=30)
    thread, box = _in_thread(lambda: follower.run("ask me first", model=REF))
    for answered in (1, 2):
        eventually(lambda answered=answered: len(follower.results) == answered and follower.open_waits() == 1)
        rt.work.operator_prompt("default", f"answer {answered}")
    thread.join(30)
    assert "error" not in box and len(box["value"]) == 3 and follower.ended_because == "max_turns_exceeded"
    warnings = [
        [m.text for m in req.conversation if isinstance(m, UserText) and m.text.startswith(BUDGET_HEADER)]
        for req in provider.requests()
    ]
    assert warnings[0] == []
    assert warnings[1] == [
        f"{BUDGET_HEADER}\nThis run allows 3 turn(s) and this is turn 2; one more turn can follow this one."
    ]
    assert len(warnings[2]) == 1
    assert warnings[2][0].endswith(
        "this is turn 3; this is the last one: a wait woken after it starts no further "
        "turn, so finish what you can now or leave the work where the operator can pick "
        "it up."
    )
    script(rt, WAIT_FOR_GO)
    single = TurnFollower(rt, max_wakes=0)
    single.run("one turn only", model=REF)
    first = rt.providers.installed()[REF].requests()[0].conversation
    assert any(isinstance(m, UserText) and m.text.startswith(BUDGET_HEADER) for m in first)
