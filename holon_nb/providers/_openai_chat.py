"""Transport ``openai_chat_completions``: Chat Completions through the official ``openai`` SDK (turn-loop spec §2.6),
for OpenAI-compatible servers too (OpenRouter, LiteLLM, vLLM, Ollama, llama.cpp — turn-loop spec §2.7 tolerances).

``stream: false`` by default (parity); with ``stream`` configured (⚑ UI mode) the chunk stream is assembled into the
same JSON shape and parsed by the same function, so a streamed response equals the non-streamed one.
Arguments (⚑ turn-loop spec §1.6): an object is accepted as is; unparseable or non-object strings become ``{"_raw": …}``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ._catalog import ResolvedProvider
from ._errors import RequestSite, classify_chat_error_body, invalid_response, transport_failure
from ._openai_client import make_openai_client, openai_request
from ._transport_base import HTTPTransport, lower_tools
from ._wire import (
    DeltaListener,
    SSEEvent,
    blocks_text,
    compact_json,
    emit,
    looks_like_text_tool_call,
    normalize_arguments,
    round_index,
    system_text,
)
from .base import (
    AssistantBlocks,
    Block,
    CacheUsage,
    TextBlock,
    TokenUsage,
    ToolUseBlock,
    TurnRequest,
    TurnResponse,
    UserBlocks,
    UserImage,
    UserText,
    UserToolResults,
)

__all__ = ["OpenAIChatProvider", "chat_completions_url", "build_chat_body", "parse_chat_body", "ChatStream"]

_CONTEXT = "openai chat completions request"
_SUFFIX = "/chat/completions"


def chat_completions_url(base_url: str) -> str:
    """The request URL for a base (turn-loop spec §2.6, case 28): a base ending in ``/chat/completions`` is used as is; a base
    whose last path segment is ``v<digits>`` gets ``/chat/completions``; any other gets ``/v1/chat/completions``.

    ``http://h:11434/v1`` → ``http://h:11434/v1/chat/completions``; ``http://h:8080`` →
    ``http://h:8080/v1/chat/completions``; ``https://x/api/chat/completions`` → unchanged.
    """
    base = base_url.rstrip("/")
    if base.endswith(_SUFFIX):
        return base
    rest = base.split("://", 1)[-1]
    last = rest.rsplit("/", 1)[-1] if "/" in rest else ""  # no path → no last segment
    if re.fullmatch(r"v\d+", last):
        return base + _SUFFIX
    return base + "/v1" + _SUFFIX


def _assistant_message(msg: AssistantBlocks) -> dict[str, Any] | None:
    texts = [b.text for b in msg.blocks if isinstance(b, TextBlock) and b.text]
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {
                "name": b.name,
                "arguments": b.input if isinstance(b.input, str) and b.kind == "custom" else compact_json(b.input),
            },
        }
        for b in msg.blocks
        if isinstance(b, ToolUseBlock)
    ]
    if not texts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    return out


def _messages(req: TurnRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = system_text(req.prompt_frame)
    if system:
        out.append({"role": "system", "content": system})
    for msg in req.conversation:
        if isinstance(msg, UserText):
            out.append({"role": "user", "content": msg.text})
        elif isinstance(msg, UserBlocks):
            text = blocks_text(msg)
            if text:
                out.append({"role": "user", "content": text})
        elif isinstance(msg, UserImage):
            out.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": msg.prompt},
                        {"type": "image_url", "image_url": {"url": f"data:{msg.media_type};base64,{msg.data_base64}"}},
                    ],
                }
            )
        elif isinstance(msg, AssistantBlocks):
            assistant = _assistant_message(msg)
            if assistant is not None:
                out.append(assistant)
        elif isinstance(msg, UserToolResults):
            out.extend({"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content} for r in msg.results)
    return out


def build_chat_body(req: TurnRequest, resolved: ResolvedProvider, *, stream: bool = False) -> dict[str, Any]:
    """The Chat Completions JSON body (turn-loop spec §2.6): ``model``, ``max_tokens``, ``stream``, ``messages``, relaxed-lowered
    ``tools`` with ``tool_choice: "auto"``, ``prompt_cache_key`` (unless disabled, e.g. local presets).

    Raises:
        ToolSchemaRejected: strict preflight failure (turn-loop spec §3.3).
    """
    body: dict[str, Any] = {
        "model": resolved.ref.model,
        "max_tokens": req.max_output_tokens or resolved.max_output_tokens,
        "stream": stream,
        "messages": _messages(req),
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if req.tools:
        tools = []
        for spec, lowered in lower_tools(req.tools, resolved.schema_contract):
            fn: dict[str, Any] = {"name": spec.name, "description": spec.description, "parameters": lowered}
            if resolved.send_strict_flag:
                fn["strict"] = resolved.schema_contract == "strict"
            tools.append({"type": "function", "function": fn})
        body.update(tools=tools, tool_choice="auto")
    if resolved.send_prompt_cache_key and req.continuation_scope_id:
        body["prompt_cache_key"] = req.continuation_scope_id
    if resolved.reasoning_effort:
        body["reasoning_effort"] = resolved.reasoning_effort
    if req.response_format:
        fmt = req.response_format
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": fmt.get("name", "response"),
                "schema": fmt.get("schema", {}),
                "strict": bool(fmt.get("strict")),
            },
        }
    return body


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers send content parts
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def parse_chat_body(
    data: Any, *, local_tolerances: bool = False, round_no: int = 1, context: str = _CONTEXT
) -> TurnResponse:
    """A Chat Completions JSON object → :class:`TurnResponse` (turn-loop spec §2.6, §2.7).

    Args:
        local_tolerances: Synthesize a missing call id as ``call_<round>_<index>`` and treat
            ``finish_reason == "tool_calls"`` without parsed calls as ``invalid_response`` (turn-loop spec §2.7).
        round_no: The round, for synthesized ids.

    Raises:
        ProviderTransportError: ``invalid_response`` for missing/empty ``choices``, a missing ``message``, a
            call without id (unless tolerated) or name, no content/calls and no ``finish_reason``, or (local)
            text-form tool calls.
    """
    if not isinstance(data, Mapping):
        raise invalid_response(context, "response body is not a JSON object")
    usage = raw_usage if isinstance(raw_usage := data.get("usage"), Mapping) else {}
    tokens = TokenUsage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise invalid_response(context, "response has no choices", token_usage=tokens)
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise invalid_response(context, "first choice has no message", token_usage=tokens)
    finish = choices[0].get("finish_reason")
    blocks: list[Block] = []
    text = _text(message.get("content"))
    if text:
        blocks.append(TextBlock(text))
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = raw_fn if isinstance(call, Mapping) and isinstance(raw_fn := call.get("function"), Mapping) else {}
        name = fn.get("name")
        call_id = call.get("id") if isinstance(call, Mapping) else None
        if not call_id and local_tolerances:
            call_id = f"call_{round_no}_{index}"
        if not call_id or not name:
            raise invalid_response(context, f"tool call {index} without id or function name", token_usage=tokens)
        blocks.append(ToolUseBlock(str(call_id), str(name), normalize_arguments(fn.get("arguments"))))
    if not blocks and finish is None:
        raise invalid_response(
            context, "message has no content, no tool calls and no finish_reason", token_usage=tokens
        )
    if local_tolerances and finish == "tool_calls" and not any(isinstance(b, ToolUseBlock) for b in blocks):
        hint = " (tool-call markup in text)" if looks_like_text_tool_call([text]) else ""
        raise invalid_response(
            context,
            f"finish_reason tool_calls without parsed tool calls{hint}; the server may need its tool-call template",
            token_usage=tokens,
        )
    details = raw_details if isinstance(raw_details := usage.get("prompt_tokens_details"), Mapping) else {}
    return TurnResponse(
        blocks=tuple(blocks),
        stop_reason=finish,
        input_tokens=tokens.input_tokens,
        output_tokens=tokens.output_tokens,
        cache_usage=CacheUsage(read_input_tokens=int(details.get("cached_tokens") or 0)),
        provider_message_id=data.get("id"),
    )


class ChatStream:
    """Assembles Chat Completions chunks (turn-loop spec §2.6 chunk format) into the non-streamed JSON shape, then parses it
    with :func:`parse_chat_body` — so both paths yield equal :class:`TurnResponse` values."""

    def __init__(
        self,
        listener: DeltaListener | None = None,
        *,
        local_tolerances: bool = False,
        round_no: int = 1,
        provider: str = "",
        model_ref: str = "",
        url: str | None = None,
    ):
        self.listener = listener
        self.local_tolerances = local_tolerances
        self.round_no = round_no
        self._diag = RequestSite(provider=provider, model_ref=model_ref, url=url)
        self.id: str | None = None
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None

    def feed(self, chunk: Mapping[str, Any]) -> None:
        """Merge one chunk (content fragments, tool-call fragments per ``index``, ``finish_reason``, usage).

        Raises:
            ProviderTransportError: a chunk carrying ``error`` (classified by its code/type, else server_error).
        """
        if "error" in chunk and chunk.get("error"):
            kind, _, code = classify_chat_error_body(0, dict(chunk))
            kind = "server_error" if kind == "unknown" else kind
            raise transport_failure(
                kind, _CONTEXT, "error event in stream", stage="streaming_response_body", code=code, **self._diag
            )
        self.id = self.id or chunk.get("id")
        if isinstance(chunk.get("usage"), Mapping):
            self.usage = dict(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str) and delta["content"]:
                self.content.append(delta["content"])
                emit(self.listener, "text_delta", {"text": delta["content"]})
            for frag in delta.get("tool_calls") or []:
                self._call_fragment(frag)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def _call_fragment(self, frag: Mapping[str, Any]) -> None:
        index = frag.get("index", len(self.calls))
        slot = self.calls.setdefault(index, {"id": None, "name": "", "arguments": None})
        if frag.get("id"):
            slot["id"] = frag["id"]
        fn = frag.get("function") or {}
        if fn.get("name") and not slot["name"]:
            slot["name"] = fn["name"]
        args = fn.get("arguments")
        if isinstance(args, str):
            slot["arguments"] = (slot["arguments"] or "") + args
        elif args is not None:
            slot["arguments"] = args
        emit(
            self.listener,
            "tool_call_delta",
            {
                "index": index,
                "id": slot["id"],
                "name": slot["name"] or None,
                "arguments": args if isinstance(args, str) else "",
            },
        )

    def assembled(self) -> dict[str, Any]:
        """The non-streamed JSON equivalent of what was fed."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
        if self.calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self.calls.items())
            ]
        out: dict[str, Any] = {
            "id": self.id,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
        }
        if self.usage is not None:
            out["usage"] = self.usage
        return out

    async def consume(self, events: AsyncIterator[SSEEvent]) -> TurnResponse:
        """Read chunks until ``[DONE]`` (or EOF after a ``finish_reason``) and parse the assembled message.

        Raises:
            ProviderTransportError: ``invalid_response`` for a malformed chunk or a stream that ends without
                ``finish_reason`` or ``[DONE]``.
        """
        done = False
        async for ev in events:
            if ev.data.strip() == "[DONE]":
                done = True
                break
            try:
                chunk = ev.json()
            except ValueError:
                raise invalid_response(_CONTEXT, "stream chunk is not valid JSON", **self._diag) from None
            if isinstance(chunk, Mapping):
                self.feed(chunk)
        if not done and self.finish is None:
            raise invalid_response(_CONTEXT, "stream ended without finish_reason or [DONE]", **self._diag)
        return parse_chat_body(self.assembled(), local_tolerances=self.local_tolerances, round_no=self.round_no)


