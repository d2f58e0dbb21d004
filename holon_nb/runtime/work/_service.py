"""The work service: work items, the waiting plane, timers and the message queue (agents spec §3-§5).

``rt.work`` is one :class:`WorkService` per runtime. Tool handlers reach the
calling agent's view through ``ctx.work`` (:class:`~holon_nb.runtime.work._agent.AgentWork`);
the service itself offers what a scheduler, a board or a test needs: the
message queue (enqueue, process), record reads, a board and the GetAgent facts.

Every state transition is one SQLite transaction (``with self.tx() as t``)
that publishes its runtime events after the commit: ``work_item_changed``,
``focus_changed``, ``wait_changed``, ``timer_changed``, ``timer_fired``,
``message_enqueued``, ``message_processed``, ``brief_published``.

Example::

    with Runtime(home="/tmp/h") as rt:
        rt.call("CreateWorkItem", {"objective": "ship v2"})
        rt.work.board("default")
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...tools._context import CallContext
from ..core._rows import backfill_task_messages, message_count, newest_task_result, task_in
from ..tasks._service import TERMINAL
from ._agent import AgentWork
from ._items import WorkItemRecords
from ._queue import MessageQueue
from ._records import Tx, decode, ensure_schema, transaction
from ._timers import TimerPlane, timer_view
from ._views import derive, load_context, raw_record, wait_summary
from ._waiting import WaitPlane

if TYPE_CHECKING:
    from ..core._clock import Clock
    from ..core._store import Store
    from ._ports import ActiveWorkspace, EventSink, MemoryIndex, ScrubberSource, WorkLoop

__all__ = ["WorkService"]


class _Rows:
    def __init__(self, rows: list[Any]):
        self._rows = rows

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return list(self._rows)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


class _Reader:
    """A read-only ``execute`` over the store (each query under the store lock)."""

    def __init__(self, store: Store):
        self._store = store

    def execute(self, sql: str, params: Any = ()) -> _Rows:
        return _Rows(self._store.query(sql, tuple(params)))


class _TaskEvents(threading.local):
    """The events of the task messages a thread queued, published once their transaction committed."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []


