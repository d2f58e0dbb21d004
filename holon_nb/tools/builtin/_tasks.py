"""Task tools: ListTasks (and hidden TaskList), TaskStatus, TaskOutput, TaskInput, TaskStop.

Models, normalisation and receipts live here; task state lives in the
runtime's task service (``ctx.commands``), reached through ``ToolContext``
(commands spec §6–§9).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ...render.human import capped_note, fields, record, shape, table, task_output_human
from .._context import ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, Rendering, Stability, ToolSpec
from .results._tasks import ListTasksResult, TaskInputResult, TaskOutputResult, TaskStatusResult, TaskStopResult

__all__ = [
    "ListTasksInput",
    "TaskIdInput",
    "TaskOutputInput",
    "TaskInputInput",
    "SPECS",
    "require_non_empty",
    "task_not_found",
]

UInt = Annotated[int, Field(ge=0, le=2**64 - 1, json_schema_extra={"format": "uint64"})]
UInt32 = Annotated[int, Field(ge=0, le=2**64 - 1, json_schema_extra={"format": "uint"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class ListTasksInput(_Strict):
    """Arguments of ListTasks / TaskList (commands spec §7)."""

    limit: UInt32 | None = Field(None, description="Maximum entries, clamped to 1..100; null means 20.")


class TaskIdInput(_Strict):
    """Arguments of TaskStatus and TaskStop."""

    task_id: str = Field(description="A task id such as task_0123456789abcde.")


class TaskOutputInput(TaskIdInput):
    """Arguments of TaskOutput (commands spec §8.2)."""

    block: bool | None = Field(None, description="Wait until the task is ready; null means true.")
    timeout_ms: UInt | None = Field(
        None, description="Longest wait in milliseconds when blocking; null means 30000, 0 checks once."
    )


class TaskInputInput(TaskIdInput):
    """Arguments of TaskInput (commands spec §9.1)."""

    input: str = Field(description="Text written verbatim to the task's stdin or terminal; no newline is added.")


def require_non_empty(args: Any, tool_name: str, field: str = "task_id") -> Any:
    """Trim ``field``; raise ``invalid_tool_input`` when empty (commands spec §2.4)."""
    value = getattr(args, field).strip()
    if not value:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"{tool_name} requires a non-empty `{field}`",
                details={"tool_name": tool_name, "field": field, "validation_error": "must not be empty"},
                recovery_hint=f"Pass the `{field}` returned when the task was created (ListTasks lists active tasks).",
            )
        )
    return args.model_copy(update={field: value})


def task_not_found(task_id: str) -> ToolFailure:
    """The ``task_not_found`` failure shared by every task tool."""
    return ToolFailure(
        ToolError(
            kind="task_not_found",
            message=f"task {task_id} was not found",
            details={"task_id": task_id},
            recovery_hint="Use ListTasks for active tasks, or the task_id from the promotion receipt.",
        )
    )


async def list_tasks(args: ListTasksInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ListTasks (commands spec §7)."""
    limit = 20 if args.limit is None else max(1, min(args.limit, 100))
    active = ctx.commands.list_active(ctx.call.agent_id)
    tasks = active[:limit]
    return {"total_active": len(active), "returned": len(tasks), "limit": limit, "tasks": tasks}


