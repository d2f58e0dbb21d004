"""The rows of the store's own tables: the schema, how text is made storable, and the tool-execution row.

Split from :mod:`.store` (its size); :class:`~.store.Store` is the only user.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

__all__ = ["SCHEMA", "INSERT_EXECUTION", "ScrubbingConnection", "execution_row", "rfc3339", "safe"]

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
