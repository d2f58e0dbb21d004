"""Chat Completions transport (turn-loop spec §2.6, §2.7, §1.6) through the real ``openai`` SDK, local server."""

from __future__ import annotations

import json

import pytest
from unit.providers.helpers import KEY, first_request, provider_for, second_request, tool
from unit.providers.payloads import chat_calls, chat_stream, chat_text
from unit.providers.servers import Reply, chat_chunk_sse

from holon_nb.providers._openai_chat import chat_completions_url
from holon_nb.providers._schema_lowering import lower_tool_schema
from holon_nb.providers.base import (
    AssistantBlocks,
    ProviderTransportError,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnRequest,
    UserImage,
    UserText,
    UserToolResults,
)

pytestmark = pytest.mark.anyio

REF = "openrouter/anthropic/claude-sonnet-4"


def _hosted(wire, made, **settings):
    return provider_for(wire, REF, made, env={"OPENROUTER_API_KEY": KEY}, **settings)


@pytest.mark.parametrize(
    "base, url",
    [
        ("http://h:11434/v1", "http://h:11434/v1/chat/completions"),
        ("http://h:8080", "http://h:8080/v1/chat/completions"),
        ("https://x/api/chat/completions", "https://x/api/chat/completions"),
        ("https://openrouter.ai/api/v1/", "https://openrouter.ai/api/v1/chat/completions"),
        ("http://localhost:4000", "http://localhost:4000/v1/chat/completions"),
        ("https://qianfan.baidubce.com/v2", "https://qianfan.baidubce.com/v2/chat/completions"),
        ("https://x/api/version", "https://x/api/version/v1/chat/completions"),
    ],
)
def test_case28_chat_urls(base, url):
    assert chat_completions_url(base) == url


@pytest.mark.parametrize(
    "base_path, path",
    [("", "/v1/chat/completions"), ("/v1", "/v1/chat/completions"), ("/api/chat/completions", "/api/chat/completions")],
)
async def test_case28_urls_reach_the_server(wire, made, base_path, path):
    wire.script(Reply(json=chat_text("ok")))
    await provider_for(wire, "vllm/Qwen/Qwen3-8B", made, base_path=base_path).complete_turn(first_request())
    assert wire.requests[0].path == path


async def test_request_shape(wire, made):
    wire.script(Reply(json=chat_text("hi", usage=(11, 2)), headers={"x-request-id": "req_c"}))
    resp = await _hosted(wire, made).complete_turn(first_request(("GetAgent", "WaitFor")))
    req = wire.requests[0]
    assert req.headers["authorization"] == f"Bearer {KEY}"
    body = req.json
    assert body["model"] == "anthropic/claude-sonnet-4" and body["max_tokens"] == 8192 and body["stream"] is False
    assert body["messages"] == [
        {"role": "system", "content": "You are Holon."},
        {"role": "user", "content": "look at the agent"},
    ]
    spec = tool("WaitFor")
    assert body["tools"][1] == {
        "type": "function",
        "function": {
            "name": "WaitFor",
            "description": spec.description,
            "parameters": lower_tool_schema(spec.input_schema, "relaxed"),
            "strict": False,
        },
    }
    assert body["tool_choice"] == "auto" and body["prompt_cache_key"] == "agent_default"
    assert "parallel_tool_calls" not in body
    assert resp.blocks == (TextBlock("hi"),)
    assert (resp.input_tokens, resp.output_tokens, resp.stop_reason, resp.provider_request_id) == (
        11,
        2,
        "stop",
        "req_c",
    )


async def test_history_serialization(wire, made):
    wire.script(Reply(json=chat_text("ok")))
    conv = (
        UserText("go"),
        UserImage("look", "image/png", "AAAA"),
        AssistantBlocks(
            (
                TextBlock("calling"),
                ToolUseBlock("c1", "GetAgent", {"b": 2, "a": 1}),
                ToolUseBlock("c2", "GetAgent", {"_raw": "{x"}),
            )
        ),
        UserToolResults((ToolResultBlock("c1", "r1"), ToolResultBlock("c2", "r2", True))),
        AssistantBlocks((ToolUseBlock("c3", "GetAgent", {}),)),
    )
    await _hosted(wire, made).complete_turn(TurnRequest(conversation=conv))
    msgs = wire.requests[0].json["messages"]
    assert msgs == [
        {"role": "user", "content": "go"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        },
        {
            "role": "assistant",
            "content": "calling",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "GetAgent", "arguments": '{"a":1,"b":2}'}},
                {"id": "c2", "type": "function", "function": {"name": "GetAgent", "arguments": '{"_raw":"{x"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "GetAgent", "arguments": "{}"}}],
        },
    ]


