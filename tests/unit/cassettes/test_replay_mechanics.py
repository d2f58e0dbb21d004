"""Cassette record/replay at the provider boundary, driven by a minimal turn driver (turn-loop spec §4.3).

Cases 35–38 of §5 against the ScriptedProvider under the real lineage wrapper and real tool calls.
(test_turn_loop.py runs the same cases through ``Runtime.run_turn`` and the local wire servers.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from unit.cassettes._drive import drive, tool_specs, without_timings

from holon_nb.providers.cassettes._cassette import CassetteProvider
from holon_nb.providers.cassettes._errors import (
    CassetteDrift,
    CassetteExhausted,
    CassetteMissing,
)
from holon_nb.providers.scripted import ScriptedProvider, Step


def script() -> ScriptedProvider:
    """Case-19 style: 429, then one ExecCommand round, then text."""
    return ScriptedProvider(
        [
            Step.error("rate_limited", status=429),
            Step.tool_use("call_1", "ExecCommand", {"cmd": "echo replayed-$((40+2))"}).with_usage(10, 5),
            Step.text("done: 42").with_usage(7, 3),
        ]
    )


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x]


def record(rt, path: Path, provider=None, message: str = "say 42", tools=None):
    cas = CassetteProvider(provider or script(), path, "record", workspace=rt.workspace, holon_home=rt.home)
    out = drive(rt, cas, message, tools if tools is not None else tool_specs())
    cas.close(terminal="completed")
    return out


def test_record_writes_header_interactions_tools_footer(rt, tmp_path):
    path = tmp_path / "nb.holon" / "cassettes" / "cell-1.jsonl"
    out = record(rt, path)
    assert out.error is None and out.final_text == "done: 42"
    recs = lines(path)
    kinds = [r["kind"] for r in recs]
    assert kinds == ["header", "interaction", "interaction", "tool", "interaction", "footer"]
    head = recs[0]
    assert head["format"] == "holon_nb.cassette" and head["version"] == 1
    assert head["route_ref"] == "scripted@default/scripted" and head["transport"] == "scripted"
    assert head["schema_contract"] == "relaxed" and head["tools_fingerprint"].startswith("sha256:")
    assert set(head["tools"]) == {"ExecCommand", "GetAgent", "WaitFor"} and head["id_seed"]
    first, second, tool, third = recs[1:5]
    assert (first["seq"], first["round"], first["attempt"]) == (0, 1, 1)
    assert first["outcome"]["type"] == "error" and first["outcome"]["kind"] == "rate_limited"
    assert first["outcome"]["disposition"] == "retryable" and first["outcome"]["status"] == 429
    assert (second["seq"], second["round"], second["attempt"]) == (1, 1, 2)
    assert second["timing"]["backoff_ms"] == 200
    assert second["outcome"]["response"]["blocks"][0]["name"] == "ExecCommand"
    assert set(first["components"]) == {"contract", "request_controls", "system", "tools", "history_prefix", "tail"}
    assert first["key"] == second["key"]  # a retry sends the same request
    assert (tool["seq"], tool["round"], tool["tool_use_id"], tool["name"]) == (2, 1, "call_1", "ExecCommand")
    assert len(tool["input_sha256"]) == 64 and tool["is_error"] is False
    assert "replayed-42" in tool["receipt"] and tool["envelope"]["tool_name"] == "ExecCommand"
    assert (third["seq"], third["round"], third["attempt"]) == (3, 2, 1)
    assert recs[-1] == {"kind": "footer", "interactions": 3, "tools": 1, "terminal": "completed"}
    assert not path.with_name(path.name + ".recording").exists()


def test_replay_reproduces_blocks_receipts_usage_and_timeline_without_sleeping_or_tools(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    live = record(rt, path)
    marker = rt.workspace / "ran.txt"
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    again = drive(rt, cas, "say 42", tool_specs())
    cas.close()
    assert again.error is None
    assert again.final_text == live.final_text == "done: 42"
    assert again.blocks == live.blocks
    assert [r.encode() for r in again.receipts] == [r.encode() for r in live.receipts]
    assert again.usage == live.usage == (17, 8)
    assert without_timings(again.timelines) == without_timings(live.timelines)
    assert again.timelines[0]["attempts"][0]["outcome"] == "retrying"
    assert again.timelines[0]["attempts"][0]["backoff_ms"] == 200
    assert cas.network_attempts == []
    assert not marker.exists()
    # the recorded 200 ms backoff advanced the virtual clock only (no wall-clock wait)
    assert cas.clock.live is False and cas.clock.slept_ms == 200


def test_replay_does_not_run_tools(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    provider = ScriptedProvider(
        [Step.tool_use("call_1", "ExecCommand", {"cmd": "echo x >> count.txt"}), Step.text("ok")]
    )
    record(rt, path, provider)
    assert (rt.workspace / "count.txt").read_text() == "x\n"
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    out = drive(rt, cas, "say 42", tool_specs())
    cas.close()
    assert out.final_text == "ok"
    assert (rt.workspace / "count.txt").read_text() == "x\n"  # not appended again


def test_changed_prompt_is_drift_at_seq0_with_pointer_and_diff(rt, tmp_path):
    """Case 37."""
    path = tmp_path / "c.jsonl"
    record(rt, path)
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    out = drive(rt, cas, "say 43 instead", tool_specs())
    drift = cas.failure
    assert isinstance(drift, CassetteDrift)
    assert out.error is not None and out.error.cause is drift  # the lineage failed the turn with it
    assert drift.kind == "mismatch" and drift.seq == 0 and drift.round == 1 and drift.attempt == 1
    assert drift.component in ("history_prefix", "tail")
    assert drift.pointer == "/conversation/0/blocks/0/text"
    assert "-" in drift.diff and '"say 42"' in drift.diff and '"say 43 instead"' in drift.diff
    assert len(drift.diff.splitlines()) <= 40
    assert "seq 0" in str(drift) and drift.pointer in str(drift)


def test_edited_tool_description_is_preflight_drift_naming_the_tool(rt, tmp_path):
    """Case 36, provider level: the drift names WaitFor and comes before any interaction is consumed."""
    path = tmp_path / "c.jsonl"
    record(rt, path)
    edited = tool_specs(descriptions={"WaitFor": "Wait for something (edited)."})
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    with pytest.raises(CassetteDrift) as info:
        cas.preflight(edited)
    assert info.value.component == "tools" and info.value.tools == ("WaitFor",)
    assert "WaitFor" in str(info.value)
    assert cas._cursor == 0


def test_tools_drift_on_first_attempt_when_no_preflight_call(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path)
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    drive(rt, cas, "say 42", tool_specs(("ExecCommand", "GetAgent")))
    assert isinstance(cas.failure, CassetteDrift)
    assert cas.failure.component == "tools" and cas.failure.tools == ("WaitFor",)


def test_one_fewer_round_leaves_unconsumed_records(rt, tmp_path):
    """Case 38: the recorded turn had a tool round the replayed one no longer reaches."""
    path = tmp_path / "c.jsonl"
    record(rt, path, ScriptedProvider([Step.tool_use("call_1", "GetAgent", {}), Step.text("done")]))
    # keep only the first interaction's request but end the run after it by editing the recorded reply
    recs = lines(path)
    recs[1]["outcome"]["response"]["blocks"] = [{"type": "text", "text": "done early"}]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    out = drive(rt, cas, "say 42", tool_specs())
    assert out.final_text == "done early"
    with pytest.raises(CassetteDrift) as info:
        cas.close()
    assert info.value.kind == "unconsumed" and info.value.count == 2  # one tool record, one interaction
    assert info.value.seq == 1


def test_more_attempts_than_recorded_is_exhausted(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path, ScriptedProvider([Step.tool_use("call_1", "GetAgent", {}), Step.text("done")]))
    recs = lines(path)
    recs = [r for r in recs if r.get("seq") != 2]  # drop the final interaction
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    drive(rt, cas, "say 42", tool_specs())
    assert isinstance(cas.failure, CassetteExhausted)
    assert cas.failure.recorded == 1 and cas.failure.seq == 1


def test_replay_missing_file_fails_before_any_call(tmp_path):
    with pytest.raises(CassetteMissing, match="record"):
        CassetteProvider(None, tmp_path / "none.jsonl", "replay")


def test_auto_records_then_replays(rt, tmp_path, monkeypatch):
    path = tmp_path / "auto.jsonl"
    monkeypatch.setenv("HOLON_NB_CASSETTE_MODE", "auto")
    first = CassetteProvider(script(), path, workspace=rt.workspace, holon_home=rt.home)
    assert first.mode == "record"
    drive(rt, first, "say 42", tool_specs())
    first.close()
    second = CassetteProvider(None, path, workspace=rt.workspace, holon_home=rt.home)
    assert second.mode == "replay"
    assert drive(rt, second, "say 42", tool_specs()).final_text == "done: 42"
    second.close()


def test_lenient_returns_recorded_outcome_and_logs_drift(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path)
    cas = CassetteProvider(None, path, "lenient", workspace=rt.workspace, holon_home=rt.home)
    out = drive(rt, cas, "a different prompt", tool_specs())
    cas.close()
    assert out.final_text == "done: 42"
    assert cas.failure is None
    assert [d.kind for d in cas.drifts][:1] == ["mismatch"]


def test_verify_runs_tools_live_and_compares_receipts(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path, ScriptedProvider([Step.tool_use("call_1", "ExecCommand", {"cmd": "cat a.txt"}), Step.text("ok")]))
    cas = CassetteProvider(None, path, "verify", workspace=rt.workspace, holon_home=rt.home)
    drive(rt, cas, "say 42", tool_specs())
    cas.close()
    assert cas.failure is None
    (rt.workspace / "a.txt").write_text("changed\n")
    cas = CassetteProvider(None, path, "verify", workspace=rt.workspace, holon_home=rt.home)
    with pytest.raises(CassetteDrift) as info:  # raised by the tool layer, not through the lineage
        drive(rt, cas, "say 42", tool_specs())
    assert info.value is cas.failure and info.value.kind == "receipt"
    assert '+  "changed"' in info.value.diff and '-  "one"' in info.value.diff


def test_untyped_failure_replays_as_same_class(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path, ScriptedProvider([Step.failure("boom")]))
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, holon_home=rt.home)
    out = drive(rt, cas, "say 42", tool_specs())
    cas.close()
    from holon_nb.providers.scripted import ScriptedFailure

    assert isinstance(out.error.cause, ScriptedFailure) and str(out.error.cause) == "boom"
    assert out.timelines[0]["attempts"][0]["outcome"] == "fail_fast_aborted"


def test_classified_error_subclass_and_attributes_replay(rt, tmp_path):
    from holon_nb.providers._errors import ToolSchemaRejected

    class Rejecting:
        route_ref = "openai@default/gpt-test"

        async def complete_turn(self, req):
            raise ToolSchemaRejected(
                "provider rejected the schema of tool WaitFor",
                tool_name="WaitFor",
                provider_message="Invalid schema for function 'WaitFor'",
                status=400,
                diagnostics={"stage": "response", "url": "http://h/v1/responses?key=abc", "status": 400},
            )

    path = tmp_path / "c.jsonl"
    cas = CassetteProvider(Rejecting(), path, "record", workspace=rt.workspace)
    live = drive(rt, cas, "q", tool_specs(), provider_name="openai")
    cas.close()
    assert "key=abc" not in path.read_text()
    cas = CassetteProvider(None, path, "replay", workspace=rt.workspace)
    again = drive(rt, cas, "q", tool_specs(), provider_name="openai")
    cas.close()
    err = again.error.cause
    assert type(err) is ToolSchemaRejected and err.tool_name == "WaitFor" and err.status == 400
    assert err.provider_message == "Invalid schema for function 'WaitFor'"
    assert err.kind == "contract_error" and err.disposition == "fail_fast"
    assert err.diagnostics["url"] == "http://h/v1/responses?key=[redacted]"
    assert (
        without_timings(again.timelines) != []
        and again.timelines[0]["attempts"][0]["transport_diagnostics"] == err.diagnostics
    )
    assert str(again.error) == str(live.error).replace("key=abc", "key=[redacted]")


def test_lenient_tool_drift_returns_recorded_result_marked(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path, ScriptedProvider([Step.tool_use("call_1", "GetAgent", {}), Step.text("ok")]))
    recs = lines(path)
    recs[1]["outcome"]["response"]["blocks"][0]["input"] = {"agent_id": "other"}  # the model now asks otherwise
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    strict = CassetteProvider(None, path, "replay", workspace=rt.workspace)
    with pytest.raises(CassetteDrift) as info:
        drive(rt, strict, "say 42", tool_specs())
    strict.close(check=False)
    assert info.value.kind == "tool" and info.value.pointer == "/input_sha256" and info.value.seq == 1
    lenient = CassetteProvider(None, path, "lenient", workspace=rt.workspace)
    out = drive(rt, lenient, "say 42", tool_specs())
    lenient.close()
    assert out.final_text == "ok" and lenient.drifted_tool_use_ids == {"call_1"}
    assert out.receipts == [lines(path)[2]["receipt"]]
    assert [d.kind for d in lenient.drifts] == ["tool", "mismatch"]  # then the next request carries the change


def test_seeded_ids_are_the_same_on_record_and_replay(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    cas = CassetteProvider(script(), path, "record", workspace=rt.workspace)
    minted = [cas.new_id("turn"), cas.new_id("tool"), cas.new_id("tool")]
    cas.close()
    again = CassetteProvider(None, path, "replay", workspace=rt.workspace)
    assert [again.new_id("turn"), again.new_id("tool"), again.new_id("tool")] == minted
    again.close(check=False)
    assert all(len(m.split("_")[1]) == 15 for m in minted) and len(set(minted)) == 3


def test_preflight_names_a_changed_route_or_transport(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    record(rt, path)
    for kwargs, field in (
        ({"route_ref": "openai@default/gpt-test"}, "route_ref"),
        ({"transport": "anthropic_messages"}, "transport"),
        ({"schema_contract": "strict"}, "schema_contract"),
    ):
        cas = CassetteProvider(None, path, "replay", workspace=rt.workspace, **kwargs)
        with pytest.raises(CassetteDrift) as info:
            cas.preflight(tool_specs())
        cas.close(check=False)
        assert info.value.kind == "preflight" and info.value.field == field and field in str(info.value)
