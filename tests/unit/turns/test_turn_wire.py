"""The turn loop over real transports and local wire servers: cases 5, 6 and 7's request flags, streaming
deltas as turn events (spec §1.6, §1.11, §2.5-§2.8). The SDK clients make real HTTP requests to 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from unit.providers.payloads import anthropic_text_stream, chat_calls, chat_text, responses_call, responses_text
from unit.providers.servers import Reply, WireServer

from holon_nb.runtime import Runtime


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer() as srv:
        yield srv


def test_case5_responses_malformed_arguments_round_trip_as_raw(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_OPENAI_BASE_URL", wire.base_url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local-0001")
    wire.script(Reply(json=responses_call("call_1", "ExecCommand", '{"cmd": ')), Reply(json=responses_text("ok")))
    r = rt.run_turn("go", model="openai@default/gpt-test")
    assert r.terminal == "completed" and r.final_text == "ok"
    call = r.rounds[0].tool_calls[0]
    assert call.input == {"_raw": '{"cmd": '} and json.loads(call.receipt)["kind"] == "invalid_tool_input"
    first, second = wire.requests[0].json, wire.requests[1].json
    assert first["parallel_tool_calls"] is False  # case 7: Responses requests never ask for parallel calls
    items = second["input"]
    fc = next(i for i in items if i.get("type") == "function_call")
    assert json.loads(fc["arguments"]) == {"_raw": '{"cmd": '}
    out = next(i for i in items if i.get("type") == "function_call_output")
    assert out["call_id"] == "call_1" and out["output"] == call.receipt


def test_case6_chat_malformed_arguments_have_the_same_outcome(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_VLLM_BASE_URL", wire.base_url + "/v1")
    wire.script(
        Reply(json=chat_calls([{"id": "call_1", "name": "ExecCommand", "arguments": '{"cmd": '}])),
        Reply(json=chat_text("ok")),
    )
    r = rt.run_turn("go", model="vllm/Qwen/Qwen3-8B")
    assert r.terminal == "completed" and r.final_text == "ok"
    call = r.rounds[0].tool_calls[0]
    assert call.input == {"_raw": '{"cmd": '} and json.loads(call.receipt)["kind"] == "invalid_tool_input"
    tool_msg = next(m for m in wire.requests[1].json["messages"] if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "call_1" and tool_msg["content"] == call.receipt


def test_streamed_text_arrives_as_text_delta_events(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.base_url)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-test-local-0001")
    wire.script(Reply(sse=anthropic_text_stream("hello there")))
    deltas: list[str] = []
    unsubscribe = rt.subscribe(lambda e: deltas.append(e.data["text"]) if e.kind == "text_delta" else None)
    try:
        r = rt.run_turn("go", model="anthropic@default/claude-test")
    finally:
        unsubscribe()
    assert r.terminal == "completed" and r.final_text == "hello there"
    assert "".join(deltas) == "hello there" and len(deltas) == 2
