"""Standby owners (notebook/_liveness.py): the ``%%agent`` view's, drawn as interrupted, and the shared
:class:`Standby` that displays one, keeps it current and spends it."""

from __future__ import annotations

import time
from typing import Any

from IPython.utils.capture import capture_output

from holon_nb.notebook._agent_view import AgentTurnView, TurnTrace
from holon_nb.notebook._liveness import BEACON, FALLBACK_MIMETYPE, OWNER, STANDBY, STYLE, Standby

WHEN = "2026-12-06 20:00:00"


def _running_trace() -> TurnTrace:
    """A turn in its second round: one tool call answered, the next still running."""
    trace = TurnTrace("main", "scripted//tmp/pytest-1/slow.yaml", "Run the loop")
    trace.apply("turn_started", {"turn_id": "turn_1"})
    trace.apply("round_started", {"round": 1})
    trace.apply("tool_call", {"tool_use_id": "t1", "name": "GetAgent", "input": {}})
    trace.apply(
        "tool_result",
        {"tool_use_id": "t1", "receipt": "GetAgent: idle", "envelope": {"tool_name": "GetAgent", "status": "success"}},
    )
    trace.apply("round_started", {"round": 2})
    trace.apply("text_delta", {"text": "now the loo"})
    trace.apply("tool_call", {"tool_use_id": "t2", "name": "ExecCommand", "input": {"cmd": "sleep 600"}})
    return trace


def test_the_agent_view_is_a_beacon_and_its_standby_reads_as_interrupted() -> None:
    trace = _running_trace()
    view = AgentTurnView(trace, on_stop=lambda: "stop requested")
    assert BEACON in view._dom_classes  # the CSS finds the dead view by this class
    assert "running" in view.children[0].value and ">running</span>" in view.children[1].value
    data = view.fallback_bundle(WHEN)
    html, text = data["text/html"], data["text/plain"]
    assert data[FALLBACK_MIMETYPE] == {"of": "main", "state": "standby"}  # notebook comparisons skip it
    # the owner carries the classes and the rules that show it once the view is dead (and hide it before)
    assert f"holon-turn-static {OWNER} {STANDBY}" in html and html.endswith(STYLE)
    assert f"interrupted by a kernel restart or shutdown; last updated {WHEN}" in html
    # no running badge, no running tool call, no Stop, no half-streamed text: a static receipt
    assert ">running<" not in html and ">interrupted</span>" in html and "Stop" not in html
    assert "now the loo" not in html
    assert "GetAgent" in html and "ExecCommand" in html and "sleep 600" in html  # the transcript so far
    assert "ExecCommand (interrupted)" in text and "GetAgent (success)" in text and "> Run the loop" in text
    assert f"turn interrupted (by a kernel restart or shutdown; last updated {WHEN}) after 2 round(s)" in text
    # drawing it changed nothing of the live turn
    assert trace.status == "running" and trace.reason == "" and trace.ended_at is None
    assert trace.streaming == "now the loo" and "running" in view.children[0].value
    assert "interrupted" not in view.static_bundle()["text/plain"]


def test_a_waiting_follow_view_drops_its_stop_hint_in_the_standby() -> None:
    trace = _running_trace()
    trace.items.append({"kind": "note", "text": "following: waiting", "while_waiting": " (Stop ends this)"})
    trace.status = "waiting"
    view = AgentTurnView(trace)
    assert "(Stop ends this)" in view.children[1].value
    data = view.fallback_bundle(WHEN)
    assert "(Stop ends this)" not in data["text/html"] and "(Stop ends this)" not in data["text/plain"]
    assert "following: waiting" in data["text/plain"] and "last of" not in data["text/plain"]


def _bundle(counter: list[int]) -> Any:
    def bundle(when: str) -> dict[str, Any]:
        counter.append(1)
        return {"text/plain": f"state {len(counter)} at {when}", FALLBACK_MIMETYPE: {"of": "x", "state": "standby"}}

    return bundle


def _sent(outputs: list[Any]) -> list[str]:
    return [o.data.get("text/plain", "") or o.data[FALLBACK_MIMETYPE]["state"] for o in outputs]


def test_standby_throttles_says_how_long_and_stays_spent(ip: Any) -> None:
    """A send within the period is held back and says for how long (the live hub sends it then)."""
    drawn: list[int] = []
    with capture_output() as cap:
        standby = Standby("x", _bundle(drawn), period_s=30)
        standby.show()
        held = standby.send()  # within the period: held back
        assert 29 < held <= 30 and len(cap.outputs) == 1 and not cap.outputs[0].update
        assert standby.send(force=True) == 0.0  # the hub's late send
        standby.spend()
        assert standby.send(force=True) == 0.0  # spent: nothing more
        standby.spend()  # again (a cell re-sends it for a headless client)
    sent = _sent(cap.outputs)
    assert sent[1].startswith("state 2 at ") and sent[2:] == ["spent", "spent"], sent
    assert all(o.update for o in cap.outputs[1:])
    ids = {o.transient["display_id"] for o in cap.outputs}
    assert len(ids) == 1  # every update goes to the owner's own display


def test_standby_only_sends_when_asked(ip: Any) -> None:
    drawn: list[int] = []
    with capture_output() as cap:
        standby = Standby("x", _bundle(drawn), period_s=0.2)
        standby.show()
        standby.send()
        time.sleep(0.4)
        assert len(cap.outputs) == 1  # the live hub's pump sends again on its own schedule
        standby.send()
    assert len(cap.outputs) == 2 and _sent(cap.outputs)[1].startswith("state 2 at ")
