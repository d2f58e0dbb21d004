"""The durable store: one SQLite database (WAL) under the holon home.

Every state transition is one transaction (``with store.tx() as db:``).
Tables: ``agents``, ``tasks``, ``messages``, ``tool_executions``. JSON
columns hold the task ``detail`` and message ``metadata`` (D7).
"""

from __future__ import annotations

import contextvars
import json
import logging
import secrets
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

from ...tools.errors import HolonNBError

__all__ = ["Store", "StoreBusy", "is_busy", "new_id", "now_rfc3339", "DEFAULT_BUSY_TIMEOUT_S"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

#: How long a write waits for another process's SQLite write lock, in total, before
#: :class:`StoreBusy` (seconds; ``RuntimeSettings.store_busy_timeout_s``).
DEFAULT_BUSY_TIMEOUT_S = 30.0
_ATTEMPT_BUSY_MS = 2000  # SQLite's own busy handler per attempt; between attempts we back off
_BACKOFF_S = (0.05, 1.0)  # first and longest sleep between attempts
#: A shorter wait for the code running in this context (``Store.patience``): background work waits briefly,
#: then retries asynchronously, so the loop thread is not blocked while another process holds the lock.
_PATIENCE: contextvars.ContextVar[float | None] = contextvars.ContextVar("holon_store_patience", default=None)


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database is busy" (another connection holds the lock)."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


class StoreBusy(HolonNBError, sqlite3.OperationalError):
    """The home's database stayed locked by another connection past the retry bound.

    Dispatch turns it into a ``runtime_db_busy`` envelope (commands spec §3.2 rule 4,
    retryable); background work catches it and retries until the runtime closes.

    Attributes:
        waited_s: Seconds spent waiting, over all attempts.
        attempts: How many times the write lock was requested.
    """

    def __init__(self, path: Path, waited_s: float, attempts: int):
        super().__init__(
            f"database is locked: another process held the write lock of {path} for more than "
            f"{waited_s:.1f} s ({attempts} attempts)"
        )
        self.waited_s = waited_s
        self.attempts = attempts


_SCHEMA = """
CREATE TABLE IF NOT EXISTS agents (
    id TEXT PRIMARY KEY, profile TEXT NOT NULL, name TEXT, parent_id TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, work_item_id TEXT, kind TEXT NOT NULL,
    status TEXT NOT NULL, summary TEXT, detail TEXT NOT NULL DEFAULT '{}',
    pgid INTEGER, proc_start TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0, owner TEXT
);
CREATE INDEX IF NOT EXISTS tasks_agent_status ON tasks(agent_id, status);
CREATE INDEX IF NOT EXISTS tasks_seq ON tasks(seq);
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, kind TEXT NOT NULL, origin_task_id TEXT,
    text TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_agent ON messages(agent_id, seq);
CREATE INDEX IF NOT EXISTS messages_seq ON messages(seq);
CREATE TABLE IF NOT EXISTS tool_executions (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, tool_name TEXT NOT NULL, status TEXT NOT NULL,
    args TEXT NOT NULL, envelope TEXT NOT NULL, receipt TEXT NOT NULL,
    created_at TEXT NOT NULL, duration_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _safe(text: str) -> str:
    """Make text storable: lone surrogates (unencodable in UTF-8) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


class _ScrubbingConnection:
    """A connection whose ``execute``/``executemany`` scrub every ``str`` parameter first (D6)."""

    def __init__(self, db: sqlite3.Connection, scrub: Callable[[str], str]):
        self._db = db
        self._scrub = scrub

    def _params(self, params: Any) -> Any:
        if isinstance(params, dict):
            return {k: self._scrub(v) if isinstance(v, str) else v for k, v in params.items()}
        return tuple(self._scrub(v) if isinstance(v, str) else v for v in params)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, self._params(params))

    def executemany(self, sql: str, seq: Any) -> sqlite3.Cursor:
        return self._db.executemany(sql, (self._params(p) for p in seq))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


