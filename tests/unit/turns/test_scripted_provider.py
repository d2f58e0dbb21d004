"""The ScriptedProvider: Python Step API, the YAML file format, expect checks, model refs (spec §4.1-§4.2)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from turn_helpers import REF, turn

from holon_nb.providers.base import TurnRequest, UserText
from holon_nb.providers.scripted import (
    ScriptedFailure,
    ScriptedProvider,
    ScriptError,
    ScriptExhausted,
    ScriptExpectationError,
    Step,
    StubProvider,
    load_script,
)
from holon_nb.runtime import Runtime

SCRIPT = """\
format: holon_nb.script/v1
route_ref: scripted@default/scripted
steps:
  - tool_use: {id: call_1, name: GetAgent, input: {}}
    usage: {input: 10, output: 5}
  - text: finished after scripted tool result
    usage: {input: 7, output: 3}
    expect: {last_message: {tool_results: [{tool_use_id: call_1, is_error: false}]}, tools_include: [GetAgent],
             tools_exclude: [AgentGet], system_contains: "active_model=scripted"}
"""


def _ask(p: ScriptedProvider, *messages: object) -> object:
    return anyio.run(p.complete_turn, TurnRequest(conversation=tuple(messages)))  # type: ignore[arg-type]


def test_python_api_is_at_parity() -> None:
    p = ScriptedProvider(
        [Step.text("a").with_usage(3, 4), Step.failure("boom"), Step.error("rate_limited", status=429)]
    )
    assert p.model_refs == ["scripted"] and p.route_ref == REF
    resp = _ask(p, UserText("hi"))
    assert resp.text == "a" and (resp.input_tokens, resp.output_tokens) == (3, 4)
    with pytest.raises(ScriptedFailure, match="boom"):
        _ask(p)
    with pytest.raises(Exception) as info:
        _ask(p)
    assert info.value.kind == "rate_limited" and info.value.disposition == "retryable" and info.value.status == 429
    with pytest.raises(ScriptExhausted) as ex:
        _ask(p)
    assert str(ex.value) == "scripted agent provider exhausted after 4 request(s)"
    assert p.request_count() == 4 and p.remaining_steps() == 0 and len(p.requests()) == 4
    assert StubProvider("fixed").route_ref.startswith("stub")


def test_yaml_script_drives_a_turn_with_expectations(rt: Runtime, workspace: Path) -> None:
    (workspace / "s.yaml").write_text(SCRIPT)
    r = rt.run_turn("hi", model="scripted@default/s.yaml")
    assert r.terminal == "completed" and r.final_text == "finished after scripted tool result"
    assert r.totals["total_input_tokens"] == 17 and r.totals["total_output_tokens"] == 8
    # the loaded provider stays installed: a later turn continues the same script
    again = rt.run_turn("more", model="scripted@default/s.yaml")
    assert "exhausted after 3 request(s)" in again.error


def test_bare_scripted_ref_reads_the_script_env(rt: Runtime, workspace: Path, monkeypatch) -> None:
    (workspace / "fixture.json").write_text(
        json.dumps({"format": "holon_nb.script/v1", "steps": [{"text": "from json"}]})
    )
    monkeypatch.setenv("HOLON_NB_SCRIPT", str(workspace / "fixture.json"))
    monkeypatch.setenv("HOLON_MODEL", "scripted")
    r = rt.run_turn("hi")
    assert r.final_text == "from json" and r.model_ref == "scripted"


def test_expectation_mismatch_names_the_path_and_settles_the_turn(rt: Runtime) -> None:
    bad = Step.text("x").expecting(last_message={"tool_results": [{"tool_use_id": "call_9"}]})
    with pytest.raises(ScriptExpectationError) as info:
        turn(rt, Step.tool_use("call_1", "GetAgent", {}), bad)
    assert info.value.path == "expect.last_message.tool_results[0].tool_use_id"
    assert info.value.step_index == 1
    turns = rt.conversations.turns("default")
    assert turns[-1]["terminal_kind"] == "aborted"


def test_typed_error_steps_are_retried_by_the_lineage(rt: Runtime) -> None:
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:  # the injectable backoff sleep: no wall-clock wait
        sleeps.append(seconds)

    rt.turns.hooks.sleep = fake_sleep
    r, p = turn(rt, Step.error("rate_limited", status=429), Step.text("after retry").with_usage(2, 1))
    assert r.terminal == "completed" and p.request_count() == 2 and sleeps == [0.2]
    attempts = r.rounds[0].timeline["attempts"]
    assert [a["outcome"] for a in attempts] == ["retrying", "succeeded"]
    assert attempts[0]["failure_kind"] == "rate_limited" and attempts[0]["backoff_ms"] == 200
    assert r.totals["total_model_rounds"] == 1


def test_untyped_failure_is_not_retried(rt: Runtime) -> None:
    r, p = turn(rt, Step.failure("scripted boom"), Step.text("never"))
    assert p.request_count() == 1 and r.terminal == "aborted" and "scripted boom" in r.error


@pytest.mark.parametrize(
    "text, problem",
    [
        ("format: other/v1\nsteps: []\n", "format"),
        ("steps:\n  - {text: a, failure: b}\n", "exactly one"),
        ("steps:\n  - {text: a, bogus: 1}\n", "unknown key"),
        ("steps:\n  - {tool_use: {name: X}}\n", "tool call"),
        ("steps:\n  - {failure: x, usage: {input: 1, output: 1}}\n", "usage"),
        ("steps:\n  - {text: a, expect: {nope: 1}}\n", "expect key"),
    ],
)
def test_malformed_scripts_name_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScriptError, match=problem):
        load_script(path)


def test_yaml_response_error_and_tool_uses_steps(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    path.write_text("""\
steps:
  - tool_uses: [{id: a, name: GetAgent, input: {}}, {id: b, name: ListWorkItems}]
  - error: {kind: server_error, status: 503, token_usage: {input: 4, output: 1}}
  - response: {blocks: [{type: text, text: partial}], stop_reason: max_tokens, usage: {input: 1, output: 2}}
""")
    p = load_script(path)
    first = _ask(p, UserText("x"))
    assert [(c.id, c.name, c.input) for c in first.tool_uses] == [("a", "GetAgent", {}), ("b", "ListWorkItems", {})]
    with pytest.raises(Exception) as info:
        _ask(p)
    assert info.value.kind == "server_error" and info.value.token_usage.input_tokens == 4
    third = _ask(p)
    assert third.stop_reason == "max_tokens" and third.text == "partial" and third.output_tokens == 2
