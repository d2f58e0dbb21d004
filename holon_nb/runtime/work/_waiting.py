"""The waiting plane: wait records, WaitFor staging and atomic settlement, triggers, resolution.

Agents spec §4. ``WaitFor`` is split in two so the settlement fences (agents spec §4.5)
mean something: :meth:`WaitPlane.prepare` validates and records what the call
saw (owner revision, last message seq); :meth:`WaitPlane.settle` re-checks
those facts inside the one transaction that registers the wait (and, for
``delivery=final``, publishes the brief). A direct call runs both at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..core._clock import Clock, add_ms_saturating, fmt, utcnow
from ..core._rows import last_message_seq, messages_after, newest_task_result, task_in
from ..core._store import new_id
from ..tasks._service import TERMINAL
from ._items import WorkItemRecords
from ._records import Binding, Tx, decode, fail, safe_text
from ._views import wait_summary

__all__ = ["WAKE_KIND", "StagedWait", "WaitPlane", "message_trigger_kind"]

#: ``wake`` → wait condition ``kind`` (agents spec §4.2).
WAKE_KIND = {
    "operator_input": "operator",
    "task_result": "task",
    "external": "external",
    "timer": "timer",
    "system": "system",
}

#: Message kind → trigger kind of the activation it starts (agents spec §4.6 rule 5).
_TRIGGER_KIND = {
    "TaskResult": "task_result",
    "task_result": "task_result",
    "timer_tick": "timer_fire",
    "operator_prompt": "operator_input",
    "callback_event": "external_event",
    "internal_followup": "internal_followup",
    "system_tick": "system_tick",
}

_UNRESOLVED = ("active", "triggered")


def message_trigger_kind(kind: str) -> str:
    """The activation trigger kind of a message kind (``timer_tick`` → ``timer_fire``)."""
    return _TRIGGER_KIND.get(kind, "internal_followup")


@dataclass
class StagedWait:
    """A validated WaitFor registration not yet committed (agents spec §4.5).

    Attributes:
        owner_work_item_id: The resolved WorkItem owner, or None for the agent lifecycle.
        seen_revision: The owner's revision when the call was validated.
        seen_seq: The highest message seq when the call was validated (wake / interjection fences).
        fast_path: For a terminal task, the finished result payload (nothing to settle).
    """

    agent_id: str
    binding: Binding
    reason: str
    wake: str
    delivery: str
    resource: str | None
    explicit_work_item_id: str | None
    recheck_after_ms: int | None
    owner_work_item_id: str | None = None
    seen_revision: int | None = None
    seen_seq: int = 0
    wake_sources: list[dict[str, Any]] = field(default_factory=list)
    wait_request_id: str = field(default_factory=lambda: new_id("waitreq"))
    fast_path: dict[str, Any] | None = None

    @property
    def owner(self) -> dict[str, Any]:
        """``{kind:"work_item", work_item_id}`` or ``{kind:"agent_lifecycle", agent_id}``."""
        if self.owner_work_item_id:
            return {"kind": "work_item", "work_item_id": self.owner_work_item_id}
        return {"kind": "agent_lifecycle", "agent_id": self.agent_id}

    @property
    def scope(self) -> str:
        """``work_item`` or ``agent``."""
        return "work_item" if self.owner_work_item_id else "agent"

    def deferred_payload(self) -> dict[str, Any]:
        """The ``deferred`` WaitFor payload of a model turn awaiting its final brief (agents spec §5.1)."""
        return {
            "disposition": "awaiting_final_brief",
            "wait_request_id": self.wait_request_id,
            "delivery": "final",
            "expected_output": "final_text_only",
            "scope": self.scope,
            "owner": self.owner,
            "wake": self.wake,
            "reason": self.reason,
            "summary_text": "awaiting final brief before waiting",
        }


class WaitPlane:
    """Wait conditions of one home.

    Args:
        records: The work-item record layer (for blocker writes).
    """

    def __init__(self, records: WorkItemRecords, clock: Clock | None = None):
        self.records = records
        self.clock = clock or Clock()  #: dates a wait's ``recheck_at``

    # ------------------------------------------------------------ reads
    @staticmethod
    def load(db: Any, wait_id: str) -> dict[str, Any] | None:
        """A decoded wait row, or None."""
        return decode(db.execute("SELECT * FROM waits WHERE id=?", (wait_id,)).fetchone())

    @staticmethod
    def unresolved(db: Any, agent_id: str, work_item_id: str | None) -> list[dict[str, Any]]:
        """Active or triggered waits of one owner (``work_item_id`` None = agent level)."""
        if work_item_id is None:
            rows = db.execute(
                "SELECT * FROM waits WHERE agent_id=? AND work_item_id IS NULL"
                " AND status IN ('active','triggered') ORDER BY created_at",
                (agent_id,),
            )
        else:
            rows = db.execute(
                "SELECT * FROM waits WHERE agent_id=? AND work_item_id=?"
                " AND status IN ('active','triggered') ORDER BY created_at",
                (agent_id, work_item_id),
            )
        return [decode(r) for r in rows.fetchall()]

    # ------------------------------------------------------------ WaitFor: validate (agents spec §5.1 rules 3-7)
    def prepare(self, db: Any, staged: StagedWait) -> StagedWait:
        """Validate a WaitFor call and resolve its owner (agents spec §4.3, §5.1).

        Raises:
            ToolFailure: ``task_not_found``, ``task_agent_mismatch``, ``task_work_item_mismatch``,
                ``task_result_evidence_missing``, ``timer_not_found``, ``timer_not_active``,
                ``work_item_not_found``, ``work_item_access_denied``, ``work_item_completed``,
                ``wait_owner_binding_mismatch``.
        """
        staged.seen_seq = last_message_seq(db)
        if staged.wake == "task_result":
            self._prepare_task(db, staged)
            if staged.fast_path is not None:
                return staged
        else:
            if staged.wake == "timer":
                timer = self._timer(db, staged)
                staged.wake_sources = [{"kind": "timer", "wake_at": timer["next_fire_at"]}]
            elif staged.wake == "operator_input":
                staged.wake_sources = [{"kind": "operator_input"}]
            elif staged.wake == "external":
                staged.wake_sources = [{"kind": "external_ingress", "external_trigger_id": None}]
            else:
                staged.wake_sources = [{"kind": "system_tick"}]
            staged.owner_work_item_id = self._resolve_owner(db, staged)
        if staged.owner_work_item_id:
            rec = self._owned_open(db, staged.agent_id, staged.owner_work_item_id)
            staged.seen_revision = rec["revision"]
        bound = staged.binding.work_item_id
        if bound is not None and staged.owner_work_item_id != bound:
            raise fail(
                "wait_owner_binding_mismatch",
                f"this execution is bound to work item {bound}, so it cannot settle a wait owned by "
                f"{staged.owner_work_item_id or 'the agent lifecycle'}",
                {"execution_work_item_id": bound, "owner": staged.owner},
                "Wait on the bound work item, or let the owning work item's own turn wait.",
            )
        return staged

    def _prepare_task(self, db: Any, staged: StagedWait) -> None:
        task_id = staged.resource or ""
        row = task_in(db, task_id)
        if row is None:
            raise fail(
                "task_not_found",
                f"task {task_id} was not found",
                {"task_id": task_id},
                "Use ListTasks for active tasks, or the task_id from the promotion receipt.",
            )
        if row["agent_id"] != staged.agent_id:
            raise fail(
                "task_agent_mismatch",
                f"task {task_id} belongs to another agent",
                {"task_id": task_id},
                "Wait only on tasks this agent started.",
            )
        owner = row["work_item_id"]
        explicit = staged.explicit_work_item_id
        if explicit is not None and explicit != owner:
            raise fail(
                "task_work_item_mismatch",
                f"task {task_id} belongs to {owner or 'the agent lifecycle'}, not work item {explicit}",
                {"task_id": task_id, "task_work_item_id": owner, "work_item_id": explicit},
                "Omit work_item_id: a task_result wait is owned by the task's captured work item.",
            )
        staged.owner_work_item_id = owner
        staged.wake_sources = [{"kind": "task_result", "task_id": task_id}]
        if row["status"] in TERMINAL:
            staged.fast_path = self._task_fast_path(db, task_id)

    @staticmethod
    def _task_fast_path(db: Any, task_id: str) -> dict[str, Any]:
        msg = newest_task_result(db, task_id)
        if msg is None:
            raise fail(
                "task_result_evidence_missing",
                f"task {task_id} ended but its result message is missing",
                {"task_id": task_id},
                "Read the task with TaskOutput instead of waiting for it.",
            )
        if msg["status"] == "queued":
            return {
                "disposition": "task_result_queued",
                "task_id": task_id,
                "result_message_id": msg["id"],
                "summary_text": f"task result already completed; queued exact result message {msg['id']}",
            }
        return {
            "disposition": "task_result_already_consumed",
            "task_id": task_id,
            "result_message_id": msg["id"],
            "summary_text": f"task result was already consumed: {msg['id']}",
        }

    @staticmethod
    def _timer(db: Any, staged: StagedWait) -> dict[str, Any]:
        timer_id = staged.resource or ""
        row = db.execute("SELECT * FROM timers WHERE id=?", (timer_id,)).fetchone()
        if row is None or row["agent_id"] != staged.agent_id:
            raise fail(
                "timer_not_found",
                f"timer {timer_id} was not found",
                {"timer_id": timer_id},
                "Use ListTimers to find this agent's timers, or CreateTimer first.",
            )
        if row["status"] not in ("active", "scheduled") or not row["next_fire_at"]:
            raise fail(
                "timer_not_active",
                f"timer {timer_id} is {row['status']} and will not fire",
                {"timer_id": timer_id, "status": row["status"]},
                "Create a new timer and wait on that.",
            )
        return dict(row)

    def _resolve_owner(self, db: Any, staged: StagedWait) -> str | None:
        """explicit → execution binding → turn binding → open focus → agent lifecycle (agents spec §4.3)."""
        if staged.explicit_work_item_id:
            return staged.explicit_work_item_id
        if staged.binding.work_item_id:
            return staged.binding.work_item_id
        focus = self.records.focus(db, staged.agent_id)
        if focus["current_turn_work_item_id"]:
            return focus["current_turn_work_item_id"]
        current = focus["current_work_item_id"]
        if current:
            rec = self.records.load(db, current)
            if rec is not None and rec["state"] == "open" and rec["agent_id"] == staged.agent_id:
                return current
        return None

    def _owned_open(self, db: Any, agent_id: str, work_item_id: str) -> dict[str, Any]:
        rec = self.records.load(db, work_item_id)
        if rec is None:
            raise fail(
                "work_item_not_found",
                f"work item {work_item_id} was not found",
                {"work_item_id": work_item_id},
                "Use ListWorkItems to find open work items.",
            )
        if rec["agent_id"] != agent_id:
            raise fail(
                "work_item_access_denied",
                f"work item {work_item_id} belongs to another agent",
                {"work_item_id": work_item_id},
                "Only the owning agent can wait on its work items.",
            )
        if rec["state"] != "open":
            raise fail(
                "work_item_completed",
                f"work item {work_item_id} is {rec['state']}",
                {"work_item_id": work_item_id, "state": rec["state"]},
                "Wait on an open work item, or at agent scope.",
            )
        return rec

    # ------------------------------------------------------------ WaitFor: settle (agents spec §4.4-§4.5)
    def fence(self, db: Any, staged: StagedWait) -> str | None:
        """The first failed settlement fence's reason, or None when every fence holds (agents spec §4.5)."""
        if not staged.binding.ephemeral:
            cur = self.records.focus(db, staged.agent_id)["current_execution_binding"] or {}
            if cur.get("turn_id") != staged.binding.turn_id:
                return "execution_binding_changed"
        if staged.owner_work_item_id:
            rec = self.records.load(db, staged.owner_work_item_id)
            if rec is None:
                return "work_item_missing"
            if rec["state"] != "open" or rec["revision"] != staged.seen_revision:
                return "work_item_revision_changed"
        if staged.wake == "task_result":
            row = task_in(db, staged.resource or "")
            if row is None or row["status"] in TERMINAL:
                return "task_result_arrived"
        rows = messages_after(db, staged.agent_id, staged.seen_seq)
        for row in rows:
            msg = decode(row)
            assert msg is not None
            if msg["kind"] == "operator_prompt" and msg.get("priority") == "interject":
                return "interjection_arrived"
            probe = {
                "id": "",
                "kind": WAKE_KIND[staged.wake],
                "work_item_id": staged.owner_work_item_id,
                "wake_sources": staged.wake_sources,
                "subject_ref": staged.resource,
                "turn_id": None,
            }
            if _matches(msg, probe):
                return "wake_arrived"
        return None

    def settle(self, t: Tx, staged: StagedWait, brief_text: str | None = None) -> dict[str, Any]:
        """Register the staged wait in the open transaction ``t`` (fences first).

        Returns:
            The WaitFor result payload (``wait_condition``, ``owner``, ``scope``, …; ``final_brief_id``
            when ``brief_text`` is given).

        Raises:
            ToolFailure: ``wait_settlement_stale`` (``details.reason``) when a fence fails;
                ``revision_conflict`` if the owner moved under the compare-and-set; ``timer_not_active`` /
                ``timer_not_found`` when a ``wake=timer`` wait's timer was cancelled (or removed) since
                :meth:`prepare` read it.
        """
        if staged.wake == "timer":
            # issue 25 item 5: read again in this transaction, so a CancelTimer committed since the call (another
            # runtime on the home) is seen; its cancel found no wait to cancel, this one would block forever
            self._timer(t.db, staged)
        reason = self.fence(t.db, staged)
        if reason is not None:
            raise fail(
                "wait_settlement_stale",
                f"the wait was not registered: {reason.replace('_', ' ')}",
                {"reason": reason, "wait_request_id": staged.wait_request_id},
                "Re-read the state (something changed since the call) and decide again.",
                retryable=True,
            )
        now = self.clock.now()
        stamp = fmt(now)
        cancelled = self.cancel(t, self.unresolved(t.db, staged.agent_id, staged.owner_work_item_id), "replaced")
        recheck_at = (
            fmt(add_ms_saturating(now, staged.recheck_after_ms)) if staged.recheck_after_ms is not None else None
        )
        continuation = {
            "created_by": "WaitFor",
            "wake": staged.wake,
            "resource": staged.resource,
            "recheck_after_ms": staged.recheck_after_ms,
            "recheck_at": recheck_at,
            "recovery": {"kind": "recoverable", "recheck_source": "WaitFor"} if recheck_at else None,
            "clear_blocker_on_task_result": staged.wake == "task_result",
            "delivery": staged.delivery,
        }
        wait: dict[str, Any] = {
            "id": new_id("wait"),
            "agent_id": staged.agent_id,
            "work_item_id": staged.owner_work_item_id,
            "status": "active",
            "kind": WAKE_KIND[staged.wake],
            "source": "WaitFor",
            "subject_ref": staged.resource,
            "waiting_for": staged.reason,
            "wake_sources": staged.wake_sources,
            "continuation": continuation,
            "created_at": stamp,
            "updated_at": stamp,
            "turn_id": staged.binding.turn_id,
        }
        t.db.execute(
            "INSERT INTO waits(id, agent_id, work_item_id, status, kind, source, subject_ref, waiting_for,"
            " wake_sources, continuation, created_at, updated_at, turn_id, recheck_at, seq)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?, (SELECT COALESCE(MAX(seq),0)+1 FROM waits))",
            (
                wait["id"],
                wait["agent_id"],
                wait["work_item_id"],
                "active",
                wait["kind"],
                "WaitFor",
                wait["subject_ref"],
                safe_text(staged.reason),
                json.dumps(staged.wake_sources),
                json.dumps(continuation),
                stamp,
                stamp,
                wait["turn_id"],
                recheck_at,
            ),
        )
        t.emit(
            "wait_changed",
            agent_id=staged.agent_id,
            wait_id=wait["id"],
            status="active",
            work_item_id=staged.owner_work_item_id,
        )
        item = None
        if staged.owner_work_item_id:
            item = self._block_owner(t, staged, recheck_at)
        result: dict[str, Any] = {
            "scope": staged.scope,
            "owner": staged.owner,
            "reason": staged.reason,
            "wake": staged.wake,
            "delivery": staged.delivery,
            "wait_condition": wait_summary(wait),
        }
        for key, value in (
            ("resource", staged.resource),
            ("work_item_id", staged.owner_work_item_id),
            ("recheck_after_ms", staged.recheck_after_ms),
            ("recheck_at", recheck_at),
        ):
            if value is not None:
                result[key] = value
        if cancelled:
            result["cancelled_wait_condition_ids"] = cancelled
        if brief_text is not None:
            brief = self.records.insert_brief(
                t,
                agent_id=staged.agent_id,
                text=brief_text,
                source="wait_final",
                work_item_id=staged.owner_work_item_id,
                wait_id=wait["id"],
                turn_id=staged.binding.turn_id,
            )
            result["final_brief_id"] = brief["id"]
        result["_work_item"] = item
        scope = "waiting on work item" if staged.owner_work_item_id else "waiting at agent scope"
        result["summary_text"] = f"{scope}: {staged.reason}"
        return result

    def _block_owner(self, t: Tx, staged: StagedWait, recheck_at: str | None) -> dict[str, Any]:
        rec = self.records.load(t.db, staged.owner_work_item_id or "")
        assert rec is not None
        rec = self.records.write(
            t,
            rec,
            {"blocked_by": staged.reason, "recheck_at": recheck_at, "recheck_consumed_at": None},
            expected=staged.seen_revision,
            note="wait_registered",
        )
        focus = self.records.focus(t.db, staged.agent_id)
        changes: dict[str, Any] = {}
        if focus["current_turn_work_item_id"] == rec["id"]:
            changes["current_turn_work_item_id"] = None
        if staged.wake == "operator_input" and focus["current_work_item_id"] == rec["id"]:
            changes["current_work_item_id"] = None
        if changes:
            self.records.set_focus(t, staged.agent_id, **changes)
        return rec

    # ------------------------------------------------------------ cancel / clear
    @staticmethod
    def cancel(t: Tx, waits: list[dict[str, Any]], reason: str) -> list[str]:
        """Mark unresolved waits ``cancelled``; return their ids."""
        now = fmt(utcnow())
        ids = []
        for w in waits:
            t.db.execute(
                "UPDATE waits SET status='cancelled', cancelled_at=?, updated_at=? WHERE id=?"
                " AND status IN ('active','triggered')",
                (now, now, w["id"]),
            )
            t.emit(
                "wait_changed",
                agent_id=w["agent_id"],
                wait_id=w["id"],
                status="cancelled",
                work_item_id=w.get("work_item_id"),
                reason=reason,
            )
            ids.append(w["id"])
        return ids

    def clear_blocker(self, t: Tx, wait: dict[str, Any], note: str) -> dict[str, Any] | None:
        """Unblock the wait's open owner when its ``blocked_by`` is still this wait's reason (revision + 1)."""
        if not wait.get("work_item_id"):
            return None
        rec = self.records.load(t.db, wait["work_item_id"])
        if rec is None or rec["state"] != "open" or rec.get("blocked_by") != wait["waiting_for"]:
            return None
        return self.records.write(
            t, rec, {"blocked_by": None, "recheck_at": None, "recheck_consumed_at": None}, note=note
        )

    def cancel_for_timer(self, t: Tx, agent_id: str, timer_id: str) -> list[str]:
        """CancelTimer rule 5: cancel the timer's unresolved waits and clear their owners' blockers."""
        rows = t.db.execute(
            "SELECT * FROM waits WHERE agent_id=? AND kind='timer' AND subject_ref=?"
            " AND status IN ('active','triggered')",
            (agent_id, timer_id),
        ).fetchall()
        waits = [decode(r) for r in rows]
        ids = self.cancel(t, waits, "timer_cancelled")
        for w in waits:
            self.clear_blocker(t, w, "timer_cancelled")
        return ids

    # ------------------------------------------------------------ trigger and resolve (agents spec §4.6)
    def trigger(self, t: Tx, msg: dict[str, Any]) -> list[dict[str, Any]]:
        """Trigger the active waits a just-enqueued message matches, in the enqueue's transaction.

        agents spec §4.6 rule 1: the wait correlated by ``source_refs.wait_id``, else the most recently
        updated match. Review fix (a user calls the upstream rule a bug): a ``timer_tick``
        triggers *every* active wait bound to its timer (``subject_ref`` = the timer id) —
        each of a different owner, since registering a wait cancels the owner's others —
        so two work items parked on one timer both wake; of the unbound timer waits
        (``subject_ref`` null) only the most recent is triggered, as before.

        Returns:
            The triggered waits, the primary one (the message's admission owner) first;
            empty when nothing matched.
        """
        rows = t.db.execute(
            "SELECT * FROM waits WHERE agent_id=? AND status='active' ORDER BY updated_at, seq", (msg["agent_id"],)
        ).fetchall()
        waits = [w for w in (decode(r) for r in rows) if w is not None]
        waits = [w for w in waits if not (msg.get("turn_id") and w.get("turn_id") == msg["turn_id"])]
        matched = [w for w in waits if _matches(msg, w)]
        if not matched:
            return []
        wanted = (msg.get("source_refs") or {}).get("wait_id")
        chosen = next((w for w in matched if w["id"] == wanted), None) if wanted else None
        if chosen is not None:
            picked = [chosen]
        elif msg["kind"] == "timer_tick":
            bound = [w for w in matched if w.get("subject_ref") is not None]
            unbound = [w for w in matched if w.get("subject_ref") is None]
            picked = [*reversed(bound), *unbound[-1:]]
            picked.sort(key=lambda w: w is not matched[-1])  # the most recent match stays primary
        else:
            picked = [matched[-1]]
        now = fmt(utcnow())
        out = []
        for wait in picked:
            t.db.execute(
                "UPDATE waits SET status='triggered', trigger_message_id=?, triggered_at=?, updated_at=? WHERE id=?",
                (msg["id"], now, now, wait["id"]),
            )
            t.emit(
                "wait_changed",
                agent_id=wait["agent_id"],
                wait_id=wait["id"],
                status="triggered",
                work_item_id=wait.get("work_item_id"),
                trigger_message_id=msg["id"],
            )
            out.append({**wait, "status": "triggered", "trigger_message_id": msg["id"], "triggered_at": now})
        return out

    def resolve(self, t: Tx, wait: dict[str, Any]) -> dict[str, Any] | None:
        """Resolve a triggered wait whose message is being processed; unblock its owner (agents spec §4.6 rule 4).

        Returns:
            The owner's new record when its blocker was cleared, else None.
        """
        now = fmt(utcnow())
        t.db.execute(
            "UPDATE waits SET status='resolved', resolved_at=?, updated_at=? WHERE id=?", (now, now, wait["id"])
        )
        t.emit(
            "wait_changed",
            agent_id=wait["agent_id"],
            wait_id=wait["id"],
            status="resolved",
            work_item_id=wait.get("work_item_id"),
        )
        return self.clear_blocker(t, wait, "wait_resolved")


