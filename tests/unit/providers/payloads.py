"""Reply bodies in each provider's wire format (reused by the provider tests)."""

from __future__ import annotations

from typing import Any

from unit.providers.servers import anthropic_sse, chat_chunk_sse


def responses_text(text: str, usage: tuple[int, int] = (2, 1), **extra: Any) -> dict[str, Any]:
    """A completed Responses object holding one assistant text."""
    return {
        "id": "resp_1",
        "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        **extra,
    }


def responses_call(call_id: str, name: str, arguments: str, usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A completed Responses object holding one function call."""
    return {
        "id": "resp_2",
        "status": "completed",
        "output": [{"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}],
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def chat_text(text: str, usage: tuple[int, int] = (2, 1)) -> dict[str, Any]:
    """A Chat Completions response with one text message."""
    return {
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }


def chat_calls(calls: list[dict[str, Any]], usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A Chat Completions response with tool calls (each ``{id?, name, arguments}``)."""
    tool_calls = []
    for c in calls:
        tc: dict[str, Any] = {"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        if c.get("id"):
            tc["id"] = c["id"]
        tool_calls.append(tc)
    return {
        "id": "chatcmpl-2",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }


def chat_stream(
    text_parts: list[str],
    calls: list[dict[str, Any]],
    usage: tuple[int, int],
    finish: str = "tool_calls",
    done: bool = True,
) -> list[str]:
    """Chat chunks: text fragments, then each call split in three fragments, finish, usage chunk."""
    chunks: list[dict[str, Any]] = [{"id": "chatcmpl-2", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    for part in text_parts:
        chunks.append({"id": "chatcmpl-2", "choices": [{"index": 0, "delta": {"content": part}}]})
    for i, c in enumerate(calls):
        args = c["arguments"]
        third = max(1, len(args) // 3)
        pieces = [args[:third], args[third : 2 * third], args[2 * third :]]
        chunks.append(
            {
                "id": "chatcmpl-2",
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": c["id"],
                                    "type": "function",
                                    "function": {"name": c["name"], "arguments": pieces[0]},
                                }
                            ]
                        },
                    }
                ],
            }
        )
        for piece in pieces[1:]:
            chunks.append(
                {
                    "id": "chatcmpl-2",
                    "choices": [
                        {"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}}
                    ],
                }
            )
    chunks.append({"id": "chatcmpl-2", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append(
        {"id": "chatcmpl-2", "choices": [], "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]}}
    )
    return chat_chunk_sse(chunks, done=done)


def anthropic_text_stream(text: str, usage: tuple[int, int] = (7, 3), stop: bool = True) -> list[str]:
    """A Messages SSE stream with one text block (split in two deltas)."""
    half = len(text) // 2
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": {"input_tokens": usage[0], "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[:half]}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[half:]}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": usage[1]}},
    ]
    if stop:
        events.append({"type": "message_stop"})
    return anthropic_sse(events)


def anthropic_tool_stream(
    call_id: str,
    name: str,
    fragments: list[str],
    usage: tuple[int, int] = (10, 5),
    thinking: tuple[str, str] | None = None,
) -> list[str]:
    """A Messages SSE stream: optional thinking block, then one tool_use whose input arrives as fragments."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": {"input_tokens": usage[0], "output_tokens": 0, "cache_read_input_tokens": 4},
            },
        }
    ]
    index = 0
    if thinking is not None:
        events += [
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thinking[0]}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": thinking[1]}},
            {"type": "content_block_stop", "index": 0},
        ]
        index = 1
    events.append(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
        }
    )
    events += [
        {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": f}}
        for f in fragments
    ]
    events += [
        {"type": "content_block_stop", "index": index},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": usage[1]}},
        {"type": "message_stop"},
    ]
    return anthropic_sse(events)
