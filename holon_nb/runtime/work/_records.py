"""Tables, row decoding and the transaction helper of the work plane (agents spec §3-§4).

One module holds the DDL of every table the work service owns, so a home is
migrated in one place: ``work_items`` (+ ``work_item_revisions``, one row per
committed revision), ``continuation_frames``, ``agent_work_state`` (focus),
``waits``, ``timers``, ``briefs``, and the queue columns added to the
runtime's ``messages`` table.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, overload

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._rows import ensure_message_queue_columns
from ..core._store import Store, new_id

__all__ = ["Binding", "Tx", "decode", "ensure_schema", "fail", "safe_text", "transaction"]

_DDL = """
CREATE TABLE IF NOT EXISTS work_items (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, workspace_id TEXT NOT NULL,
    revision INTEGER NOT NULL, objective TEXT NOT NULL, state TEXT NOT NULL,
    plan_status TEXT NOT NULL, plan_meta TEXT NOT NULL DEFAULT '{}',
    todo_list TEXT NOT NULL DEFAULT '[]', work_refs TEXT NOT NULL DEFAULT '[]',
    blocked_by TEXT, recheck_at TEXT, recheck_consumed_at TEXT,
    result_brief_id TEXT, result_summary TEXT, completion_intent TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, turn_id TEXT
);
CREATE INDEX IF NOT EXISTS work_items_agent ON work_items(agent_id, state);
CREATE INDEX IF NOT EXISTS work_items_queued ON work_items(agent_id, created_at, id)
    WHERE state='open' AND blocked_by IS NULL AND plan_status<>'needs_input';
CREATE INDEX IF NOT EXISTS work_items_needs_input ON work_items(agent_id, updated_at DESC, id)
    WHERE state='open' AND blocked_by IS NULL AND plan_status='needs_input';
CREATE INDEX IF NOT EXISTS work_items_blocked ON work_items(agent_id, updated_at DESC, id)
    WHERE state='open' AND blocked_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS work_items_state_updated ON work_items(agent_id, state, updated_at DESC, id);