class OpenAIChatProvider(HTTPTransport):
    """A :class:`~holon_nb.providers.base.Provider` speaking Chat Completions through ``openai.AsyncOpenAI``.

    Args:
        resolved: The route configuration (``stream``, ``local_tolerances``, ``send_prompt_cache_key`` …).
        client: An SDK client to use instead of building one.
        environ / delta_listener: see :class:`~holon_nb.providers._transport_base.HTTPTransport`.
    """

    transport = "openai_chat_completions"

    def __init__(
        self,
        resolved: ResolvedProvider,
        *,
        client: Any = None,
        environ: Mapping[str, str] | None = None,
        delta_listener: DeltaListener | None = None,
    ):
        super().__init__(resolved, environ=environ, delta_listener=delta_listener)
        self.url = chat_completions_url(resolved.base_url)
        self._client = client or make_openai_client(resolved, self.url[: -len(_SUFFIX)])

    def build_request_body(self, req: TurnRequest) -> dict[str, Any]:
        """The JSON body this transport sends for ``req``."""
        return build_chat_body(req, self.resolved, stream=self.resolved.stream)

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """One attempt (turn-loop spec §2.6).

        Raises:
            ProviderTransportError: classified failure (turn-loop spec §2.4, Chat body codes first).
        """
        body = self.build_request_body(req)
        round_no = round_index(req)
        local = self.resolved.local_tolerances
        stream = ChatStream(
            self.delta_listener,
            local_tolerances=local,
            round_no=round_no,
            provider=self.provider_name,
            model_ref=self.route_ref,
            url=self.url,
        )
        return await openai_request(
            self._client.chat.completions.with_streaming_response.create,
            body,
            resolved=self.resolved,
            context=_CONTEXT,
            url=self.url,
            primary=("model", "messages", "stream"),
            on_json=lambda data: parse_chat_body(data, local_tolerances=local, round_no=round_no),
            on_sse=stream.consume,
            classify_body=classify_chat_error_body,
            tool_names=tuple(t.name for t in req.tools),
            scrubber=self.scrubber,
        )

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.close()
