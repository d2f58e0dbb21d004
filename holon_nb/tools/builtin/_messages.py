"""Message tools: Enqueue and SendAgentMessage (agents spec §1.4, §5.3-§5.4).

Both put one durable message into a queue through the work service's single
enqueue path (``ctx.work``). Registered from :data:`MESSAGE_SPECS`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from .._context import ToolContext
from .._spec import Family, ToolSpec
from ._work_inputs import Strict, trim_required
from .results._agents import EnqueueResult, SendAgentMessageResult

__all__ = ["MESSAGE_SPECS", "EnqueueInput", "SendAgentMessageInput"]

_SURFACES = ("runtime agent lifecycle APIs",)


class EnqueueInput(Strict):
    """Arguments of Enqueue (agents spec §5.4); the legacy priority ``interrupt`` reads as ``interject``."""

    text: str = Field(description="The follow-up to queue for yourself.")
    priority: Literal["interject", "next", "normal", "background"] | None = Field(
        None, description="Queue position; null means next."
    )

    @field_validator("priority", mode="before")
    @classmethod
    def _legacy_interrupt(cls, value: Any) -> Any:
        return "interject" if value == "interrupt" else value


class SendAgentMessageInput(Strict):
    """Arguments of SendAgentMessage (agents spec §5.3)."""

    agent_id: str = Field(description="The receiving agent: your parent, a child you supervise, or a public agent.")
    message: str = Field(description="The message text.")
    priority: Literal["next", "normal", "background"] | None = Field(
        None, description="Queue position; null means normal."
    )


async def enqueue(args: EnqueueInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of Enqueue."""
    text = trim_required(args, "Enqueue", "text", hint="Pass the follow-up text in `text`.")["text"]
    return ctx.work.enqueue_followup(text, args.priority or "next")


async def send_agent_message(args: SendAgentMessageInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of SendAgentMessage."""
    values = trim_required(args, "SendAgentMessage", "agent_id", "message")
    return ctx.work.send_agent_message(values["agent_id"], values["message"], args.priority or "normal")


MESSAGE_SPECS = (
    ToolSpec(
        name="Enqueue",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=EnqueueInput,
        handler=enqueue,
        result_name="EnqueueResult",
        output_model=EnqueueResult,
        related_surfaces=_SURFACES,
    ),
    ToolSpec(
        name="SendAgentMessage",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=SendAgentMessageInput,
        handler=send_agent_message,
        result_name="SendAgentMessageResult",
        output_model=SendAgentMessageResult,
        related_surfaces=_SURFACES,
    ),
)
