"""Cassettes through the real turn loop (``rt.turns.run_sync`` with the cassette's ``TurnHooks``), real SDK
transports and local wire servers on 127.0.0.1: acceptance cases 35–38 and 41 of turn-loop spec §5.

Recording talks to the wire server; replay runs in a fresh runtime (a new kernel) with the network guard
on, and must make zero HTTP attempts."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from unit.providers.payloads import chat_calls, chat_text
from unit.providers.servers import Reply, WireServer

from holon_nb import Runtime
from holon_nb.providers.cassettes._cassette import CassetteProvider
from holon_nb.providers.cassettes._errors import CassetteDrift
from holon_nb.providers.cassettes._file import read_cassette
from holon_nb.runtime.turns._records import TurnHooks
from holon_nb.tools import _spec as tool_spec
from holon_nb.tools._spec import Profile

REF = "vllm/Qwen/Qwen3-8B"


@pytest.fixture
def wire(monkeypatch) -> Iterator[WireServer]:
    with WireServer() as srv:
        monkeypatch.setenv("HOLON_VLLM_BASE_URL", srv.base_url + "/v1")
        yield srv


@pytest.fixture
def fresh(tmp_path, workspace) -> Iterator[Any]:
    """Open further runtimes on the same workspace, each with its own home (a new kernel)."""
    made: list[Runtime] = []

    def open_runtime() -> Runtime:
        r = Runtime(home=tmp_path / f"home{len(made) + 2}", workspace=workspace)
        made.append(r)
        return r

    yield open_runtime
    for r in made:
        r.close()


def run(rt: Runtime, cas: CassetteProvider, message: str, max_rounds: int | None = None):
    return rt.turns.run_sync(message, model=REF, max_rounds=max_rounds, hooks=TurnHooks(**cas.turn_hooks()))


def record(rt: Runtime, path: Path, message: str = "say 42"):
    cas = CassetteProvider(None, path, "record", workspace=rt.workspace, holon_home=rt.home)
    result = run(rt, cas, message)
    cas.close(terminal=result.terminal)
    return result


def replay(rt: Runtime, path: Path, message: str = "say 42", max_rounds: int | None = None, check: bool = True):
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    try:
        result = run(rt, cas, message, max_rounds)
    finally:
        cas.guard.stop()
    return cas, result


def without_timings(timeline: dict[str, Any] | None) -> dict[str, Any] | None:
    if timeline is None:
        return None
    out = dict(timeline)
    out["attempts"] = [
        {k: v for k, v in a.items() if k not in ("started_at", "completed_at", "duration_ms")}
        for a in timeline["attempts"]
    ]
    return out


def script_case35(wire: WireServer) -> None:
    wire.script(
        Reply(status=429, json={"error": {"message": "slow down", "type": "rate_limit_error"}}),
        Reply(
            json=chat_calls(
                [{"id": "call_1", "name": "ExecCommand", "arguments": json.dumps({"cmd": "echo replayed-$((40+2))"})}]
            )
        ),
        Reply(json=chat_text("done: 42", usage=(7, 3))),
    )


def test_case35_record_then_replay_offline_reproduces_the_turn(rt, wire, fresh, tmp_path):
    path = tmp_path / "nb.holon" / "cassettes" / "cell-35.jsonl"
    script_case35(wire)
    live = record(rt, path)
    assert live.terminal == "completed" and live.final_text == "done: 42"
    first = live.rounds[0].timeline["attempts"]
    assert [a["outcome"] for a in first] == ["retrying", "succeeded"]
    assert first[0]["failure_kind"] == "rate_limited" and first[0]["backoff_ms"] == 200
    assert len(wire.requests) == 3
    recs = read_cassette(path)
    assert [(i["round"], i["attempt"]) for i in recs.interactions] == [(1, 1), (1, 2), (2, 1)]
    assert (
        recs.header["transport"] == "openai_chat_completions"
        and recs.header["route_ref"] == live.model_ref
        or recs.header["route_ref"].endswith("Qwen/Qwen3-8B")
    )
    assert recs.footer["terminal"] == "completed"

    rt2 = fresh()
    cas, again = replay(rt2, path)
    cas.close(terminal=again.terminal)
    assert len(wire.requests) == 3 and cas.network_attempts == []  # zero HTTP attempts
    assert cas.failure is None
    assert again.terminal == live.terminal and again.final_text == live.final_text
    assert [r.blocks for r in again.rounds] == [r.blocks for r in live.rounds]
    assert [c.receipt.encode() for c in again.tool_calls] == [c.receipt.encode() for c in live.tool_calls]
    assert [c.envelope["status"] for c in again.tool_calls] == ["success"]
    assert again.usage == live.usage and again.aggregated_usage == live.aggregated_usage
    assert again.totals == live.totals
    assert [without_timings(r.timeline) for r in again.rounds] == [without_timings(r.timeline) for r in live.rounds]
    # the tool did not run again: no ExecCommand task in the fresh runtime's store
    assert rt2.store.query("SELECT COUNT(*) AS n FROM tasks")[0]["n"] == 0
    # the lineage's 200 ms backoff went to the cassette's virtual clock (which never sleeps on replay)
    assert cas.clock.live is False and cas.clock.slept_ms == 200  # replay speed: benchmarks/bench_replay.py


def test_case35_replay_is_blocked_from_the_network_even_if_something_tries(rt, wire, fresh, tmp_path):
    path = tmp_path / "c.jsonl"
    script_case35(wire)
    record(rt, path)
    rt2 = fresh()
    cas = CassetteProvider(None, path, "replay", workspace=rt2.workspace, holon_home=rt2.home)
    try:
        # a provider that would talk to the server if it were called: the guard refuses the connection
        import urllib.request

        from holon_nb.providers.cassettes._errors import NetworkBlocked

        with pytest.raises(NetworkBlocked):
            urllib.request.urlopen(wire.base_url + "/v1/models", timeout=2)
        assert len(cas.network_attempts) == 1
    finally:
        cas.close(check=False)
    assert len(wire.requests) == 3


def test_case36_edited_waitfor_description_is_preflight_drift(rt, wire, fresh, tmp_path, monkeypatch):
    path = tmp_path / "c.jsonl"
    script_case35(wire)
    record(rt, path)
    edited = tmp_path / "descriptions"
    shutil.copytree(tool_spec._DESCRIPTIONS, edited)
    (edited / "WaitFor.md").write_text((edited / "WaitFor.md").read_text() + "\nEdited after recording.\n")
    monkeypatch.setattr(tool_spec, "_DESCRIPTIONS", edited)
    rt2 = fresh()
    cas = CassetteProvider(None, path, "replay", workspace=rt2.workspace, holon_home=rt2.home)
    try:
        with pytest.raises(CassetteDrift) as info:  # the notebook layer preflights at cell start
            cas.preflight(rt2.turns.advertised_tools(Profile.PUBLIC_NAMED))
        assert info.value.kind == "preflight" and info.value.component == "tools"
        assert info.value.tools == ("WaitFor",) and "WaitFor" in str(info.value)
        assert cas.recorded_interactions and cas._cursor == 0  # before any model call
    finally:
        cas.close(check=False)
    # without an explicit preflight the first attempt raises it: the turn aborts, nothing replayed
    cas2, result = replay(fresh(), path)
    assert isinstance(cas2.failure, CassetteDrift) and cas2.failure.component == "tools"
    assert cas2.failure.tools == ("WaitFor",) and cas2._cursor == 0
    assert result.terminal == "aborted" and "WaitFor" in (result.error or "")
    assert len(wire.requests) == 3


def test_case37_changed_prompt_is_drift_at_seq0_with_pointer_and_diff(rt, wire, fresh, tmp_path):
    path = tmp_path / "c.jsonl"
    script_case35(wire)
    record(rt, path, "say 42")
    cas, result = replay(fresh(), path, "say 43 please")
    drift = cas.failure
    assert isinstance(drift, CassetteDrift) and drift.kind == "mismatch"
    assert drift.seq == 0 and drift.round == 1 and drift.attempt == 1
    assert drift.component in ("history_prefix", "tail")
    assert drift.pointer == "/conversation/0/text"
    assert '-    "text": "say 42",' in drift.diff and '+    "text": "say 43 please",' in drift.diff
    assert 0 < len(drift.diff.splitlines()) <= 40
    assert result.terminal == "aborted" and len(wire.requests) == 3


def test_case38_one_fewer_tool_round_leaves_unconsumed_records(rt, wire, fresh, tmp_path):
    path = tmp_path / "c.jsonl"
    wire.script(
        Reply(json=chat_calls([{"id": "call_1", "name": "GetAgent", "arguments": "{}"}])),
        Reply(json=chat_calls([{"id": "call_2", "name": "ExecCommand", "arguments": '{"cmd": "true"}'}])),
        Reply(json=chat_text("two rounds")),
    )
    live = record(rt, path)
    assert live.final_text == "two rounds" and len(live.tool_calls) == 2
    cas, result = replay(fresh(), path, max_rounds=1)
    assert result.terminal == "aborted" and result.reason == "max_tool_rounds"
    with pytest.raises(CassetteDrift) as info:
        cas.close(terminal=result.terminal)
    assert info.value.kind == "unconsumed" and info.value.count == 3  # 2 provider attempts + 1 tool call
    assert info.value.seq == 2  # the first record never reached (round 2's interaction)


def test_case41_secret_in_receipt_is_redacted_on_the_wire_in_transcript_and_cassette(rt, wire, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    path = tmp_path / "c.jsonl"
    wire.script(
        Reply(
            json=chat_calls(
                [{"id": "call_1", "name": "ExecCommand", "arguments": '{"cmd": "echo key=$OPENAI_API_KEY"}'}]
            )
        ),
        Reply(json=chat_text("printed")),
    )
    live = record(rt, path)
    receipt = live.tool_calls[0].receipt
    assert "key=[redacted]" in receipt and "sk-test-0123456789" not in receipt
    sent = wire.requests[1].body.decode()
    assert "key=[redacted]" in sent and "sk-test-0123456789" not in sent
    transcript = json.dumps(rt.conversations.transcript("default"))
    assert "[redacted]" in transcript and "sk-test-0123456789" not in transcript
    text = path.read_text()
    assert "key=[redacted]" in text and "sk-test-0123456789" not in text


def test_replaying_twice_in_one_home_does_not_reuse_ids(rt, wire, fresh, tmp_path):
    """Seeded ids skip ids the store already holds; the agent's durable history then makes the second replay's
    request differ (the recording had no earlier turn): drift at seq 0 in ``history_prefix``."""
    path = tmp_path / "c.jsonl"
    script_case35(wire)
    record(rt, path)
    rt2 = fresh()

    def taken(value: str) -> bool:
        return bool(
            rt2.store.query(
                "SELECT 1 FROM turns WHERE id=? UNION SELECT 1 FROM tool_executions WHERE id=?", (value, value)
            )
        )

    results, cassettes = [], []
    for _ in range(2):
        cas = CassetteProvider(None, path, "replay", workspace=rt2.workspace, holon_home=rt2.home, taken=taken)
        results.append(rt2.turns.run_sync("say 42", model=REF, hooks=TurnHooks(**cas.turn_hooks())))
        cas.close(check=False)
        cassettes.append(cas)
    assert results[0].terminal == "completed" and cassettes[0].failure is None
    assert results[0].turn_id != results[1].turn_id
    assert results[1].terminal == "aborted"
    drift = cassettes[1].failure
    assert isinstance(drift, CassetteDrift) and drift.seq == 0 and drift.component == "history_prefix"


def test_replayed_silent_waitfor_keeps_empty_final_text(rt, fresh, tmp_path):
    from holon_nb.providers.base import TextBlock, ToolUseBlock
    from holon_nb.providers.scripted import ScriptedProvider, Step

    ref = "scripted@default/scripted"
    path = tmp_path / "c.jsonl"
    rt.providers.register(
        ref,
        ScriptedProvider(
            [
                Step.response(
                    [
                        TextBlock("I will wait."),
                        ToolUseBlock("c1", "WaitFor", {"reason": "r", "wake": "operator_input", "delivery": "silent"}),
                    ]
                )
            ]
        ),
    )
    cas = CassetteProvider(None, path, "record", workspace=rt.workspace, holon_home=rt.home)
    live = rt.turns.run_sync("go", model=ref, hooks=TurnHooks(**cas.turn_hooks()))
    cas.close(terminal=live.terminal)
    rt2 = fresh()
    rt2.providers.register(ref, ScriptedProvider([]))
    cas = CassetteProvider(None, path, "replay", workspace=rt2.workspace, holon_home=rt2.home)
    again = rt2.turns.run_sync("go", model=ref, hooks=TurnHooks(**cas.turn_hooks()))
    cas.close(terminal=again.terminal)
    assert live.final_text == "" and again.terminal == live.terminal
    assert again.final_text == live.final_text and again.reason == live.reason
