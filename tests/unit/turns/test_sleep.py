"""The legacy hidden Sleep tool (turn-loop spec §1.8.4, spec README "hidden but dispatchable"): never advertised,
still executed when a model calls it; a round made only of Sleep calls ends the turn with the last positive delay."""

from __future__ import annotations

import json

from turn_helpers import turn

from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime
from holon_nb.tools._registry import REGISTRY


def test_direct_calls_return_the_reason_and_delay(rt: Runtime) -> None:
    rest = rt.call("Sleep", {})
    assert rest.ok and rest.result == {"reason": "sleep requested", "duration_ms": None}
    assert rest.envelope["summary_text"] == "sleep requested"
    nap = rt.call("Sleep", {"reason": "  waiting for CI  ", "duration_ms": "1500"})  # D4 coercion of a string
    assert nap.ok and nap.result == {"reason": "waiting for CI", "duration_ms": 1500}
    assert nap.envelope["summary_text"] == "sleep requested for 1500 ms"


def test_zero_and_unknown_fields_are_invalid_input(rt: Runtime) -> None:
    zero = rt.call("Sleep", {"duration_ms": 0})
    assert zero.envelope["error"]["kind"] == "invalid_tool_input"
    assert zero.envelope["error"]["details"]["validation_error"] == "must be greater than 0"
    assert zero.envelope["error"]["details"]["field"] == "duration_ms"
    extra = rt.call("Sleep", {"summary": "x"})
    assert "unknown field `summary`" in extra.envelope["error"]["details"]["parse_error"]


def test_sleep_is_hidden_from_models() -> None:
    spec = REGISTRY.get("Sleep")
    assert spec is not None and not spec.model_facing
    assert "Sleep" not in [s.name for s in REGISTRY.model_facing()]


def test_a_round_of_only_sleep_calls_ends_the_turn_with_the_last_positive_delay(rt: Runtime) -> None:
    r, provider = turn(
        rt,
        Step.tool_uses(
            [
                ("s1", "Sleep", {"duration_ms": 200}),
                ("s2", "Sleep", {}),
                ("s3", "Sleep", {"duration_ms": 900, "reason": "later"}),
                ("s4", "Sleep", {}),
            ]
        ),
    )
    assert r.terminal == "completed" and r.reason == "sleep" and r.sleep_duration_ms == 900
    assert [c.envelope["status"] for c in r.rounds[0].tool_calls] == ["success"] * 4
    assert provider.request_count() == 1
    assert "Sleep" not in [t.name for t in provider.requests()[0].tools]


def test_plain_rest_carries_no_delay(rt: Runtime) -> None:
    r, _ = turn(rt, Step.tool_use("s1", "Sleep", {"reason": "nothing to do"}))
    assert r.reason == "sleep" and r.sleep_duration_ms is None


def test_sleep_beside_another_tool_or_failing_does_not_end_the_turn(rt: Runtime) -> None:
    r, provider = turn(
        rt,
        Step.tool_uses([("s1", "Sleep", {}), ("g1", "GetAgent", {})]),
        Step.tool_use("s2", "Sleep", {"duration_ms": 0}),
        Step.text("awake"),
    )
    assert r.terminal == "completed" and r.reason != "sleep" and r.final_text == "awake"
    assert provider.request_count() == 3
    failed = r.rounds[1].tool_calls[0]
    assert json.loads(failed.receipt)["kind"] == "invalid_tool_input"