CREATE TABLE IF NOT EXISTS work_item_revisions (
    work_item_id TEXT NOT NULL, revision INTEGER NOT NULL, agent_id TEXT NOT NULL,
    change TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (work_item_id, revision)
);
CREATE TABLE IF NOT EXISTS continuation_frames (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, suspended_work_item_id TEXT NOT NULL,
    active_work_item_id TEXT NOT NULL, return_policy TEXT NOT NULL, state TEXT NOT NULL,
    reason TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, resolved_at TEXT,
    cancelled_at TEXT, resolution_reason TEXT, turn_id TEXT
);
CREATE INDEX IF NOT EXISTS continuation_frames_agent ON continuation_frames(agent_id, state);
CREATE TABLE IF NOT EXISTS agent_work_state (
    agent_id TEXT PRIMARY KEY, current_work_item_id TEXT, current_turn_work_item_id TEXT,
    current_execution_binding TEXT, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS waits (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, work_item_id TEXT, status TEXT NOT NULL,
    kind TEXT NOT NULL, source TEXT NOT NULL, subject_ref TEXT, waiting_for TEXT NOT NULL,
    wake_sources TEXT NOT NULL, continuation TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, expires_at TEXT, resolved_at TEXT, cancelled_at TEXT,
    turn_id TEXT, trigger_message_id TEXT, triggered_at TEXT, seq INTEGER NOT NULL DEFAULT 0,
    recheck_at TEXT, recheck_fired_at TEXT
);
CREATE INDEX IF NOT EXISTS waits_agent ON waits(agent_id, status);
CREATE INDEX IF NOT EXISTS waits_recheck ON waits(status, recheck_at);
CREATE INDEX IF NOT EXISTS waits_item ON waits(work_item_id, status);
CREATE TABLE IF NOT EXISTS timers (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL, interval_ms INTEGER, repeat INTEGER NOT NULL, status TEXT NOT NULL,
    summary TEXT, next_fire_at TEXT, last_fired_at TEXT, fire_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS timers_due ON timers(status, next_fire_at);
CREATE INDEX IF NOT EXISTS timers_agent ON timers(agent_id, created_at);
CREATE INDEX IF NOT EXISTS timers_agent_status ON timers(agent_id, status, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS timers_agent_recent ON timers(agent_id, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS briefs (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    work_item_id TEXT, wait_id TEXT, source TEXT NOT NULL, citations TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL, turn_id TEXT
);
CREATE INDEX IF NOT EXISTS briefs_agent ON briefs(agent_id, created_at);
"""

#: Queue columns added to the runtime's ``messages`` table (agents spec §1.4): name → declaration.
_JSON_COLUMNS = (
    "plan_meta",
    "todo_list",
    "work_refs",
    "completion_intent",
    "wake_sources",
    "continuation",
    "citations",
    "origin",
    "source_refs",
    "metadata",
    "current_execution_binding",
)


#: A work item's list class (the scheduler rank of a plain item, agents spec §5.15) as SQL over ``{row}``.
CLASS_SQL = (
    "CASE WHEN {row}.state='completed' THEN 7 WHEN {row}.state='completing' THEN 6"
    " WHEN {row}.blocked_by IS NOT NULL THEN 5 WHEN {row}.plan_status='needs_input' THEN 4 ELSE 2 END"
)

# ``work_item_counts``: work items per (agent, class), kept by triggers, so ListWorkItems counts
# ``total_matching`` without reading every row. Filled from ``work_items`` when first created.
_COUNTS = (
    "CREATE TABLE IF NOT EXISTS work_item_counts (agent_id TEXT NOT NULL, klass INTEGER NOT NULL,"
    " n INTEGER NOT NULL, PRIMARY KEY (agent_id, klass)) WITHOUT ROWID",
    "CREATE TRIGGER IF NOT EXISTS work_item_counts_insert AFTER INSERT ON work_items BEGIN"
    " INSERT INTO work_item_counts (agent_id, klass, n) VALUES (NEW.agent_id, {new}, 1)"
    " ON CONFLICT (agent_id, klass) DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER IF NOT EXISTS work_item_counts_delete AFTER DELETE ON work_items BEGIN"
    " UPDATE work_item_counts SET n = n - 1 WHERE agent_id = OLD.agent_id AND klass = {old}; END",
    "CREATE TRIGGER IF NOT EXISTS work_item_counts_update AFTER UPDATE OF agent_id, state, blocked_by, plan_status"
    " ON work_items WHEN OLD.agent_id IS NOT NEW.agent_id OR {old} <> {new} BEGIN"
    " UPDATE work_item_counts SET n = n - 1 WHERE agent_id = OLD.agent_id AND klass = {old};"
    " INSERT INTO work_item_counts (agent_id, klass, n) VALUES (NEW.agent_id, {new}, 1)"
    " ON CONFLICT (agent_id, klass) DO UPDATE SET n = n + 1; END",
)

# ``timer_counts``: timers per (agent, status), kept by triggers, for ListTimers' ``total_matching``.
_TIMER_COUNTS = (
    "CREATE TABLE IF NOT EXISTS timer_counts (agent_id TEXT NOT NULL, status TEXT NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY (agent_id, status)) WITHOUT ROWID",
    "CREATE TRIGGER IF NOT EXISTS timer_counts_insert AFTER INSERT ON timers BEGIN"
    " INSERT INTO timer_counts (agent_id, status, n) VALUES (NEW.agent_id, NEW.status, 1)"
    " ON CONFLICT (agent_id, status) DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER IF NOT EXISTS timer_counts_delete AFTER DELETE ON timers BEGIN"
    " UPDATE timer_counts SET n = n - 1 WHERE agent_id = OLD.agent_id AND status = OLD.status; END",
    "CREATE TRIGGER IF NOT EXISTS timer_counts_update AFTER UPDATE OF agent_id, status ON timers"
    " WHEN OLD.agent_id IS NOT NEW.agent_id OR OLD.status IS NOT NEW.status BEGIN"
    " UPDATE timer_counts SET n = n - 1 WHERE agent_id = OLD.agent_id AND status = OLD.status;"
    " INSERT INTO timer_counts (agent_id, status, n) VALUES (NEW.agent_id, NEW.status, 1)"
    " ON CONFLICT (agent_id, status) DO UPDATE SET n = n + 1; END",
)


def ensure_schema(store: Store) -> None:
    """Create the work plane's tables and add the queue columns to ``messages`` (idempotent).

    Safe when two runtimes open the same home at once: a column another
    process added first is not an error.
    """
    with store.tx() as db:
        for stmt in _DDL.split(";"):
            if stmt.strip():
                db.execute(stmt)
        fill = db.execute("SELECT 1 FROM sqlite_master WHERE name='work_item_counts'").fetchone() is None
        for stmt in _COUNTS:
            db.execute(stmt.format(new=CLASS_SQL.format(row="NEW"), old=CLASS_SQL.format(row="OLD")))
        if fill:  # a home made before the counts existed: count once
            db.execute(
                "INSERT INTO work_item_counts (agent_id, klass, n) SELECT agent_id, "
                f"{CLASS_SQL.format(row='work_items')}, COUNT(*) FROM work_items GROUP BY 1, 2"
            )
        fill = db.execute("SELECT 1 FROM sqlite_master WHERE name='timer_counts'").fetchone() is None
        for stmt in _TIMER_COUNTS:
            db.execute(stmt)
        if fill:
            db.execute(
                "INSERT INTO timer_counts (agent_id, status, n) SELECT agent_id, status, COUNT(*)"
                " FROM timers GROUP BY 1, 2"
            )
        ensure_message_queue_columns(db)  # the queue's columns on core's messages table


@overload
def decode(row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]: ...
@overload
def decode(row: None) -> None: ...
def decode(row: sqlite3.Row | dict[str, Any] | None) -> dict[str, Any] | None:
    """A row as a dict with its JSON columns parsed (None stays None)."""
    if row is None:
        return None
    out = dict(row)
    for key in _JSON_COLUMNS:
        if key in out and isinstance(out[key], str):
            out[key] = json.loads(out[key])
    return out


def safe_text(text: str) -> str:
    """Text SQLite can store: lone surrogates become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


@dataclass
class Tx:
    """One open transaction plus the events to publish once it commits.

    Attributes:
        db: The connection inside ``BEGIN IMMEDIATE``.
        events: ``(kind, data)`` pairs published after the commit.
    """

    db: sqlite3.Connection
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def emit(self, event_kind: str, **data: Any) -> None:
        """Queue a runtime event (``work_item_changed``, ``wait_changed``, …) for after the commit."""
        self.events.append((event_kind, data))


@contextmanager
def transaction(store: Store, publish: Callable[..., None]) -> Iterator[Tx]:
    """One state transition: ``with transaction(store, publish) as t:`` commits, then publishes ``t.events``."""
    with store.tx() as db:
        t = Tx(db)
        yield t
    for kind, data in t.events:
        publish(kind, None, **data)


@dataclass(frozen=True)
class Binding:
    """The execution binding a call runs under (agents spec §2, §3.4).

    Attributes:
        turn_id: The turn (``turn_…``); for a direct call a fresh id living only for the call.
        source_message_id: The admitted message; for a direct call a fresh id naming no message.
        work_item_id: The WorkItem the execution is bound to, or None (agent lifecycle).
        activation_id: Set only for a model turn admitted by the scheduler.
        claimed_work_revision: The WorkItem revision the execution claimed, if any.
        ephemeral: True for a direct call (D11): nothing about the turn is stored.
    """

    turn_id: str
    source_message_id: str
    work_item_id: str | None = None
    activation_id: str | None = None
    claimed_work_revision: int | None = None
    ephemeral: bool = True

    @classmethod
    def direct(cls) -> Binding:
        """The ephemeral agent-lifecycle binding of a direct call (D11)."""
        return cls(turn_id=new_id("turn"), source_message_id=new_id("msg"))

    @classmethod
    def from_context(cls, value: Any) -> Binding | None:
        """Build a binding from ``context["binding"]`` (a dict, or None for "no binding")."""
        if value is None:
            return None
        if isinstance(value, Binding):
            return value
        if not isinstance(value, dict):
            return cls.direct()
        return cls(
            turn_id=str(value.get("turn_id") or new_id("turn")),
            source_message_id=str(value.get("source_message_id") or new_id("msg")),
            work_item_id=value.get("work_item_id") if isinstance(value.get("work_item_id"), str) else None,
            activation_id=value.get("activation_id") if isinstance(value.get("activation_id"), str) else None,
            claimed_work_revision=value.get("claimed_work_revision")
            if isinstance(value.get("claimed_work_revision"), int)
            else None,
            ephemeral=bool(value.get("ephemeral", value.get("activation_id") is None)),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire form ``{turn_id, source_message_id, work_item_id?, activation_id?, claimed_work_revision?}``."""
        out: dict[str, Any] = {"turn_id": self.turn_id, "source_message_id": self.source_message_id}
        for key in ("work_item_id", "activation_id", "claimed_work_revision"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def fail(
    kind: str,
    message: str,
    details: dict[str, Any] | None = None,
    hint: str | None = None,
    retryable: bool | None = None,
) -> ToolFailure:
    """A :class:`ToolFailure` for a typed work-plane error (raise it)."""
    return ToolFailure(ToolError(kind=kind, message=message, details=details, recovery_hint=hint, retryable=retryable))
