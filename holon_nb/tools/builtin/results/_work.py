"""Result models of the work plane's tools: work items, WaitFor and timers (agents spec §3-§5).

``work_item``, ``timer`` and ``context`` are the runtime's views, passed through. Two results may be
deferrals in a model turn (turn-loop spec §1.8): WaitFor ``awaiting_final_brief`` and CompleteWorkItem
``awaiting_completion_report``; the committed result follows the round's final text.
"""

from __future__ import annotations

from ._base import Record, Records, ResultModel

__all__ = [
    "WorkItemMutationResult",
    "PickWorkItemResult",
    "GetWorkItemResult",
    "ListWorkItemsResult",
    "WaitForResult",
    "CreateTimerResult",
    "ListTimersResult",
    "GetTimerResult",
    "CancelTimerResult",
]


class WorkItemMutationResult(ResultModel):
    """CreateWorkItem, UpdateWorkItem and CompleteWorkItem: the work item after the change; a completion also
    says whether it completed now, how its report was promoted, and the focus it resumed. A completion that
    awaits the round's final text (``disposition: awaiting_completion_report``) names its request instead."""

    work_item: Record | None = None
    completed_transition: bool | None = None
    completion_report_promoted: bool | None = None
    completion_report_source: str | None = None
    warnings: Records | None = None
    continuation_resumed: Record | None = None
    # a deferred completion (turn-loop spec §1.8.3)
    disposition: str | None = None
    completion_request_id: str | None = None
    work_item_id: str | None = None
    expected_output: str | None = None


class PickWorkItemResult(ResultModel):
    """The focus after a pick: the current work item, the transition made and the continuation frames."""

    current_work_item: Record
    current_work_item_id: str
    transition: Record
    terminal_transition: bool
    previous_work_item: Record | None = None
    continuation_created: Record | None = None
    continuation_resolved: Record | None = None
    binding_note: str


class GetWorkItemResult(ResultModel):
    """One work item and the caller's focus context."""

    context: Record
    work_item: Record


class ListWorkItemsResult(ResultModel):
    """Work items matching ``filter``, at most ``limit`` of them."""

    context: Record
    filter: str
    returned: int
    total_matching: int
    limit: int
    work_items: Records


class WaitForResult(ResultModel):
    """A wait registered (scope, owner, wake, the wait condition, the brief published with it), a task
    result already there (``disposition`` ``task_result_queued`` / ``task_result_already_consumed``), or a
    deferral awaiting the round's final brief (``disposition: awaiting_final_brief``)."""

    disposition: str | None = None
    scope: str | None = None
    owner: Record | None = None
    reason: str | None = None
    wake: str | None = None
    delivery: str | None = None
    wait_condition: Record | None = None
    resource: str | None = None
    work_item_id: str | None = None
    recheck_after_ms: int | None = None
    recheck_at: str | None = None
    cancelled_wait_condition_ids: list[str] | None = None
    final_brief_id: str | None = None
    work_item: Record | None = None
    # a task result already there
    task_id: str | None = None
    result_message_id: str | None = None
    # a deferral (turn-loop spec §1.8.1)
    wait_request_id: str | None = None
    expected_output: str | None = None


class CreateTimerResult(ResultModel):
    """The timer created."""

    timer: Record


class ListTimersResult(ResultModel):
    """The agent's recent timers matching ``filter``."""

    filter: str
    limit: int
    returned: int
    total_matching: int
    timers: Records


class GetTimerResult(ResultModel):
    """One timer."""

    timer: Record


class CancelTimerResult(ResultModel):
    """The timer after a cancel, whether this call cancelled it, and the waits that ended with it."""

    timer: Record
    cancelled_transition: bool
    cancelled_wait_condition_ids: list[str] | None = None
