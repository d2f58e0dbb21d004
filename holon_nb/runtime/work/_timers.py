"""Durable timers, wait rechecks and their scheduler on the runtime loop (agents spec §4.4, §4.7, §5.7-§5.10).

One scheduler coroutine per runtime sleeps until the earliest ``next_fire_at``
of any active timer in the home (or until a timer changes, or at most
:data:`RESCAN_S` so timers written by another process are seen) and fires every
due timer in its own transaction: re-read the record, enqueue the
``timer_tick`` (which may trigger a wait), bump ``fire_count``, move
``next_fire_at``. The re-read compares ``next_fire_at`` with the value the
scheduler saw, so two runtimes on one home never fire the same tick twice,
and a restart never replays a tick already committed. The same scheduler fires
the fallback recheck of a wait registered with ``recheck_after_ms``: a
``system_tick`` correlated with that wait.

Repeating timers are bounded (issue 25 item 2b: ten timers of ``interval_ms: 1``
left the runtime unresponsive for 30 s and more, a transaction and a queued
message per millisecond each). Designed here, beyond agents spec §5.7 (which
takes any ``interval_ms`` ≥ 1) and agents spec §4.7 (a message per tick):

- CreateTimer refuses an ``interval_ms`` under :data:`MIN_INTERVAL_MS`
  (``invalid_tool_input`` naming the minimum); a faster timer already in a home
  (written by an earlier version) fires at that minimum pace.
- A repeating timer's tick *coalesces* while its previous tick is still queued
  (undelivered): the tick counts (``fire_count``, ``last_fired_at``, the next
  time move on) but no second message is queued; the agent sees one tick, and
  the timer record says how many fired. A tick that would wake an active wait on
  the timer is always queued, so a wait registered meanwhile is never missed.
"""

from __future__ import annotations

import builtins
import logging
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio

from ..core._clock import Clock, add_ms, fmt, parse
from ..core._rows import newest_queued_timer_tick
from ..core._store import Store, is_busy, new_id
from ._queue import MessageQueue
from ._records import Tx, decode, fail, safe_text, transaction
from ._waiting import WaitPlane

__all__ = ["MIN_INTERVAL_MS", "RESCAN_S", "TimerPlane", "timer_view"]

log = logging.getLogger("holon_nb.timers")

#: Longest scheduler sleep (seconds): timers another process wrote (another Runtime on the home,
#: ``holon-nb call CreateTimer``) are noticed within it, so they fire about a second late at most.
#: Each rescan is two indexed MIN queries (``timers_due``, ``waits_recheck``) plus the due scans.
RESCAN_S = 1.0
#: Shortest interval of a repeating timer (ms): CreateTimer refuses less, and a faster timer an earlier
#: version wrote fires at this pace. A tick wakes an agent; more than one a second is a slip (``1ms`` for
#: ``1m``) or a flood, never a schedule.
MIN_INTERVAL_MS = 1000


def timer_view(row: dict[str, Any]) -> dict[str, Any]:
    """``TimerRecord`` (agents spec §5.7): legacy ``scheduled`` reads as ``active``."""
    return {
        "id": row["id"],
        "agent_id": row["agent_id"],
        "created_at": row["created_at"],
        "duration_ms": row["duration_ms"],
        "interval_ms": row["interval_ms"],
        "repeat": bool(row["repeat"]),
        "status": "active" if row["status"] == "scheduled" else row["status"],
        "summary": row["summary"],
        "next_fire_at": row["next_fire_at"],
        "last_fired_at": row["last_fired_at"],
        "fire_count": row["fire_count"],
    }


_TIMING_HINT = (
    "Pass exactly one of duration_ms (milliseconds from now, at least 1) or fire_at "
    "(an RFC 3339 time in the future, with its UTC offset)."
)


def _invalid(field: str, error: str, tool: str = "CreateTimer", hint: str = _TIMING_HINT, **extra: Any) -> Exception:
    return fail(
        "invalid_tool_input",
        f"invalid {field} for {tool}: {error}",
        {"tool_name": tool, "field": field, "validation_error": error, **extra},
        hint,
    )