async def test_case6_malformed_arguments_same_outcome_as_responses(wire, made):
    wire.script(
        Reply(json=chat_calls([{"id": "call_1", "name": "ExecCommand", "arguments": '{"cmd": '}])),
        Reply(json=chat_text("ok")),
    )
    p = _hosted(wire, made)
    resp = await p.complete_turn(first_request(("ExecCommand",)))
    call = resp.tool_uses[0]
    assert (call.id, call.name, call.input) == ("call_1", "ExecCommand", {"_raw": '{"cmd": '})
    await p.complete_turn(second_request(call, receipt="RECEIPT", is_error=True, tools=("ExecCommand",)))
    msgs = wire.requests[1].json["messages"]
    assert msgs[-2]["tool_calls"][0]["function"]["arguments"] == '{"_raw":"{\\"cmd\\": "}'
    assert msgs[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "RECEIPT"}


@pytest.mark.parametrize(
    "arguments, expected",
    [
        ({"cmd": "ls"}, {"cmd": "ls"}),  # ⚑ object accepted as is
        ("", {}),
        (None, {}),
        ("[1]", {"_raw": [1]}),
        ("nope", {"_raw": "nope"}),
    ],
)
async def test_argument_tolerances(wire, made, arguments, expected):
    wire.script(Reply(json=chat_calls([{"id": "c", "name": "GetAgent", "arguments": arguments}])))
    resp = await _hosted(wire, made).complete_turn(first_request())
    assert resp.tool_uses[0].input == expected


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "choices": []},
        {"id": "x"},
        {"choices": [{"index": 0, "finish_reason": "stop"}]},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": None}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"tool_calls": [{"type": "function", "function": {"name": "GetAgent"}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        },
    ],
)
async def test_invalid_bodies(wire, made, body):
    wire.script(Reply(json=body))
    with pytest.raises(ProviderTransportError) as info:
        await _hosted(wire, made).complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("invalid_response", "fail_fast")


async def test_empty_message_with_finish_reason_is_an_empty_text_round(wire, made):
    wire.script(Reply(json={"choices": [{"index": 0, "message": {"content": ""}, "finish_reason": "stop"}]}))
    resp = await _hosted(wire, made).complete_turn(first_request())
    assert resp.blocks == () and resp.stop_reason == "stop"


# ------------------------------------------------------------------ local servers (§2.7)


async def test_local_preset_is_keyless_without_cache_key_and_synthesizes_ids(wire, made):
    wire.script(
        Reply(json=chat_calls([{"name": "GetAgent", "arguments": "{}"}, {"name": "GetAgent", "arguments": {"x": 1}}]))
    )
    p = provider_for(wire, "ollama/qwen3:8b", made, env={"OPENAI_API_KEY": KEY})
    req = second_request(ToolUseBlock("call_1", "GetAgent", {}))
    resp = await p.complete_turn(req)
    sent = wire.requests[0]
    assert "authorization" not in sent.headers
    assert "prompt_cache_key" not in sent.json and sent.json["tools"][0]["function"]["strict"] is False
    assert sent.json["model"] == "qwen3:8b"
    assert [(c.id, c.input) for c in resp.tool_uses] == [("call_2_0", {}), ("call_2_1", {"x": 1})]


async def test_hosted_missing_call_id_is_invalid_response(wire, made):
    wire.script(Reply(json=chat_calls([{"name": "GetAgent", "arguments": "{}"}])))
    with pytest.raises(ProviderTransportError) as info:
        await _hosted(wire, made).complete_turn(first_request())
    assert info.value.kind == "invalid_response"


async def test_local_text_form_tool_calls_are_invalid_response(wire, made):
    text = '<tool_call>{"name": "GetAgent", "arguments": {}}</tool_call>'
    wire.script(Reply(json={"choices": [{"index": 0, "message": {"content": text}, "finish_reason": "tool_calls"}]}))
    with pytest.raises(ProviderTransportError) as info:
        await provider_for(wire, "llamacpp/default", made).complete_turn(first_request())
    assert info.value.kind == "invalid_response" and "markup" in str(info.value)


# ------------------------------------------------------------------ errors (§2.4 body codes, cases 23, 24, 26)


