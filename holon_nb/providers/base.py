"""The provider boundary: requests, responses, blocks, errors and the ``Provider`` protocol.

Shapes follow turn-loop spec §2.1. Every value is a small frozen dataclass
with a ``type`` tag in its dict form (``to_dict`` / ``from_dict``), so the
turn loop, the transports, the scripted provider and cassettes share one
vocabulary and a request or response round-trips through JSON exactly
(cassettes, turn-loop spec §4.3). No Jupyter import here.

Example::

    req = TurnRequest(conversation=[UserText("hi")], tools=[])
    resp = await provider.complete_turn(req)
    [b.text for b in resp.blocks if isinstance(b, TextBlock)]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..tools._errors import HolonNBError

__all__ = [
    "TextBlock",
    "CitationsBlock",
    "ToolUseBlock",
    "ThinkingBlock",
    "ReasoningTextBlock",
    "RedactedThinkingBlock",
    "Block",
    "ToolResultBlock",
    "UserText",
    "UserBlocks",
    "UserImage",
    "AssistantBlocks",
    "UserToolResults",
    "Message",
    "ContextBlock",
    "PromptFrame",
    "ProviderToolSpec",
    "TurnRequest",
    "CacheUsage",
    "TokenUsage",
    "TurnResponse",
    "ProviderTransportError",
    "Provider",
    "MAX_OUTPUT_STOP_REASONS",
    "DISPOSITIONS",
    "FAILURE_KINDS",
    "block_from_dict",
    "message_from_dict",
    "to_dict",
]

#: Stop reasons that mean the model ran out of output budget (turn-loop spec §1.8.2; Chat ``length`` and Gemini ``MAX_TOKENS`` ⚑).
MAX_OUTPUT_STOP_REASONS = frozenset(
    {"max_tokens", "max_output_tokens", "model_context_window_exceeded", "length", "MAX_TOKENS"}
)
#: Failure kinds of the classification table (turn-loop spec §2.4).
FAILURE_KINDS = frozenset(
    {
        "rate_limited",
        "auth_error",
        "server_error",
        "contract_error",
        "unknown",
        "timeout",
        "connection",
        "empty_response",
        "invalid_response",
        "unsupported_transport",
    }
)
#: ``retryable`` or ``fail_fast`` (turn-loop spec §2.4).
DISPOSITIONS = frozenset({"retryable", "fail_fast"})


# ---------------------------------------------------------------- blocks (assistant content)


@dataclass(frozen=True)
class TextBlock:
    """Assistant text."""

    text: str
    type: str = field(default="text", init=False)


@dataclass(frozen=True)
class CitationsBlock:
    """Citations ``[{url, title}]`` attached to the text."""

    citations: tuple[dict[str, Any], ...] = ()
    type: str = field(default="citations", init=False)


@dataclass(frozen=True)
class ToolUseBlock:
    """One tool call: ``input`` is the normalized argument object (``{"_raw": …}`` when unparseable, turn-loop spec §1.6)
    or, for a ``custom`` (freeform) call, the raw string."""

    id: str
    name: str
    input: Any
    kind: str = "function"
    type: str = field(default="tool_use", init=False)


@dataclass(frozen=True)
class ThinkingBlock:
    """Opaque model thinking; replayed verbatim (never shown as assistant text)."""

    text: str
    signature: str = ""
    type: str = field(default="thinking", init=False)


@dataclass(frozen=True)
class ReasoningTextBlock:
    """Reasoning text (Responses); never shown as assistant text."""

    text: str
    type: str = field(default="reasoning_text", init=False)


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Redacted thinking payload; replayed verbatim."""

    data: str
    type: str = field(default="redacted_thinking", init=False)


Block = TextBlock | CitationsBlock | ToolUseBlock | ThinkingBlock | ReasoningTextBlock | RedactedThinkingBlock


@dataclass(frozen=True)
class ToolResultBlock:
    """The answer to one tool call: ``content`` is the receipt string sent to the model (turn-loop spec §1.7)."""

    tool_use_id: str
    content: str
    is_error: bool = False
    error: dict[str, Any] | None = None
    type: str = field(default="tool_result", init=False)


# ---------------------------------------------------------------- messages


@dataclass(frozen=True)
class UserText:
    """A user (or runtime follow-up) text message."""

    text: str
    type: str = field(default="user_text", init=False)


@dataclass(frozen=True)
class ContextBlock:
    """One prompt block: ``stability`` is ``stable``, ``agent_scoped`` or ``turn_scoped`` (turn-loop spec §1.2)."""

    text: str
    stability: str = "turn_scoped"
    cache_breakpoint: bool = False
    type: str = field(default="context_block", init=False)


