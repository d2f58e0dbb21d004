"""Agent-creation tools: CreateAgent and InvokeAgent (agents spec §5.5-§5.6, family ``agent_creation``).

Both are ``public_named``-only (agents spec §1.1; the dispatcher's profile gate refuses a
private child with ``unsupported_agent_profile_capability``, case 32). This
module holds the input models and the argument rules; the records, messages,
tasks and background runs live in :mod:`holon_nb.runtime.agents._lifecycle`,
reached through ``ctx.agents.lifecycle``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field

from .._context import ToolContext
from .._spec import Family, ToolSpec
from ._work_inputs import Strict, invalid, storable, trim_optional, trim_required
from .results._agents import CreateAgentResult, InvokeAgentResult

__all__ = ["SPECS", "CreateAgentInput", "InvokeAgentInput", "ModelRequest", "check_agent_id", "model_request"]

_SURFACES = ("runtime agent lifecycle APIs",)
UInt32 = Annotated[int, Field(ge=0, le=2**32 - 1, json_schema_extra={"format": "uint32"})]

#: agents spec §5.5 rule 2: ``[A-Za-z0-9._-]+``, one normal path component; the runtime's agent-id rule
#: (first character a letter or digit, at most 64 characters, no ``..``) also applies, so every
#: created agent can be addressed by ``Runtime.call(agent=...)`` and names one directory.
_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: A provider id: ``name`` or ``name@endpoint``, lowercase ASCII letters, digits, ``-``, ``_`` (turn-loop spec
#: §2.2 model refs ``provider@endpoint/model``, :func:`holon_nb.providers._refs.parse_model_ref`).
_PROVIDER = re.compile(r"[a-z0-9_-]+(@[a-z0-9_-]+)?")


class ModelRequest(Strict):
    """The ``model`` object of CreateAgent/InvokeAgent (agents spec §5.5): no extra keys."""

    provider: str = Field(description="Provider id, e.g. openai or anthropic (optionally provider@endpoint).")
    model: str = Field(description="Model name at that provider.")
    reasoning_effort: str | None = Field(None, description="Reasoning effort hint; null: the provider default.")
    temperature: float | None = Field(
        None, description="Sampling temperature; null: the provider default.", json_schema_extra={"format": "double"}
    )
    max_output_tokens: UInt32 | None = Field(None, description="Output cap per model round in tokens; null: default.")
    allow_fallback: bool | None = Field(None, description="Allow the runtime's fallback models; null means true.")


class CreateAgentInput(Strict):
    """Arguments of CreateAgent (agents spec §5.5)."""

    agent_id: str = Field(
        description="Id of the public named agent to create or reuse: letters, digits, "
        "'.', '_' and '-' (one path component, not starting with tmp_)."
    )
    initial_message: str | None = Field(
        None, description="Optional bootstrap message queued to the agent; null or blank: none."
    )
    template: str | None = Field(
        None,
        description="Home template: a catalog id (holon-default), a builtin:/agent:/"
        "agent_home:/user:/user_global: selector or an absolute local "
        "path; null: the default layout. Only for a new agent.",
    )
    model: ModelRequest | None = Field(None, description="Model of the new agent; null: inherit yours.")


class InvokeAgentInput(Strict):
    """Arguments of InvokeAgent (agents spec §5.6)."""

    message: str = Field(description="What the invoked agent should do (its input message).")
    agent_id: str | None = Field(
        None, description="A resident agent to invoke; null: start a supervised private child instead."
    )
    template: str | None = Field(None, description="Private-child mode only: home template of the child.")
    workspace_mode: Literal["inherit", "worktree"] | None = Field(
        None,
        description="Private-child mode only: inherit your workspaces, or give the child its own git "
        "worktree; null means inherit.",
    )
    model: ModelRequest | None = Field(
        None, description="Private-child mode only: the child's model; null: inherit yours."
    )


def check_agent_id(value: str, tool: str) -> str:
    """Return the trimmed agent id, or raise ``invalid_tool_input`` (agents spec §5.5 rule 2, case 33-34).

    Raises:
        ToolFailure: ``invalid_tool_input`` with ``field: "agent_id"`` for a malformed id, and
            ``validation_error: "reserved temporary prefix"`` for ``tmp_…``.
    """
    agent_id = storable(value).strip()
    if not agent_id:
        raise invalid(tool, "agent_id", "must not be empty")
    if not _AGENT_ID.fullmatch(agent_id) or ".." in agent_id:
        raise invalid(
            tool,
            "agent_id",
            "must match [A-Za-z0-9._-]+ as one path component (first character a "
            "letter or digit, at most 64 characters, no '..')",
            "Use a short id such as reviewer or docs-bot.",
        )
    if agent_id.startswith("tmp_"):
        raise invalid(tool, "agent_id", "reserved temporary prefix", "Choose an id that does not start with tmp_.")
    return agent_id


def model_request(model: ModelRequest | None, tool: str) -> dict[str, Any] | None:
    """The validated ``model`` object as a dict (None when absent); agents spec §5.5 rule 5 field checks.

    Raises:
        ToolFailure: ``invalid_tool_input`` with ``field`` ``model.provider`` or ``model.model``.
    """
    if model is None:
        return None
    provider = storable(model.provider).strip()
    if not _PROVIDER.fullmatch(provider):
        raise invalid(
            tool,
            "model.provider",
            "not a provider id" if provider else "must not be empty",
            "Use a provider id from ListModelProviders, e.g. openai or anthropic.",
        )
    name = storable(model.model).strip()
    if not name:
        raise invalid(tool, "model.model", "must not be empty", "Use a model id from ListProviderModels.")
    out: dict[str, Any] = {"provider": provider, "model": name}
    effort = trim_optional(model.reasoning_effort)
    if effort is not None:
        out["reasoning_effort"] = effort
    if model.temperature is not None:
        if model.temperature != model.temperature or model.temperature in (float("inf"), float("-inf")):
            raise invalid(tool, "model.temperature", "must be a finite number")
        out["temperature"] = model.temperature
    for key in ("max_output_tokens", "allow_fallback"):
        if getattr(model, key) is not None:
            out[key] = getattr(model, key)
    return out


async def create_agent(args: CreateAgentInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CreateAgent: validate, then create or reuse through the agent lifecycle (agents spec §5.5)."""
    agent_id = check_agent_id(args.agent_id, "CreateAgent")
    model = model_request(args.model, "CreateAgent")
    return await ctx.agents.lifecycle.create_agent(
        ctx.call,
        agent_id,
        initial_message=trim_optional(args.initial_message),
        template=trim_optional(args.template),
        model=model,
    )


