"""Work-item tools: CreateWorkItem, UpdateWorkItem, PickWorkItem, GetWorkItem, ListWorkItems, CompleteWorkItem.

Input models and argument rules live here (agents spec §5.11-§5.16); the
records, focus and revisions live in the runtime's work service, reached as
``ctx.work``. CompleteWorkItem's report comes from the execution context
(``context={"report": …}``, D11), never from a schema field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...render.human import fields, record, shape, table, todos
from .._context import ToolContext
from .._spec import Family, ToolSpec
from ._work_inputs import (
    Strict,
    UInt,
    check_context_text,
    invalid,
    storable,
    trim_optional,
    trim_required,
)
from .results._work import GetWorkItemResult, ListWorkItemsResult, PickWorkItemResult, WorkItemMutationResult

__all__ = [
    "SPECS",
    "CompleteWorkItemInput",
    "CreateWorkItemInput",
    "GetWorkItemInput",
    "ListWorkItemsInput",
    "PickWorkItemInput",
    "TodoItem",
    "UpdateWorkItemInput",
]

PlanStatus = Literal["draft", "ready", "needs_input"]
_TODO_HINT = "todo_list items are {text, state} with state one of pending, in_progress, completed."
_SURFACES = ("CLI work-item wrappers", "HTTP control-plane WorkItem APIs")


class TodoItem(Strict):
    """One checklist entry."""

    text: str = Field(description="What to do; must not be blank.")
    state: Literal["pending", "in_progress", "completed"] = Field(description="Progress of this entry.")


class CreateWorkItemInput(Strict):
    """Arguments of CreateWorkItem (agents spec §5.11)."""

    objective: str = Field(description="The short target of the new, independent work item.")
    plan_status: PlanStatus | None = Field(None, description="Planning state; null means draft.")
    plan: str | None = Field(None, description="Initial plan.md body; null leaves plan.md empty.")
    todo_list: list[TodoItem] | None = Field(None, description="Initial checklist; null means empty.")


class UpdateWorkItemInput(Strict):
    """Arguments of UpdateWorkItem (agents spec §5.12): only given fields change."""

    work_item_id: str = Field(description="The work item to update (work_…).")
    objective: str | None = Field(None, description="New objective; null keeps it.")
    plan_status: PlanStatus | None = Field(None, description="New planning state; null keeps it.")
    todo_list: list[TodoItem] | None = Field(
        None, description="Full replacement checklist; [] clears it, null keeps it."
    )


class PickWorkItemInput(Strict):
    """Arguments of PickWorkItem (agents spec §5.13)."""

    work_item_id: str = Field(description="The open work item to focus (work_…).")
    reason: str | None = Field(None, description="Why focus moves; required with clear_blocker.")
    clear_blocker: bool = Field(False, description="Cancel the item's waits and clear its blocker.")


class GetWorkItemInput(Strict):
    """Arguments of GetWorkItem (agents spec §5.14)."""

    work_item_id: str = Field(description="The work item to read (work_…).")
    include_todo_list: bool = Field(False, description="Include the checklist.")


class ListWorkItemsInput(Strict):
    """Arguments of ListWorkItems (agents spec §5.15)."""

    filter: (
        Literal[
            "all",
            "open",
            "completing",
            "completed",
            "current",
            "queued",
            "yielded",
            "blocked",
            "waiting_for_operator",
            "runnable",
        ]
        | None
    ) = Field(None, description="Which view; null means all.")
    limit: UInt | None = Field(None, description="Most items returned, clamped to 1..100; null means 20.")
    include_todo_list: bool = Field(False, description="Include each item's checklist.")


class CompleteWorkItemInput(Strict):
    """Arguments of CompleteWorkItem (agents spec §5.16)."""

    work_item_id: str = Field(description="The open work item to complete (work_…).")


def _todos(tool: str, items: list[TodoItem] | None) -> list[dict[str, str]] | None:
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        text = storable(item.text).strip()
        if not text:
            raise invalid(tool, f"todo_list[{i}].text", "must not be empty", _TODO_HINT, index=i)
        out.append({"text": text, "state": item.state})
    return out


def _plan(tool: str, plan: str | None) -> str | None:
    if plan is not None and not plan.strip():
        raise invalid(tool, "plan", "must not be empty", "Omit plan, or pass the plan text.")
    return storable(plan).strip() if plan is not None else None


async def create_work_item(args: CreateWorkItemInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CreateWorkItem."""
    objective = trim_required(args, "CreateWorkItem", "objective")["objective"]
    plan = _plan("CreateWorkItem", args.plan)
    todos = _todos("CreateWorkItem", args.todo_list) or []
    return ctx.work.create_work_item(objective, args.plan_status, plan, todos)