def _matches(msg: dict[str, Any], wait: dict[str, Any]) -> bool:
    """Match rules of agents spec §4.6 rule 2 (``wait`` is a decoded row or a staged probe)."""
    kind, sources = msg["kind"], wait["wake_sources"]
    refs = msg.get("source_refs") or {}
    origin = msg.get("origin") or {}
    if kind in ("TaskResult", "task_result"):
        task_id = msg.get("origin_task_id") or origin.get("task_id")
        return any(s.get("kind") == "task_result" and s.get("task_id") == task_id for s in sources)
    if kind == "timer_tick":
        timer_id = origin.get("timer_id") or refs.get("timer_id")
        return any(s.get("kind") == "timer" for s in sources) and wait.get("subject_ref") in (None, timer_id)
    if kind == "operator_prompt":
        return any(s.get("kind") == "operator_input" for s in sources) and wait.get("work_item_id") == msg.get(
            "work_item_id"
        )
    if kind == "callback_event":
        trigger_id = refs.get("external_trigger_id") or origin.get("external_trigger_id")
        return refs.get("wait_id") == wait["id"] and any(
            s.get("kind") == "external_ingress" and s.get("external_trigger_id") in (None, trigger_id) for s in sources
        )
    if kind == "system_tick":
        if refs.get("wait_id"):
            return refs["wait_id"] == wait["id"]
        return any(s.get("kind") == "system_tick" for s in sources)
    return False