class TimerPlane:
    """Timer records and the scheduler of one runtime.

    Args:
        store: The runtime's store.
        publish: The event publisher ``(kind, task_id, **data)``.
        queue: The message queue (timer ticks enter through it).
        waits: The waiting plane (CancelTimer cancels bound waits).
        clock: What "now" is when a timer is created, fires or is due (default: the system's clock).
            A clock that jumps (:class:`~holon_nb.runtime.core._clock.ManualClock`) wakes the scheduler
            through :meth:`Clock.subscribe`; ``wake`` is what it calls (thread-safe), by default
            :meth:`notify` (loop thread only).
    """

    def __init__(
        self,
        store: Store,
        publish: Callable[..., None],
        queue: MessageQueue,
        waits: WaitPlane,
        clock: Clock | None = None,
        wake: Callable[[], None] | None = None,
    ):
        self.store = store
        self.clock = clock or Clock()
        self.clock.subscribe(wake or self.notify)
        self.publish = publish
        self.queue = queue
        self.waits = waits
        self._wake: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None
        self.fired = 0  #: ticks this runtime committed (diagnostics)
        # timers/wait rechecks whose firing raised: id -> (consecutive failures, monotonic time of the next try).
        # A failure is retried at the next scheduler pass after a short backoff, never given up on.
        self._failing: dict[str, tuple[int, float]] = {}
        self.fire_failures = 0  #: failed fire attempts (diagnostics)

    # ------------------------------------------------------------ records
    def resolve_schedule(
        self, duration_ms: int | None, fire_at: str | None, interval_ms: int | None
    ) -> tuple[int, Any, Any]:
        """Validate CreateTimer's timing fields (agents spec §5.7 rules 1-3).

        Returns:
            ``(duration_ms, next_fire_at, created_at)`` (datetimes; ``next = created + duration``).

        Raises:
            ToolFailure: ``invalid_tool_input`` naming the field and its ``validation_error``.
        """
        if (duration_ms is None) == (fire_at is None):
            raise _invalid("duration_ms", "exactly one of duration_ms or fire_at is required")
        now = self.clock.now()
        if interval_ms is not None:
            if interval_ms < 1:
                raise _invalid("interval_ms", "must be greater than 0")
            if interval_ms < MIN_INTERVAL_MS:
                raise _invalid(
                    "interval_ms",
                    f"must be at least {MIN_INTERVAL_MS} ms for a repeating timer",
                    hint=f"Use interval_ms {MIN_INTERVAL_MS} (one second) or more; for a single short delay "
                    "leave interval_ms out (duration_ms alone fires once).",
                    min_interval_ms=MIN_INTERVAL_MS,
                )
            try:
                add_ms(now, interval_ms)
            except OverflowError:
                raise _invalid("interval_ms", "exceeds supported timer range") from None
        if duration_ms is not None:
            if duration_ms < 1:
                raise _invalid("duration_ms", "must be greater than 0")
            try:
                return duration_ms, add_ms(now, duration_ms), now
            except OverflowError:
                raise _invalid("duration_ms", "exceeds supported timer range") from None
        try:
            due = parse(fire_at or "")
        except (ValueError, OverflowError):
            raise _invalid("fire_at", "must be an RFC 3339 timestamp with a UTC offset") from None
        if due <= now:
            raise _invalid("fire_at", "must be in the future")
        duration = max(1, math.ceil((due - now).total_seconds() * 1000))
        return duration, add_ms(now, duration), now

    def create(
        self,
        t: Tx,
        agent_id: str,
        duration_ms: int,
        due: Any,
        interval_ms: int | None,
        summary: str | None,
        created: Any = None,
    ) -> dict[str, Any]:
        """Persist an active timer (the caller validated it with :meth:`resolve_schedule`)."""
        now = fmt(created or self.clock.now())
        row: dict[str, Any] = {
            "id": new_id("timer"),
            "agent_id": agent_id,
            "created_at": now,
            "updated_at": now,
            "duration_ms": duration_ms,
            "interval_ms": interval_ms,
            "repeat": interval_ms is not None,
            "status": "active",
            "summary": safe_text(summary) if summary else None,
            "next_fire_at": fmt(due),
            "last_fired_at": None,
            "fire_count": 0,
        }
        t.db.execute(
            "INSERT INTO timers(id, agent_id, created_at, updated_at, duration_ms, interval_ms, repeat,"
            " status, summary, next_fire_at, last_fired_at, fire_count) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                row["id"],
                agent_id,
                now,
                now,
                duration_ms,
                interval_ms,
                int(row["repeat"]),
                "active",
                row["summary"],
                row["next_fire_at"],
                None,
                0,
            ),
        )
        t.emit("timer_changed", agent_id=agent_id, timer_id=row["id"], status="active")
        return row

    @staticmethod
    def get(db: Any, agent_id: str, timer_id: str) -> dict[str, Any]:
        """The caller's timer row.

        Raises:
            ToolFailure: ``timer_not_found`` when missing or another agent's (indistinguishable).
        """
        row = decode(db.execute("SELECT * FROM timers WHERE id=?", (timer_id,)).fetchone())
        if row is None or row["agent_id"] != agent_id:
            raise fail(
                "timer_not_found",
                f"timer {timer_id} was not found",
                {"timer_id": timer_id},
                "Use ListTimers to see this agent's timers.",
            )
        return row

    @staticmethod
    def list(db: Any, agent_id: str, status: str, limit: int) -> tuple[int, list[dict[str, Any]]]:
        """``(total_matching, newest-first rows)`` of the agent's timers with ``status`` (or ``all``)."""
        counts = dict(db.execute("SELECT status, n FROM timer_counts WHERE agent_id=?", (agent_id,)).fetchall())
        if status == "all":  # counts kept by triggers (work/_records.py): no scan of the agent's timers
            total = sum(counts.values())
            rows = db.execute(
                "SELECT * FROM timers INDEXED BY timers_agent_recent WHERE agent_id=?"
                " ORDER BY created_at DESC, id DESC LIMIT ?",
                (agent_id, limit),
            ).fetchall()
        else:  # one index range per status, newest first, merged: a few active among many fired cost the same
            statuses = ("active", "scheduled") if status == "active" else (status,)
            total = sum(counts.get(s, 0) for s in statuses)
            rows = [
                r
                for s in statuses
                for r in db.execute(
                    "SELECT * FROM timers INDEXED BY timers_agent_status WHERE agent_id=? AND status=?"
                    " ORDER BY created_at DESC, id DESC LIMIT ?",
                    (agent_id, s, limit),
                )
            ]
            rows = sorted(rows, key=lambda r: (r["created_at"], r["id"]), reverse=True)[:limit]
        return total, [decode(r) for r in rows]

    # ``builtins.list``: in the class body below ``list`` names the method above
    def cancel(self, t: Tx, agent_id: str, timer_id: str) -> tuple[dict[str, Any], bool, builtins.list[str]]:
        """CancelTimer (agents spec §5.10): ``(row, cancelled_transition, cancelled wait ids)``.

        Raises:
            ToolFailure: ``timer_not_found``; ``timer_completed`` for a finished one-shot timer.
        """
        row = self.get(t.db, agent_id, timer_id)
        if row["status"] == "completed":
            raise fail(
                "timer_completed",
                f"timer {timer_id} already fired and completed",
                {"timer_id": timer_id, "fire_count": row["fire_count"]},
                "Nothing to cancel.",
            )
        if row["status"] == "cancelled":
            return row, False, []
        now = fmt(self.clock.now())
        t.db.execute(
            "UPDATE timers SET status='cancelled', next_fire_at=NULL, updated_at=? WHERE id=?", (now, timer_id)
        )
        ids = self.waits.cancel_for_timer(t, agent_id, timer_id)
        t.emit("timer_changed", agent_id=agent_id, timer_id=timer_id, status="cancelled")
        return {**row, "status": "cancelled", "next_fire_at": None, "updated_at": now}, True, ids

    @staticmethod
    def _undelivered_tick(db: Any, row: dict[str, Any]) -> dict[str, Any] | None:
        """The repeating timer's previous tick when it is still queued and no active wait would take a new
        one (the tick coalesces into it); else None (a new tick is queued)."""
        if not row["repeat"]:
            return None
        waiting = db.execute(
            "SELECT 1 FROM waits WHERE agent_id=? AND kind='timer' AND status='active'"
            " AND (subject_ref IS NULL OR subject_ref=?) LIMIT 1",
            (row["agent_id"], row["id"]),
        ).fetchone()
        if waiting is not None:
            return None
        return decode(newest_queued_timer_tick(db, row["agent_id"], row["id"]))

    def fire(self, t: Tx, timer_id: str, expected_next: str) -> dict[str, Any] | None:
        """Fire one due timer inside ``t`` (agents spec §4.7); None when it changed meanwhile.

        A repeating timer's tick coalesces into its previous one while that is still queued (see the module
        docstring): the timer record moves on, no message is added.

        Returns:
            The ``timer_tick`` message: the one enqueued, or the queued one the tick coalesced into.
        """
        row = decode(t.db.execute("SELECT * FROM timers WHERE id=?", (timer_id,)).fetchone())
        if row is None or row["status"] not in ("active", "scheduled") or row["next_fire_at"] != expected_next:
            return None
        pending = self._undelivered_tick(t.db, row)
        msg = pending if pending is not None else self._enqueue_tick(t, row)
        now_dt = self.clock.now()
        now = fmt(now_dt)
        if row["repeat"] and row["interval_ms"]:
            try:
                nxt: str | None = fmt(add_ms(now_dt, max(row["interval_ms"], MIN_INTERVAL_MS)))
                status = "active"
            except OverflowError:
                nxt, status = None, "completed"
        else:
            nxt, status = None, "completed"
        t.db.execute(
            "UPDATE timers SET status=?, fire_count=fire_count+1, last_fired_at=?, next_fire_at=?,"
            " updated_at=? WHERE id=?",
            (status, now, nxt, now, timer_id),
        )
        t.emit(
            "timer_fired",
            agent_id=row["agent_id"],
            timer_id=timer_id,
            message_id=msg["id"],
            fire_count=row["fire_count"] + 1,
            status=status,
            due_at=expected_next,
            fired_at=now,
            coalesced=pending is not None,
        )
        return msg

    def _enqueue_tick(self, t: Tx, row: dict[str, Any]) -> dict[str, Any]:
        """Queue the ``timer_tick`` of ``row`` (agents spec §4.7), attributed to the one owner waiting on it."""
        timer_id = row["id"]
        owners = t.db.execute(
            "SELECT work_item_id FROM waits WHERE agent_id=? AND kind='timer' AND subject_ref=? AND status='active'",
            (row["agent_id"], timer_id),
        ).fetchall()
        owner = owners[0][0] if len(owners) == 1 else None
        return self.queue.enqueue(
            t,
            agent_id=row["agent_id"],
            kind="timer_tick",
            text=row["summary"] or f"timer {timer_id} fired",
            origin={"kind": "timer", "timer_id": timer_id},
            authority="runtime_instruction",
            priority="next",
            work_item_id=owner,
            source_refs={"timer_id": timer_id},
            metadata={"timer_id": timer_id},
        )

    # ------------------------------------------------------------ scheduler
    def rearm_after_restart(self) -> int:
        """Give active timers lacking ``next_fire_at`` one (agents spec §4.7); return how many."""
        with transaction(self.store, self.publish) as t:
            rows = t.db.execute(
                "SELECT * FROM timers WHERE status IN ('active','scheduled') AND next_fire_at IS NULL"
            ).fetchall()
            for row in rows:
                base = parse(row["last_fired_at"] or row["created_at"])
                try:
                    step = max(row["interval_ms"], MIN_INTERVAL_MS) if row["interval_ms"] else row["duration_ms"]
                    nxt = fmt(add_ms(base, step))
                except OverflowError:
                    nxt = None
                t.db.execute("UPDATE timers SET next_fire_at=?, status='active' WHERE id=?", (nxt, row["id"]))
        return len(rows)

    def notify(self) -> None:
        """Wake the scheduler to recompute its next deadline. Call on the loop thread."""
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> None:
        """The scheduler loop (background task on the runtime loop); ends when :meth:`stop` runs."""
        self._done = anyio.Event()
        passes_failed = 0
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                while True:
                    self._wake = anyio.Event()
                    try:
                        fired = await self._fire_pass()
                        delay = self._delay()
                    except Exception:  # the store failed (busy, closing): never let it kill the loop's task group
                        passes_failed += 1
                        if passes_failed == 1:  # logged once per streak, retried every second
                            log.exception("timer scheduler pass failed; retrying")
                        fired, delay = 0, 1.0
                    else:
                        passes_failed = 0
                    if delay <= 0 and not fired:
                        delay = 0.05  # something is due but would not fire (a broken record): back off
                    if delay > 0:
                        with anyio.move_on_after(delay):
                            await self._wake.wait()
        finally:
            self._done.set()

    async def _fire_pass(self) -> int:
        """Fire what is due now once this process holds the home's write lock: while another process holds it,
        the scheduler waits without blocking the loop (``Store.write``), then fires. Past the first fire, each
        tries the lock once: one the other process took back in between fails, backs off and is retried."""
        due = self.due_now()
        if not due[0] and not due[1]:
            return 0

        def fire() -> int:
            with self.store.patience(0):
                return self.fire_due(due)

        return await self.store.write(fire)

    def _delay(self) -> float:
        now_mono = time.monotonic()
        backing_off = tuple(k for k, (_, at) in self._failing.items() if at > now_mono)
        skip = ",".join("?" * len(backing_off))
        timer = self.store.query(
            "SELECT MIN(next_fire_at) FROM timers WHERE status IN ('active','scheduled')"
            f" AND next_fire_at IS NOT NULL AND id NOT IN ({skip})",
            backing_off,
        )
        recheck = self.store.query(
            "SELECT MIN(recheck_at) FROM waits WHERE status='active' AND recheck_at IS NOT NULL"
            f" AND recheck_fired_at IS NULL AND id NOT IN ({skip})",
            backing_off,
        )
        due = [r[0][0] for r in (timer, recheck) if r and r[0][0] is not None]
        retry = [at - now_mono for _, at in self._failing.values() if at > now_mono]
        if not due:
            return min([RESCAN_S, *retry])
        return min(RESCAN_S, *retry, (parse(min(due)) - self.clock.now()).total_seconds())

    def _skip(self, key: str) -> bool:
        """True while ``key`` (a timer or wait id) is backing off after a failed fire."""
        entry = self._failing.get(key)
        return entry is not None and entry[1] > time.monotonic()

    def _failed(self, key: str, what: str) -> None:
        """Note a failed fire: logged with its traceback the first time, retried after a backoff (0.1 s
        doubling to 30 s) at the scheduler's next pass — one failure never disables a timer."""
        count = self._failing.get(key, (0, 0.0))[0] + 1
        self._failing[key] = (count, time.monotonic() + min(30.0, 0.1 * 2 ** (count - 1)))
        self.fire_failures += 1
        if count == 1:
            exc = sys.exc_info()[1]
            if exc is not None and is_busy(exc):  # another process holds the lock: a condition, not a bug
                log.warning("%s failed to fire (%s); retrying at the next opportunity", what, exc)
            else:
                log.exception("%s failed to fire; retrying at the next opportunity", what)
        else:
            log.debug("%s failed to fire again (%d times)", what, count, exc_info=True)

    def _succeeded(self, key: str, what: str) -> None:
        if self._failing.pop(key, None) is not None:
            log.info("%s fired after earlier failures", what)

    def recheck(self, t: Tx, wait_id: str) -> dict[str, Any] | None:
        """Fire a wait's fallback recheck (WaitFor ``recheck_after_ms``) inside ``t``.

        Queues a ``system_tick`` correlated with the wait (``source_refs.wait_id``), which
        triggers it, and stamps the owner's ``recheck_consumed_at``. None when the wait
        is no longer active or its recheck already fired.
        """
        w = decode(t.db.execute("SELECT * FROM waits WHERE id=?", (wait_id,)).fetchone())
        if w is None or w["status"] != "active" or w["recheck_fired_at"] or not w["recheck_at"]:
            return None
        now = fmt(self.clock.now())
        t.db.execute("UPDATE waits SET recheck_fired_at=? WHERE id=?", (now, wait_id))
        if w["work_item_id"]:
            rec = self.waits.records.load(t.db, w["work_item_id"])
            if rec is not None and rec["state"] == "open" and rec.get("recheck_at") == w["recheck_at"]:
                self.waits.records.write(t, rec, {"recheck_consumed_at": now}, note="recheck_fired")
        return self.queue.enqueue(
            t,
            agent_id=w["agent_id"],
            kind="system_tick",
            text=f"recheck: {w['waiting_for']}",
            origin={"kind": "system", "subsystem": "wait_recheck"},
            authority="runtime_instruction",
            priority="normal",
            work_item_id=w["work_item_id"],
            source_refs={"wait_id": wait_id},
        )

    def due_now(self) -> tuple[builtins.list[Any], builtins.list[Any]]:
        """``(timers, wait rechecks)`` due now and not backing off after a failed fire: rows with ``id`` (a
        timer's also ``next_fire_at``)."""
        now = fmt(self.clock.now())
        timers = self.store.query(
            "SELECT id, next_fire_at FROM timers WHERE status IN ('active','scheduled')"
            " AND next_fire_at IS NOT NULL AND next_fire_at<=? ORDER BY next_fire_at",
            (now,),
        )
        rechecks = self.store.query(
            "SELECT id FROM waits WHERE status='active' AND recheck_at IS NOT NULL"
            " AND recheck_fired_at IS NULL AND recheck_at<=?",
            (now,),
        )
        return [r for r in timers if not self._skip(r["id"])], [r for r in rechecks if not self._skip(r["id"])]

    def fire_due(self, due: tuple[builtins.list[Any], builtins.list[Any]] | None = None) -> int:
        """Fire every timer and wait recheck due now (each in its own transaction), or those of ``due``
        (:meth:`due_now`); return how many fired."""
        timers, rechecks = self.due_now() if due is None else due
        count = 0
        for row in timers:
            try:
                with transaction(self.store, self.publish) as t:
                    if self.fire(t, row["id"], row["next_fire_at"]) is not None:
                        count += 1
            except Exception:  # one bad record (or a locked store) must not stop every other timer
                self._failed(row["id"], f"timer {row['id']}")
            else:
                self._succeeded(row["id"], f"timer {row['id']}")
        self.fired += count
        for row in rechecks:
            try:
                with transaction(self.store, self.publish) as t:
                    count += self.recheck(t, row["id"]) is not None
            except Exception:  # as for timers: back off, retry, keep the scheduler alive
                self._failed(row["id"], f"recheck of wait {row['id']}")
            else:
                self._succeeded(row["id"], f"recheck of wait {row['id']}")
        return count

    async def stop(self) -> None:
        """Stop the scheduler and wait for it to end (idempotent)."""
        if self._scope is not None:
            self._scope.cancel()
        if self._done is not None:
            with anyio.move_on_after(2):
                await self._done.wait()