@dataclass(frozen=True)
class UserBlocks:
    """The round-1 user message made of context blocks."""

    blocks: tuple[ContextBlock, ...]
    type: str = field(default="user_blocks", init=False)


@dataclass(frozen=True)
class UserImage:
    """An image the user shows the model (base64 data)."""

    prompt: str
    media_type: str
    data_base64: str
    type: str = field(default="user_image", init=False)


@dataclass(frozen=True)
class AssistantBlocks:
    """One assistant round, as the provider returned it."""

    blocks: tuple[Block, ...]
    type: str = field(default="assistant_blocks", init=False)


@dataclass(frozen=True)
class UserToolResults:
    """The results of one round's calls, in call order (exactly one per call, turn-loop spec §1.5)."""

    results: tuple[ToolResultBlock, ...]
    type: str = field(default="user_tool_results", init=False)


Message = UserText | UserBlocks | UserImage | AssistantBlocks | UserToolResults


# ---------------------------------------------------------------- request / response


@dataclass(frozen=True)
class PromptFrame:
    """System prompt and structured blocks (turn-loop spec §1.2)."""

    system_prompt: str = ""
    system_blocks: tuple[ContextBlock, ...] = ()
    context_blocks: tuple[ContextBlock, ...] = ()


@dataclass(frozen=True)
class ProviderToolSpec:
    """A tool as offered to a provider: the **source** schema (each transport lowers it, turn-loop spec §3)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    freeform_grammar: dict[str, Any] | None = None


@dataclass(frozen=True)
class TurnRequest:
    """One provider request (turn-loop spec §2.1). ``max_output_tokens`` None means the provider's default."""

    conversation: tuple[Message, ...]
    tools: tuple[ProviderToolSpec, ...] = ()
    prompt_frame: PromptFrame = PromptFrame()
    continuation_scope_id: str = ""
    max_output_tokens: int | None = None
    native_web_search: bool = False
    response_format: dict[str, Any] | None = None


@dataclass(frozen=True)
class CacheUsage:
    """Prompt-cache token counts."""

    read_input_tokens: int = 0
    creation_input_tokens: int = 0


@dataclass(frozen=True)
class TokenUsage:
    """Token counts of one attempt, round or turn."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)

    def to_dict(self) -> dict[str, int]:
        """``{input_tokens, output_tokens, total_tokens}``."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class TurnResponse:
    """One successful provider response (turn-loop spec §2.1)."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_usage: CacheUsage = CacheUsage()
    provider_message_id: str | None = None
    provider_request_id: str | None = None
    request_diagnostics: dict[str, Any] | None = None

    @property
    def usage(self) -> TokenUsage:
        """The response's token usage."""
        return TokenUsage(self.input_tokens, self.output_tokens)

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls, in emitted order."""
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]

    @property
    def text(self) -> str:
        """Non-blank text blocks joined by a blank line (turn-loop spec §1.3)."""
        return "\n\n".join(b.text for b in self.blocks if isinstance(b, TextBlock) and b.text.strip())


class ProviderTransportError(HolonNBError):
    """A classified provider failure (turn-loop spec §2.4).

    Attributes:
        kind: One of :data:`FAILURE_KINDS`.
        disposition: ``retryable`` or ``fail_fast``.
        status: HTTP status, if any.
        code: A typed code kept on the error (``context_length_exceeded``, …).
        diagnostics: ``{stage, provider, model_ref, url, status, source_chain, …}`` (no secrets, no body).
        token_usage: Usage the failed attempt reported (an empty response still costs tokens).
        message: One line for people; never the response body.
        tool_name: For a provider's schema rejection, the tool it names (turn-loop spec §3.6), else None.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        disposition: str | None = None,
        status: int | None = None,
        code: str | None = None,
        diagnostics: dict[str, Any] | None = None,
        token_usage: TokenUsage | None = None,
        tool_name: str | None = None,
    ):
        super().__init__(message)
        self.kind = kind if kind in FAILURE_KINDS else "unknown"
        self.disposition = disposition or (
            "retryable"
            if self.kind in {"rate_limited", "server_error", "timeout", "connection", "empty_response"}
            else "fail_fast"
        )
        self.status = status
        self.code = code
        self.diagnostics = diagnostics or {}
        self.token_usage = token_usage
        self.message = message
        self.tool_name = tool_name

    @property
    def retryable(self) -> bool:
        """True when the disposition is ``retryable``."""
        return self.disposition == "retryable"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (cassettes record classified errors)."""
        return {
            "type": "error",
            "kind": self.kind,
            "disposition": self.disposition,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "tool_name": self.tool_name,
            "token_usage": None if self.token_usage is None else self.token_usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProviderTransportError:
        """Inverse of :meth:`to_dict`."""
        usage = data.get("token_usage")
        return cls(
            data.get("kind", "unknown"),
            data.get("message", ""),
            disposition=data.get("disposition"),
            status=data.get("status"),
            code=data.get("code"),
            tool_name=data.get("tool_name"),
            token_usage=TokenUsage(usage["input_tokens"], usage["output_tokens"]) if usage else None,
        )


@runtime_checkable
class Provider(Protocol):
    """A model provider (turn-loop spec §2.1). Optional members have defaults in ``providers.base_provider``."""

    route_ref: str

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """One attempt; raises :class:`ProviderTransportError` on a classified failure."""
        ...


# ---------------------------------------------------------------- JSON form

_BLOCKS = {
    c.__dataclass_fields__["type"].default: c
    for c in (TextBlock, CitationsBlock, ToolUseBlock, ThinkingBlock, ReasoningTextBlock, RedactedThinkingBlock)
}


def to_dict(value: Any) -> Any:
    """JSON form of any value of this module (dataclasses keep their ``type`` tag; tuples become lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, TurnResponse):
            out["type"] = "response"
        return out
    if isinstance(value, (list, tuple)):
        return [to_dict(v) for v in value]
    if isinstance(value, dict):
        return {k: to_dict(v) for k, v in value.items()}
    return value