@pytest.mark.parametrize(
    "status, body, kind, disposition, code",
    [
        (
            429,
            {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}},
            "auth_error",
            "fail_fast",
            None,
        ),
        (503, {"error": {"message": "busy"}}, "server_error", "retryable", None),
        (
            400,
            {"error": {"message": "too long", "code": "context_length_exceeded"}},
            "contract_error",
            "fail_fast",
            "context_length_exceeded",
        ),
        (429, {"error": {"message": "slow"}}, "rate_limited", "retryable", None),
        (401, {"error": {"message": "who"}}, "auth_error", "fail_fast", None),
    ],
)
async def test_status_errors(wire, made, status, body, kind, disposition, code):
    wire.script(Reply(status=status, json=body))
    with pytest.raises(ProviderTransportError) as info:
        await _hosted(wire, made).complete_turn(first_request())
    err = info.value
    assert (err.kind, err.disposition, err.status, err.code) == (kind, disposition, status, code)
    assert body["error"]["message"] not in str(err)


# ------------------------------------------------------------------ streaming (⚑ UI mode)

CALLS = [
    {"id": "call_a", "name": "GetAgent", "arguments": '{"agent_id": "default"}'},
    {"id": "call_b", "name": "ExecCommand", "arguments": '{"cmd": "echo hi", "yield_time_ms": 500}'},
]


async def test_streamed_chunks_assemble_to_the_non_streamed_response(wire, made):
    non_streamed = {
        "id": "chatcmpl-2",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Let me check.",
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for c in CALLS
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 12},
    }
    wire.script(Reply(json=non_streamed), Reply(sse=chat_stream(["Let me ", "check."], CALLS, (30, 12))))
    plain = await _hosted(wire, made).complete_turn(first_request())
    streaming = _hosted(wire, made, stream=True)
    deltas = []
    streaming.delta_listener = lambda kind, payload: deltas.append(kind)
    streamed = await streaming.complete_turn(first_request())
    assert streamed == plain
    assert streamed.tool_uses[1].input == {"cmd": "echo hi", "yield_time_ms": 500}
    assert wire.requests[1].json["stream"] is True
    assert wire.requests[1].json["stream_options"] == {"include_usage": True}
    assert deltas.count("text_delta") == 2 and "tool_call_delta" in deltas


async def test_stream_without_done_but_with_finish_reason_is_complete(wire, made):
    wire.script(Reply(sse=chat_stream(["ok"], [], (1, 1), finish="stop", done=False)))
    resp = await _hosted(wire, made, stream=True).complete_turn(first_request())
    assert resp.text == "ok" and resp.stop_reason == "stop"


async def test_stream_cut_before_finish_is_invalid_response(wire, made):
    chunks = chat_chunk_sse([{"id": "x", "choices": [{"index": 0, "delta": {"content": "par"}}]}], done=False)
    wire.script(Reply(sse=chunks))
    with pytest.raises(ProviderTransportError) as info:
        await _hosted(wire, made, stream=True).complete_turn(first_request())
    assert info.value.kind == "invalid_response"


async def test_stream_error_chunk_is_classified(wire, made):
    chunks = chat_chunk_sse([{"error": {"message": "overloaded", "code": "server_error"}}], done=False)
    wire.script(Reply(sse=chunks))
    with pytest.raises(ProviderTransportError) as info:
        await _hosted(wire, made, stream=True).complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("server_error", "retryable")


async def test_stream_idle_timeout(wire, made):
    chunks = chat_chunk_sse([{"id": "x", "choices": [{"index": 0, "delta": {"content": "wait"}}]}], done=False)
    wire.script(Reply(sse=chunks, hang_s=10))
    p = provider_for(
        wire, REF, made, env={"OPENROUTER_API_KEY": KEY, "HOLON_PROVIDER_STREAM_IDLE_TIMEOUT_MS": "200"}, stream=True
    )
    with pytest.raises(ProviderTransportError) as info:
        await p.complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("timeout", "retryable")
    assert info.value.diagnostics["stage"] == "streaming_response_body"


def test_json_dump_of_payload_helpers_is_stable():
    # guards the fixture builder itself: three fragments per call rejoin to the arguments
    events = [json.loads(c[len("data: ") :]) for c in chat_stream([], CALLS, (1, 1)) if "[DONE]" not in c]
    frags = "".join(
        tc["function"].get("arguments", "")
        for e in events
        for ch in e.get("choices", [])
        for tc in ch.get("delta", {}).get("tool_calls", [])
        if tc["index"] == 1
    )
    assert frags == CALLS[1]["arguments"]
