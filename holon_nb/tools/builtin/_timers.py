"""Timer tools: CreateTimer, ListTimers, GetTimer, CancelTimer (agents spec §4.7, §5.7-§5.10).

Timers are durable and fire on the runtime's loop thread even while the
kernel is idle; a tick is a ``timer_tick`` message in the agent's queue.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...render.human import fields, record, shape, table
from .._context import ToolContext
from .._spec import Family, ToolSpec
from ._work_inputs import Strict, UInt, UInt64, storable, trim_optional, trim_required
from .results._work import CancelTimerResult, CreateTimerResult, GetTimerResult, ListTimersResult

__all__ = ["SPECS", "CreateTimerInput", "ListTimersInput", "TimerIdInput"]

_SURFACES = ("HTTP control-plane timer APIs",)


class CreateTimerInput(Strict):
    """Arguments of CreateTimer (agents spec §5.7): exactly one of ``duration_ms`` / ``fire_at``."""

    duration_ms: UInt64 | None = Field(None, description="Fire this many milliseconds from now (at least 1).")
    fire_at: str | None = Field(None, description="Fire at this RFC 3339 time with a UTC offset, in the future.")
    interval_ms: UInt64 | None = Field(
        None, description="Repeat every this many milliseconds (at least 1000); null fires once."
    )
    summary: str | None = Field(None, description="Text of each tick message; null: 'timer <id> fired'.")


class ListTimersInput(Strict):
    """Arguments of ListTimers (agents spec §5.8)."""

    filter: Literal["all", "active", "completed", "cancelled"] | None = Field(
        None, description="Which timers; null means all."
    )
    limit: UInt | None = Field(None, description="Most timers returned, clamped to 1..100; null means 20.")


class TimerIdInput(Strict):
    """Arguments of GetTimer and CancelTimer."""

    timer_id: str = Field(description="A timer id such as timer_0123456789abcde.")


async def create_timer(args: CreateTimerInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CreateTimer."""
    fire_at = storable(args.fire_at).strip() if args.fire_at is not None else None
    return ctx.work.create_timer(args.duration_ms, fire_at, args.interval_ms, trim_optional(args.summary))


async def list_timers(args: ListTimersInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ListTimers."""
    limit = 20 if args.limit is None else max(1, min(args.limit, 100))
    return ctx.work.list_timers(args.filter or "all", limit)


async def get_timer(args: TimerIdInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of GetTimer."""
    return ctx.work.get_timer(trim_required(args, "GetTimer", "timer_id")["timer_id"])


async def cancel_timer(args: TimerIdInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CancelTimer."""
    return ctx.work.cancel_timer(trim_required(args, "CancelTimer", "timer_id")["timer_id"])


_TIMER = (
    "id",
    "status",
    "summary",
    "next_fire_at",
    "duration_ms",
    "interval_ms",
    "repeat",
    "fire_count",
    "last_fired_at",
)
#: Human receipts (render/human): one timer, and the timer list as a table.
TIMER = record("timer", *_TIMER)
TIMER_LIST = shape(
    fields("filter", "returned", "total_matching"),
    table("timers", "id", "status", "next_fire_at", "repeat", "fire_count", "summary", empty="(no timers)"),
)

SPECS = (
    ToolSpec(
        name="CreateTimer",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=CreateTimerInput,
        handler=create_timer,
        result_name="CreateTimerResult",
        output_model=CreateTimerResult,
        related_surfaces=_SURFACES,
        human=TIMER,
    ),
    ToolSpec(
        name="ListTimers",
        family=Family.CORE_AGENT,
        input_model=ListTimersInput,
        handler=list_timers,
        result_name="ListTimersResult",
        output_model=ListTimersResult,
        related_surfaces=_SURFACES,
        human=TIMER_LIST,
    ),
    ToolSpec(
        name="GetTimer",
        family=Family.CORE_AGENT,
        input_model=TimerIdInput,
        handler=get_timer,
        result_name="GetTimerResult",
        output_model=GetTimerResult,
        related_surfaces=_SURFACES,
        human=TIMER,
    ),
    ToolSpec(
        name="CancelTimer",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=TimerIdInput,
        handler=cancel_timer,
        result_name="CancelTimerResult",
        output_model=CancelTimerResult,
        related_surfaces=_SURFACES,
        human=shape(fields("cancelled_transition"), TIMER),
    ),
)