_INSERT_EXECUTION = (
    "INSERT INTO tool_executions(id, agent_id, tool_name, status, args, envelope, receipt,"
    " created_at, duration_ms, scrubbed_args, scrubbed_envelope) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)


def _execution_row(rec: dict[str, Any], at: float) -> tuple[Any, ...]:
    """The ``tool_executions`` row of a :meth:`Store.record_execution` record made at ``at`` (``time.time()``)."""
    scrubbed_args, scrubbed_env = rec.get("scrubbed_args"), rec.get("scrubbed_envelope")
    return (
        rec["id"],
        rec["agent_id"],
        rec["tool_name"],
        rec["status"],
        _safe(rec["args"]),
        _safe(rec["envelope"]),
        _safe(rec["receipt"]),
        _rfc3339(datetime.fromtimestamp(at, timezone.utc)),
        rec["duration_ms"],
        _safe(scrubbed_args) if scrubbed_args is not None else None,
        _safe(scrubbed_env) if scrubbed_env is not None else None,
    )


def new_id(prefix: str) -> str:
    """Return a runtime id ``<prefix>_<15 lowercase hex>`` (agents spec §0.5)."""
    return f"{prefix}_{secrets.token_hex(8)[:15]}"


def now_rfc3339() -> str:
    """Current UTC time as RFC 3339 with microseconds (``2026-11-30T03:17:44.123456Z``)."""
    return _rfc3339(datetime.now(timezone.utc))


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Store:
    """SQLite store of one holon home.

    Args:
        path: Database file (created with its parent directories).

    The connection is shared between the runtime thread and callers; a lock
    serialises access, and ``tx()`` makes each transition atomic.
    """

    def __init__(self, path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.closed = False
        self._lock = threading.RLock()
        #: Returns the runtime's current D6 ``Scrubber`` (set by the runtime); None writes text as given.
        self.scrubber: Callable[[], Any] | None = None
        self._attempt_ms = -1
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
        #: tool executions recorded with ``defer=True``, not yet written (``flush_executions``)
        self._pending: list[tuple[dict[str, Any], float]] = []  # (record, time.time() when recorded)
        #: rows this connection wrote that no cached read depends on (``version`` leaves them out): the
        #: tool executions and the memory index (``tx(unversioned=True)``)
        self._unversioned = 0
        self._cache: dict[Hashable, tuple[tuple[int, int], Any]] = {}  # ``cached``: key -> (version, value)
        self._db = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=_ATTEMPT_BUSY_MS / 1000
        )
        self._db.row_factory = sqlite3.Row
        # a new file gives freed pages back on PRAGMA incremental_vacuum (issue 25 item 3b: the database is part
        # of the home's size cap); a file that already has tables keeps its mode (housekeeping converts it once)
        self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._retrying(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._retrying(lambda: self._db.executescript(_SCHEMA))
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(tasks)")}
        if "owner" not in columns:  # homes written before task ownership was recorded
            self._db.execute("ALTER TABLE tasks ADD COLUMN owner TEXT")
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(tool_executions)")}
        for column in ("scrubbed_args", "scrubbed_envelope"):  # D6 copies memory serves (homes written before: NULL)
            if column not in columns:
                self._db.execute(f"ALTER TABLE tool_executions ADD COLUMN {column} TEXT")

    def _retrying(self, op: Any) -> Any:
        """Run ``op()`` (one statement that may need a lock), retrying "database is locked" with backoff.

        SQLite's busy handler waits up to 2 s per attempt; between attempts this sleeps 50 ms,
        doubling to 1 s, until ``busy_timeout_s`` passed in total. Call with ``self._lock`` held.

        Raises:
            StoreBusy: the lock stayed taken past ``busy_timeout_s`` (or the store closed meanwhile).
        """
        started = time.monotonic()
        bound = _PATIENCE.get()
        bound = self.busy_timeout_s if bound is None else min(bound, self.busy_timeout_s)
        delay, attempts = _BACKOFF_S[0], 0
        while True:
            remaining = bound - (time.monotonic() - started)
            attempt_ms = max(1, min(_ATTEMPT_BUSY_MS, int(remaining * 1000)))
            if attempt_ms != self._attempt_ms:
                self._db.execute(f"PRAGMA busy_timeout={attempt_ms}")
                self._attempt_ms = attempt_ms
            attempts += 1
            try:
                return op()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or isinstance(exc, StoreBusy):
                    raise
                waited = time.monotonic() - started
                if self.closed or waited + delay >= bound:
                    self._busy_refusals += 1
                    raise StoreBusy(self.path, waited, attempts) from exc
                self._busy_retries += 1
                time.sleep(delay)
                delay = min(delay * 2, _BACKOFF_S[1])

    @staticmethod
    @contextmanager
    def patience(seconds: float) -> Iterator[None]:
        """Within this block (this thread or asyncio task), wait at most ``seconds`` for the write lock.

        Background work uses it so that a locked home costs the loop thread a short wait per attempt;
        it then retries asynchronously (``anyio.sleep``) instead of blocking the loop.
        """
        token = _PATIENCE.set(seconds)
        try:
            yield
        finally:
            _PATIENCE.reset(token)

    @contextmanager
    def tx(self, *, unversioned: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): commits on success, rolls back on any exception.

        ``unversioned=True``: the transaction writes only tables that no :meth:`cached` read depends on
        (the memory index, which the indexer appends to every second behind the calls): :meth:`version`
        does not move for it (issue 12: the cached reads outlive the indexer's passes).

        Waiting for another process's write lock is retried with backoff up to ``busy_timeout_s``
        in total; how long each transaction then holds the lock is measured (:meth:`stats`).

        D6: when :attr:`scrubber` is set, every text parameter of the transaction's statements has
        the secret values replaced by ``[redacted]``, so nothing written to the home keeps a secret.

        Raises:
            StoreBusy: the write lock stayed taken past ``busy_timeout_s``.
        """
        scrubber = self.scrubber() if self.scrubber is not None else None
        with self._lock:
            self._retrying(lambda: self._db.execute("BEGIN IMMEDIATE"))
            started, cpu_started = time.perf_counter(), time.thread_time()
            # a proxy that stands in for the connection: execute/executemany scrub, the rest is delegated
            db = (
                cast(sqlite3.Connection, _ScrubbingConnection(self._db, scrubber.text))
                if scrubber is not None
                else self._db
            )
            queued = len(self._pending)  # deferred tool executions go first, in this transaction
            before = self._db.total_changes
            try:
                written = self._write_pending(queued, db) if queued else 0
                yield db
            except BaseException:
                self._db.execute("ROLLBACK")  # the deferred ones stay queued
                raise
            self._db.execute("COMMIT")
            del self._pending[:queued]
            self._unversioned += self._db.total_changes - before if unversioned else written
            self._note_tx(time.perf_counter() - started, time.thread_time() - cpu_started)

    def _write_pending(self, n: int, db: Any) -> int:
        """Insert the first ``n`` queued tool executions through ``db`` (the transaction's connection, which
        scrubs, D6); return how many rows went in.

        An id already recorded (a replayed cassette's seeded id, raced by another kernel on the home) is
        logged and skipped, never left in the queue to fail every later transaction.
        """
        before = self._db.total_changes
        rows = [_execution_row(rec, at) for rec, at in self._pending[:n]]
        self._db.execute("SAVEPOINT deferred_executions")
        try:
            db.executemany(_INSERT_EXECUTION, rows)
        except sqlite3.IntegrityError:
            self._db.execute("ROLLBACK TO deferred_executions")
            for row in rows:
                try:
                    db.execute(_INSERT_EXECUTION, row)
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
            tx_over_50ms, busy_retries, busy_refusals}`` — ``busy_refusals`` counts the writes that gave up
            waiting for another process's lock (``StoreBusy``); ``tx_max_ms`` is the longest time (wall clock) one transaction
            held the write lock (BEGIN to COMMIT); ``tx_max_cpu_ms_of_longest`` is the CPU time its thread
            spent in it (the difference is waiting for a CPU or Python's GIL), ``tx_max_cpu_ms`` the most
            CPU time any transaction used.
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
            }

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Run one statement outside a transaction and return all rows (reads; DDL at startup).

        A statement that names ``tool_executions`` first writes the executions recorded with
        ``defer=True`` (:meth:`record_execution`), so it reads every call this store recorded.

        Raises:
            StoreBusy: when the statement needs a lock another process holds past ``busy_timeout_s``.
        """
        with self._lock:
            if self._pending and "tool_executions" in sql and not self._db.in_transaction:
                self.flush_executions()  # (inside a transaction, its start wrote them)
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
        """Close the connection (idempotent), writing the deferred tool executions first; retries still
        waiting for a lock give up (a deferred execution that could not be written is logged, not kept)."""
        already, self.closed = self.closed, True  # first: a retry waiting for the lock gives up
        with self._lock:
            if self._pending and not already:
                try:
                    self.flush_executions()  # one attempt (SQLite's busy handler, 2 s)
                except sqlite3.Error as exc:
                    _log.warning("%d tool execution(s) not recorded at close: %s", len(self._pending), exc)
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

    # ------------------------------------------------------------ tasks
    @staticmethod
    def task_row(row: sqlite3.Row | Mapping[str, Any]) -> dict[str, Any]:
        """Decode a task row (``detail`` parsed)."""
        out = dict(row)
        out["detail"] = json.loads(out["detail"] or "{}")
        return out

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
        (scrubbed by the process that made the call), which memory serves instead of the canonical ones.

        With ``defer=True`` the row is queued, not written (issue 12: the write leaves a command's critical
        path): :meth:`flush_executions` writes the queue, and so do the next transaction (first, in it),
        every :meth:`query` that names ``tool_executions`` and :meth:`close`. Its ``created_at`` is taken
        now, and rows keep the order they were recorded in. Another connection (another kernel on the home)
        sees a deferred row only once it is written.

        Raises:
            StoreBusy: (``defer=False``) the write lock stayed taken; the row is queued then, not lost.
        """
        with self._lock:
            self._pending.append((rec, time.time()))  # the row is made when written (issue 12)
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
        with self._lock:
            if self._pending and not self._db.in_transaction:  # inside one, the next transaction writes them
                with self.tx():
                    pass  # a transaction writes the queue first

    def execution(self, execution_id: str) -> dict[str, Any] | None:
        """A stored tool execution, or None."""
        rows = self.query("SELECT * FROM tool_executions WHERE id=?", (execution_id,))
        return dict(rows[0]) if rows else None
