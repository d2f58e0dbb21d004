"""Transport ``openai_responses``: OpenAI Responses through the official SDK (turn-loop spec §2.5, §1.6).

``POST {base_url}/responses`` with ``authorization: Bearer <key>``, ``store: false`` and the full history; JSON by
default (parity), SSE when the provider is configured with ``stream`` (⚑ UI deltas). Pure functions
:func:`build_responses_body`, :func:`parse_responses_body` and :class:`ResponsesStream` hold the wire mapping so
cassettes and tests can use them without the network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from ._catalog import ResolvedProvider
from ._errors import RequestSite, classify_responses_failure_code, empty_response, invalid_response, transport_failure
from ._openai_client import make_openai_client, openai_request
from ._transport_base import HTTPTransport, lower_tools
from ._wire import DeltaListener, SSEEvent, compact_json, emit, normalize_arguments, strip_citation_markers
from .base import (
    AssistantBlocks,
    Block,
    CacheUsage,
    CitationsBlock,
    ProviderTransportError,
    ReasoningTextBlock,
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

__all__ = [
    "OpenAIResponsesProvider",
    "build_responses_body",
    "parse_responses_body",
    "ResponsesStream",
    "MAX_STREAM_ITEMS",
]

#: More collected ``output_item.done`` items than this is a protocol violation (turn-loop spec §2.5).
MAX_STREAM_ITEMS = 128
_CONTEXT = "openai responses request"


def _user_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": parts}


def _input_items(req: TurnRequest) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    for msg in req.conversation:
        if isinstance(msg, UserText):
            items.append(_user_message([{"type": "input_text", "text": msg.text}]))
        elif isinstance(msg, UserBlocks):
            parts = [{"type": "input_text", "text": b.text} for b in msg.blocks if b.text]
            if parts:
                items.append(_user_message(parts))
        elif isinstance(msg, UserImage):
            parts = [{"type": "input_text", "text": msg.prompt}] if msg.prompt else []
            parts.append({"type": "input_image", "image_url": f"data:{msg.media_type};base64,{msg.data_base64}"})
            items.append(_user_message(parts))
        elif isinstance(msg, AssistantBlocks):
            items.extend(_assistant_items(msg, kinds))
        elif isinstance(msg, UserToolResults):
            for r in msg.results:
                kind = "custom_tool_call_output" if kinds.get(r.tool_use_id) == "custom" else "function_call_output"
                items.append({"type": kind, "call_id": r.tool_use_id, "output": r.content})
    return items


def _assistant_items(msg: AssistantBlocks, kinds: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []

    def flush() -> None:
        if texts:
            out.append({"type": "message", "role": "assistant", "content": list(texts)})
            texts.clear()

    for b in msg.blocks:
        if isinstance(b, TextBlock):
            if b.text:
                texts.append({"type": "output_text", "text": b.text})
            continue
        flush()
        if isinstance(b, ToolUseBlock):
            kinds[b.id] = b.kind
            if b.kind == "custom":
                out.append(
                    {
                        "type": "custom_tool_call",
                        "call_id": b.id,
                        "name": b.name,
                        "input": b.input if isinstance(b.input, str) else compact_json(b.input),
                    }
                )
            else:
                # re-serialized as key-sorted compact JSON of the normalized input (`_raw` included, turn-loop spec §1.6)
                out.append(
                    {"type": "function_call", "call_id": b.id, "name": b.name, "arguments": compact_json(b.input)}
                )
        elif isinstance(b, ReasoningTextBlock):
            out.append({"type": "reasoning", "content": [{"type": "reasoning_text", "text": b.text}]})
        # thinking, redacted thinking and citations are not sent (turn-loop spec §2.5)
    flush()
    return out


def build_responses_body(req: TurnRequest, resolved: ResolvedProvider, *, stream: bool = False) -> dict[str, Any]:
    """The Responses JSON body for ``req`` (turn-loop spec §2.5): ``model``, ``instructions``, ``store: false``, ``input``, lowered
    ``tools`` with ``tool_choice: "auto"`` and ``parallel_tool_calls: false`` (only with tools),
    ``prompt_cache_key``, ``reasoning`` (only with an effort), ``max_output_tokens``, ``stream`` when streaming.

    Raises:
        ToolSchemaRejected: strict preflight failure (turn-loop spec §3.3).
    """
    from ._wire import system_text

    body: dict[str, Any] = {"model": resolved.ref.model}
    instructions = system_text(req.prompt_frame)
    if instructions:
        body["instructions"] = instructions
    body["store"] = False
    body["input"] = _input_items(req)
    if req.tools:
        tools = []
        for spec, lowered in lower_tools(req.tools, resolved.schema_contract):
            if spec.freeform_grammar is not None:
                tools.append(
                    {
                        "type": "custom",
                        "name": spec.name,
                        "description": spec.description,
                        "format": spec.freeform_grammar,
                    }
                )
                continue
            tool: dict[str, Any] = {
                "type": "function",
                "name": spec.name,
                "description": spec.description,
                "parameters": lowered,
            }
            if resolved.send_strict_flag:
                tool["strict"] = resolved.schema_contract == "strict"
            tools.append(tool)
        body.update(tools=tools, tool_choice="auto", parallel_tool_calls=False)
    if resolved.send_prompt_cache_key and req.continuation_scope_id:
        body["prompt_cache_key"] = req.continuation_scope_id
    if resolved.reasoning_effort:
        body["reasoning"] = {"effort": resolved.reasoning_effort}
    body["max_output_tokens"] = req.max_output_tokens or resolved.max_output_tokens
    if req.response_format:
        fmt = req.response_format
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": fmt.get("name", "response"),
                "schema": fmt.get("schema", {}),
                "strict": bool(fmt.get("strict", False)),
            }
        }
    if stream:
        body["stream"] = True
    return body


def _usage(data: Mapping[str, Any]) -> tuple[int, int, int]:
    usage = raw_usage if isinstance(raw_usage := data.get("usage"), Mapping) else {}
    details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else 0
    return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0), int(cached or 0)


def _message_blocks(item: Mapping[str, Any]) -> list[Block]:
    out: list[Block] = []
    for part in item.get("content") or []:
        if not isinstance(part, Mapping) or part.get("type") not in ("output_text", "text", "input_text"):
            continue
        out.append(TextBlock(strip_citation_markers(str(part.get("text") or ""))))
        cites = [
            {"url": a.get("url"), "title": a.get("title")}
            for a in part.get("annotations") or []
            if isinstance(a, Mapping) and a.get("type") == "url_citation"
        ]
        if cites:
            out.append(CitationsBlock(tuple(cites)))
    return out


def _item_blocks(item: Any, context: str) -> list[Block]:
    if not isinstance(item, Mapping):
        return []
    kind = item.get("type")
    if kind == "message":
        return _message_blocks(item)
    if kind in ("function_call", "custom_tool_call"):
        call_id, name = item.get("call_id") or item.get("id"), item.get("name")
        if not call_id or not name:
            raise invalid_response(context, f"{kind} item without call id or name")
        if kind == "custom_tool_call":
            raw = item.get("input")
            return [
                ToolUseBlock(str(call_id), str(name), raw if isinstance(raw, str) else compact_json(raw), kind="custom")
            ]
        return [ToolUseBlock(str(call_id), str(name), normalize_arguments(item.get("arguments")))]
    if kind == "reasoning":
        return [
            ReasoningTextBlock(str(p.get("text") or ""))
            for p in item.get("content") or []
            if isinstance(p, Mapping) and p.get("type") == "reasoning_text"
        ]
    return []  # other item types are ignored (but count as non-empty output)


def parse_responses_body(data: Any, *, context: str = _CONTEXT, output: list[Any] | None = None) -> TurnResponse:
    """A Responses JSON object → :class:`TurnResponse` (turn-loop spec §2.5).

    Args:
        data: The response object (``{output, usage, status, incomplete_details, id}``).
        output: Items to use instead of ``data["output"]`` (SSE: the collected items).

    Raises:
        ProviderTransportError: ``empty_response`` for zero output items (usage kept); ``invalid_response``
            for a non-object body, a call without id/name, or items none of which maps to a block.
    """
    if not isinstance(data, Mapping):
        raise invalid_response(context, "response body is not a JSON object")
    items = output if output is not None else data.get("output")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise invalid_response(context, "response output is not an array")
    inp, out, cached = _usage(data)
    if not items:
        raise empty_response(context, TokenUsage(inp, out))
    blocks: list[Block] = []
    for item in items:
        blocks.extend(_item_blocks(item, context))
    if not blocks:
        raise invalid_response(
            context, "response has output items but none maps to a block", token_usage=TokenUsage(inp, out)
        )
    details = raw_details if isinstance(raw_details := data.get("incomplete_details"), Mapping) else {}
    stop = details.get("reason") or data.get("status") or data.get("stop_reason")
    return TurnResponse(
        blocks=tuple(blocks),
        stop_reason=stop,
        input_tokens=inp,
        output_tokens=out,
        cache_usage=CacheUsage(read_input_tokens=cached),
        provider_message_id=data.get("id"),
    )


class ResponsesStream:
    """Assembles a Responses SSE stream into a :class:`TurnResponse` (turn-loop spec §2.5 SSE rules)."""

    def __init__(
        self, listener: DeltaListener | None = None, *, provider: str = "", model_ref: str = "", url: str | None = None
    ):
        self.listener = listener
        self.items: list[Any] = []
        self._diag = RequestSite(provider=provider, model_ref=model_ref, url=url)

    def _fail(self, code: str | None, message: str | None) -> ProviderTransportError:
        kind, _ = classify_responses_failure_code(code)
        detail = f"stream failed ({code or 'no code'})"
        return transport_failure(kind, _CONTEXT, detail, stage="streaming_response_body", code=code, **self._diag)

    async def consume(self, events: AsyncIterator[SSEEvent]) -> TurnResponse:
        """Read events until a terminal one.

        Raises:
            ProviderTransportError: classified ``response.failed``/``error``; ``contract_error`` for an
                incomplete response not caused by the output limit; ``invalid_response`` for malformed
                events, too many items, or ``[DONE]``/EOF before a terminal event.
        """
        async for ev in events:
            if ev.data.strip() == "[DONE]":
                break
            try:
                data = ev.json()
            except ValueError:
                raise invalid_response(_CONTEXT, "stream event is not valid JSON", **self._diag) from None
            kind = data.get("type") if isinstance(data, Mapping) else None
            result = self._event(kind, data)
            if result is not None:
                return result
        raise invalid_response(_CONTEXT, "stream ended before a terminal event", **self._diag)

    def _event(self, kind: str | None, data: Any) -> TurnResponse | None:
        if kind == "response.output_text.delta":
            emit(self.listener, "text_delta", {"text": data.get("delta", "")})
        elif kind == "response.function_call_arguments.delta":
            emit(
                self.listener,
                "tool_call_delta",
                {
                    "index": data.get("output_index"),
                    "id": data.get("item_id"),
                    "name": None,
                    "arguments": data.get("delta", ""),
                },
            )
        elif kind == "response.output_item.done":
            self.items.append(data.get("item"))
            if len(self.items) > MAX_STREAM_ITEMS:
                raise invalid_response(_CONTEXT, f"more than {MAX_STREAM_ITEMS} output items", **self._diag)
        elif kind == "response.completed":
            resp = data.get("response") or {}
            output = resp.get("output") if isinstance(resp, Mapping) else None
            return parse_responses_body(resp, output=output if output else self.items)
        elif kind == "response.failed":
            err = ((data.get("response") or {}).get("error") or {}) if isinstance(data, Mapping) else {}
            raise self._fail(err.get("code"), err.get("message"))
        elif kind == "error":
            err = raw_err if isinstance(raw_err := data.get("error"), Mapping) else data
            raise self._fail(err.get("code"), err.get("message"))
        elif kind == "response.incomplete":
            resp = data.get("response") or {}
            reason = (resp.get("incomplete_details") or {}).get("reason")
            output = resp.get("output") or self.items
            if reason == "max_output_tokens" and output:
                return parse_responses_body(resp, output=output)
            raise transport_failure(
                "contract_error",
                _CONTEXT,
                f"response incomplete ({reason or 'unknown'})",
                stage="streaming_response_body",
                **self._diag,
            )
        return None


class OpenAIResponsesProvider(HTTPTransport):
    """A :class:`~holon_nb.providers.base.Provider` speaking OpenAI Responses through ``openai.AsyncOpenAI``.

    Args:
        resolved: The route configuration (``resolved.stream`` selects SSE).
        client: An SDK client to use instead of building one (tests, shared pools).
        environ / delta_listener: see :class:`~holon_nb.providers._transport_base.HTTPTransport`.
    """

    transport = "openai_responses"

    def __init__(
        self,
        resolved: ResolvedProvider,
        *,
        client: Any = None,
        environ: Mapping[str, str] | None = None,
        delta_listener: DeltaListener | None = None,
    ):
        super().__init__(resolved, environ=environ, delta_listener=delta_listener)
        self.url = f"{resolved.base_url}/responses"
        self._client = client or make_openai_client(resolved, resolved.base_url)

    def supports_freeform_grammar_tools(self) -> bool:
        """Responses accepts custom (freeform grammar) tools."""
        return True

    def build_request_body(self, req: TurnRequest) -> dict[str, Any]:
        """The JSON body this transport sends for ``req``."""
        return build_responses_body(req, self.resolved, stream=self.resolved.stream)

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """One attempt (turn-loop spec §2.5).

        Raises:
            ProviderTransportError: classified failure (turn-loop spec §2.4); :class:`~holon_nb.providers._errors.ToolSchemaRejected`
                for a rejected tool schema.
        """
        body = self.build_request_body(req)
        stream = ResponsesStream(
            self.delta_listener, provider=self.provider_name, model_ref=self.route_ref, url=self.url
        )
        return await openai_request(
            self._client.responses.with_streaming_response.create,
            body,
            resolved=self.resolved,
            context=_CONTEXT,
            url=self.url,
            primary=("model", "input", "stream"),
            on_json=parse_responses_body,
            on_sse=stream.consume,
            tool_names=tuple(t.name for t in req.tools),
            scrubber=self.scrubber,
        )

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.close()