async def update_work_item(args: UpdateWorkItemInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of UpdateWorkItem."""
    work_item_id = trim_required(args, "UpdateWorkItem", "work_item_id")["work_item_id"]
    changes: dict[str, Any] = {}
    if args.objective is not None:
        changes["objective"] = trim_required(args, "UpdateWorkItem", "objective")["objective"]
    if args.plan_status is not None:
        changes["plan_status"] = args.plan_status
    todos = _todos("UpdateWorkItem", args.todo_list)
    if todos is not None:
        changes["todo_list"] = todos
    return ctx.work.update_work_item(work_item_id, changes)


async def pick_work_item(args: PickWorkItemInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of PickWorkItem."""
    work_item_id = trim_required(args, "PickWorkItem", "work_item_id")["work_item_id"]
    reason = trim_optional(args.reason)
    if args.clear_blocker and reason is None:
        raise invalid(
            "PickWorkItem",
            "reason",
            "required when clear_blocker is true",
            "Say why the blocker is resolved in `reason`, or drop clear_blocker.",
        )
    return ctx.work.pick_work_item(work_item_id, reason, args.clear_blocker)


async def get_work_item(args: GetWorkItemInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of GetWorkItem."""
    work_item_id = trim_required(args, "GetWorkItem", "work_item_id")["work_item_id"]
    return ctx.work.get_work_item(work_item_id, args.include_todo_list)


async def list_work_items(args: ListWorkItemsInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ListWorkItems."""
    limit = 20 if args.limit is None else max(1, min(args.limit, 100))
    return ctx.work.list_work_items(args.filter or "all", limit, args.include_todo_list)


async def complete_work_item(args: CompleteWorkItemInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CompleteWorkItem (the report is ``context["report"]`` for a direct call, D11)."""
    work_item_id = trim_required(args, "CompleteWorkItem", "work_item_id")["work_item_id"]
    check_context_text(ctx.call.execution, "CompleteWorkItem", "report")
    return ctx.work.complete_work_item(work_item_id)


def _hint(required: str) -> Any:
    def hint(raw: Any, parse_error: str) -> str:
        return f"Pass `{required}` (a string). {_TODO_HINT}"

    return hint


#: Human receipts (render/human) of the work-item shapes, shared with WaitFor.
WORK_ITEM = shape(
    record(
        "work_item",
        "id",
        "objective",
        "state",
        "readiness",
        "focus",
        "plan_status",
        "blocked_by",
        "reason_code",
        "is_current",
        "plan_artifact.relative_path:plan",
        "completion_report.text:report",
    ),
    todos("work_item.todo_list"),
)
CURRENT_ITEM = shape(
    record("current_work_item", "id", "objective", "state", "plan_status", "blocked_by"),
    todos("current_work_item.todo_list"),
    record("transition", "switch_kind", "previous_work_item_id", "blocker_cleared", "reason"),
    fields("binding_note"),
)
WORK_ITEM_LIST = shape(
    fields("filter", "returned", "total_matching", "context.current_work_item_id"),
    table("work_items", "id", "state", "readiness", "focus", "plan_status", "objective", empty="(no work items)"),
)
COMPLETION = shape(
    fields("completed_transition", "completion_report_source"), WORK_ITEM, table("warnings", "kind", "message")
)

SPECS = (
    ToolSpec(
        name="CreateWorkItem",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=CreateWorkItemInput,
        handler=create_work_item,
        result_name="WorkItemMutationResult",
        output_model=WorkItemMutationResult,
        parse_hint=_hint("objective"),
        related_surfaces=_SURFACES,
        human=WORK_ITEM,
    ),
    ToolSpec(
        name="PickWorkItem",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=PickWorkItemInput,
        handler=pick_work_item,
        result_name="PickWorkItemResult",
        output_model=PickWorkItemResult,
        related_surfaces=_SURFACES,
        human=CURRENT_ITEM,
    ),
    ToolSpec(
        name="GetWorkItem",
        family=Family.CORE_AGENT,
        input_model=GetWorkItemInput,
        handler=get_work_item,
        result_name="GetWorkItemResult",
        output_model=GetWorkItemResult,
        related_surfaces=_SURFACES,
        human=WORK_ITEM,
    ),
    ToolSpec(
        name="ListWorkItems",
        family=Family.CORE_AGENT,
        input_model=ListWorkItemsInput,
        handler=list_work_items,
        result_name="ListWorkItemsResult",
        output_model=ListWorkItemsResult,
        related_surfaces=_SURFACES,
        human=WORK_ITEM_LIST,
    ),
    ToolSpec(
        name="UpdateWorkItem",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=UpdateWorkItemInput,
        handler=update_work_item,
        result_name="WorkItemMutationResult",
        output_model=WorkItemMutationResult,
        parse_hint=_hint("work_item_id"),
        related_surfaces=_SURFACES,
        human=WORK_ITEM,
    ),
    ToolSpec(
        name="CompleteWorkItem",
        writes_store=True,
        family=Family.CORE_AGENT,
        input_model=CompleteWorkItemInput,
        handler=complete_work_item,
        result_name="WorkItemMutationResult",
        output_model=WorkItemMutationResult,
        related_surfaces=_SURFACES,
        human=COMPLETION,
    ),
)
