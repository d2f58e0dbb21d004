"""Read-only connections to the home's database, apart from the store's write connection.

In WAL mode a reader never waits for a writer: another process holding the home's write lock
(``BEGIN IMMEDIATE``) leaves every read free. A read made on the store's write connection had to wait
for the store's lock, and that lock was held by a write waiting for the other process (issue 25:
``GetWorkItem`` took seconds while another kernel held the lock). :class:`Store.query
<holon_nb.runtime.core._store.Store.query>` reads through these connections, except the reads a thread
makes inside its own write transaction, which must see that transaction's writes.

Each read takes an idle connection (or opens one) and gives it back: there are as many connections as
reads ever ran at once (the loop thread, a worker thread or two), and none waits for another.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

__all__ = ["ReadPool"]

#: SQLite's busy handler on a read connection, in milliseconds. A WAL reader waits only in rare moments
#: (another connection recovering the WAL after a crash, a checkpoint resetting it), never for a writer.
READ_BUSY_MS = 2000


class ReadPool:
    """Read-only (``PRAGMA query_only``) connections to one database file, shared by every thread.

    Args:
        path: The database file (it exists: the store created it, in WAL mode).
    """

    def __init__(self, path: Path):
        self._path = path
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._open: set[sqlite3.Connection] = set()
        self.closed = False

    @property
    def size(self) -> int:
        """How many read connections are open."""
        return len(self._open)

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run one read statement and return all its rows (``sqlite3.Row``).

        Raises:
            sqlite3.ProgrammingError: after :meth:`close`.
            sqlite3.OperationalError: a write statement ("attempt to write a readonly database"), SQL errors.
        """
        conn = self._take()
        try:
            return conn.execute(sql, params).fetchall()  # all rows: the read transaction ends here
        finally:
            self._give(conn)

    def _take(self) -> sqlite3.Connection:
        with self._lock:
            if self.closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            if self._idle:
                return self._idle.pop()
        conn = sqlite3.connect(
            str(self._path), check_same_thread=False, isolation_level=None, timeout=READ_BUSY_MS / 1000
        )
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA query_only=1")
        with self._lock:
            if self.closed:
                conn.close()
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            self._open.add(conn)
        return conn

    def _give(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if not self.closed:
                self._idle.append(conn)
                return
            self._open.discard(conn)
        with contextlib.suppress(sqlite3.Error):
            conn.close()  # the pool closed while this read ran

    def close(self) -> None:
        """Close the idle connections now and the others as their reads end (idempotent)."""
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
            self._open.difference_update(idle)
        for conn in idle:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
