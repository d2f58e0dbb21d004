"""Focus transitions: PickWorkItem and CompleteWorkItem (agents spec §3.4, §3.6, §5.13, §5.16).

Both move the agent's focus and continuation frames, and neither ever moves a
task or a wait to another work item (agents spec §3.4 rule 4). Each runs as one
transaction of :class:`~holon_nb.runtime.work._records.Tx`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._records import Tx, fail
from ._views import derive, load_context, raw_record

if TYPE_CHECKING:
    from ._agent import AgentWork

__all__ = ["complete", "pick", "todo_warning"]

_SAME_ROUND = "same_assistant_round_preceding_text"


def _load_target(w: AgentWork, t: Tx, work_item_id: str) -> dict[str, Any]:
    rec = w.svc.records.load(t.db, work_item_id)
    if rec is None:
        raise fail(
            "work_item_not_found",
            f"work item {work_item_id} was not found",
            {"work_item_id": work_item_id},
            "Use ListWorkItems to find this agent's work items.",
        )
    if rec["agent_id"] != w.agent_id:
        raise fail(
            "work_item_access_denied",
            f"work item {work_item_id} belongs to another agent",
            {"work_item_id": work_item_id},
            "Only the owning agent can pick or complete its work items.",
        )
    return rec


def _current(w: AgentWork, t: Tx) -> dict[str, Any] | None:
    cur = w.svc.records.focus(t.db, w.agent_id)["current_work_item_id"]
    rec = w.svc.records.load(t.db, cur) if cur else None
    return rec if rec is not None and rec["state"] == "open" and rec["agent_id"] == w.agent_id else None


def _clear_blocker(w: AgentWork, t: Tx, target: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """PickWorkItem rule 3: cancel every unresolved wait; clear blocker and recheck state."""
    cancelled = w.svc.waits.cancel(t, w.svc.waits.unresolved(t.db, w.agent_id, target["id"]), "clear_blocker")
    if target.get("blocked_by") or target.get("recheck_at") or target.get("recheck_consumed_at"):
        target = w.svc.records.write(
            t, target, {"blocked_by": None, "recheck_at": None, "recheck_consumed_at": None}, note="clear_blocker"
        )
    return target, cancelled


def pick(w: AgentWork, work_item_id: str, reason: str | None, clear_blocker: bool) -> dict[str, Any]:
    """PickWorkItem (agents spec §5.13). Returns the PickWorkItemResult payload.

    Raises:
        ToolFailure: ``work_item_not_found``, ``work_item_access_denied``, ``work_item_not_open``,
            ``continuation_conflict`` (the target already runs on behalf of another frame),
            ``revision_conflict``.
    """
    records = w.svc.records
    binding = w.binding
    with w.svc.tx() as t:
        target = _load_target(w, t, work_item_id)
        if target["state"] != "open":
            raise fail(
                "work_item_not_open",
                f"work item {work_item_id} is {target['state']}",
                {"work_item_id": work_item_id, "state": target["state"]},
                "Pick an open work item.",
            )
        cur = _current(w, t)
        cancelled: list[str] = []
        if clear_blocker:
            target, cancelled = _clear_blocker(w, t, target)
        ctx = load_context(t.db.execute, w.agent_id)
        d_cur = derive(cur, ctx) if cur else None
        switch = _switch(w, t, target, cur, derive(target, ctx), d_cur, reason)
        kind = switch.kind
        terminal = bool(
            kind == "yield_current"
            and binding is not None
            and binding.activation_id
            and cur is not None
            and binding.work_item_id == cur["id"]
        )
        if not terminal and kind != "same_work_item":
            changes: dict[str, Any] = {"current_work_item_id": target["id"]}
            if binding is not None and not binding.ephemeral:
                changes["current_turn_work_item_id"] = target["id"]
            records.set_focus(t, w.agent_id, **changes)
        d_after = derive(target, load_context(t.db.execute, w.agent_id))
        home = w.svc.agent_home(w.agent_id)
        transition: dict[str, Any] = {
            "current_work_item_id": target["id"],
            "current_readiness": d_after["readiness"],
            "switch_kind": kind,
            "terminal_transition": terminal,
            "blocker_cleared": bool(clear_blocker),
            "current_focus_mode": "runnable" if d_after["readiness"] == "runnable" else "inspection",
        }
        if cur is not None:
            transition["previous_work_item_id"] = cur["id"]
            transition["previous_readiness"] = d_cur["readiness"] if d_cur else None
        optional = {"reason": reason, "cancelled_wait_condition_ids": cancelled, "warnings": switch.warnings}
        transition.update({key: value for key, value in optional.items() if value})
        out: dict[str, Any] = {
            "current_work_item": raw_record(target, home),
            "current_work_item_id": target["id"],
            "transition": transition,
            "terminal_transition": terminal,
        }
        if cur is not None and cur["id"] != target["id"]:
            out["previous_work_item"] = raw_record(records.load(t.db, cur["id"]) or cur, home)
        if switch.created:
            out["continuation_created"] = switch.created
        if switch.resolved:
            out["continuation_resolved"] = switch.resolved
    out["binding_note"] = (
        "focus switch deferred: the target runs in the next activation" if terminal else "focus is durable now"
    )
    out["summary_text"] = f"picked work item {work_item_id} ({kind})"
    return out


@dataclass
class _Switch:
    """What a pick does to the frames: its ``switch_kind``, the frame it opened or resumed, and its warnings."""

    kind: str
    created: dict[str, Any] | None = None
    resolved: dict[str, Any] | None = None
    warnings: list[dict[str, str]] = field(default_factory=list)


def _switch(
    w: AgentWork,
    t: Tx,
    target: dict[str, Any],
    cur: dict[str, Any] | None,
    d_target: dict[str, Any],
    d_cur: dict[str, Any] | None,
    reason: str | None,
) -> _Switch:
    """PickWorkItem rules 4–7: classify the switch and open, resume or close continuation frames."""
    records = w.svc.records
    frames = records.frames(t.db, w.agent_id)
    suspended_in = next((f for f in frames if f["suspended_work_item_id"] == target["id"]), None)
    if cur is not None and cur["id"] == target["id"]:
        return _Switch("same_work_item")
    if suspended_in is not None:
        records.close_frame(t, suspended_in, "resumed", "explicit_pick")
        for f in frames:
            if f["created_at"] > suspended_in["created_at"] or (
                f["created_at"] == suspended_in["created_at"] and f["id"] > suspended_in["id"]
            ):
                records.close_frame(t, f, "cancelled", "current_focus_reselected")
        return _Switch("explicit_yield_return", resolved=records.frame_summary(suspended_in, "explicit_pick"))
    if cur is None:
        return _Switch("explicit_focus_pick")
    for f in frames:
        if f["suspended_work_item_id"] == cur["id"]:
            records.close_frame(t, f, "cancelled", "current_focus_reselected")
    cur_runnable = d_cur is not None and d_cur["readiness"] == "runnable"
    if cur_runnable and d_target["readiness"] != "yielded":
        if any(f["active_work_item_id"] == target["id"] for f in frames):
            raise fail(
                "continuation_conflict",
                f"work item {target['id']} is already running on behalf of another work item",
                {"work_item_id": target["id"]},
                "Complete it, or pick the item waiting for it.",
            )
        binding = w.binding
        frame = records.add_frame(t, w.agent_id, cur["id"], target["id"], reason, binding.turn_id if binding else None)
        return _Switch("yield_current", created=records.frame_summary(frame))
    switch = _Switch("explicit_focus_override")
    if cur_runnable and not reason:
        switch.warnings.append(
            {
                "code": "missing_pick_reason_for_runnable_focus_switch",
                "message": "switched away from a runnable work item without a reason",
            }
        )
    return switch


def _check_binding(w: AgentWork, t: Tx, rec: dict[str, Any]) -> None:
    """CompleteWorkItem rules 2 and 5: a binding is required and must fit this item."""
    binding = w.binding
    if binding is None:
        raise fail(
            "work_item_execution_binding_missing",
            "CompleteWorkItem needs a current execution binding",
            {"work_item_id": rec["id"]},
            "Complete work items from the agent's own turn.",
        )
    if binding.work_item_id is not None and binding.work_item_id != rec["id"]:
        raise fail(
            "work_item_execution_binding_mismatch",
            f"this execution is bound to work item {binding.work_item_id}, not {rec['id']}",
            {"work_item_id": rec["id"], "execution_work_item_id": binding.work_item_id},
            "Complete the bound work item, or pick this one first.",
        )
    if not binding.ephemeral:
        cur = w.svc.records.focus(t.db, w.agent_id)["current_execution_binding"] or {}
        if cur.get("turn_id") != binding.turn_id:
            raise fail(
                "work_item_execution_binding_stale",
                "the execution binding changed before the commit",
                {"work_item_id": rec["id"]},
                "Re-read the work item and complete it from the current turn.",
            )


def todo_warning(rec: dict[str, Any]) -> dict[str, Any] | None:
    """CompleteWorkItem rule 8 (agents spec §5.16): the ``unfinished_todos`` warning, or None."""
    todos = rec.get("todo_list") or []
    pending = [t for t in todos if t.get("state") == "pending"]
    doing = [t for t in todos if t.get("state") == "in_progress"]
    if not pending and not doing:
        return None
    return {
        "kind": "unfinished_todos",
        "pending_count": len(pending),
        "in_progress_count": len(doing),
        "message": f"{len(pending) + len(doing)} todo item(s) were not completed",
        "sample": [t for t in todos if t.get("state") != "completed"][:5],
    }


def complete(
    w: AgentWork, work_item_id: str, report: Any, *, before_commit: Callable[[Tx], None] | None = None
) -> dict[str, Any]:
    """CompleteWorkItem (agents spec §5.16, direct-call report per D11). Returns its result payload.

    ``before_commit`` joins the completion's transaction (see :meth:`WorkService.tx`), also when the
    item was already completed.

    Raises:
        ToolFailure: ``work_item_execution_binding_missing``, ``work_item_not_found``,
            ``work_item_access_denied``, ``work_item_completion_in_progress``,
            ``work_item_execution_binding_mismatch``, ``work_item_execution_binding_stale``,
            ``missing_completion_report``, ``revision_conflict``.
    """
    records = w.svc.records
    with w.svc.tx(before_commit) as t:
        if w.binding is None:
            _check_binding(w, t, {"id": work_item_id})
        rec = _load_target(w, t, work_item_id)
        if rec["state"] == "completed":
            return {
                "work_item": w.view(t.db, rec),
                "completed_transition": False,
                "completion_report_promoted": False,
                "summary_text": f"work item {work_item_id} was already completed",
            }
        if rec["state"] == "completing":
            raise fail(
                "work_item_completion_in_progress",
                f"work item {work_item_id} is already completing",
                {"work_item_id": work_item_id},
                "Wait for the completion in progress.",
            )
        _check_binding(w, t, rec)
        text = report.strip() if isinstance(report, str) else ""
        if not text:
            raise fail(
                "missing_completion_report",
                "CompleteWorkItem needs a non-empty completion report",
                {"field": "report", "work_item_id": work_item_id},
                "Pass the operator-facing report as execution context (context={'report': '…'}).",
            )
        binding = w.binding
        assert binding is not None
        warning = todo_warning(rec)
        brief = records.insert_brief(
            t, agent_id=w.agent_id, text=text, source="completion", work_item_id=work_item_id, turn_id=binding.turn_id
        )
        intent = {
            "work_item_id": work_item_id,
            "source_message_id": binding.source_message_id,
            "source_turn_id": binding.turn_id,
            "expected_work_revision": rec["revision"],
            "report_requirement": "required",
            "report_state": "bound",
            "result_brief_id": brief["id"],
        }
        if binding.activation_id:
            intent["source_activation_id"] = binding.activation_id
        rec = records.write(
            t,
            rec,
            {
                "state": "completed",
                "blocked_by": None,
                "recheck_at": None,
                "recheck_consumed_at": None,
                "result_brief_id": brief["id"],
                "completion_intent": intent,
            },
            note="CompleteWorkItem",
        )
        w.svc.waits.cancel(t, w.svc.waits.unresolved(t.db, w.agent_id, work_item_id), "work_item_completed")
        focus = records.focus(t.db, w.agent_id)
        changes: dict[str, Any] = {}
        if focus["current_work_item_id"] == work_item_id:
            changes["current_work_item_id"] = None
        if focus["current_turn_work_item_id"] == work_item_id:
            changes["current_turn_work_item_id"] = None
        resumed = None
        for f in records.frames(t.db, w.agent_id):
            if f["active_work_item_id"] == work_item_id and resumed is None:
                records.close_frame(t, f, "resumed", "active_work_item_completed")
                resumed = records.frame_summary(f, "active_work_item_completed")
                back = records.load(t.db, f["suspended_work_item_id"])
                if back is not None and back["state"] == "open":
                    changes["current_work_item_id"] = back["id"]
        if changes:
            records.set_focus(t, w.agent_id, **changes)
        out: dict[str, Any] = {
            "work_item": w.view(t.db, rec),
            "completed_transition": True,
            "completion_report_promoted": True,
            "completion_report_source": _SAME_ROUND,
        }
        if warning:
            out["warnings"] = [warning]
        if resumed:
            out["continuation_resumed"] = resumed
    out["summary_text"] = f"completed work item {work_item_id}"
    return out
