"""Transport ``anthropic_messages``: Anthropic Messages through the official ``anthropic`` SDK, always streamed as
SSE (turn-loop spec §2.8), for Anthropic and Anthropic-compatible endpoints (DeepSeek, Z.ai, DashScope, …).

``POST {base_url}/v1/messages`` with ``anthropic-version: 2023-06-01`` and ``authorization: Bearer <token>``
(⚑ ``x-api-key`` when only ``ANTHROPIC_API_KEY`` is set). Tools carry the **source** schema. The SDK client runs
with ``max_retries=0``. :func:`build_messages_body` and :class:`AnthropicStream` are pure (no network).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anthropic
import anyio

from ._catalog import ResolvedProvider
from ._errors import (
    RequestSite,
    classify_exception,
    empty_response,
    fill_diagnostics,
    invalid_response,
    status_error,
    transport_failure,
)
from ._transport_base import HTTPTransport
from ._wire import DeltaListener, SSEEvent, compact_json, emit, iter_sse, looks_like_text_tool_call, normalize_arguments
from .base import (
    AssistantBlocks,
    Block,
    CacheUsage,
    ProviderTransportError,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
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
    "AnthropicMessagesProvider",
    "build_messages_body",
    "parse_messages_body",
    "AnthropicStream",
    "ANTHROPIC_VERSION",
    "thinking_budget",
]

#: The ``anthropic-version`` header value (turn-loop spec §2.8).
ANTHROPIC_VERSION = "2023-06-01"
_CONTEXT = "anthropic messages request"
_STRUCTURED_PREFIX = "structured_response_"
_EFFORT_RATIO = {"low": 0.10, "medium": 0.25, "high": 0.50, "xhigh": 0.80, "max": 0.80}
_log = logging.getLogger(__name__)


def thinking_budget(max_tokens: int, effort: str | None) -> int | None:
    """``round(max_tokens × r)`` clamped to ``[1024, max_tokens − 1]`` (r: low .10, medium .25, high .50,
    xhigh/max .80, unknown .25); None when no effort is configured or the budget cannot reach 1024 (turn-loop spec §2.8)."""
    if not effort or max_tokens - 1 < 1024:
        return None
    budget = round(max_tokens * _EFFORT_RATIO.get(effort, 0.25))
    return min(max(budget, 1024), max_tokens - 1)


def _assistant_content(msg: AssistantBlocks) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in msg.blocks:
        if isinstance(b, TextBlock):
            if b.text:
                out.append({"type": "text", "text": b.text})
        elif isinstance(b, ToolUseBlock):
            out.append(
                {
                    "type": "tool_use",
                    "id": b.id,
                    "name": b.name,
                    "input": b.input if isinstance(b.input, dict) else {"_raw": b.input},
                }
            )
        elif isinstance(b, ThinkingBlock):
            block = {"type": "thinking", "thinking": b.text}
            if b.signature:
                block["signature"] = b.signature
            out.append(block)
        elif isinstance(b, RedactedThinkingBlock):
            out.append({"type": "redacted_thinking", "data": b.data})
        # citations and reasoning text are not sent
    return out


def _messages(req: TurnRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(role: str, content: list[dict[str, Any]]) -> None:
        if not content:
            return  # empty messages are skipped
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)  # consecutive same-role messages merge
        else:
            out.append({"role": role, "content": list(content)})

    for msg in req.conversation:
        if isinstance(msg, UserText):
            add("user", [{"type": "text", "text": msg.text}] if msg.text else [])
        elif isinstance(msg, UserBlocks):
            add("user", [{"type": "text", "text": b.text} for b in msg.blocks if b.text])
        elif isinstance(msg, UserImage):
            parts = [{"type": "text", "text": msg.prompt}] if msg.prompt else []
            add(
                "user",
                parts
                + [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": msg.media_type, "data": msg.data_base64},
                    }
                ],
            )
        elif isinstance(msg, AssistantBlocks):
            add("assistant", _assistant_content(msg))
        elif isinstance(msg, UserToolResults):
            add(
                "user",
                [
                    {"type": "tool_result", "tool_use_id": r.tool_use_id, "content": r.content, "is_error": r.is_error}
                    for r in msg.results
                ],
            )
    # one rolling cache breakpoint on the newest cacheable block
    for message in reversed(out):
        blocks = [b for b in message["content"] if b["type"] not in ("thinking", "redacted_thinking")]
        if blocks:
            blocks[-1]["cache_control"] = {"type": "ephemeral"}
            break
    return out


def _system(req: TurnRequest) -> str | list[dict[str, Any]] | None:
    frame = req.prompt_frame
    if frame.system_blocks:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": b.text} for b in frame.system_blocks if b.text]
        marked = [i for i, b in enumerate(b for b in frame.system_blocks if b.text) if b.cache_breakpoint]
        for i in marked[-2:]:  # at most two system breakpoints (four in all)
            blocks[i]["cache_control"] = {"type": "ephemeral"}
        return blocks or None
    return frame.system_prompt or None


def build_messages_body(req: TurnRequest, resolved: ResolvedProvider) -> dict[str, Any]:
    """The Messages JSON body (turn-loop spec §2.8): ``model``, ``max_tokens``, ``stream: true``, ``system``, ``messages``,
    ``tools`` with the **source** ``input_schema``, ``tool_choice`` only for structured output, ``thinking``
    (or ``output_config`` for route ``deepseek``) only with a reasoning effort."""
    max_tokens = req.max_output_tokens or resolved.max_output_tokens
    body: dict[str, Any] = {"model": resolved.ref.model, "max_tokens": max_tokens, "stream": True}
    system = _system(req)
    if system:
        body["system"] = system
    body["messages"] = _messages(req)
    tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in req.tools]
    if req.response_format:
        name = _STRUCTURED_PREFIX + str(req.response_format.get("name", "response"))
        tools.append(
            {
                "name": name,
                "description": "Return the structured response.",
                "input_schema": req.response_format.get("schema", {"type": "object"}),
            }
        )
        body["tool_choice"] = {"type": "tool", "name": name}
    if tools:
        body["tools"] = tools
    if resolved.reasoning_effort:
        if resolved.ref.provider == "deepseek":
            body["output_config"] = {"effort": resolved.reasoning_effort}
        else:
            budget = thinking_budget(max_tokens, resolved.reasoning_effort)
            if budget is not None:
                body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return body


def _content_blocks(content: list[Any], context: str, usage: TokenUsage) -> list[Block]:
    blocks: list[Block] = []
    for item in content:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "text":
            blocks.append(TextBlock(str(item.get("text") or "")))
        elif kind == "tool_use":
            if not item.get("id") or not item.get("name"):
                raise invalid_response(context, "tool_use block without id or name", token_usage=usage)
            name, data = str(item["name"]), item.get("input")
            data = data if isinstance(data, dict) else normalize_arguments(data)
            if name.startswith(_STRUCTURED_PREFIX):
                blocks.append(TextBlock(compact_json(data)))  # structured output comes back as text
            else:
                blocks.append(ToolUseBlock(str(item["id"]), name, data))
        elif kind == "thinking":
            blocks.append(ThinkingBlock(str(item.get("thinking") or ""), str(item.get("signature") or "")))
        elif kind == "redacted_thinking":
            blocks.append(RedactedThinkingBlock(str(item.get("data") or "")))
        elif kind == "server_tool_use":
            continue
        elif isinstance(kind, str) and kind.endswith("tool_result"):
            blocks.append(TextBlock(compact_json(item.get("content"))))
        else:
            _log.warning("anthropic messages: dropped unsupported content block type %r", kind)
    return blocks


def parse_messages_body(data: Any, *, context: str = _CONTEXT) -> TurnResponse:
    """A Messages JSON object (``{id, content, stop_reason, usage}``) → :class:`TurnResponse` (turn-loop spec §2.8).

    Raises:
        ProviderTransportError: ``empty_response`` for no content at all (usage kept); ``invalid_response`` for
            nothing mappable, a tool_use without id/name, or ``stop_reason: tool_use`` with call markup in text
            but no native tool_use block.
    """
    if not isinstance(data, Mapping):
        raise invalid_response(context, "response body is not a JSON object")
    usage = raw_usage if isinstance(raw_usage := data.get("usage"), Mapping) else {}
    tokens = TokenUsage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))
    content = data.get("content") or []
    if not isinstance(content, list):
        raise invalid_response(context, "message content is not an array", token_usage=tokens)
    if not content:
        raise empty_response(context, tokens)
    blocks = _content_blocks(content, context, tokens)
    if not blocks:
        raise invalid_response(context, "message has content but no mappable block", token_usage=tokens)
    stop = data.get("stop_reason")
    if (
        stop == "tool_use"
        and not any(isinstance(b, ToolUseBlock) for b in blocks)
        and looks_like_text_tool_call(b.text for b in blocks if isinstance(b, TextBlock))
    ):
        raise invalid_response(
            context, "stop_reason tool_use with tool-call markup in text but no tool_use block", token_usage=tokens
        )
    cache = CacheUsage(
        int(usage.get("cache_read_input_tokens") or 0), int(usage.get("cache_creation_input_tokens") or 0)
    )
    return TurnResponse(
        blocks=tuple(blocks),
        stop_reason=stop,
        input_tokens=tokens.input_tokens,
        output_tokens=tokens.output_tokens,
        cache_usage=cache,
        provider_message_id=data.get("id"),
    )


class AnthropicStream:
    """Assembles a Messages SSE stream into the JSON message shape, then :func:`parse_messages_body` (turn-loop spec §2.8)."""

    def __init__(
        self, listener: DeltaListener | None = None, *, provider: str = "", model_ref: str = "", url: str | None = None
    ):
        self.listener = listener
        self._diag = RequestSite(provider=provider, model_ref=model_ref, url=url)
        self.started = self.stopped = False
        self.message: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.fragments: dict[int, list[str]] = {}
        self.stop_reason: str | None = None

    def _merge_usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            self.usage.update({k: v for k, v in usage.items() if v is not None})  # latest non-null wins

    def feed(self, name: str | None, data: Any) -> None:
        """Apply one event (``name`` from the ``event:`` line, else ``data["type"]``).

        Raises:
            ProviderTransportError: ``server_error``/retryable for an ``error`` event (either payload form).
        """
        kind = name or (data.get("type") if isinstance(data, Mapping) else None)
        if not isinstance(data, Mapping):
            data = {}
        if kind == "error":
            err = raw_err if isinstance(raw_err := data.get("error"), Mapping) else data
            label = err.get("type") or err.get("code") or "error"
            raise transport_failure(
                "server_error", _CONTEXT, f"stream error event ({label})", stage="streaming_response_body", **self._diag
            )
        if kind == "message_start":
            self.started = True
            self.message = dict(data.get("message") or {})
            self._merge_usage(self.message.get("usage"))
            for i, block in enumerate(self.message.get("content") or []):
                self.blocks[i] = dict(block)
        elif kind == "content_block_start":
            index = int(data.get("index", len(self.blocks)))
            self.blocks[index] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(int(data.get("index", 0)), data.get("delta") or {})
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.stop_reason = delta["stop_reason"]
            self._merge_usage(data.get("usage"))
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: Mapping[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = (block.get("text") or "") + str(delta.get("text") or "")
            emit(self.listener, "text_delta", {"text": delta.get("text") or ""})
        elif kind == "input_json_delta":
            self.fragments.setdefault(index, []).append(str(delta.get("partial_json") or ""))
            emit(
                self.listener,
                "tool_call_delta",
                {
                    "index": index,
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "arguments": delta.get("partial_json") or "",
                },
            )
        elif kind == "thinking_delta":
            block["thinking"] = (block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = (block.get("signature") or "") + str(delta.get("signature") or "")

    def assembled(self) -> dict[str, Any]:
        """The JSON message equivalent of what was fed (tool inputs from concatenated ``input_json_delta``;
        ⚑ unparseable fragments become ``{"_raw": "<fragments>"}``)."""
        content = []
        for index in sorted(self.blocks):
            block = dict(self.blocks[index])
            if block.get("type") == "tool_use" and index in self.fragments:
                joined = "".join(self.fragments[index])
                block["input"] = normalize_arguments(joined) if joined.strip() else (block.get("input") or {})
            content.append(block)
        return {
            "id": self.message.get("id"),
            "content": content,
            "usage": self.usage,
            "stop_reason": self.stop_reason or self.message.get("stop_reason"),
        }

    async def consume(self, events: AsyncIterator[SSEEvent]) -> TurnResponse:
        """Read events to ``message_stop``.

        Raises:
            ProviderTransportError: ``invalid_response`` for malformed data or a missing ``message_start`` /
                ``message_stop``; ``server_error`` for an ``error`` event.
        """
        async for ev in events:
            if not ev.data.strip():
                continue
            try:
                data = ev.json()
            except ValueError:
                raise invalid_response(_CONTEXT, "stream event is not valid JSON", **self._diag) from None
            self.feed(ev.event, data)
            if self.stopped:
                break
        if not self.started or not self.stopped:
            missing = "message_start" if not self.started else "message_stop"
            usage = TokenUsage(int(self.usage.get("input_tokens") or 0), int(self.usage.get("output_tokens") or 0))
            raise invalid_response(_CONTEXT, f"stream ended without {missing}", token_usage=usage, **self._diag)
        return parse_messages_body(self.assembled())


def _make_client(resolved: ResolvedProvider, base_url: str) -> anthropic.AsyncAnthropic:
    headers: dict[str, Any] = {"anthropic-version": ANTHROPIC_VERSION}
    # None is the SDK's default for either credential (it then reads its environment variable)
    api_key: str | None = None
    auth_token: str | None = None
    if resolved.auth_kind == "x_api_key" and resolved.api_key:
        headers.update({"x-api-key": resolved.api_key, "Authorization": anthropic.Omit()})
        api_key = resolved.api_key
    elif resolved.api_key:
        auth_token = resolved.api_key
    else:  # keyless (local Anthropic-compatible server): explicit empty credential, header omitted
        headers["Authorization"] = anthropic.Omit()
        auth_token = ""
    return anthropic.AsyncAnthropic(
        api_key=api_key,
        auth_token=auth_token,
        default_headers=headers,
        base_url=base_url,
        max_retries=0,
        timeout=resolved.http_timeout_s,
    )


class AnthropicMessagesProvider(HTTPTransport):
    """A :class:`~holon_nb.providers.base.Provider` speaking Anthropic Messages (SSE) through
    ``anthropic.AsyncAnthropic``.

    Args:
        resolved: The route configuration.
        client: An SDK client to use instead of building one.
        environ / delta_listener: see :class:`~holon_nb.providers._transport_base.HTTPTransport`.
    """

    transport = "anthropic_messages"

    def __init__(
        self,
        resolved: ResolvedProvider,
        *,
        client: Any = None,
        environ: Mapping[str, str] | None = None,
        delta_listener: DeltaListener | None = None,
    ):
        super().__init__(resolved, environ=environ, delta_listener=delta_listener)
        self.url = f"{resolved.base_url}/v1/messages"
        self._client = client or _make_client(resolved, resolved.base_url)

    def build_request_body(self, req: TurnRequest) -> dict[str, Any]:
        """The JSON body this transport sends for ``req``."""
        return build_messages_body(req, self.resolved)

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """One attempt (turn-loop spec §2.8): SSE (or a JSON body) parsed into a :class:`TurnResponse`.

        Raises:
            ProviderTransportError: classified failure (turn-loop spec §2.4); ``timeout`` when the stream stays silent
                longer than ``HOLON_PROVIDER_STREAM_IDLE_TIMEOUT_MS``.
        """
        body = self.build_request_body(req)
        primary = ("model", "max_tokens", "messages", "stream")
        kwargs = {k: body[k] for k in primary}
        extra = {k: v for k, v in body.items() if k not in primary}
        diag = RequestSite(provider=self.provider_name, model_ref=self.route_ref, url=self.url)
        stage = "send"
        try:
            async with self._client.messages.with_streaming_response.create(**kwargs, extra_body=extra or None) as resp:
                headers = resp.headers
                request_id = headers.get("request-id") or headers.get("x-request-id")
                if "application/json" in headers.get("content-type", ""):
                    stage = "response_body"
                    with anyio.fail_after(self.resolved.body_timeout_s):
                        raw = await resp.read()
                    try:
                        data = json.loads(raw)
                    except ValueError:
                        raise invalid_response(_CONTEXT, "response body is not valid JSON", **diag) from None
                    if isinstance(data, Mapping) and data.get("type") == "error":
                        AnthropicStream(**diag).feed("error", data)
                    result = parse_messages_body(data)
                else:
                    stage = "streaming_response_body"
                    stream = AnthropicStream(self.delta_listener, **diag)
                    events = iter_sse(resp.iter_bytes(), self.resolved.stream_idle_timeout_ms / 1000)
                    try:
                        result = await stream.consume(events)
                    finally:
                        await events.aclose()
        except anthropic.APIStatusError as exc:
            raise status_error(
                _CONTEXT,
                exc.status_code,
                _body_text(exc),
                tool_names=tuple(t.name for t in req.tools),
                scrubber=self.scrubber,
                retry_after=exc.response.headers.get("retry-after"),
                **diag,
            ) from None
        except ProviderTransportError as exc:
            raise fill_diagnostics(exc, stage, diag)  # noqa: B904 - the same exception, re-raised
        except Exception as exc:  # noqa: BLE001 - SDK/HTTP failures are classified by type and message chain
            raise classify_exception(exc, stage=stage, context=_CONTEXT, **diag) from None
        return dataclasses.replace(result, provider_request_id=request_id)

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.close()


def _body_text(exc: anthropic.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # noqa: BLE001 - an unread stream body: classify by status only
        return ""
