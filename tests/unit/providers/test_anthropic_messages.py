"""Anthropic Messages transport (turn-loop spec §2.8, §1.6) through the real ``anthropic`` SDK, SSE from a local
server (cases 25, 27, 30)."""

from __future__ import annotations

import pytest
from unit.providers.helpers import first_request, provider_for, second_request, tool
from unit.providers.payloads import anthropic_text_stream, anthropic_tool_stream
from unit.providers.servers import Reply, anthropic_sse, sse_event

from holon_nb.providers._anthropic_messages import thinking_budget
from holon_nb.providers.base import (
    AssistantBlocks,
    ContextBlock,
    PromptFrame,
    ProviderTransportError,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    TurnRequest,
    UserText,
)

pytestmark = pytest.mark.anyio

REF = "anthropic/claude-sonnet-4-6"
TOKEN = "ant-token-0123456789"


def _provider(wire, made, env=None, **settings):
    return provider_for(
        wire, REF, made, env=env if env is not None else {"ANTHROPIC_AUTH_TOKEN": TOKEN}, base_path="", **settings
    )


async def test_case30_round2_request(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("done")))
    call = ToolUseBlock("call_1", "GetAgent", {})
    receipt = '{"tool_name":"GetAgent","status":"success"}'
    await _provider(wire, made).complete_turn(second_request(call, receipt=receipt))
    req = wire.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["authorization"] == f"Bearer {TOKEN}" and "x-api-key" not in req.headers
    assert "anthropic-beta" not in req.headers
    body = req.json
    assert body["stream"] is True and body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 8192
    assert body["system"] == "You are Holon."
    assert body["tools"] == [
        {"name": "GetAgent", "description": "GetAgent description", "input_schema": tool("GetAgent").input_schema}
    ]
    assert "tool_choice" not in body and "thinking" not in body
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == [{"type": "tool_use", "id": "call_1", "name": "GetAgent", "input": {}}]
    assert msgs[-1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": receipt,
            "is_error": False,
            "cache_control": {"type": "ephemeral"},
        }
    ]


async def test_api_key_only_goes_as_x_api_key(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("ok")))
    await _provider(wire, made, env={"ANTHROPIC_API_KEY": "ant-key-0123456789"}).complete_turn(first_request())
    headers = wire.requests[0].headers
    assert headers["x-api-key"] == "ant-key-0123456789" and "authorization" not in headers


async def test_keyless_compatible_server_sends_no_credential(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("ok")))
    p = provider_for(wire, "mylocal/m", made, base_path="", transport="anthropic_messages", auth={"source": "none"})
    resp = await p.complete_turn(first_request())
    assert resp.text == "ok"
    assert "authorization" not in wire.requests[0].headers and "x-api-key" not in wire.requests[0].headers


async def test_text_stream_assembles_with_usage_and_deltas(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("Hello world", usage=(7, 3)), headers={"request-id": "req_a"}))
    p = _provider(wire, made)
    seen = []
    p.delta_listener = lambda kind, payload: seen.append(payload.get("text"))
    resp = await p.complete_turn(first_request())
    assert resp.blocks == (TextBlock("Hello world"),)
    assert (resp.input_tokens, resp.output_tokens, resp.stop_reason) == (7, 3, "end_turn")
    assert (resp.provider_message_id, resp.provider_request_id) == ("msg_1", "req_a")
    assert "".join(seen) == "Hello world"


async def test_tool_use_with_thinking_and_fragments(wire, made):
    wire.script(
        Reply(
            sse=anthropic_tool_stream(
                "toolu_1", "ExecCommand", ['{"cmd": ', '"ls", "yield', '_time_ms": 5}'], thinking=("hmm", "sig-1")
            )
        )
    )
    resp = await _provider(wire, made).complete_turn(first_request(("ExecCommand",)))
    assert resp.blocks == (
        ThinkingBlock("hmm", "sig-1"),
        ToolUseBlock("toolu_1", "ExecCommand", {"cmd": "ls", "yield_time_ms": 5}),
    )
    assert resp.stop_reason == "tool_use" and resp.cache_usage.read_input_tokens == 4


async def test_unparseable_fragments_become_raw(wire, made):
    wire.script(Reply(sse=anthropic_tool_stream("toolu_2", "ExecCommand", ['{"cmd": '])))
    resp = await _provider(wire, made).complete_turn(first_request(("ExecCommand",)))
    assert resp.tool_uses[0].input == {"_raw": '{"cmd": '}


async def test_history_with_thinking_and_system_blocks(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("ok")))
    frame = PromptFrame(
        "sys", system_blocks=(ContextBlock("stable part", "stable", True), ContextBlock("turn", "turn_scoped"))
    )
    conv = (
        UserText("q"),
        AssistantBlocks((ThinkingBlock("t", ""), RedactedThinkingBlock("opaque"), TextBlock(""), TextBlock("answer"))),
        UserText("more"),
        UserText("and more"),
    )
    await _provider(wire, made).complete_turn(TurnRequest(conversation=conv, prompt_frame=frame))
    body = wire.requests[0].json
    assert body["system"] == [
        {"type": "text", "text": "stable part", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "turn"},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "answer"},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "more"},
                {"type": "text", "text": "and more", "cache_control": {"type": "ephemeral"}},
            ],
        },
    ]


