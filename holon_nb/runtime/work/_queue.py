"""The agent message queue: the one enqueue path, admission and processing (agents spec §1.4, §4.6).

Every message — task results, timer ticks, follow-ups, agent messages,
operator prompts, callback events — enters through :meth:`MessageQueue.enqueue`,
which inserts it and triggers the matching wait in the caller's open
transaction, so a wake can never be lost between the two (agents spec §4.6 rule 1).

Queue order: priority ``interject`` < ``next`` < ``normal`` < ``background``,
then arrival (``seq``). A message is ``queued`` until processed; the
processing call resolves the wait it triggered (agents spec §4.6 rules 3-4).
"""

from __future__ import annotations

import json
from typing import Any

from ..core._clock import fmt, utcnow
from ..core._rows import insert_queued_message, mark_message_processed, message_in, queued_messages_in
from ..core._store import new_id
from ._records import Tx, decode, fail, safe_text
from ._waiting import WaitPlane, message_trigger_kind

__all__ = ["PRIORITIES", "MessageQueue"]

#: Queue priorities, first served first (agents spec §5.4 rule 2).
PRIORITIES = ("interject", "next", "normal", "background")
#: Service order: by priority (others after ``normal``), then arrival.
_RANK = {"interject": 0, "next": 1, "normal": 2}