def _fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    return {k: v for k, v in data.items() if k in names}


def block_from_dict(data: dict[str, Any]) -> Block:
    """A block from its JSON form (``type`` tag required)."""
    cls = _BLOCKS.get(data.get("type", ""))
    if cls is None:
        raise ValueError(f"unknown block type {data.get('type')!r}")
    kwargs = _fields(cls, data)
    if cls is CitationsBlock:
        kwargs["citations"] = tuple(kwargs.get("citations") or ())
    return cls(**kwargs)


def message_from_dict(data: dict[str, Any]) -> Message:
    """A message from its JSON form (``type`` tag required)."""
    kind = data.get("type")
    if kind == "user_text":
        return UserText(data["text"])
    if kind == "user_blocks":
        return UserBlocks(tuple(ContextBlock(**_fields(ContextBlock, b)) for b in data["blocks"]))
    if kind == "user_image":
        return UserImage(data["prompt"], data["media_type"], data["data_base64"])
    if kind == "assistant_blocks":
        return AssistantBlocks(tuple(block_from_dict(b) for b in data["blocks"]))
    if kind == "user_tool_results":
        return UserToolResults(tuple(ToolResultBlock(**_fields(ToolResultBlock, r)) for r in data["results"]))
    raise ValueError(f"unknown message type {kind!r}")


def response_from_dict(data: dict[str, Any]) -> TurnResponse:
    """A response from its JSON form."""
    cache = data.get("cache_usage") or {}
    return TurnResponse(
        blocks=tuple(block_from_dict(b) for b in data.get("blocks", [])),
        stop_reason=data.get("stop_reason"),
        input_tokens=int(data.get("input_tokens", 0)),
        output_tokens=int(data.get("output_tokens", 0)),
        cache_usage=CacheUsage(**_fields(CacheUsage, cache)),
        provider_message_id=data.get("provider_message_id"),
        provider_request_id=data.get("provider_request_id"),
        request_diagnostics=data.get("request_diagnostics"),
    )


def request_from_dict(data: dict[str, Any]) -> TurnRequest:
    """A request from its JSON form."""
    frame = data.get("prompt_frame") or {}
    return TurnRequest(
        conversation=tuple(message_from_dict(m) for m in data.get("conversation", [])),
        tools=tuple(ProviderToolSpec(**_fields(ProviderToolSpec, t)) for t in data.get("tools", [])),
        prompt_frame=PromptFrame(
            system_prompt=frame.get("system_prompt", ""),
            system_blocks=tuple(ContextBlock(**_fields(ContextBlock, b)) for b in frame.get("system_blocks", [])),
            context_blocks=tuple(ContextBlock(**_fields(ContextBlock, b)) for b in frame.get("context_blocks", [])),
        ),
        continuation_scope_id=data.get("continuation_scope_id", ""),
        max_output_tokens=data.get("max_output_tokens"),
        native_web_search=bool(data.get("native_web_search", False)),
        response_format=data.get("response_format"),
    )


__all__ += ["response_from_dict", "request_from_dict"]
