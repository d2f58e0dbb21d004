"""The rows of the store's own tables: the schema, how text is made storable, the tool-execution row, and the
statements other planes use on these tables (issue 27 item 2: a table is read and written only by the package
that creates it, here ``runtime.core``; ``tests/contract/table_ownership.py``).

Split from :mod:`.store` (its size).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "AGENT_COLUMNS",
    "INSERT_EXECUTION",
    "JOURNALS",
    "MESSAGE_QUEUE_COLUMNS",
    "SCHEMA",
    "ScrubbingConnection",
    "agent_in",
    "archive_agent",
    "backfill_task_messages",
    "delete_executions",
    "ensure_agent_columns",
    "ensure_message_queue_columns",
    "execution_row",
    "insert_agent",
    "insert_queued_message",
    "last_message_seq",
    "mark_message_processed",
    "message_count",
    "message_in",
    "messages_after",
    "newest_queued_timer_tick",
    "newest_task_result",
    "oldest_executions",
    "queued_messages_in",
    "rfc3339",
    "safe",
    "set_execution_status",
    "set_task_detail",
    "task_count",
    "task_ids_with_status",
    "task_in",
    "task_row",
    "task_status_counts",
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


# ------------------------------------------------------------------ agents (the registry's columns: the agents plane)
#: The identity columns the agents plane keeps on ``agents`` (agents spec §5.5), added to a home made before them.
AGENT_COLUMNS = {
    "kind": "TEXT",
    "visibility": "TEXT",
    "ownership": "TEXT",
    "status": "TEXT",
    "lineage_parent_agent_id": "TEXT",
    "delegated_from_task_id": "TEXT",
    "model": "TEXT",
    "template": "TEXT",
    "archived_at": "TEXT",
}


def _add_columns(db: Any, have: set[str], table_columns: dict[str, str], alter: str) -> None:
    for name, decl in table_columns.items():
        if name not in have:
            try:
                db.execute(alter.format(name=name, decl=decl))
            except sqlite3.OperationalError as exc:  # added concurrently by another runtime
                if "duplicate column" not in str(exc):
                    raise


def ensure_agent_columns(db: Any) -> None:
    """Add :data:`AGENT_COLUMNS` to ``agents`` inside the open transaction ``db`` (idempotent)."""
    have = {r[1] for r in db.execute("PRAGMA table_info(agents)")}
    _add_columns(db, have, AGENT_COLUMNS, "ALTER TABLE agents ADD COLUMN {name} {decl}")


def insert_agent(db: Any, rec: dict[str, Any], created_at: str) -> None:
    """Insert an agent record (``id``, ``profile``, ``kind``, ``visibility``, ``ownership`` and the optional
    ``parent_id``, ``lineage_parent_agent_id``, ``delegated_from_task_id``, ``model`` (JSON text), ``template``),
    status ``active``, inside the open transaction ``db``."""
    db.execute(
        "INSERT INTO agents(id, profile, name, parent_id, created_at, kind, visibility, ownership, status,"
        " lineage_parent_agent_id, delegated_from_task_id, model, template) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            rec["id"],
            rec["profile"],
            rec["id"],
            rec.get("parent_id"),
            created_at,
            rec["kind"],
            rec["visibility"],
            rec["ownership"],
            "active",
            rec.get("lineage_parent_agent_id"),
            rec.get("delegated_from_task_id"),
            rec.get("model"),
            rec.get("template"),
        ),
    )


def agent_in(db: Any, agent_id: str) -> dict[str, Any] | None:
    """An agent record read inside the open transaction ``db``, or None."""
    row = db.execute("SELECT * FROM agents WHERE id=?", (agent_id,)).fetchone()
    return None if row is None else dict(row)


def archive_agent(db: Any, agent_id: str, at: str) -> None:
    """Archive an active agent (status ``stopped``, ``archived_at``) inside the open transaction ``db``."""
    db.execute(
        "UPDATE agents SET status='stopped', archived_at=? WHERE id=? AND COALESCE(status,'active')='active'",
        (at, agent_id),
    )


# ------------------------------------------------------------------ tasks
def task_in(db: Any, task_id: str) -> dict[str, Any] | None:
    """A task record (``detail`` parsed) read inside the open transaction ``db``, or None."""
    row = db.execute("SELECT * FROM tasks WHERE id=?", (task_id,)).fetchone()
    return None if row is None else task_row(row)


def task_row(row: Any) -> dict[str, Any]:
    """A task row as a dict, ``detail`` parsed."""
    rec = dict(row)
    rec["detail"] = json.loads(rec.get("detail") or "{}")
    return rec


def task_status_counts(query: Callable[..., Any]) -> dict[str, int]:
    """``{status: number of tasks}`` over every agent (``query``: the store's)."""
    return {str(r[0]): int(r[1]) for r in query("SELECT status, COUNT(*) FROM tasks GROUP BY status")}


def task_count(query: Callable[..., Any], agent_id: str, statuses: tuple[str, ...]) -> int:
    """How many of the agent's tasks have one of ``statuses``."""
    marks = ",".join("?" * len(statuses))
    return int(
        query(f"SELECT COUNT(*) FROM tasks WHERE agent_id=? AND status IN ({marks})", (agent_id, *statuses))[0][0]
    )


def task_ids_with_status(db: Any, statuses: tuple[str, ...]) -> set[str]:
    """Ids of the tasks (any agent) with one of ``statuses``."""
    marks = ",".join("?" * len(statuses))
    return {str(r[0]) for r in db.execute(f"SELECT id FROM tasks WHERE status IN ({marks})", statuses)}


def set_task_detail(db: Any, task_id: str, detail: dict[str, Any]) -> None:
    """Replace a task's ``detail`` (status, ``updated_at`` and ``seq`` unchanged) inside the open transaction ``db``."""
    db.execute("UPDATE tasks SET detail=? WHERE id=?", (json.dumps(detail), task_id))


# ------------------------------------------------------------------ messages (the queue's columns: the work plane)
#: The queue's columns on ``messages`` (agents spec §4.6), added to a home made before them.
MESSAGE_QUEUE_COLUMNS = {
    "status": "TEXT NOT NULL DEFAULT 'queued'",
    "priority": "TEXT NOT NULL DEFAULT 'normal'",
    "authority": "TEXT",
    "origin": "TEXT",
    "work_item_id": "TEXT",
    "source_refs": "TEXT",
    "turn_id": "TEXT",
    "consumed_at": "TEXT",
}


def ensure_message_queue_columns(db: Any) -> None:
    """Add :data:`MESSAGE_QUEUE_COLUMNS` and the queue's indexes to ``messages`` inside ``db`` (idempotent); give
    ``TaskResult`` messages written without them (restart reconciliation) their origin, authority and work item."""
    have = {r[1] for r in db.execute("PRAGMA table_info(messages)")}
    _add_columns(db, have, MESSAGE_QUEUE_COLUMNS, "ALTER TABLE messages ADD COLUMN {name} {decl}")
    db.execute("CREATE INDEX IF NOT EXISTS messages_agent_status ON messages(agent_id, status, seq)")
    db.execute("CREATE INDEX IF NOT EXISTS messages_origin_task ON messages(origin_task_id)")


def backfill_task_messages(db: Any) -> None:
    """Give ``TaskResult`` messages written without the queue columns their origin, authority and work item."""
    db.execute(
        "UPDATE messages SET origin=json_object('kind','task','task_id',origin_task_id),"
        " authority='runtime_instruction',"
        " work_item_id=(SELECT work_item_id FROM tasks WHERE tasks.id=messages.origin_task_id)"
        " WHERE kind='TaskResult' AND origin IS NULL"
    )


def insert_queued_message(db: Any, msg: dict[str, Any]) -> None:
    """Insert a queued message (``id``, ``agent_id``, ``kind``, ``text``, ``created_at`` and the JSON texts
    ``metadata``, ``origin``, ``source_refs``; ``origin_task_id``, ``priority``, ``authority``, ``work_item_id``,
    ``turn_id`` optional) after every other one (``seq``), inside the open transaction ``db``."""
    db.execute(
        "INSERT INTO messages(id, agent_id, kind, origin_task_id, text, metadata, created_at, seq, status,"
        " priority, authority, origin, work_item_id, source_refs, turn_id) VALUES (?,?,?,?,?,?,?,"
        " (SELECT COALESCE(MAX(seq),0)+1 FROM messages),'queued',?,?,?,?,?,?)",
        (
            msg["id"],
            msg["agent_id"],
            msg["kind"],
            msg.get("origin_task_id"),
            msg["text"],
            msg["metadata"],
            msg["created_at"],
            msg.get("priority") or "normal",
            msg.get("authority"),
            msg["origin"],
            msg.get("work_item_id"),
            msg["source_refs"],
            msg.get("turn_id"),
        ),
    )


def message_in(db: Any, message_id: str) -> Any:
    """A message's row read through ``db`` (anything with ``execute``), or None."""
    return db.execute("SELECT * FROM messages WHERE id=?", (message_id,)).fetchone()


def queued_messages_in(db: Any, agent_id: str) -> list[Any]:
    """The agent's queued message rows, in arrival order (``seq``)."""
    return list(db.execute("SELECT * FROM messages WHERE agent_id=? AND status='queued' ORDER BY seq", (agent_id,)))


def mark_message_processed(db: Any, message_id: str, at: str) -> None:
    """Mark a message ``processed`` at ``at`` inside the open transaction ``db``."""
    db.execute("UPDATE messages SET status='processed', consumed_at=? WHERE id=?", (at, message_id))


def newest_task_result(db: Any, task_id: str, *, queued_only: bool = False) -> Any:
    """The newest ``TaskResult`` row of a task (only a still queued one when ``queued_only``), or None."""
    return db.execute(
        "SELECT * FROM messages WHERE origin_task_id=? AND kind='TaskResult'"
        + (" AND status='queued'" if queued_only else "")
        + " ORDER BY seq DESC LIMIT 1",
        (task_id,),
    ).fetchone()


def newest_queued_timer_tick(db: Any, agent_id: str, timer_id: str) -> Any:
    """The newest queued ``timer_tick`` row of a timer, or None."""
    return db.execute(
        "SELECT * FROM messages WHERE agent_id=? AND status='queued' AND kind='timer_tick'"
        " AND json_extract(metadata, '$.timer_id')=? ORDER BY seq DESC LIMIT 1",
        (agent_id, timer_id),
    ).fetchone()


def message_count(db: Any, agent_id: str, *, queued_only: bool = False) -> int:
    """How many messages the agent has (only queued ones when ``queued_only``: the queue's ``status`` column)."""
    sql = "SELECT COUNT(*) FROM messages WHERE agent_id=?" + (" AND status='queued'" if queued_only else "")
    return int(db.execute(sql, (agent_id,)).fetchone()[0])


def last_message_seq(db: Any) -> int:
    """The ``seq`` of the newest message of any agent (0 when none)."""
    return int(db.execute("SELECT COALESCE(MAX(seq),0) FROM messages").fetchone()[0])


def messages_after(db: Any, agent_id: str, seq: int) -> list[Any]:
    """The agent's message rows after ``seq``, in arrival order."""
    return list(db.execute("SELECT * FROM messages WHERE agent_id=? AND seq>? ORDER BY seq", (agent_id, seq)))
