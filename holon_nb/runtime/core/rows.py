"""The rows of the store's own tables: the schema, how text is made storable, the tool-execution row, and the
statements other planes use on these tables (issue 27 item 2: a table is read and written only by the package
that creates it, here ``runtime.core``; ``tests/contract/table_ownership.py``).

Split from :mod:`.store` (its size).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "INSERT_EXECUTION",
    "JOURNALS",
    "SCHEMA",
    "ScrubbingConnection",
    "delete_executions",
    "execution_row",
    "oldest_executions",
    "rfc3339",
    "safe",
    "set_execution_status",
]

SCHEMA = """
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


def safe(text: str) -> str:
    """Make text storable: lone surrogates (unencodable in UTF-8) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


class ScrubbingConnection:
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


INSERT_EXECUTION = (
    "INSERT INTO tool_executions(id, agent_id, tool_name, status, args, envelope, receipt,"
    " created_at, duration_ms, scrubbed_args, scrubbed_envelope) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)


def execution_row(rec: dict[str, Any], at: float) -> tuple[Any, ...]:
    """The ``tool_executions`` row of a :meth:`Store.record_execution` record made at ``at`` (``time.time()``)."""
    scrubbed_args, scrubbed_env = rec.get("scrubbed_args"), rec.get("scrubbed_envelope")
    return (
        rec["id"],
        rec["agent_id"],
        rec["tool_name"],
        rec["status"],
        safe(rec["args"]),
        safe(rec["envelope"]),
        safe(rec["receipt"]),
        rfc3339(datetime.fromtimestamp(at, timezone.utc)),
        rec["duration_ms"],
        safe(scrubbed_args) if scrubbed_args is not None else None,
        safe(scrubbed_env) if scrubbed_env is not None else None,
    )


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


#: The tables a reader follows in write order (the memory index): name → (the rows after a position, each with
#: its position as ``pos``, parameters ``(position, limit)``; the highest position). Executions are ordered by
#: ``rowid``, tasks and messages by ``seq``.
JOURNALS: dict[str, tuple[str, str]] = {
    "tool_executions": (
        "SELECT rowid AS pos, id, agent_id, tool_name, status, args, envelope, created_at,"
        " scrubbed_args, scrubbed_envelope FROM tool_executions WHERE rowid > ? ORDER BY rowid LIMIT ?",
        "SELECT COALESCE(MAX(rowid), 0) FROM tool_executions",
    ),
    "tasks": (
        "SELECT seq AS pos, * FROM tasks WHERE seq > ? ORDER BY seq LIMIT ?",
        "SELECT COALESCE(MAX(seq), 0) FROM tasks",
    ),
    "messages": (
        "SELECT seq AS pos, * FROM messages WHERE seq > ? ORDER BY seq LIMIT ?",
        "SELECT COALESCE(MAX(seq), 0) FROM messages",
    ),
}

#: An execution row's weight: the bytes of its texts.
_EXECUTION_BYTES = (
    "length(CAST(args AS BLOB)) + length(CAST(envelope AS BLOB)) + length(CAST(receipt AS BLOB))"
    " + COALESCE(length(CAST(scrubbed_args AS BLOB)), 0) + COALESCE(length(CAST(scrubbed_envelope AS BLOB)), 0)"
)


def oldest_executions(query: Callable[..., Any], keep_newest: int, limit: int) -> list[tuple[str, str, int]]:
    """``(id, agent_id, bytes)`` of the oldest execution rows, oldest first, never the newest ``keep_newest``.

    Args:
        query: The store's ``query`` (``(sql, params) -> rows``).
        keep_newest: Rows at the end of the table that are never listed.
        limit: Rows listed at most.
    """
    rows = query(
        f"SELECT id, agent_id, {_EXECUTION_BYTES} FROM tool_executions WHERE rowid <="
        " (SELECT COALESCE(MAX(rowid), 0) FROM tool_executions) - ? ORDER BY rowid LIMIT ?",
        (keep_newest, limit),
    )
    return [(str(r[0]), str(r[1]), int(r[2] or 0)) for r in rows]


def delete_executions(db: Any, ids: list[str]) -> None:
    """Delete execution rows by id inside the open transaction ``db``."""
    db.executemany("DELETE FROM tool_executions WHERE id=?", [(i,) for i in ids])


def set_execution_status(db: Any, execution_id: str, status: str, envelope: str | None = None) -> None:
    """Set an execution row's ``status`` (and, given ``envelope``, its stored and scrubbed envelope: the same
    scrubbed text, D6) inside the open transaction ``db``."""
    if envelope is None:
        db.execute("UPDATE tool_executions SET status=? WHERE id=?", (status, execution_id))
    else:
        db.execute(
            "UPDATE tool_executions SET status=?, envelope=?, scrubbed_envelope=? WHERE id=?",
            (status, envelope, envelope, execution_id),
        )