async def task_status(args: TaskIdInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of TaskStatus (commands spec §8.1)."""
    snap = ctx.commands.status_snapshot(args.task_id)
    if snap is None:
        raise task_not_found(args.task_id)
    return {"task": snap, "summary_text": snap.get("summary") or f"task {args.task_id} status retrieved"}


async def task_output(args: TaskOutputInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of TaskOutput (commands spec §8.3)."""
    block = True if args.block is None else args.block
    timeout_ms = 30_000 if args.timeout_ms is None else args.timeout_ms
    result = await ctx.commands.task_output(args.task_id, block=block, timeout_s=timeout_ms / 1000)
    if result is None:
        raise task_not_found(args.task_id)
    return result


async def task_input(args: TaskInputInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of TaskInput (commands spec §9.1)."""
    result = await ctx.commands.task_input(args.task_id, args.input)
    if result is None:
        raise task_not_found(args.task_id)
    return result


async def task_stop(args: TaskIdInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of TaskStop (commands spec §9.2)."""
    result = await ctx.commands.task_stop(args.task_id)
    if result is None:
        raise task_not_found(args.task_id)
    return result


_READY_HEAD = {
    "success": "Task output retrieved",
    "timeout": "Task output wait timed out",
    "not_ready": "Task output is not ready",
}


def render_task_output_receipt(env: dict[str, Any], context: Any = None) -> str:
    """Text receipt of TaskOutput (commands spec §8.4)."""
    r = env["result"]
    t = r["task"]
    lines = [_READY_HEAD[r["retrieval_status"]], f"Task: {t['task_id']}", f"Status: {t['status']}"]
    if t.get("exit_status") is not None:
        lines.append(f"Exit status: {t['exit_status']}")
    if t.get("summary"):
        lines.append(f"Summary: {t['summary']}")
    preview = t.get("output_preview") or ""
    if preview.strip():
        lines += ["", "Output:", preview.rstrip("\n")]
        if t.get("output_truncated"):
            total = t.get("output_total_chars", len(preview))
            omitted = total - t.get("output_kept_chars", len(preview))
            where = f"; full output: {t['artifacts'][0]['path']}" if t.get("artifacts") else ""
            lines.append(f"[output truncated: {omitted} of {total} characters not shown{where}]")
        if t.get("output_lossy"):
            lines.append("[output decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD]")
        if t.get("output_bytes_dropped"):
            lines.append(f"[output log capped: {t['output_bytes_dropped']} bytes were not kept{capped_note(t)}]")
    if t.get("artifacts"):
        lines += ["", "Artifacts:", *[a["path"] for a in t["artifacts"]]]
    return "\n".join(lines)


def _trim(args: Any, tool: str) -> Any:
    return require_non_empty(args, tool)


_SURFACES = ("CLI task/process wrappers", "HTTP control-plane task APIs")

#: Human receipts (render/human): one task record, and the task list as a table.
TASK = shape(
    record(
        "task", "task_id", "kind", "status", "summary", "command.cmd", "command.workdir", "exit_status", "wait_policy"
    )
)
TASK_LIST = shape(
    fields("total_active", "returned"),
    table("tasks", "id", "status", "kind", "summary", "wait_policy", empty="(no active tasks)"),
)

SPECS = (
    ToolSpec(
        name="ListTasks",
        family=Family.CORE_AGENT,
        input_model=ListTasksInput,
        handler=list_tasks,
        result_name="ListTasksResult",
        output_model=ListTasksResult,
        related_surfaces=_SURFACES,
        human=TASK_LIST,
    ),
    ToolSpec(
        name="TaskStatus",
        family=Family.CORE_AGENT,
        input_model=TaskIdInput,
        handler=task_status,
        result_name="TaskStatusResult",
        output_model=TaskStatusResult,
        normalize=_trim,
        related_surfaces=_SURFACES,
        human=TASK,
    ),
    ToolSpec(
        name="TaskOutput",
        family=Family.CORE_AGENT,
        input_model=TaskOutputInput,
        handler=task_output,
        result_name="TaskOutputResult",
        output_model=TaskOutputResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_task_output_receipt,
        normalize=_trim,
        related_surfaces=_SURFACES,
        human=task_output_human,
    ),
    ToolSpec(
        name="TaskInput",
        family=Family.CORE_AGENT,
        input_model=TaskInputInput,
        handler=task_input,
        result_name="TaskInputResult",
        output_model=TaskInputResult,
        normalize=_trim,
        related_surfaces=_SURFACES,
        human=shape(fields("accepted_input", "input_target", "bytes_written"), TASK),
    ),
    ToolSpec(
        name="TaskStop",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=TaskIdInput,
        handler=task_stop,
        result_name="TaskStopResult",
        output_model=TaskStopResult,
        normalize=_trim,
        related_surfaces=_SURFACES,
        human=shape(fields("stop_requested", "force_stop_requested"), TASK),
    ),
    ToolSpec(
        name="TaskList",
        family=Family.CORE_AGENT,
        input_model=ListTasksInput,
        handler=list_tasks,
        result_name="ListTasksResult",
        output_model=ListTasksResult,
        stability=Stability.HIDDEN,
        description_name="ListTasks",
        alias_of="ListTasks",
        human=TASK_LIST,
    ),
)