class MessageQueue:
    """Messages of one home's agents.

    Args:
        waits: The waiting plane (triggers and resolution).
    """

    def __init__(self, waits: WaitPlane):
        self.waits = waits

    def enqueue(
        self,
        t: Tx,
        *,
        agent_id: str,
        kind: str,
        text: str,
        origin: dict[str, Any],
        authority: str = "runtime_instruction",
        priority: str = "normal",
        work_item_id: str | None = None,
        source_refs: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        origin_task_id: str | None = None,
        turn_id: str | None = None,
    ) -> dict[str, Any]:
        """Insert a message and trigger the wait it matches, inside the open transaction ``t``.

        Args:
            agent_id: The receiving agent.
            kind: ``TaskResult`` (task results; the spec's ``task_result``), ``timer_tick``,
                ``internal_followup``, ``operator_prompt``, ``callback_event`` or ``system_tick``.
            text: The body.
            origin: ``{kind: task|timer|system|operator|external, …}`` (agents spec §1.4).
            authority: ``AuthorityClass`` (never chosen by a model).
            priority: One of :data:`PRIORITIES`.
            work_item_id: The WorkItem the message is attributed to, if any.
            source_refs: Correlation refs (``wait_id``, ``timer_id``, ``external_trigger_id``, …).
            metadata: Extra producer fields (stored as JSON).
            origin_task_id: The task a ``TaskResult`` reports on.
            turn_id: The turn that produced it; a wait registered by that turn is never triggered by it.

        Returns:
            The stored message as a dict, plus ``triggered_wait_id`` (the primary triggered
            wait, or None) and ``triggered_wait_ids`` (all of them: a timer tick may wake
            several owners, see :meth:`WaitPlane.trigger`).
        """
        msg: dict[str, Any] = {
            "id": new_id("msg"),
            "agent_id": agent_id,
            "kind": kind,
            "origin_task_id": origin_task_id,
            "text": safe_text(text),
            "metadata": metadata or {},
            "created_at": fmt(utcnow()),
            "status": "queued",
            "priority": priority,
            "authority": authority,
            "origin": origin,
            "work_item_id": work_item_id,
            "source_refs": source_refs or {},
            "turn_id": turn_id,
        }
        insert_queued_message(
            t.db,
            {
                **msg,
                "origin_task_id": origin_task_id,
                "metadata": json.dumps(msg["metadata"]),
                "origin": json.dumps(origin),
                "source_refs": json.dumps(msg["source_refs"]),
            },
        )
        waits = self.waits.trigger(t, msg)
        msg["triggered_wait_id"] = waits[0]["id"] if waits else None
        msg["triggered_wait_ids"] = [w["id"] for w in waits]
        t.emit(
            "message_enqueued",
            agent_id=agent_id,
            message_id=msg["id"],
            message_kind=kind,
            priority=priority,
            triggered_wait_id=msg["triggered_wait_id"],
        )
        return msg

    @staticmethod
    def load(db: Any, message_id: str) -> dict[str, Any] | None:
        """A decoded message, or None."""
        return decode(message_in(db, message_id))

    @staticmethod
    def queued(db: Any, agent_id: str) -> list[dict[str, Any]]:
        """The agent's queued messages in service order (priority, then arrival)."""
        rows = [decode(r) for r in queued_messages_in(db, agent_id)]
        return sorted(rows, key=lambda m: (_RANK.get(m.get("priority"), len(_RANK)), m["seq"]))

    def process(self, t: Tx, message_id: str) -> dict[str, Any]:
        """Admit and process one queued message (agents spec §4.6 rules 3-5).

        The message becomes ``processed``; the waits it triggered become ``resolved`` and
        their open owners are unblocked when ``blocked_by`` still names the wait's reason.

        Returns:
            The admission: ``{message_id, agent_id, kind, trigger_kind, consumed_wait_id,
            consumed_wait_ids, owner, continuation_class, work_item, unblocked_work_items}``
            (``consumed_wait_id``/``owner``/``work_item`` = the primary wait, its owner and its
            unblocked record or None; the ``*_ids``/``unblocked_*`` lists cover every wait).

        Raises:
            ToolFailure: ``message_not_queued`` when the message is unknown or already consumed.
        """
        msg = self.load(t.db, message_id)
        if msg is None or msg["status"] != "queued":
            raise fail(
                "message_not_queued",
                f"message {message_id} is not queued",
                {"message_id": message_id, "status": msg["status"] if msg else None},
            )
        now = fmt(utcnow())
        mark_message_processed(t.db, message_id, now)
        # a timer tick may have triggered several waits (one per owner bound to the timer): all resolve;
        # the admission binds to the one whose owner the message names, else the most recently created
        rows = t.db.execute(
            "SELECT * FROM waits WHERE trigger_message_id=? AND status='triggered' ORDER BY seq DESC", (message_id,)
        ).fetchall()
        triggered = [w for w in (decode(r) for r in rows) if w is not None]
        triggered.sort(key=lambda w: w.get("work_item_id") != msg.get("work_item_id"))
        wait = triggered[0] if triggered else None
        items = [self.waits.resolve(t, w) for w in triggered]
        item = items[0] if items else None
        if wait:
            owner = (
                {"kind": "work_item", "work_item_id": wait["work_item_id"]}
                if wait.get("work_item_id")
                else {"kind": "agent_lifecycle", "agent_id": msg["agent_id"]}
            )
            klass = "resume_expected_wait"
        else:
            owner = (
                {"kind": "work_item", "work_item_id": msg["work_item_id"]}
                if msg.get("work_item_id")
                else {"kind": "agent_lifecycle", "agent_id": msg["agent_id"]}
            )
            klass = {
                "system_tick": "liveness_only",
                "callback_event": "liveness_only",
                "internal_followup": "local_continuation",
            }.get(msg["kind"], "resume_override")
        t.emit(
            "message_processed",
            agent_id=msg["agent_id"],
            message_id=message_id,
            consumed_wait_id=wait["id"] if wait else None,
        )
        return {
            "message_id": message_id,
            "agent_id": msg["agent_id"],
            "kind": msg["kind"],
            "trigger_kind": message_trigger_kind(msg["kind"]),
            "consumed_wait_id": wait["id"] if wait else None,
            "consumed_wait_ids": [w["id"] for w in triggered],
            "owner": owner,
            "continuation_class": klass,
            "work_item": item,
            "unblocked_work_items": [i for i in items if i is not None],
        }