class WorkService:
    """Work items, the waiting plane, timers and the message queue of one runtime.

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store.
        clock: The clock that schedules timers and waits' rechecks (``settings.clock``).
        agent_homes: ``agent_id -> Path`` of each agent's home (created on demand).
        memory: The memory index work items and briefs are written to, in their transaction.
        workspaces: Tells a call's active workspace (a new work item records it).
        scrubber: The runtime's current D6 scrubber (a plan is scrubbed before it is written).
        publish: The runtime's event sink.
        loop: The runtime's loop thread (events are published there; the timer scheduler runs there).

    Attributes:
        records: Work-item records (:class:`~.work_items.WorkItemRecords`).
        waits: The waiting plane (:class:`~.waiting.WaitPlane`).
        queue: The message queue (:class:`~.queue.MessageQueue`).
        timers: Timers and their scheduler (:class:`~.timers.TimerPlane`).
    """

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        agent_homes: Callable[[str], Path],
        memory: MemoryIndex,
        workspaces: ActiveWorkspace,
        scrubber: ScrubberSource,
        publish: EventSink,
        loop: WorkLoop,
    ):
        self.store = store
        self.agent_home = agent_homes
        self.workspaces = workspaces
        self.scrubber = scrubber
        self._publish = publish
        self._loop = loop
        ensure_schema(store)
        self.records = WorkItemRecords(agent_homes, memory.index)
        self.waits = WaitPlane(self.records, clock)
        self.queue = MessageQueue(self.waits)
        self.timers = TimerPlane(store, self.publish, self.queue, self.waits, clock, self.notify_timers)
        self._local = _TaskEvents()
        self._backfill_task_messages()

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Re-arm durable state after a (re)start and start the timer scheduler (agents spec §4.7, D7).

        Called from the constructing thread once the loop thread runs.
        """
        self.timers.rearm_after_restart()
        self.catch_up_task_waits()
        self._loop.portal_call(self._loop.start_soon, self.timers.run)  # task groups start on their own thread

    def bind(self, call: CallContext) -> AgentWork:
        """The view one tool call sees (its agent and execution binding)."""
        return AgentWork(self, call)

    async def close(self) -> None:
        """Stop the timer scheduler (awaited on the loop thread while the runtime closes)."""
        await self.timers.stop()

    # ------------------------------------------------------------ plumbing
    @contextmanager
    def tx(self, before_commit: Callable[[Tx], None] | None = None) -> Iterator[Tx]:
        """One transition: commits, then publishes the queued events.

        Args:
            before_commit: Run as ``before_commit(t)`` after the body, inside the same transaction, when the
                body did not raise (also after a ``return`` from inside the ``with``). A model turn passes its
                terminal write here so "wait registration + turn terminal" (agents spec §4.5) and
                "completion + turn terminal" (agents spec §5.16 rule 6) are one commit.
        """
        with transaction(self.store, self.publish) as t:
            yield t
            if before_commit is not None:
                before_commit(t)

    def publish(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Publish a runtime event on the runtime thread (subscribers expect it there)."""
        loop = self._loop
        if not loop.in_loop_thread() and loop.alive and loop.portal is not None:
            try:
                loop.portal.call(lambda: self._publish(kind, task_id, **data))
                return
            except RuntimeError:
                pass  # the loop is stopping: deliver here instead
        self._publish(kind, task_id, **data)

    def _backfill_task_messages(self) -> None:
        """Give ``TaskResult`` messages written without the queue columns (before this service was
        constructed, e.g. by restart reconciliation) their origin, authority and work item."""
        with self.store.tx() as db:
            backfill_task_messages(db)

    def reader(self) -> _Reader:
        """A read-only ``execute``-style view of the store (not a snapshot across queries)."""
        return _Reader(self.store)

    def notify_timers(self) -> None:
        """Wake the scheduler after a timer changed; safe from any thread."""
        loop = self._loop
        if loop.in_loop_thread():
            self.timers.notify()
        elif loop.alive and loop.portal is not None:
            try:
                loop.portal.call(self.timers.notify)
            except RuntimeError:
                pass  # the loop is stopping

    # ------------------------------------------------------------ task plane hooks (agents spec §3.4 rule 3, §4.6)
    def captured_work_item(self, agent_id: str) -> str | None:
        """The ``work_item_id`` a task records at creation: turn binding, else focus, else None (agents spec §3.4 rule 3)."""
        focus = self.records.focus(self.reader(), agent_id)
        return focus["current_turn_work_item_id"] or focus["current_work_item_id"]

    def enqueue_task_message(
        self,
        db: sqlite3.Connection,
        agent_id: str,
        kind: str,
        text: str,
        task_id: str | None,
        metadata: dict[str, Any] | None,
    ) -> str:
        """TaskService's enqueue path: the ``TaskResult`` message plus its wait trigger, in the task's transaction."""
        t = Tx(db)
        task = task_in(db, task_id) if task_id else None
        work_item_id = task["work_item_id"] if task else None
        msg = self.queue.enqueue(
            t,
            agent_id=agent_id,
            kind=kind,
            text=text,
            origin={"kind": "task", "task_id": task_id},
            authority="runtime_instruction",
            work_item_id=work_item_id,
            metadata={**(metadata or {}), "work_item_id": work_item_id},
            origin_task_id=task_id,
        )
        self._local.events = [*self._local.events, *t.events]
        return msg["id"]

    def flush_task_events(self) -> None:
        """Publish the events of the task messages queued on this thread (their transaction committed)."""
        events, self._local.events = self._local.events, []
        for kind, data in events:
            self.publish(kind, None, **data)

    def catch_up_task_waits(self) -> int:
        """Trigger active task waits whose task already ended (results written before this service ran).

        Returns:
            How many waits were triggered.
        """
        count = 0
        for row in self.store.query("SELECT subject_ref FROM waits WHERE status='active' AND kind='task'"):
            task = self.store.task(row[0] or "")
            if task is None or task["status"] not in TERMINAL:
                continue
            with self.tx() as t:
                msg = decode(newest_task_result(t.db, task["id"], queued_only=True))
                if msg is not None and self.waits.trigger(t, msg):
                    count += 1
        return count

    # ------------------------------------------------------------ turn bindings (agents spec §2, for a turn loop)
    def begin_execution(self, agent_id: str, binding: dict[str, Any]) -> None:
        """Record a model turn's execution binding as the agent's current one (agents spec §2).

        Tools called with ``context={"binding": binding}`` then pass the binding fences
        (``execution_binding_changed``, ``work_item_execution_binding_stale``) while it stays
        current; ``binding["work_item_id"]`` becomes ``current_turn_work_item_id``.
        """
        with self.tx() as t:
            self.records.set_focus(
                t, agent_id, current_execution_binding=binding, current_turn_work_item_id=binding.get("work_item_id")
            )

    def end_execution(self, agent_id: str, turn_id: str) -> None:
        """Clear the agent's current execution binding if it is still the turn ``turn_id``."""
        with self.tx() as t:
            cur = self.records.focus(t.db, agent_id)["current_execution_binding"] or {}
            if cur.get("turn_id") == turn_id:
                self.records.set_focus(t, agent_id, current_execution_binding=None, current_turn_work_item_id=None)

    # ------------------------------------------------------------ the queue (agents spec §1.4, §4.6)
    def enqueue(self, agent_id: str, kind: str, text: str, **fields: Any) -> dict[str, Any]:
        """Enqueue one message in its own transaction (see :meth:`MessageQueue.enqueue` for ``fields``)."""
        fields.setdefault("origin", {"kind": "system"})
        with self.tx() as t:
            return self.queue.enqueue(t, agent_id=agent_id, kind=kind, text=text, **fields)

    def operator_prompt(
        self, agent_id: str, text: str, work_item_id: str | None = None, priority: str = "normal"
    ) -> dict[str, Any]:
        """Queue operator input (wakes an ``operator_input`` wait of the same owner)."""
        return self.enqueue(
            agent_id,
            "operator_prompt",
            text,
            origin={"kind": "operator"},
            authority="operator_instruction",
            priority=priority,
            work_item_id=work_item_id,
        )

    def callback_event(
        self, agent_id: str, text: str, wait_id: str, external_trigger_id: str | None = None
    ) -> dict[str, Any]:
        """Queue an external callback correlated with ``wait_id`` (wakes that ``external`` wait)."""
        return self.enqueue(
            agent_id,
            "callback_event",
            text,
            origin={"kind": "external", "external_trigger_id": external_trigger_id},
            authority="external_evidence",
            source_refs={"wait_id": wait_id, "external_trigger_id": external_trigger_id},
        )

    def system_tick(self, agent_id: str, wait_id: str | None = None, text: str = "system tick") -> dict[str, Any]:
        """Queue a system tick (wakes a ``system`` wait, or the correlated wait ``wait_id``)."""
        return self.enqueue(
            agent_id,
            "system_tick",
            text,
            origin={"kind": "system", "subsystem": "scheduler"},
            source_refs={"wait_id": wait_id} if wait_id else {},
        )

    def process_message(self, message_id: str) -> dict[str, Any]:
        """Admit and process one queued message: its wait resolves, its owner unblocks (agents spec §4.6 rules 3-5).

        Returns:
            The admission dict of :meth:`MessageQueue.process` (``work_item`` as a raw record or None).

        Raises:
            ToolFailure: ``message_not_queued``.
        """
        with self.tx() as t:
            adm = self.queue.process(t, message_id)
        if adm["work_item"] is not None:
            adm["work_item"] = raw_record(adm["work_item"], self.agent_home(adm["agent_id"]))
        return adm

    def queued(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's queued messages in service order (priority, then arrival)."""
        return self.queue.queued(self.reader(), agent_id)

    # ------------------------------------------------------------ reads for boards, tests, GetAgent
    def record(self, work_item_id: str) -> dict[str, Any] | None:
        """The raw work-item record (revision included), or None."""
        rec = self.records.load(self.reader(), work_item_id)
        return raw_record(rec, self.agent_home(rec["agent_id"])) if rec else None

    def waits_of(self, agent_id: str, statuses: tuple[str, ...] = ("active", "triggered")) -> list[dict[str, Any]]:
        """The agent's waits with the given statuses, oldest first (decoded rows)."""
        marks = ",".join("?" * len(statuses))
        rows = self.store.query(
            f"SELECT * FROM waits WHERE agent_id=? AND status IN ({marks}) ORDER BY created_at, seq",
            (agent_id, *statuses),
        )
        return [decode(r) for r in rows]

    def timer(self, timer_id: str) -> dict[str, Any] | None:
        """A ``TimerRecord`` by id (any agent), or None."""
        rows = self.store.query("SELECT * FROM timers WHERE id=?", (timer_id,))
        return timer_view(dict(rows[0])) if rows else None

    def board(self, agent_id: str, include_completed: bool = True) -> list[dict[str, Any]]:
        """Rows for a work-item board, in scheduler order.

        Returns:
            ``[{id, objective, state, readiness, focus, is_current, plan_status, todo_list, blocked_by,
            waits: [WaitConditionSummary], updated_at}]``.
        """
        payload = AgentWork(self, CallContext(agent_id=agent_id)).list_work_items("all", 10**9, True)
        out = []
        for v in payload["work_items"]:
            if not include_completed and v["state"] == "completed":
                continue
            out.append(
                {
                    "id": v["id"],
                    "objective": v["objective"],
                    "state": v["state"],
                    "readiness": v["readiness"],
                    "focus": v["focus"],
                    "is_current": v["is_current"],
                    "plan_status": v["plan_status"],
                    "todo_list": v.get("todo_list", []),
                    "blocked_by": v.get("blocked_by"),
                    "waits": v.get("active_wait_conditions", []),
                    "updated_at": v["updated_at"],
                }
            )
        return out

    def agent_summary(self, agent_id: str) -> dict[str, Any]:
        """Work-item, wait, timer and queue facts GetAgent reports for ``agent_id`` (agents spec §5.2).

        Returns:
            ``{current_work_item_id, current_turn_work_item_id, work_item_counts: {open, completing,
            completed}, runnable_work_item_count, waiting_work_item_count, active_wait_count,
            active_wait_conditions?: [WaitConditionSummary] (active waits, omitted when none),
            triggered_wait_count, active_timer_count, next_timer_fire_at, queued_message_count}``.
            ``current_work_item_id`` is set only while the focused item is open. Read-only.
        """
        db = self.reader()
        focus = self.records.focus(db, agent_id)
        counts = {"open": 0, "completing": 0, "completed": 0}
        for row in db.execute("SELECT state, COUNT(*) FROM work_items WHERE agent_id=? GROUP BY state", (agent_id,)):
            counts[row[0]] = row[1]
        ctx = load_context(db.execute, agent_id)
        runnable = waiting = 0
        for row in db.execute(
            "SELECT id, agent_id, state, blocked_by, plan_status FROM work_items WHERE agent_id=? AND state='open'",
            (agent_id,),
        ):
            d = derive(dict(row), ctx)
            runnable += d["readiness"] == "runnable"
            waiting += d["readiness"] in ("blocked", "waiting_for_operator")
        waits = self.waits_of(agent_id)
        active = [w for w in waits if w["status"] == "active"]
        timers = db.execute(
            "SELECT COUNT(*), MIN(next_fire_at) FROM timers WHERE agent_id=? AND status IN ('active','scheduled')",
            (agent_id,),
        ).fetchone()
        queued = message_count(db, agent_id, queued_only=True)
        cur = focus["current_work_item_id"]
        cur_rec = self.records.load(db, cur) if cur else None
        out: dict[str, Any] = {
            "current_work_item_id": cur if cur_rec is not None and cur_rec["state"] == "open" else None,
            "current_turn_work_item_id": focus["current_turn_work_item_id"],
            "work_item_counts": counts,
            "runnable_work_item_count": runnable,
            "waiting_work_item_count": waiting,
            "active_wait_count": len(active),
            "triggered_wait_count": len(waits) - len(active),
            "active_timer_count": timers[0],
            "next_timer_fire_at": timers[1],
            "queued_message_count": queued,
        }
        if active:
            out["active_wait_conditions"] = [wait_summary(w) for w in active]
        return out
