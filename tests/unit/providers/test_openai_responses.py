"""OpenAI Responses transport (turn-loop spec §2.5, §1.6) through the real ``openai`` SDK against a local server."""

from __future__ import annotations

import json

import anyio
import pytest
from _support import err
from unit.providers.helpers import KEY, first_request, provider_for, second_request, tool
from unit.providers.payloads import responses_call, responses_text
from unit.providers.servers import Reply, responses_sse, sse_done

from holon_nb.providers._errors import ToolSchemaRejected
from holon_nb.providers._schema_lowering import lower_tool_schema
from holon_nb.providers.base import (
    AssistantBlocks,
    CitationsBlock,
    ProviderTransportError,
    ReasoningTextBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnRequest,
    UserText,
    UserToolResults,
)

pytestmark = pytest.mark.anyio

REF = "openai/gpt-5.4"


def _provider(wire, made, **settings):
    return provider_for(wire, REF, made, env={"OPENAI_API_KEY": KEY}, **settings)


async def test_round1_request_shape_and_text_response(wire, made):
    wire.script(Reply(json=responses_text("hello", usage=(12, 3)), headers={"x-request-id": "req_9"}))
    p = _provider(wire, made)
    resp = await p.complete_turn(first_request(("GetAgent", "WaitFor")))
    req = wire.requests[0]
    assert (req.method, req.path) == ("POST", "/v1/responses")
    assert req.headers["authorization"] == f"Bearer {KEY}"
    body = req.json
    assert body["model"] == "gpt-5.4" and body["store"] is False
    assert body["instructions"] == "You are Holon."
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look at the agent"}]}
    ]
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is False
    assert [t["name"] for t in body["tools"]] == ["GetAgent", "WaitFor"]
    for sent, spec in zip(body["tools"], (tool("GetAgent"), tool("WaitFor")), strict=True):
        assert sent == {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": lower_tool_schema(spec.input_schema, "relaxed"),
            "strict": False,
        }
    assert body["prompt_cache_key"] == "agent_default"
    assert "reasoning" not in body and "stream" not in body
    assert body["max_output_tokens"] == 8192
    assert resp.text == "hello" and resp.blocks == (TextBlock("hello"),)
    assert (resp.input_tokens, resp.output_tokens, resp.stop_reason) == (12, 3, "completed")
    assert (resp.provider_request_id, resp.provider_message_id) == ("req_9", "resp_1")


async def test_no_tools_means_no_tool_fields_and_effort_adds_reasoning(wire, made):
    wire.script(Reply(json=responses_text("x")))
    p = _provider(wire, made, reasoning_effort="high")
    await p.complete_turn(TurnRequest(conversation=(UserText("hi"),), max_output_tokens=100))
    body = wire.requests[0].json
    assert not {"tools", "tool_choice", "parallel_tool_calls", "instructions", "prompt_cache_key"} & body.keys()
    assert body["reasoning"] == {"effort": "high"} and body["max_output_tokens"] == 100


async def test_case5_malformed_arguments_become_raw_and_are_resent(wire, made):
    wire.script(Reply(json=responses_call("call_1", "ExecCommand", '{"cmd": ')), Reply(json=responses_text("ok")))
    p = _provider(wire, made)
    resp = await p.complete_turn(first_request(("ExecCommand",)))
    call = resp.tool_uses[0]
    assert (call.id, call.name, call.input) == ("call_1", "ExecCommand", {"_raw": '{"cmd": '})
    await p.complete_turn(second_request(call, receipt="RECEIPT", is_error=True, tools=("ExecCommand",)))
    items = wire.requests[1].json["input"]
    assert items[-2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "ExecCommand",
        "arguments": '{"_raw":"{\\"cmd\\": "}',
    }
    assert json.loads(items[-2]["arguments"]) == {"_raw": '{"cmd": '}
    assert items[-1] == {"type": "function_call_output", "call_id": "call_1", "output": "RECEIPT"}


