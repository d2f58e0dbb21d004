"""External trigger tools: CreateExternalTrigger, CancelExternalTrigger (workspace spec §14).

Both are registry-dispatchable but hidden (never advertised to a model; listed under the
inventory's ``hidden_tools``), family ``external_trigger``, allowed for every profile. The
capability lives in the runtime's trigger plane (``ctx.triggers``,
:mod:`holon_nb.runtime.triggers`).

:func:`holon_nb.render._scrubbing.redact_tokens` removes capability tokens from anything a notebook shows
or saves: the token is a bearer credential, returned only in the in-memory create result's ``trigger_url``;
the D6 scrubber (:mod:`holon_nb.render._scrubbing`) replaces it in everything shown or stored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..._context import ToolContext
from ..._envelope import ToolError
from ..._errors import ToolFailure
from ..._spec import Family, Stability, ToolSpec
from ..results._services import ExternalTriggerCapability, ExternalTriggerRecord

__all__ = ["SPECS", "CancelExternalTriggerInput", "CreateExternalTriggerInput"]

_SURFACES = ("external trigger capability URLs",)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CreateExternalTriggerInput(_Strict):
    """Arguments of CreateExternalTrigger (workspace spec §14.1); the mode is always normalised to ``wake_hint``.

    The published enum lists the alias ``wake_only`` too, so the schema accepts exactly what validation
    accepts (issue 25 item 6).
    """

    description: str | None = Field(None, description="Accepted and ignored.")
    source: str | None = Field(None, description="Accepted and ignored.")
    delivery_mode: Literal["enqueue_message", "wake_hint", "wake_only"] = Field(
        description="Requested delivery; the capability is always wake_hint (wake_only is its alias)."
    )

    @field_validator("delivery_mode", mode="after")
    @classmethod
    def _alias(cls, value: str) -> str:
        return "wake_hint" if value == "wake_only" else value


class CancelExternalTriggerInput(_Strict):
    """Arguments of CancelExternalTrigger (workspace spec §14.2): ``external_trigger_id`` is required in the schema too."""

    external_trigger_id: str = Field(
        description="The trigger to revoke (external_trigger_id from CreateExternalTrigger)."
    )


def _require_id(args: CancelExternalTriggerInput, tool_name: str) -> CancelExternalTriggerInput:
    value = args.external_trigger_id.strip()
    if not value:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"{tool_name}: `external_trigger_id` must not be empty",
                details={
                    "tool_name": tool_name,
                    "field": "external_trigger_id",
                    "validation_error": "must not be empty",
                },
                recovery_hint="Pass the external_trigger_id CreateExternalTrigger returned.",
            )
        )
    return args.model_copy(update={"external_trigger_id": value})


async def create_external_trigger(args: CreateExternalTriggerInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CreateExternalTrigger (workspace spec §14.1)."""
    return await ctx.triggers.create(ctx.call.agent_id)


async def cancel_external_trigger(args: CancelExternalTriggerInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CancelExternalTrigger (workspace spec §14.2)."""
    return ctx.triggers.cancel(ctx.call.agent_id, args.external_trigger_id)


SPECS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="CreateExternalTrigger",
        family=Family.EXTERNAL_TRIGGER,
        input_model=CreateExternalTriggerInput,
        handler=create_external_trigger,
        result_name="ExternalTriggerCapability",
        output_model=ExternalTriggerCapability,
        stability=Stability.HIDDEN,
        related_surfaces=_SURFACES,
    ),
    ToolSpec(
        name="CancelExternalTrigger",
        writes_store=True,
        family=Family.EXTERNAL_TRIGGER,
        input_model=CancelExternalTriggerInput,
        handler=cancel_external_trigger,
        result_name="ExternalTriggerRecord",
        output_model=ExternalTriggerRecord,
        stability=Stability.HIDDEN,
        normalize=_require_id,
        related_surfaces=_SURFACES,
    ),
)
