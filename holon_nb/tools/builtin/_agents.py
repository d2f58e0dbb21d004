"""Agent-plane read tool: GetAgent and its hidden legacy alias AgentGet (agents spec §5.2, §1.3 rule 6).

The summary is assembled on read by the runtime's agent plane
(``ctx.agents.summary``, :mod:`holon_nb.runtime.agents._summary`); this module
holds the input model, the lookup rules and the errors. Strictly read-only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...render.human import fields, record, shape, table
from .._context import ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, Stability, ToolSpec
from .results._agents import AgentGetResult

__all__ = ["GetAgentInput", "SPECS"]

_SURFACES = ("runtime agent lifecycle APIs",)


class GetAgentInput(BaseModel):
    """Arguments of GetAgent / AgentGet (agents spec §5.2)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    agent_id: str | None = Field(None, description="The agent to describe; null means the calling agent.")


def _plausible_id(agent_id: str) -> bool:
    """False for ids no agent can have (blank, or not storable as UTF-8)."""
    try:
        agent_id.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return bool(agent_id.strip())


def _not_found(agent_id: str) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="agent_not_found",
            message=f"agent {agent_id} was not found",
            details={"agent_id": agent_id},
            recovery_hint="Omit agent_id to describe yourself, or pass the id of an existing agent.",
        )
    )


async def get_agent(args: GetAgentInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of GetAgent and AgentGet (agents spec §5.2).

    Omitted ``agent_id`` → the caller (described from its call profile even without a
    record). Given → any existing agent; unknown → ``agent_not_found``; status
    ``deleting`` → ``agent_deleting``; ``deleted`` → ``agent_deleted``.
    """
    call = ctx.call
    if args.agent_id is None:
        summary = ctx.agents.summary(call.agent_id, fallback_profile=call.profile.value)
        agent_id = call.agent_id
    else:
        agent_id = args.agent_id
        summary = ctx.agents.summary(agent_id) if _plausible_id(agent_id) else None
        if summary is None:
            raise _not_found(agent_id)
        status = summary["identity"]["status"]
        if status in ("deleting", "deleted"):
            raise ToolFailure(
                ToolError(
                    kind=f"agent_{status}",
                    message=f"agent {agent_id} is {status}",
                    details={"agent_id": agent_id, "status": status},
                    recovery_hint="The agent is being removed or gone; address another agent.",
                )
            )
    assert summary is not None
    posture = summary.get("scheduling_posture", {}).get("posture", "unknown")
    return {"agent": summary, "summary_text": f"agent {agent_id}: {posture}"}


#: Human receipt (render/human) of GetAgent: identity, state, counts, model, recent usage.
AGENT = shape(
    fields(
        "identity.agent_id",
        "identity.name",
        "identity.profile_preset",
        "agent.status",
        "agent.pending",
        "agent.turn_index",
        "agent.current_work_item_id",
        "active_task_count",
        "queued_message_count",
        "runnable_work_item_count",
        "waiting_work_item_count",
        "active_wait_count",
        "active_timer_count",
        "next_timer_fire_at",
        "scheduling_posture.posture",
        "scheduling_posture.reason",
        under="agent",
    ),
    record("agent.work_item_counts", title="work items"),
    record("agent.model"),
    record("agent.token_usage", title="tokens"),
    table("agent.active_external_triggers", "id", "kind", "status"),
)

SPECS = (
    ToolSpec(
        name="GetAgent",
        family=Family.CORE_AGENT,
        input_model=GetAgentInput,
        handler=get_agent,
        result_name="AgentGetResult",
        output_model=AgentGetResult,
        related_surfaces=_SURFACES,
        human=AGENT,
    ),
    ToolSpec(
        name="AgentGet",
        family=Family.CORE_AGENT,
        input_model=GetAgentInput,
        handler=get_agent,
        result_name="AgentGetResult",
        output_model=AgentGetResult,
        stability=Stability.HIDDEN,
        description_name="GetAgent",
        alias_of="GetAgent",
        related_surfaces=_SURFACES,
        human=AGENT,
    ),
)
