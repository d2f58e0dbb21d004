"""The legacy hidden ``Sleep`` tool (turn-loop spec §1.8.4; spec README "hidden but dispatchable").

``Sleep`` is never advertised to a model. It is kept so old transcripts replay: a round made only
of ``Sleep`` calls ends the turn (``completed``, reason ``sleep``), and the turn's result carries the
last positive ``duration_ms`` as ``sleep_duration_ms``. The call itself waits for nothing; it only
records that the agent asked to rest.

Input ``{reason?: string, duration_ms?: integer ≥ 1}`` (upstream ``SleepArgs``); result
``{reason, duration_ms}`` with ``reason`` trimmed or ``"sleep requested"``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .._context import ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, Stability, ToolSpec
from ._work_inputs import Strict, UInt64, storable
from .results._agents import SleepResult

__all__ = ["SPECS", "SleepInput"]


class SleepInput(Strict):
    """Arguments of Sleep: an optional reason and an optional positive delay in milliseconds."""

    reason: str | None = Field(None, description="Why the agent rests; null means 'sleep requested'.")
    duration_ms: UInt64 | None = Field(
        None, description="A positive session-local delay in milliseconds to wake again; null means ordinary rest."
    )


async def sleep(args: SleepInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of Sleep.

    Raises:
        ToolFailure: ``invalid_tool_input`` (``field: duration_ms``, ``validation_error: must be greater
            than 0``) for ``duration_ms: 0``.
    """
    if args.duration_ms == 0:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message="Sleep `duration_ms` must be a positive integer when provided",
                details={"tool_name": "Sleep", "field": "duration_ms", "validation_error": "must be greater than 0"},
                recovery_hint="omit `duration_ms` for ordinary terminal rest, or provide a positive integer "
                "millisecond delay",
            )
        )
    reason = storable(args.reason).strip() if args.reason else ""
    summary = f"sleep requested for {args.duration_ms} ms" if args.duration_ms else "sleep requested"
    return {"reason": reason or "sleep requested", "duration_ms": args.duration_ms, "summary_text": summary}


SPECS = (
    ToolSpec(
        name="Sleep",
        family=Family.CORE_AGENT,
        input_model=SleepInput,
        handler=sleep,
        result_name="SleepResult",
        output_model=SleepResult,
        stability=Stability.HIDDEN,
    ),
)