@pytest.mark.parametrize(
    "arguments, expected",
    [
        ("", {}),
        (None, {}),
        ("   ", {}),
        ('{"b": 1, "a": [2]}', {"b": 1, "a": [2]}),
        ("[1, 2]", {"_raw": [1, 2]}),
        ('"text"', {"_raw": "text"}),
        ("{not json", {"_raw": "{not json"}),
    ],
)
async def test_arguments_normalization(wire, made, arguments, expected):
    item = {"type": "function_call", "call_id": "c", "name": "GetAgent"}
    if arguments is not None:
        item["arguments"] = arguments
    wire.script(Reply(json={"output": [item], "usage": {"input_tokens": 1, "output_tokens": 1}}))
    resp = await _provider(wire, made).complete_turn(first_request())
    assert resp.tool_uses[0].input == expected


async def test_continuation_serializes_history(wire, made):
    wire.script(Reply(json=responses_text("done")))
    blocks = (
        TextBlock("thinking aloud"),
        TextBlock(""),
        ReasoningTextBlock("why"),
        ThinkingBlock("secret", "sig"),
        CitationsBlock(({"url": "u", "title": "t"},)),
        ToolUseBlock("c1", "GetAgent", {"z": 1, "a": "é"}),
        ToolUseBlock("c2", "ApplyPatch", "*** Begin Patch", kind="custom"),
    )
    results = UserToolResults((ToolResultBlock("c1", "r1"), ToolResultBlock("c2", "r2", True)))
    req = TurnRequest(conversation=(UserText("go"), AssistantBlocks(blocks), results))
    await _provider(wire, made).complete_turn(req)
    items = wire.requests[0].json["input"]
    assert items[1:] == [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "thinking aloud"}]},
        {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "why"}]},
        {"type": "function_call", "call_id": "c1", "name": "GetAgent", "arguments": '{"a":"é","z":1}'},
        {"type": "custom_tool_call", "call_id": "c2", "name": "ApplyPatch", "input": "*** Begin Patch"},
        {"type": "function_call_output", "call_id": "c1", "output": "r1"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "r2"},
    ]


async def test_response_items_map_to_blocks(wire, made):
    wire.script(
        Reply(
            json={
                "id": "resp_7",
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "output": [
                    {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "plan"}]},
                    {"type": "web_search_call", "status": "completed"},
                    {
                        "type": "message",
                        "content": [
                            {
                                "type": "output_text",
                                "text": "see \ue200cite\ue202turn0\ue201 docs",
                                "annotations": [{"type": "url_citation", "url": "https://d", "title": "D"}],
                            }
                        ],
                    },
                    {"type": "custom_tool_call", "call_id": "cc", "name": "ApplyPatch", "input": "*** x"},
                    {"type": "function_call", "id": "fc_1", "name": "GetAgent", "arguments": "{}"},
                ],
                "usage": {"input_tokens": 9, "output_tokens": 4, "input_tokens_details": {"cached_tokens": 6}},
            }
        )
    )
    resp = await _provider(wire, made).complete_turn(first_request())
    assert resp.blocks == (
        ReasoningTextBlock("plan"),
        TextBlock("see  docs"),
        CitationsBlock(({"url": "https://d", "title": "D"},)),
        ToolUseBlock("cc", "ApplyPatch", "*** x", kind="custom"),
        ToolUseBlock("fc_1", "GetAgent", {}),
    )
    assert resp.stop_reason == "max_output_tokens" and resp.cache_usage.read_input_tokens == 6