async def invoke_agent(args: InvokeAgentInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of InvokeAgent: resident invocation or supervised private child (agents spec §5.6); never blocks."""
    message = trim_required(args, "InvokeAgent", "message", hint="Pass what the agent should do in `message`.")
    lifecycle = ctx.agents.lifecycle
    if args.agent_id is None:
        return await lifecycle.invoke_child(
            ctx.call,
            message["message"],
            template=trim_optional(args.template),
            workspace_mode=args.workspace_mode or "inherit",
            model=model_request(args.model, "InvokeAgent"),
        )
    target = storable(args.agent_id).strip()
    if not target:
        raise invalid(
            "InvokeAgent",
            "agent_id",
            "must not be empty",
            "Omit agent_id to start a private child, or name a resident agent.",
        )
    for field in ("template", "workspace_mode", "model"):
        if getattr(args, field) is not None:
            raise invalid(
                "InvokeAgent",
                field,
                "only valid in private-child mode (without agent_id)",
                f"Remove `{field}` when invoking a resident agent, or omit agent_id to start a child.",
            )
    if target == ctx.call.agent_id:
        raise invalid(
            "InvokeAgent", "agent_id", "must not be the calling agent", "Use Enqueue to queue a follow-up for yourself."
        )
    return await lifecycle.invoke_resident(ctx.call, target, message["message"])


SPECS = (
    ToolSpec(
        name="CreateAgent",
        family=Family.AGENT_CREATION,
        input_model=CreateAgentInput,
        handler=create_agent,
        result_name="CreateAgentResult",
        output_model=CreateAgentResult,
        related_surfaces=_SURFACES,
    ),
    ToolSpec(
        name="InvokeAgent",
        family=Family.AGENT_CREATION,
        input_model=InvokeAgentInput,
        handler=invoke_agent,
        result_name="InvokeAgentResult",
        output_model=InvokeAgentResult,
        related_surfaces=_SURFACES,
    ),
)
