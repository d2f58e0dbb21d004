"""The durable store: one SQLite database (WAL) under the holon home.

Every state transition is one transaction (``with store.tx() as db:``).
Tables: ``agents``, ``tasks``, ``messages``, ``tool_executions``. JSON
columns hold the task ``detail`` and message ``metadata`` (D7).

Another process (a second kernel on the home) may hold the database's write lock for seconds. Reads never
wait for it: they run on read-only connections of their own (:mod:`.readers`; WAL readers do not wait for
a writer). A write must wait; code running on the runtime's event loop waits asynchronously with
:meth:`Store.write`, so the loop (and every other call on it) goes on meanwhile (issue 25).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ._locking import ATTEMPT_BUSY_MS, DEFAULT_BUSY_TIMEOUT_S, StoreBusy, WriteLock, is_busy
from ._readers import ReadPool
from ._rows import INSERT_EXECUTION, SCHEMA, ScrubbingConnection, execution_row, rfc3339, task_row
from ._rows import safe as _safe

if TYPE_CHECKING:
    from ...render._scrubbing import Scrubber

__all__ = ["Store", "StoreBusy", "is_busy", "new_id", "now_rfc3339", "DEFAULT_BUSY_TIMEOUT_S"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

#: Statements that only read (run on a read connection unless inside this thread's transaction).
_READ = re.compile(r"\s*(?:SELECT|WITH)\b", re.IGNORECASE)


def _never() -> bool:
    return False


def new_id(prefix: str) -> str:
    """Return a runtime id ``<prefix>_<15 lowercase hex>`` (agents spec §0.5)."""
    return f"{prefix}_{secrets.token_hex(8)[:15]}"


def now_rfc3339() -> str:
    """Current UTC time as RFC 3339 with microseconds (``2026-11-30T03:17:44.123456Z``)."""
    return rfc3339(datetime.now(timezone.utc))


#: The columns of an execution row (:func:`~.rows.execution_row`) a caller may have scrubbed: index -> record key.
_CALLER_SCRUBBED = {4: "args", 5: "envelope", 6: "receipt", 9: "scrubbed_args", 10: "scrubbed_envelope"}


def _scrubbed_row(row: tuple[Any, ...], rec: dict[str, Any], scrubber: Scrubber | None) -> tuple[Any, ...]:
    """``row`` with every text scrubbed by ``scrubber`` (D6), except the texts its caller already scrubbed so.

    ``rec["scrubbed_by"]``, when given, is ``(scrubber, keys)``: the record's texts under ``keys`` are what
    ``scrubber.text`` returned (or texts it leaves unchanged); such a text is written as it is when
    ``scrubber`` is still the one in force and making it storable (:func:`~.rows.safe`) did not change it,
    since scrubbing it again would return it unchanged. Every other text is scrubbed, as a
    :class:`~.rows.ScrubbingConnection` does.
    """
    if scrubber is None:
        return row
    by, keys = rec.get("scrubbed_by") or (None, ())
    done = {i for i, key in _CALLER_SCRUBBED.items() if key in keys} if by is scrubber else set()
    return tuple(
        v if not isinstance(v, str) or (i in done and v is rec.get(_CALLER_SCRUBBED[i])) else scrubber.text(v)
        for i, v in enumerate(row)
    )


class Store(WriteLock):
    """SQLite store of one holon home.

    Args:
        path: Database file (created with its parent directories).
        busy_timeout_s: The longest wait of one write for another process's lock, in total.
        scrubber: Returns the runtime's current D6 ``Scrubber``; every text a transaction writes is scrubbed
            with it. None writes text as given.
        on_loop_thread: Tells whether the calling thread runs the runtime's event loop: a read there never
            waits for the queued tool executions to be written, and a write there that waits for another
            process's lock without :meth:`write` is counted (``stats()["loop_lock_waits"]``). None: no thread is.

    The write connection is shared between the runtime thread and callers; a lock serialises its use,
    and ``tx()`` makes each transition atomic. Reads outside a transaction use read connections
    (:class:`~.readers.ReadPool`) and take no lock.
    """

    def __init__(
        self,
        path: Path,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        *,
        scrubber: Callable[[], Scrubber] | None = None,
        on_loop_thread: Callable[[], bool] | None = None,
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.closed = False
        self._lock = threading.RLock()
        #: Returns the runtime's current D6 ``Scrubber``; None writes text as given.
        self.scrubber = scrubber
        self.on_loop_thread: Callable[[], bool] = on_loop_thread if on_loop_thread is not None else _never
        self._attempt_ms = -1
        #: the thread whose write transaction is open on the write connection (or who holds the lock for one:
        #: ``_reserved``, see :meth:`write`); its reads use the write connection
        self._tx_thread: int | None = None
        self._reserved = False
        #: write-lock statistics (``stats()``): transactions, total and longest hold (seconds), where
        self._tx_count = 0
        self._tx_total_s = 0.0
        self._tx_max_s = 0.0
        self._tx_max_where = ""
        self._tx_over_50ms = 0
        self._tx_max_cpu_s = 0.0  # most CPU time one transaction's thread spent inside it
        self._tx_max_s_cpu = 0.0  # CPU time of the longest one (the rest of it was waiting for a CPU)
        self._busy_retries = 0
        self._busy_refusals = 0  # StoreBusy raised: a write gave up waiting for another process's lock
        #: the loop thread slept waiting for another process's lock (a write made without :meth:`write`)
        self._loop_waits = 0
        self._loop_wait_max_s = 0.0
        self._loop_wait_where = ""
        #: tool executions recorded with ``defer=True``, not yet written (``flush_executions``)
        self._pending: list[tuple[dict[str, Any], float]] = []  # (record, time.time() when recorded)
        #: rows this connection wrote that no cached read depends on (``version`` leaves them out): the
        #: tool executions and the memory index (``tx(unversioned=True)``)
        self._unversioned = 0
        self._cache: dict[Hashable, tuple[tuple[int, int], Any]] = {}  # ``cached``: key -> (version, value)
        self._db = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=ATTEMPT_BUSY_MS / 1000
        )
        self._db.row_factory = sqlite3.Row
        self._readers = ReadPool(path)
        # a new file gives freed pages back on PRAGMA incremental_vacuum (issue 25 item 3b: the database is part
        # of the home's size cap); a file that already has tables keeps its mode (housekeeping converts it once)
        self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._retrying(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._retrying(lambda: self._db.executescript(SCHEMA))
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(tasks)")}
        if "owner" not in columns:  # homes written before task ownership was recorded
            self._db.execute("ALTER TABLE tasks ADD COLUMN owner TEXT")
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(tool_executions)")}
        for column in ("scrubbed_args", "scrubbed_envelope"):  # D6 copies memory serves (homes written before: NULL)
            if column not in columns:
                self._db.execute(f"ALTER TABLE tool_executions ADD COLUMN {column} TEXT")

    @contextmanager
    def tx(self, *, unversioned: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): commits on success, rolls back on any exception.

        ``unversioned=True``: the transaction writes only tables that no :meth:`cached` read depends on
        (the memory index, which the indexer appends to every second behind the calls): :meth:`version`
        does not move for it (issue 12: the cached reads outlive the indexer's passes).

        Waiting for another process's write lock is retried with backoff up to ``busy_timeout_s``
        in total (the patience in force, :meth:`patience`); inside :meth:`write`, the first transaction
        uses the lock taken there. How long each transaction then holds the lock is measured (:meth:`stats`).

        D6: when :attr:`scrubber` is set, every text parameter of the transaction's statements has
        the secret values replaced by ``[redacted]``, so nothing written to the home keeps a secret.

        Raises:
            StoreBusy: the write lock stayed taken past ``busy_timeout_s``.
        """
        scrubber = self.scrubber() if self.scrubber is not None else None
        if self._reserved and self._tx_thread == threading.get_ident():
            self._lock.acquire()  # this thread holds it (``write``): one more level, let go below
            self._reserved = False
        else:
            self._begin()
        try:
            started, cpu_started = time.perf_counter(), time.thread_time()
            # a proxy that stands in for the connection: execute/executemany scrub, the rest is delegated
            db = (
                cast(sqlite3.Connection, ScrubbingConnection(self._db, scrubber.text))
                if scrubber is not None
                else self._db
            )
            queued = len(self._pending)  # deferred tool executions go first, in this transaction
            before = self._db.total_changes
            try:
                written = self._write_pending(queued, scrubber) if queued else 0
                yield db
            except BaseException:
                self._db.execute("ROLLBACK")  # the deferred ones stay queued
                raise
            self._db.execute("COMMIT")
            del self._pending[:queued]
            self._unversioned += self._db.total_changes - before if unversioned else written
            self._note_tx(time.perf_counter() - started, time.thread_time() - cpu_started)
        finally:
            self._tx_thread = None
            self._lock.release()

    def _write_pending(self, n: int, scrubber: Scrubber | None) -> int:
        """Insert the first ``n`` queued tool executions, scrubbed by ``scrubber`` (D6) as the transaction's
        connection would; return how many rows went in.

        A record whose texts the caller scrubbed with the scrubber in force here (``scrubbed_by``, see
        :meth:`record_execution`) has only its other columns scrubbed (issue 27 item 7: not its arguments,
        envelope and receipt a second time); any other record has every text column scrubbed.

        An id already recorded (a replayed cassette's seeded id, raced by another kernel on the home) is
        logged and skipped, never left in the queue to fail every later transaction.
        """
        before = self._db.total_changes
        rows = [_scrubbed_row(execution_row(rec, at), rec, scrubber) for rec, at in self._pending[:n]]
        self._db.execute("SAVEPOINT deferred_executions")
        try:
            self._db.executemany(INSERT_EXECUTION, rows)
        except sqlite3.IntegrityError:
            self._db.execute("ROLLBACK TO deferred_executions")
            for row in rows:
                try:
                    self._db.execute(INSERT_EXECUTION, row)
                except sqlite3.IntegrityError:
                    _log.warning("tool execution %s is recorded already: this record of it is dropped", row[0])
        self._db.execute("RELEASE deferred_executions")
        return self._db.total_changes - before

    def _note_tx(self, held_s: float, cpu_s: float) -> None:
        self._tx_count += 1
        self._tx_total_s += held_s
        self._tx_max_cpu_s = max(self._tx_max_cpu_s, cpu_s)
        if held_s > 0.05:
            self._tx_over_50ms += 1
        if held_s > self._tx_max_s:
            self._tx_max_s = held_s
            self._tx_max_s_cpu = cpu_s
            # where the longest one came from (rare: only on a new maximum)
            frames = [f for f in traceback.extract_stack(limit=8)[:-3] if "contextlib" not in f.filename]
            self._tx_max_where = " < ".join(f"{Path(f.filename).stem}:{f.name}" for f in reversed(frames[-3:]))

    def stats(self) -> dict[str, Any]:
        """Write-lock statistics of this connection since it opened.

        Returns:
            ``{tx_count, tx_mean_ms, tx_max_ms, tx_max_cpu_ms_of_longest, tx_max_cpu_ms, tx_max_where,
            tx_over_50ms, busy_retries, busy_refusals, loop_lock_waits, loop_lock_wait_max_ms,
            loop_lock_wait_where, read_connections}`` — ``busy_refusals`` counts the writes that gave up
            waiting for another process's lock (``StoreBusy``); ``tx_max_ms`` is the longest time (wall clock) one
            transaction held the write lock (BEGIN to COMMIT); ``tx_max_cpu_ms_of_longest`` is the CPU time its
            thread spent in it (the difference is waiting for a CPU or Python's GIL), ``tx_max_cpu_ms`` the most
            CPU time any transaction used; ``loop_lock_waits`` counts the writes that slept on the runtime's loop
            thread waiting for another process's lock (each held up every call on the loop; the longest, and
            where it was made); ``read_connections`` how many read connections are open.
        """
        with self._lock:
            return {
                "tx_count": self._tx_count,
                "tx_mean_ms": round(1000 * self._tx_total_s / self._tx_count, 3) if self._tx_count else 0.0,
                "tx_max_ms": round(1000 * self._tx_max_s, 3),
                "tx_max_cpu_ms_of_longest": round(1000 * self._tx_max_s_cpu, 3),
                "tx_max_cpu_ms": round(1000 * self._tx_max_cpu_s, 3),
                "tx_max_where": self._tx_max_where,
                "tx_over_50ms": self._tx_over_50ms,
                "busy_retries": self._busy_retries,
                "busy_refusals": self._busy_refusals,
                "loop_lock_waits": self._loop_waits,
                "loop_lock_wait_max_ms": round(1000 * self._loop_wait_max_s, 3),
                "loop_lock_wait_where": self._loop_wait_where,
                "read_connections": self._readers.size,
            }

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Run one statement outside a transaction and return all rows (reads; DDL at startup).

        A read (``SELECT``/``WITH``) runs on a read connection and never waits for a writer, unless this
        thread is inside its own transaction (then it sees that transaction's writes). Other statements
        run on the write connection.

        A statement that names ``tool_executions`` first writes the executions recorded with
        ``defer=True`` (:meth:`record_execution`), so it reads every call this store recorded. On the
        loop thread that write is tried once: while another process holds the lock the read goes on
        without the queued rows (their writer retries), rather than holding up the loop.

        Raises:
            StoreBusy: when the statement needs a lock another process holds past ``busy_timeout_s``.
            sqlite3.ProgrammingError: after :meth:`close`.
        """
        own = self._tx_thread == threading.get_ident()
        if self._pending and not own and "tool_executions" in sql:
            if self.on_loop_thread():
                with self.patience(0), suppress(StoreBusy):
                    self.flush_executions()
            else:
                self.flush_executions()
        if not own and _READ.match(sql):
            return self._readers.query(sql, params)
        with self._lock:
            return self._retrying(lambda: self._db.execute(sql, params).fetchall())

    def version(self) -> tuple[int, int]:
        """A token that changes whenever the database may have changed since it was last read.

        ``(PRAGMA data_version, rows written)``: SQLite's ``data_version`` moves when another
        connection (another kernel on the same home) commits; the second term counts the rows this
        connection wrote (``total_changes``), except the tool executions it recorded and what
        ``tx(unversioned=True)`` wrote (the memory index): every call records one execution, the indexer
        indexes it a second later, and no cached read depends on either (issue 12: otherwise no cache
        would outlive a call). A read cached under the token stays right while the token is equal.

        Raises:
            sqlite3.ProgrammingError: after :meth:`close`.
        """
        with self._lock:
            return self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes - self._unversioned

    def cached(self, key: Hashable, read: Callable[[], _T]) -> _T:
        """``read()``, or what it returned under the same ``key`` while :meth:`version` has not moved since.

        For reads every command makes (issue 12): the workspace projection, the agent's active tasks.
        The value is shared between callers: treat it as read-only. Keys are few (an agent's); the
        cache is emptied past 256 of them.

        Raises:
            sqlite3.ProgrammingError: after :meth:`close`; whatever ``read`` raises.
        """
        token = self.version()  # before the read: a change during it moves the token past what is cached
        hit = self._cache.get(key)
        if hit is not None and hit[0] == token:
            return hit[1]
        value = read()
        if len(self._cache) >= 256:
            self._cache.clear()
        self._cache[key] = (token, value)
        return value

    def close(self) -> None:
        """Close the connections (idempotent), writing the deferred tool executions first; retries still
        waiting for a lock give up (a deferred execution that could not be written is logged, not kept)."""
        already, self.closed = self.closed, True  # first: a retry waiting for the lock gives up
        if self._pending and not already:
            try:
                self.flush_executions()  # one attempt (SQLite's busy handler, 2 s)
            except sqlite3.Error as exc:
                _log.warning("%d tool execution(s) not recorded at close: %s", len(self._pending), exc)
        with self._lock:
            self._readers.close()
            try:
                self._db.close()
            except sqlite3.ProgrammingError:
                pass

    # ------------------------------------------------------------ agents
    def ensure_agent(self, agent_id: str, profile: str, name: str | None = None, parent_id: str | None = None) -> None:
        """Create the agent record if it does not exist."""
        with self.tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO agents(id, profile, name, parent_id, created_at) VALUES (?,?,?,?,?)",
                (agent_id, profile, name, parent_id, now_rfc3339()),
            )

    def agent(self, agent_id: str) -> dict[str, Any] | None:
        """The agent record as a dict, or None."""
        rows = self.query("SELECT * FROM agents WHERE id=?", (agent_id,))
        return dict(rows[0]) if rows else None

    def agents(self, parent_id: str | None = None) -> list[dict[str, Any]]:
        """Every agent record, oldest first (``parent_id``: only that agent's children, by creation then id)."""
        if parent_id is None:
            return [dict(r) for r in self.query("SELECT * FROM agents ORDER BY created_at, id")]
        return [
            dict(r) for r in self.query("SELECT * FROM agents WHERE parent_id=? ORDER BY created_at, id", (parent_id,))
        ]

    # ------------------------------------------------------------ tasks
    @staticmethod
    def task_row(row: sqlite3.Row | Mapping[str, Any]) -> dict[str, Any]:
        """Decode a task row (``detail`` parsed)."""
        return task_row(row)

    def task(self, task_id: str) -> dict[str, Any] | None:
        """The task record, or None."""
        rows = self.query("SELECT * FROM tasks WHERE id=?", (task_id,))
        return self.task_row(rows[0]) if rows else None

    def tasks(self, where: str = "1=1", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Task records matching a WHERE clause."""
        return [self.task_row(r) for r in self.query(f"SELECT * FROM tasks WHERE {where}", params)]

    @staticmethod
    def insert_task(db: sqlite3.Connection, rec: dict[str, Any]) -> None:
        """Insert a task inside an open transaction."""
        db.execute(
            "INSERT INTO tasks(id, agent_id, work_item_id, kind, status, summary, detail, pgid, proc_start,"
            " created_at, updated_at, owner, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
            " (SELECT COALESCE(MAX(seq),0)+1 FROM tasks))",
            (
                rec["id"],
                rec["agent_id"],
                rec.get("work_item_id"),
                rec["kind"],
                rec["status"],
                _safe(rec.get("summary") or "") or None,
                json.dumps(rec.get("detail", {})),
                rec.get("pgid"),
                rec.get("proc_start"),
                rec["created_at"],
                rec["updated_at"],
                rec.get("owner"),
            ),
        )

    @staticmethod
    def update_task(db: sqlite3.Connection, task_id: str, status: str, detail: dict[str, Any]) -> str:
        """Update status and detail inside an open transaction; return the new ``updated_at``."""
        ts = now_rfc3339()
        db.execute(
            "UPDATE tasks SET status=?, detail=?, updated_at=?, seq=(SELECT COALESCE(MAX(seq),0)+1 FROM tasks)"
            " WHERE id=?",
            (status, json.dumps(detail), ts, task_id),
        )
        return ts

    # ------------------------------------------------------------ messages
    @staticmethod
    def insert_message(
        db: sqlite3.Connection,
        agent_id: str,
        kind: str,
        text: str,
        origin_task_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Enqueue a message to an agent inside an open transaction; return its id."""
        mid = new_id("msg")
        db.execute(
            "INSERT INTO messages(id, agent_id, kind, origin_task_id, text, metadata, created_at, seq)"
            " VALUES (?,?,?,?,?,?,?, (SELECT COALESCE(MAX(seq),0)+1 FROM messages))",
            (mid, agent_id, kind, origin_task_id, _safe(text), json.dumps(metadata or {}), now_rfc3339()),
        )
        return mid

    def message(self, message_id: str) -> dict[str, Any] | None:
        """A message's row as stored (``metadata`` and the queue's JSON columns still text), or None."""
        rows = self.query("SELECT * FROM messages WHERE id=?", (message_id,))
        return dict(rows[0]) if rows else None

    def messages(self, agent_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The agent's queued messages, oldest first (``metadata`` parsed)."""
        sql = "SELECT * FROM messages WHERE agent_id=?" + (" AND kind=?" if kind else "") + " ORDER BY seq"
        rows = self.query(sql, (agent_id, kind) if kind else (agent_id,))
        out = []
        for r in rows:
            d = dict(r)
            d["metadata"] = json.loads(d["metadata"] or "{}")
            out.append(d)
        return out

    # ------------------------------------------------------------ tool executions
    def record_execution(self, rec: dict[str, Any], *, defer: bool = False) -> None:
        """Store one tool execution (D6: the caller passes scrubbed arguments, envelope and receipt).

        ``rec`` may carry ``scrubbed_args`` / ``scrubbed_envelope``: JSON text of the D6-scrubbed copies
        (scrubbed by the process that made the call), which memory serves instead of the canonical ones;
        and ``scrubbed_by``: ``(scrubber, keys)``, the :class:`Scrubber` whose ``text`` the texts under those
        keys (``args``, ``receipt``, …) went through (or that leaves them unchanged), so that the write, while
        that scrubber is still the one in force, does not scrub them again (issue 27 item 7).

        With ``defer=True`` the row is queued, not written (issue 12: the write leaves a command's critical
        path): :meth:`flush_executions` writes the queue, and so do the next transaction (first, in it),
        every :meth:`query` that names ``tool_executions`` and :meth:`close`. Its ``created_at`` is taken
        now, and rows keep the order they were recorded in. Another connection (another kernel on the home)
        sees a deferred row only once it is written.

        Raises:
            StoreBusy: (``defer=False``) the write lock stayed taken; the row is queued then, not lost.
        """
        # the row is made when written (issue 12); no lock: a list's append is atomic, and a transaction takes
        # (and then deletes) only the rows queued when it began, so a call never waits for another thread's write
        self._pending.append((rec, time.time()))
        if not defer:
            self.flush_executions()

    @property
    def deferred_executions(self) -> int:
        """How many tool executions are queued, not yet written (:meth:`record_execution`)."""
        return len(self._pending)

    def flush_executions(self) -> None:
        """Write the queued tool executions, in one transaction; nothing when none are queued.

        Raises:
            StoreBusy: the write lock stayed taken past the patience in force; the rows stay queued.
        """
        inside = self._tx_thread == threading.get_ident() and not self._reserved
        if self._pending and not inside:  # inside this thread's transaction, its next one writes them
            with self.tx():
                pass  # a transaction writes the queue first

    def execution(self, execution_id: str) -> dict[str, Any] | None:
        """A stored tool execution, or None."""
        rows = self.query("SELECT * FROM tool_executions WHERE id=?", (execution_id,))
        return dict(rows[0]) if rows else None