async def test_json_body_is_accepted(wire, made):
    wire.script(
        Reply(
            json={
                "id": "msg_j",
                "type": "message",
                "content": [
                    {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
                    {"type": "web_search_tool_result", "content": [{"url": "u"}]},
                    {"type": "text", "text": "found"},
                ],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 2, "cache_creation_input_tokens": 5},
            }
        )
    )
    resp = await _provider(wire, made).complete_turn(first_request())
    assert resp.blocks == (TextBlock('[{"url":"u"}]'), TextBlock("found"))
    assert resp.cache_usage.creation_input_tokens == 5


@pytest.mark.parametrize(
    "content, stop, kind",
    [
        ([], "end_turn", "empty_response"),
        ([{"type": "mystery"}], "end_turn", "invalid_response"),
        ([{"type": "text", "text": '<tool_call>{"name": "GetAgent"}</tool_call>'}], "tool_use", "invalid_response"),
        ([{"type": "text", "text": "&lt;function=GetAgent&gt;"}], "tool_use", "invalid_response"),
        ([{"type": "tool_use", "name": "GetAgent", "input": {}}], "tool_use", "invalid_response"),
    ],
)
async def test_unusable_messages(wire, made, content, stop, kind):
    events = [
        {
            "type": "message_start",
            "message": {"id": "m", "content": [], "usage": {"input_tokens": 2, "output_tokens": 0}},
        }
    ]
    events += [
        e
        for i, c in enumerate(content)
        for e in (
            {"type": "content_block_start", "index": i, "content_block": c},
            {"type": "content_block_stop", "index": i},
        )
    ]
    events += [
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    wire.script(Reply(sse=anthropic_sse(events)))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made).complete_turn(first_request())
    assert info.value.kind == kind
    if kind == "empty_response":
        assert info.value.retryable and info.value.token_usage.to_dict()["output_tokens"] == 9


async def test_case25_stream_without_message_stop_is_invalid_response(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("cut", stop=False)))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made).complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("invalid_response", "fail_fast")
    assert "message_stop" in str(info.value)


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"code": "1234", "message": "nonstandard gateway error"},
    ],
)
async def test_case25_error_event_is_retryable_server_error(wire, made, payload):
    start = anthropic_text_stream("x")[:1]
    wire.script(Reply(sse=start + [sse_event(payload, "error")]))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made).complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("server_error", "retryable")
    assert "Overloaded" not in str(info.value) and "gateway" not in str(info.value)


async def test_case27_silent_stream_times_out(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("x")[:2], hang_s=10))
    p = _provider(wire, made, env={"ANTHROPIC_AUTH_TOKEN": TOKEN, "HOLON_PROVIDER_STREAM_IDLE_TIMEOUT_MS": "200"})
    with pytest.raises(ProviderTransportError) as info:
        await p.complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("timeout", "retryable")


async def test_status_errors_and_schema_rejection(wire, made):
    wire.script(
        Reply(status=529, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        Reply(
            status=400,
            json={
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "tools.0.custom.input_schema: WaitFor is bad"},
            },
        ),
    )
    p = _provider(wire, made)
    with pytest.raises(ProviderTransportError) as info:
        await p.complete_turn(first_request())
    assert (info.value.kind, info.value.status, str(info.value)) == (
        "server_error",
        529,
        "anthropic messages request with status 529",
    )
    with pytest.raises(ProviderTransportError) as info:
        await p.complete_turn(first_request(("GetAgent", "WaitFor")))
    assert info.value.tool_name == "WaitFor" and "is bad" not in str(info.value)


def test_thinking_budget():
    assert thinking_budget(8192, None) is None
    assert thinking_budget(8192, "medium") == 2048
    assert thinking_budget(8192, "low") == 1024  # 819 clamped up
    assert thinking_budget(8192, "max") == 6554
    assert thinking_budget(8192, "weird") == 2048
    assert thinking_budget(1024, "high") is None


async def test_effort_adds_thinking_and_deepseek_output_config(wire, made):
    wire.script(Reply(sse=anthropic_text_stream("a")), Reply(sse=anthropic_text_stream("b")))
    await _provider(wire, made, reasoning_effort="high").complete_turn(first_request())
    assert wire.requests[0].json["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    ds = provider_for(
        wire,
        "deepseek/deepseek-chat",
        made,
        env={"DEEPSEEK_API_KEY": "ds-key-0123456789"},
        base_path="",
        reasoning_effort="high",
    )
    await ds.complete_turn(first_request())
    body = wire.requests[1].json
    assert body["output_config"] == {"effort": "high"} and "thinking" not in body
    assert wire.requests[1].headers["authorization"] == "Bearer ds-key-0123456789"


async def test_structured_output_tool_comes_back_as_text(wire, made):
    events = [
        {"type": "message_start", "message": {"id": "m", "content": [], "usage": {"input_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "structured_response_plan", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"steps": [1]}'},
        },
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]
    wire.script(Reply(sse=anthropic_sse(events)))
    req = TurnRequest(conversation=(UserText("plan"),), response_format={"name": "plan", "schema": {"type": "object"}})
    resp = await _provider(wire, made).complete_turn(req)
    assert resp.blocks == (TextBlock('{"steps":[1]}'),)
    assert wire.requests[0].json["tool_choice"] == {"type": "tool", "name": "structured_response_plan"}
