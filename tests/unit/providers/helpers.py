"""Builders shared by the provider tests: real SDK-backed transports pointed at a local wire server."""

from __future__ import annotations

from typing import Any

from unit.providers.servers import WireServer

from holon_nb.providers._factory import build_provider
from holon_nb.providers.base import (
    AssistantBlocks,
    ContextBlock,
    PromptFrame,
    ProviderToolSpec,
    ToolResultBlock,
    ToolUseBlock,
    TurnRequest,
    UserBlocks,
    UserToolResults,
)
from holon_nb.tools import REGISTRY
from holon_nb.tools._schema import input_schema

KEY = "sk-test-0123456789abcdef"


def provider_for(
    srv: WireServer | str,
    ref: str,
    made: list,
    *,
    env: dict[str, str] | None = None,
    base_path: str = "/v1",
    **settings: Any,
) -> Any:
    """A real transport for ``ref`` whose base URL is the wire server (or a URL) plus ``base_path``; appended to
    ``made`` (the fixture that closes it)."""
    provider_id = ref.split("/", 1)[0].split("@", 1)[0]
    base = srv if isinstance(srv, str) else srv.base_url
    config = {"providers": {provider_id: {"base_url": base + base_path, **settings}}}
    provider = build_provider(ref, environ=env if env is not None else {}, config=config)
    made.append(provider)
    return provider


def tool(name: str) -> ProviderToolSpec:
    """The registry tool ``name`` as offered to a provider (source schema)."""
    spec = REGISTRY.get(name)
    assert spec is not None, name
    return ProviderToolSpec(name, f"{name} description", input_schema(spec.input_model))


def first_request(tools: tuple[str, ...] = ("GetAgent",), system: str = "You are Holon.") -> TurnRequest:
    """Round 1: one user message of context blocks."""
    return TurnRequest(
        conversation=(UserBlocks((ContextBlock("look at the agent"),)),),
        tools=tuple(tool(t) for t in tools),
        prompt_frame=PromptFrame(system_prompt=system),
        continuation_scope_id="agent_default",
    )


def second_request(
    call: ToolUseBlock,
    receipt: str = '{"tool_name":"GetAgent","status":"success"}',
    is_error: bool = False,
    tools: tuple[str, ...] = ("GetAgent",),
) -> TurnRequest:
    """Round 2 of case 2: the call and its result appended."""
    first = first_request(tools)
    return TurnRequest(
        conversation=first.conversation
        + (AssistantBlocks((call,)), UserToolResults((ToolResultBlock(call.id, receipt, is_error),))),
        tools=first.tools,
        prompt_frame=first.prompt_frame,
        continuation_scope_id=first.continuation_scope_id,
    )
