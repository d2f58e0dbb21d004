"""WaitFor: record an explicit wait and yield (agents spec §4, §5.1).

The waiting plane lives in the runtime's work service (``ctx.work``). As a
direct call (D11) WaitFor settles at once: ``delivery=final`` takes its brief
from ``context={"brief": …}`` and fails with ``empty_final_brief`` without
one; it never returns ``deferred``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...render.human import fields, record, shape
from .._context import ToolContext
from .._spec import Family, ToolSpec
from ._work_inputs import (
    Strict,
    UInt64,
    check_context_text,
    invalid,
    trim_optional,
    trim_required,
)
from .results._work import WaitForResult

__all__ = ["SPECS", "WaitForInput"]


class WaitForInput(Strict):
    """Arguments of WaitFor (agents spec §5.1)."""

    reason: str = Field(description="Why progress is paused; shown as the work item's blocker.")
    wake: Literal["operator_input", "task_result", "external", "timer", "system"] = Field(
        description="What should resume the work."
    )
    delivery: Literal["final", "silent"] = Field(
        description="final publishes an operator-facing brief before waiting; silent waits without one."
    )
    work_item_id: str | None = Field(None, description="The open work item that waits; null resolves the owner.")
    resource: str | None = Field(None, description="Task id (task_result), timer id (timer), or what is awaited.")
    recheck_after_ms: UInt64 | None = Field(None, description="Fallback recheck deadline in milliseconds; null: none.")


async def wait_for(args: WaitForInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of WaitFor (agents spec §5.1 rules 1-2 here; the rest in the waiting plane)."""
    reason = trim_required(args, "WaitFor", "reason")["reason"]
    if args.delivery == "final":
        check_context_text(ctx.call.execution, "WaitFor", "brief")
    resource = trim_optional(args.resource)
    if args.wake in ("task_result", "timer") and resource is None:
        what = "task id" if args.wake == "task_result" else "timer id"
        raise invalid(
            "WaitFor", "resource", "required", f"wake={args.wake} needs `resource` = the {what}.", wake=args.wake
        )
    result = ctx.work.wait_for(
        reason, args.wake, args.delivery, resource, trim_optional(args.work_item_id), args.recheck_after_ms
    )
    return result


SPECS = (
    ToolSpec(
        name="WaitFor",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=WaitForInput,
        handler=wait_for,
        result_name="WaitForResult",
        output_model=WaitForResult,
        related_surfaces=("runtime agent lifecycle APIs",),
        human=shape(
            fields("scope", "reason", "wake", "delivery", "work_item_id", "final_brief_id"),
            record("wait_condition", "id", "status", "kind", "waiting_for"),
        ),
    ),
)
