"""The work plane as one call sees it (``ctx.work``): work items, waits, timers, messages.

:class:`AgentWork` is what ``WorkService.bind(call)`` returns. It carries the
calling agent and the call's execution binding (agents spec §2: a direct
call runs under a fresh ephemeral agent-lifecycle binding, D11) and turns
each tool's validated arguments into one transaction of the records layer.

Execution context keys read here (D11): ``brief`` (WaitFor ``delivery=final``),
``report`` (CompleteWorkItem), ``binding`` (a turn loop's execution binding;
``None`` means "no binding"), ``expected_revision`` (UpdateWorkItem: the
revision the caller read, for compare-and-set across writers) and
``authority`` (the caller turn's ``AuthorityClass``; default
``operator_instruction`` for a direct call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core._clock import fmt, utcnow
from ..core._store import new_id
from ._focus import complete, pick
from ._items import revision_conflict
from ._records import Binding, Tx, fail, safe_text
from ._timers import timer_view
from ._views import derive, list_page, load_context, plan_meta_for, work_item_view
from ._waiting import StagedWait

if TYPE_CHECKING:
    from ...tools._context import CallContext
    from ._service import WorkService

__all__ = ["AUTHORITY_CLASSES", "AgentWork"]

#: ``AuthorityClass`` values (agents spec §1.4) and their legacy aliases.
AUTHORITY_CLASSES = {
    "operator_instruction": "operator_instruction",
    "runtime_instruction": "runtime_instruction",
    "integration_signal": "integration_signal",
    "external_evidence": "external_evidence",
    "trusted_operator": "operator_instruction",
    "trusted_system": "runtime_instruction",
    "trusted_integration": "integration_signal",
    "untrusted_external": "external_evidence",
}
_MISSING = object()


class AgentWork:
    """One call's view of the work plane.

    Args:
        svc: The runtime's :class:`~holon_nb.runtime.work._service.WorkService`.
        call: Who calls, and the execution context (D11).
    """

    def __init__(self, svc: WorkService, call: CallContext):
        self.svc = svc
        self.call = call
        self.agent_id = call.agent_id
        raw = call.execution.get("binding", _MISSING)
        self.binding: Binding | None = Binding.direct() if raw is _MISSING else Binding.from_context(raw)

    # ------------------------------------------------------------ helpers
    @property
    def authority(self) -> str:
        """The caller turn's authority class (never chosen by a model)."""
        value = self.call.execution.get("authority")
        return (
            AUTHORITY_CLASSES.get(value, "operator_instruction") if isinstance(value, str) else "operator_instruction"
        )

    def _owned(self, db: Any, work_item_id: str, *, unknown_kind: str = "work_item_not_found") -> dict[str, Any]:
        rec = self.svc.records.load(db, work_item_id)
        if rec is None or (unknown_kind == "unknown_work_item" and rec["agent_id"] != self.agent_id):
            raise fail(
                unknown_kind,
                f"work item {work_item_id} was not found",
                {"work_item_id": work_item_id},
                "Use ListWorkItems to find this agent's work items.",
            )
        if rec["agent_id"] != self.agent_id:
            raise fail(
                "work_item_access_denied",
                f"work item {work_item_id} belongs to another agent",
                {"work_item_id": work_item_id},
                "Only the owning agent can change a work item.",
            )
        return rec

    def _open(self, rec: dict[str, Any]) -> None:
        if rec["state"] != "open":
            raise fail(
                "work_item_not_open",
                f"work item {rec['id']} is {rec['state']}",
                {"work_item_id": rec["id"], "state": rec["state"]},
                "Only open work items change; create a new one for new work.",
            )

    def view(self, db: Any, rec: dict[str, Any], include_todo: bool = True) -> dict[str, Any]:
        """The ``WorkItemView`` of one record, derived now."""
        ctx = load_context(db.execute, rec["agent_id"])
        brief = self.svc.records.brief(db, rec.get("result_brief_id"))
        return work_item_view(
            rec, derive(rec, ctx), self.svc.agent_home(rec["agent_id"]), include_todo=include_todo, ctx=ctx, brief=brief
        )

    def _workspace_id(self) -> str:
        return self.svc.workspaces.active_workspace_id(self.call) or "agent_home"

    # ------------------------------------------------------------ work items (agents spec §5.11-§5.16)
    def create_work_item(
        self, objective: str, plan_status: str | None, plan: str | None, todo_list: list[dict[str, str]]
    ) -> dict[str, Any]:
        """CreateWorkItem (agents spec §5.11; focus per D9). Returns ``{work_item, summary_text}``."""
        wid = new_id("work")
        path = self.svc.records.plan_path(self.agent_id, wid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(safe_text(self.svc.scrubber().text(plan or "")), encoding="utf-8")  # D6
        now = fmt(utcnow())
        rec = {
            "id": wid,
            "agent_id": self.agent_id,
            "workspace_id": self._workspace_id(),
            "objective": safe_text(objective),
            "state": "open",
            "plan_status": plan_status or "draft",
            "plan_meta": plan_meta_for(path),
            "todo_list": todo_list,
            "work_refs": [],
            "created_at": now,
            "updated_at": now,
            "turn_id": None if self.binding is None or self.binding.ephemeral else self.binding.turn_id,
        }
        with self.svc.tx() as t:
            rec = self.svc.records.insert(t, rec)
            cur = self.svc.records.focus(t.db, self.agent_id)["current_work_item_id"]
            cur_rec = self.svc.records.load(t.db, cur) if cur else None
            if cur_rec is None or cur_rec["state"] != "open":
                self.svc.records.set_focus(t, self.agent_id, current_work_item_id=wid)
            view = self.view(t.db, rec)
        return {"work_item": view, "summary_text": f"created work item {wid}: {rec['objective']}"}

    def update_work_item(self, work_item_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """UpdateWorkItem (agents spec §5.12): only given fields change; compare-and-set on the revision.

        The revision checked is ``context["expected_revision"]`` when given, else the one just read.
        """
        expected = self.call.execution.get("expected_revision")
        with self.svc.tx() as t:
            rec = self._owned(t.db, work_item_id)
            self._open(rec)
            if isinstance(expected, int) and not isinstance(expected, bool) and expected != rec["revision"]:
                raise revision_conflict(work_item_id, expected, rec["revision"])
            if changes:
                changes = {**changes, "plan_meta": self.svc.records.refresh_plan(rec)}
                rec = self.svc.records.write(t, rec, changes, note="UpdateWorkItem")
            view = self.view(t.db, rec)
        return {
            "work_item": view,
            "summary_text": f"updated work item {work_item_id}" if changes else f"work item {work_item_id} unchanged",
        }

    def get_work_item(self, work_item_id: str, include_todo: bool) -> dict[str, Any]:
        """GetWorkItem (agents spec §5.14): read-only; foreign items look unknown."""
        db = self.svc.reader()
        rec = self._owned(db, work_item_id, unknown_kind="unknown_work_item")
        return {"context": self._context(db), "work_item": self.view(db, rec, include_todo)}

    def _context(self, db: Any) -> dict[str, Any]:
        cur = self.svc.records.focus(db, self.agent_id)["current_work_item_id"]
        rec = self.svc.records.load(db, cur) if cur else None
        return {"current_work_item_id": cur} if rec is not None and rec["state"] == "open" else {}

    def list_work_items(self, filter_name: str, limit: int, include_todo: bool) -> dict[str, Any]:
        """ListWorkItems (agents spec §5.15): filter, scheduler order, ``total_matching`` before the limit."""
        db = self.svc.reader()
        ctx = load_context(db.execute, self.agent_id)
        total, page = list_page(db, self.agent_id, ctx, filter_name, limit)
        home = self.svc.agent_home(self.agent_id)
        items = []
        for slim, d in page:
            rec = self.svc.records.load(db, slim["id"])
            assert rec is not None
            brief = self.svc.records.brief(db, rec.get("result_brief_id"))
            items.append(
                work_item_view(rec, d, home, include_todo=include_todo, ctx=ctx, brief=brief, compact=True)
            )  # compact list form: see work_views (agents spec §5.15 departure)
        return {
            "context": self._context(db),
            "filter": filter_name,
            "returned": len(items),
            "total_matching": total,
            "limit": limit,
            "work_items": items,
        }

    def pick_work_item(self, work_item_id: str, reason: str | None, clear_blocker: bool) -> dict[str, Any]:
        """PickWorkItem (agents spec §5.13); see :func:`holon_nb.runtime.work._focus.pick`."""
        return pick(self, work_item_id, reason, clear_blocker)

    def complete_work_item(self, work_item_id: str) -> dict[str, Any]:
        """CompleteWorkItem (agents spec §5.16) with the report from ``context["report"]`` (D11)."""
        return complete(self, work_item_id, self.call.execution.get("report"))

    # ------------------------------------------------------------ WaitFor (agents spec §5.1)
    def stage_wait(
        self,
        reason: str,
        wake: str,
        delivery: str,
        resource: str | None,
        work_item_id: str | None,
        recheck_after_ms: int | None,
    ) -> StagedWait:
        """Validate a WaitFor call and resolve its owner without committing anything (agents spec §4.5 "call time")."""
        staged = StagedWait(
            agent_id=self.agent_id,
            binding=self.binding or Binding.direct(),
            reason=reason,
            wake=wake,
            delivery=delivery,
            resource=resource,
            explicit_work_item_id=work_item_id,
            recheck_after_ms=recheck_after_ms,
        )
        return self.svc.waits.prepare(self.svc.reader(), staged)

    def settle_wait(
        self, staged: StagedWait, brief: str | None = None, *, before_commit: Callable[[Tx], None] | None = None
    ) -> dict[str, Any]:
        """Commit a staged wait in one transaction (fences re-checked, agents spec §4.5). Returns the WaitFor result.

        ``before_commit`` joins that transaction (see :meth:`WorkService.tx`).
        """
        with self.svc.tx(before_commit) as t:
            result = self.svc.waits.settle(t, staged, brief)
            item = result.pop("_work_item")
            if item is not None:
                result["work_item"] = self.view(t.db, item)
        if staged.recheck_after_ms is not None:
            self.svc.notify_timers()  # the scheduler also fires the fallback recheck
        return result

    def wait_for(
        self,
        reason: str,
        wake: str,
        delivery: str,
        resource: str | None,
        work_item_id: str | None,
        recheck_after_ms: int | None,
    ) -> dict[str, Any]:
        """WaitFor as a direct call (D11): validate, then settle at once; ``final`` needs ``context["brief"]``.

        Raises:
            ToolFailure: the errors of agents spec §5.1, and ``empty_final_brief`` for ``final`` without a brief.
        """
        staged = self.stage_wait(reason, wake, delivery, resource, work_item_id, recheck_after_ms)
        if staged.fast_path is not None:
            return dict(staged.fast_path)
        brief = None
        if delivery == "final":
            text = self.call.execution.get("brief")
            brief = text.strip() if isinstance(text, str) else ""
            if not brief:
                raise fail(
                    "empty_final_brief",
                    "WaitFor with delivery=final needs a non-empty final brief",
                    {"field": "brief", "tool_name": "WaitFor"},
                    "Pass the operator-facing brief as execution context (context={'brief': '…'}), "
                    "or use delivery=silent.",
                )
        return self.settle_wait(staged, brief)

    # ------------------------------------------------------------ timers (agents spec §5.7-§5.10)
    def create_timer(
        self, duration_ms: int | None, fire_at: str | None, interval_ms: int | None, summary: str | None
    ) -> dict[str, Any]:
        """CreateTimer: validate, persist and arm. Returns ``{timer, summary_text}``."""
        duration, due, created = self.svc.timers.resolve_schedule(duration_ms, fire_at, interval_ms)
        with self.svc.tx() as t:
            row = self.svc.timers.create(t, self.agent_id, duration, due, interval_ms, summary, created)
        self.svc.notify_timers()
        return {"timer": timer_view(row), "summary_text": f"timer {row['id']} scheduled for {row['next_fire_at']}"}

    def list_timers(self, filter_name: str, limit: int) -> dict[str, Any]:
        """ListTimers: the caller's timers, newest first."""
        total, rows = self.svc.timers.list(self.svc.reader(), self.agent_id, filter_name, limit)
        return {
            "filter": filter_name,
            "limit": limit,
            "returned": len(rows),
            "total_matching": total,
            "timers": [timer_view(r) for r in rows],
        }

    def get_timer(self, timer_id: str) -> dict[str, Any]:
        """GetTimer: ``{timer}``; another agent's timer is ``timer_not_found``."""
        return {"timer": timer_view(self.svc.timers.get(self.svc.reader(), self.agent_id, timer_id))}

    def cancel_timer(self, timer_id: str) -> dict[str, Any]:
        """CancelTimer (agents spec §5.10): idempotent for cancelled timers; cancels bound waits."""
        with self.svc.tx() as t:
            row, changed, wait_ids = self.svc.timers.cancel(t, self.agent_id, timer_id)
        if changed:
            self.svc.notify_timers()
        out: dict[str, Any] = {"timer": timer_view(row), "cancelled_transition": changed}
        if wait_ids:
            out["cancelled_wait_condition_ids"] = wait_ids
        out["summary_text"] = f"timer {timer_id} cancelled" if changed else f"timer {timer_id} was already cancelled"
        return out

    # ------------------------------------------------------------ messages (agents spec §5.3-§5.4)
    def enqueue_followup(self, text: str, priority: str) -> dict[str, Any]:
        """Enqueue (agents spec §5.4): a follow-up into the caller's own queue."""
        binding = self.binding
        with self.svc.tx() as t:
            work_item_id = binding.work_item_id if binding else None
            if work_item_id is None:
                work_item_id = self.svc.records.focus(t.db, self.agent_id)["current_turn_work_item_id"]
            self.svc.queue.enqueue(
                t,
                agent_id=self.agent_id,
                kind="internal_followup",
                text=text,
                origin={"kind": "system", "subsystem": "tool_enqueue"},
                authority=self.authority,
                priority=priority,
                work_item_id=work_item_id,
                turn_id=binding.turn_id if binding else None,
            )
        return {
            "enqueued": True,
            "priority": priority,
            "follow_up_text": text,
            "summary_text": f"enqueued follow-up: {text}",
        }

    def send_agent_message(self, target_id: str, message: str, priority: str) -> dict[str, Any]:
        """SendAgentMessage (agents spec §5.3): durable, fire-and-forget, authorized targets only."""
        self.authorize_message(target_id)
        binding = self.binding
        meta: dict[str, Any] = {"sender_agent_id": self.agent_id}
        if binding is not None and binding.work_item_id:
            meta["sender_work_item_id"] = binding.work_item_id
        with self.svc.tx() as t:
            msg = self.svc.queue.enqueue(
                t,
                agent_id=target_id,
                kind="internal_followup",
                text=message,
                origin={"kind": "system", "subsystem": "agent_message"},
                authority=self.authority,
                priority=priority,
                metadata=meta,
                turn_id=binding.turn_id if binding else None,
            )
        return {
            "agent_id": target_id,
            "message_id": msg["id"],
            "priority": priority,
            "enqueued": True,
            "summary_text": f"sent message to {target_id}",
        }

    def authorize_message(self, target_id: str) -> dict[str, Any]:
        """SendAgentMessage rules 1-3: the target exists, is active, and the caller may reach it.

        Returns:
            The target's agent record.

        Raises:
            ToolFailure: ``invalid_tool_input`` (self target), ``agent_not_found``, ``agent_deleting``,
                ``agent_deleted``, ``agent_stopped``, ``agent_message_not_authorized``.
        """
        if target_id == self.agent_id:
            raise fail(
                "invalid_tool_input",
                "SendAgentMessage cannot target the calling agent",
                {
                    "tool_name": "SendAgentMessage",
                    "field": "agent_id",
                    "validation_error": "must not be the calling agent",
                },
                "Use Enqueue to queue a follow-up for yourself.",
            )
        store = self.svc.store
        target = store.agent(target_id)
        if target is None:
            raise fail(
                "agent_not_found",
                f"agent {target_id} was not found",
                {"agent_id": target_id},
                "Use GetAgent to check the agent id.",
            )
        status = target.get("status") or "active"
        if status in ("deleting", "deleted", "stopped"):
            kind = f"agent_{status}"
            raise fail(kind, f"agent {target_id} is {status}", {"agent_id": target_id, "status": status})
        caller = store.agent(self.agent_id) or {}
        caller_profile = self.call.profile.value
        target_public = target.get("profile") == "public_named"
        allowed = (
            target_id == caller.get("parent_id")
            or (not target_public and target.get("parent_id") == self.agent_id)
            or (caller_profile == "public_named" and target_public)
        )
        if not allowed:
            raise fail(
                "agent_message_not_authorized",
                f"agent {self.agent_id} may not message agent {target_id}",
                {
                    "agent_id": target_id,
                    "caller_profile_preset": caller_profile,
                    "target_visibility": "public" if target_public else "private",
                },
                "A private child can message only its parent; message agents you supervise or public agents.",
            )
        return target