@pytest.mark.parametrize(
    "body, kind",
    [
        (
            {"output": [{"type": "web_search_call"}], "usage": {"input_tokens": 1, "output_tokens": 1}},
            "invalid_response",
        ),
        ({"output": [{"type": "function_call", "name": "GetAgent", "arguments": "{}"}]}, "invalid_response"),
        ({"output": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]}, "invalid_response"),
        ([1, 2], "invalid_response"),
        ({"output": [], "usage": {"input_tokens": 4, "output_tokens": 893}}, "empty_response"),
    ],
)
async def test_bad_bodies_are_classified(wire, made, body, kind):
    wire.script(Reply(json=body))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made).complete_turn(first_request())
    assert info.value.kind == kind
    assert info.value.disposition == ("retryable" if kind == "empty_response" else "fail_fast")
    if kind == "empty_response":
        assert info.value.token_usage.to_dict() == {"input_tokens": 4, "output_tokens": 893, "total_tokens": 897}


async def test_malformed_json_body_is_invalid_response(wire, made):
    wire.script(Reply(body="{not json", content_type="application/json"))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made).complete_turn(first_request())
    assert info.value.kind == "invalid_response"
    assert info.value.diagnostics["url"] == f"{wire.base_url}/v1/responses"


async def test_case21_schema_rejection_names_the_tool_without_the_body(wire, made):
    message = "Invalid schema for function 'WaitFor': In context=(), 'required' is required"
    wire.script(
        Reply(
            status=400,
            json={
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "tools[1].parameters",
                    "code": "invalid_function_parameters",
                }
            },
        )
    )
    with pytest.raises(ToolSchemaRejected) as info:
        await _provider(wire, made).complete_turn(first_request(("GetAgent", "WaitFor")))
    err = info.value
    assert (err.tool_name, err.kind, err.disposition, err.status) == ("WaitFor", "contract_error", "fail_fast", 400)
    assert err.provider_message == message and err.diagnostics["provider_message"] == message
    assert "Invalid schema" not in str(err) and "required" not in str(err)
    assert str(err).startswith("openai responses request with status 400 Bad Request")


async def test_secret_rule_credentials_and_body_never_in_errors(wire, made):
    wire.script(Reply(status=500, json={"error": {"message": f"upstream echoed {KEY} and internal trace 77"}}))
    url = wire.base_url.replace("http://", "http://alice:pw-hunter22@")
    p = provider_for(url, REF, made, env={"OPENAI_API_KEY": KEY})
    with pytest.raises(ProviderTransportError) as info:
        await p.complete_turn(first_request())
    err = info.value
    dumped = json.dumps({"message": str(err), "diagnostics": err.diagnostics, "dict": err.to_dict()})
    for leaked in (KEY, "pw-hunter22", "alice", "internal trace 77"):
        assert leaked not in str(err)
    assert KEY not in dumped and "pw-hunter22" not in dumped
    assert err.diagnostics["url"] == f"{wire.base_url}/v1/responses"
    assert err.diagnostics["provider_message"] == "upstream echoed [redacted] and internal trace 77"


async def test_connection_refused_and_timeout_and_cut_body(wire, made):
    dead = provider_for("http://127.0.0.1:9", REF, made, env={"OPENAI_API_KEY": KEY})
    with pytest.raises(ProviderTransportError) as info:
        await dead.complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("connection", "retryable")

    wire.script(Reply(json=responses_text("late"), delay_s=5))
    slow = provider_for(wire, REF, made, env={"OPENAI_API_KEY": KEY, "HOLON_PROVIDER_HTTP_TIMEOUT_SECS": "0.3"})
    with pytest.raises(ProviderTransportError) as info:
        await slow.complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("timeout", "retryable")

    wire.script(Reply(body=json.dumps(responses_text("cut")), truncate=True))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made).complete_turn(first_request())
    assert (info.value.kind, info.value.disposition) == ("connection", "retryable")


# ------------------------------------------------------------------ SSE mode (⚑ UI deltas)


def _item_done(item):
    return {"type": "response.output_item.done", "item": item}


async def test_sse_completed_uses_collected_items_and_feeds_deltas(wire, made):
    msg = {"type": "message", "content": [{"type": "output_text", "text": "Hi there"}]}
    call = {"type": "function_call", "call_id": "c9", "name": "GetAgent", "arguments": "{}"}
    wire.script(
        Reply(
            sse=responses_sse(
                [
                    {"type": "response.created", "response": {"id": "resp_s"}},
                    {"type": "response.output_text.delta", "delta": "Hi "},
                    {"type": "response.output_text.delta", "delta": "there"},
                    _item_done(msg),
                    _item_done(call),
                    {
                        "type": "response.completed",
                        "response": {
                            "id": "resp_s",
                            "status": "completed",
                            "output": [],
                            "usage": {"input_tokens": 5, "output_tokens": 2},
                        },
                    },
                ]
            )
        )
    )
    p = _provider(wire, made, stream=True)
    seen = []
    p.delta_listener = lambda kind, payload: seen.append((kind, payload.get("text")))
    resp = await p.complete_turn(first_request())
    assert wire.requests[0].json["stream"] is True
    assert resp.blocks == (TextBlock("Hi there"), ToolUseBlock("c9", "GetAgent", {}))
    assert (resp.input_tokens, resp.output_tokens, resp.provider_message_id) == (5, 2, "resp_s")
    assert seen == [("text_delta", "Hi "), ("text_delta", "there")]


@pytest.mark.parametrize(
    "events, kind, code",
    [
        (
            [{"type": "response.failed", "response": {"error": {"code": "rate_limit_exceeded", "message": "m"}}}],
            "rate_limited",
            None,
        ),
        ([{"type": "response.failed", "response": {"error": {"code": "server_is_overloaded"}}}], "server_error", None),
        (
            [{"type": "error", "code": "context_length_exceeded", "message": "too long"}],
            "contract_error",
            "context_length_exceeded",
        ),
        (
            [{"type": "response.incomplete", "response": {"incomplete_details": {"reason": "content_filter"}}}],
            "contract_error",
            None,
        ),
        (
            [_item_done({"type": "message", "content": [{"type": "output_text", "text": "x"}]})],
            "invalid_response",
            None,
        ),
    ],
)
async def test_sse_failures(wire, made, events, kind, code):
    wire.script(Reply(sse=responses_sse(events) + [sse_done()]))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made, stream=True).complete_turn(first_request())
    assert (info.value.kind, info.value.code) == (kind, code)


async def test_sse_incomplete_for_output_limit_returns_partial(wire, made):
    wire.script(
        Reply(
            sse=responses_sse(
                [
                    _item_done({"type": "message", "content": [{"type": "output_text", "text": "partial"}]}),
                    {
                        "type": "response.incomplete",
                        "response": {
                            "status": "incomplete",
                            "output": [],
                            "incomplete_details": {"reason": "max_output_tokens"},
                            "usage": {"input_tokens": 3, "output_tokens": 8},
                        },
                    },
                ]
            )
        )
    )
    resp = await _provider(wire, made, stream=True).complete_turn(first_request())
    assert resp.text == "partial" and resp.stop_reason == "max_output_tokens" and resp.output_tokens == 8


async def test_sse_too_many_items_is_invalid_response(wire, made):
    item = {"type": "message", "content": [{"type": "output_text", "text": "x"}]}
    wire.script(Reply(sse=responses_sse([_item_done(item)] * 129)))
    with pytest.raises(ProviderTransportError) as info:
        await _provider(wire, made, stream=True).complete_turn(first_request())
    assert info.value.kind == "invalid_response" and "128" in str(info.value)


async def test_case5_raw_input_fails_validation_as_invalid_tool_input(wire, made, rt):
    """The normalized ``_raw`` input, dispatched as the loop would, is ``invalid_tool_input`` (not an exception)."""
    wire.script(Reply(json=responses_call("call_1", "ExecCommand", '{"cmd": ')))
    call = (await _provider(wire, made).complete_turn(first_request(("ExecCommand",)))).tool_uses[0]
    result = await anyio.to_thread.run_sync(rt.call, call.name, call.input)
    error = err(result, "invalid_tool_input")
    assert "_raw" in error["details"]["parse_error"]
