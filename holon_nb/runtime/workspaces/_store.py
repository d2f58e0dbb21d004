"""Durable workspace state in the runtime's SQLite store (workspace spec §1.1, §1.4).

Tables (created by :class:`WorkspaceTables` against ``rt.store``):

- ``ws_workspaces``: the append-only workspace registry (``WorkspaceEntry``).
- ``ws_agent_state``: each agent's bindings (``attached_workspaces``, agent home
  first) and its active projection (``ActiveWorkspaceEntry``).
- ``ws_execution_roots``: the execution-root registry; removal is a tombstone
  (``removed_at``), never a delete.
- ``ws_occupancies``: occupancy records; release sets ``released_at``.
- ``ws_cleanup_leases``: roots being removed (a lease blocks new occupancy).
- ``ws_audit``: audit events (``workspace_attached``, ``worktree_created``, …).

Write methods take the open connection of a ``with store.tx() as db:`` block so
one transition is one transaction; read methods query the store directly.
Records are plain dicts shaped like the spec's result objects; optional fields
that are None are omitted.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..core._store import Store, new_id, now_rfc3339
from ._paths import EXCLUSIVE_WRITE

__all__ = ["WorkspaceTables"]

_DDL = (
    """CREATE TABLE IF NOT EXISTS ws_workspaces (
        workspace_id TEXT PRIMARY KEY, workspace_alias TEXT, workspace_kind TEXT, owner_agent_id TEXT,
        workspace_anchor TEXT NOT NULL, repo_name TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ws_agent_state (
        agent_id TEXT PRIMARY KEY, attached TEXT NOT NULL, active TEXT NOT NULL, updated_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ws_execution_roots (
        execution_root_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, filesystem_path TEXT NOT NULL,
        root_kind TEXT NOT NULL, worktree TEXT, created_at TEXT NOT NULL, removed_at TEXT)""",
    "CREATE INDEX IF NOT EXISTS ws_roots_workspace ON ws_execution_roots(workspace_id)",
    """CREATE TABLE IF NOT EXISTS ws_occupancies (
        occupancy_id TEXT PRIMARY KEY, execution_root_id TEXT NOT NULL, workspace_id TEXT NOT NULL,
        holder_agent_id TEXT NOT NULL, access_mode TEXT NOT NULL, acquired_at TEXT NOT NULL, released_at TEXT)""",
    "CREATE INDEX IF NOT EXISTS ws_occupancies_root ON ws_occupancies(execution_root_id, released_at)",
    """CREATE TABLE IF NOT EXISTS ws_cleanup_leases (
        execution_root_id TEXT PRIMARY KEY, lease_id TEXT NOT NULL, holder_agent_id TEXT NOT NULL,
        acquired_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ws_audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, agent_id TEXT NOT NULL, event TEXT NOT NULL,
        data TEXT NOT NULL, created_at TEXT NOT NULL)""",
)


def _compact(row: sqlite3.Row, json_fields: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in row.keys():
        value = row[key]
        if key in json_fields and value is not None:
            value = json.loads(value)
        if value is not None:
            out[key] = value
    return out


class WorkspaceTables:
    """Reads and transactional writes of the workspace tables.

    Args:
        store: The runtime's store; the tables are created on construction.
    """

    def __init__(self, store: Store):
        self.store = store
        with store.tx() as db:
            for statement in _DDL:
                db.execute(statement)

    # ------------------------------------------------------------ workspace registry
    def workspace(self, workspace_id: str) -> dict[str, Any] | None:
        """The ``WorkspaceEntry`` of an id, or None."""
        rows = self.store.query("SELECT * FROM ws_workspaces WHERE workspace_id=?", (workspace_id,))
        return _compact(rows[0]) if rows else None

    def workspaces(self) -> list[dict[str, Any]]:
        """Every registry entry, sorted by ``workspace_id``."""
        return [_compact(r) for r in self.store.query("SELECT * FROM ws_workspaces ORDER BY workspace_id")]

    @staticmethod
    def ensure_workspace(db: sqlite3.Connection, entry: dict[str, Any]) -> dict[str, Any]:
        """Insert a registry entry unless its id exists; return the stored entry."""
        now = now_rfc3339()
        db.execute(
            "INSERT OR IGNORE INTO ws_workspaces(workspace_id, workspace_alias, workspace_kind, owner_agent_id,"
            " workspace_anchor, repo_name, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
            (
                entry["workspace_id"],
                entry.get("workspace_alias"),
                entry.get("workspace_kind"),
                entry.get("owner_agent_id"),
                entry["workspace_anchor"],
                entry.get("repo_name"),
                now,
                now,
            ),
        )
        row = db.execute("SELECT * FROM ws_workspaces WHERE workspace_id=?", (entry["workspace_id"],)).fetchone()
        return _compact(row)

    @staticmethod
    def touch_workspace(db: sqlite3.Connection, workspace_id: str) -> None:
        """Set a registry entry's ``updated_at`` to now."""
        db.execute("UPDATE ws_workspaces SET updated_at=? WHERE workspace_id=?", (now_rfc3339(), workspace_id))

    # ------------------------------------------------------------ agent state
    def agent_state(self, agent_id: str) -> dict[str, Any] | None:
        """``{"attached": [ids], "active": ActiveWorkspaceEntry}`` of an agent, or None when never seen."""
        rows = self.store.query("SELECT * FROM ws_agent_state WHERE agent_id=?", (agent_id,))
        if not rows:
            return None
        return {"attached": json.loads(rows[0]["attached"]), "active": json.loads(rows[0]["active"])}

    @staticmethod
    def agent_state_in(db: sqlite3.Connection, agent_id: str) -> dict[str, Any] | None:
        """:meth:`agent_state` read inside an open transaction (it sees that transaction's writes)."""
        row = db.execute("SELECT * FROM ws_agent_state WHERE agent_id=?", (agent_id,)).fetchone()
        return None if row is None else {"attached": json.loads(row["attached"]), "active": json.loads(row["active"])}

    @staticmethod
    def put_agent_state(db: sqlite3.Connection, agent_id: str, attached: list[str], active: dict[str, Any]) -> None:
        """Write an agent's bindings and active projection."""
        db.execute(
            "INSERT INTO ws_agent_state(agent_id, attached, active, updated_at) VALUES (?,?,?,?)"
            " ON CONFLICT(agent_id) DO UPDATE SET attached=excluded.attached, active=excluded.active,"
            " updated_at=excluded.updated_at",
            (agent_id, json.dumps(attached), json.dumps(active), now_rfc3339()),
        )

    # ------------------------------------------------------------ execution roots
    def root(self, execution_root_id: str) -> dict[str, Any] | None:
        """The ``ExecutionRootEntry`` of an id (tombstoned ones included), or None."""
        rows = self.store.query("SELECT * FROM ws_execution_roots WHERE execution_root_id=?", (execution_root_id,))
        return _compact(rows[0], ("worktree",)) if rows else None

    def roots(self, workspace_id: str | None = None, live_only: bool = False) -> list[dict[str, Any]]:
        """Execution roots (of one workspace, or all), sorted by ``(workspace_id, execution_root_id)``."""
        sql = "SELECT * FROM ws_execution_roots WHERE 1=1"
        params: tuple[Any, ...] = ()
        if workspace_id is not None:
            sql += " AND workspace_id=?"
            params = (workspace_id,)
        if live_only:
            sql += " AND removed_at IS NULL"
        rows = self.store.query(sql + " ORDER BY workspace_id, execution_root_id", params)
        return [_compact(r, ("worktree",)) for r in rows]

    @staticmethod
    def root_in(db: sqlite3.Connection, execution_root_id: str) -> dict[str, Any] | None:
        """Like :meth:`root`, inside an open transaction."""
        row = db.execute("SELECT * FROM ws_execution_roots WHERE execution_root_id=?", (execution_root_id,)).fetchone()
        return _compact(row, ("worktree",)) if row else None

    @staticmethod
    def upsert_root(db: sqlite3.Connection, entry: dict[str, Any]) -> dict[str, Any]:
        """Insert or replace an execution root (``created_at`` kept from the first insert); return it."""
        row = db.execute(
            "SELECT created_at FROM ws_execution_roots WHERE execution_root_id=?", (entry["execution_root_id"],)
        ).fetchone()
        created = row["created_at"] if row else entry.get("created_at") or now_rfc3339()
        worktree = entry.get("worktree")
        db.execute(
            "INSERT OR REPLACE INTO ws_execution_roots(execution_root_id, workspace_id, filesystem_path, root_kind,"
            " worktree, created_at, removed_at) VALUES (?,?,?,?,?,?,?)",
            (
                entry["execution_root_id"],
                entry["workspace_id"],
                entry["filesystem_path"],
                entry["root_kind"],
                json.dumps(worktree) if worktree is not None else None,
                created,
                entry.get("removed_at"),
            ),
        )
        return {**{k: v for k, v in entry.items() if v is not None}, "created_at": created}

    @staticmethod
    def tombstone_root(db: sqlite3.Connection, execution_root_id: str) -> str:
        """Mark a root removed (never deleted); return ``removed_at``."""
        ts = now_rfc3339()
        db.execute(
            "UPDATE ws_execution_roots SET removed_at=? WHERE execution_root_id=? AND removed_at IS NULL",
            (ts, execution_root_id),
        )
        return ts

    # ------------------------------------------------------------ occupancy and leases
    def occupancies(self, unreleased_only: bool = True) -> list[dict[str, Any]]:
        """Occupancy records sorted by ``occupancy_id`` (unreleased ones only by default)."""
        where = " WHERE released_at IS NULL" if unreleased_only else ""
        return [_compact(r) for r in self.store.query(f"SELECT * FROM ws_occupancies{where} ORDER BY occupancy_id")]

    @staticmethod
    def live_occupancies_in(db: sqlite3.Connection, execution_root_id: str) -> list[dict[str, Any]]:
        """Unreleased occupancies of one root, inside an open transaction."""
        rows = db.execute(
            "SELECT * FROM ws_occupancies WHERE execution_root_id=? AND released_at IS NULL ORDER BY occupancy_id",
            (execution_root_id,),
        ).fetchall()
        return [_compact(r) for r in rows]

    @staticmethod
    def lease_in(db: sqlite3.Connection, execution_root_id: str) -> dict[str, Any] | None:
        """The cleanup lease on a root, or None."""
        row = db.execute("SELECT * FROM ws_cleanup_leases WHERE execution_root_id=?", (execution_root_id,)).fetchone()
        return _compact(row) if row else None

    def acquire(
        self, db: sqlite3.Connection, root: dict[str, Any], agent_id: str, access_mode: str
    ) -> tuple[dict[str, Any] | None, str | None]:
        """Acquire occupancy of ``root`` for ``agent_id`` (workspace spec §1.4 rules 2-4).

        Returns:
            ``(record, None)`` — the existing record when the same holder already holds
            the same mode — or ``(None, reason)`` with reason ``root_being_removed``
            (a cleanup lease) or ``occupancy_conflict`` (another agent holds
            ``exclusive_write`` and ``exclusive_write`` was asked).
        """
        root_id = root["execution_root_id"]
        if self.lease_in(db, root_id) is not None:
            return None, "root_being_removed"
        live = self.live_occupancies_in(db, root_id)
        for rec in live:
            if rec["holder_agent_id"] == agent_id and rec["access_mode"] == access_mode:
                return rec, None
        if access_mode == EXCLUSIVE_WRITE and any(
            r["holder_agent_id"] != agent_id and r["access_mode"] == EXCLUSIVE_WRITE for r in live
        ):
            return None, "occupancy_conflict"
        rec = {
            "occupancy_id": new_id("occ"),
            "execution_root_id": root_id,
            "workspace_id": root["workspace_id"],
            "holder_agent_id": agent_id,
            "access_mode": access_mode,
            "acquired_at": now_rfc3339(),
        }
        db.execute(
            "INSERT INTO ws_occupancies(occupancy_id, execution_root_id, workspace_id, holder_agent_id, access_mode,"
            " acquired_at) VALUES (?,?,?,?,?,?)",
            (rec["occupancy_id"], root_id, rec["workspace_id"], agent_id, access_mode, rec["acquired_at"]),
        )
        return rec, None

    @staticmethod
    def release(db: sqlite3.Connection, occupancy_id: str | None) -> None:
        """Release one occupancy (no-op for None or an already released one)."""
        if occupancy_id:
            db.execute(
                "UPDATE ws_occupancies SET released_at=? WHERE occupancy_id=? AND released_at IS NULL",
                (now_rfc3339(), occupancy_id),
            )

    def grant_lease(self, db: sqlite3.Connection, execution_root_id: str, agent_id: str) -> str | None:
        """Grant a cleanup lease when the root has no unreleased occupancy (workspace spec §1.4 rule 5); return its id or None."""
        if self.live_occupancies_in(db, execution_root_id) or self.lease_in(db, execution_root_id):
            return None
        lease_id = new_id("lease")
        db.execute(
            "INSERT INTO ws_cleanup_leases(execution_root_id, lease_id, holder_agent_id, acquired_at) VALUES (?,?,?,?)",
            (execution_root_id, lease_id, agent_id, now_rfc3339()),
        )
        return lease_id

    @staticmethod
    def drop_lease(db: sqlite3.Connection, execution_root_id: str) -> None:
        """Release the cleanup lease of a root."""
        db.execute("DELETE FROM ws_cleanup_leases WHERE execution_root_id=?", (execution_root_id,))

    def drop_all_leases(self) -> int:
        """Release every cleanup lease (a removal cannot outlive the runtime that ran it); return how many."""
        with self.store.tx() as db:
            return db.execute("DELETE FROM ws_cleanup_leases").rowcount

    # ------------------------------------------------------------ audit
    @staticmethod
    def audit(db: sqlite3.Connection, agent_id: str, event: str, data: dict[str, Any]) -> None:
        """Append an audit event (``workspace_attached``, ``worktree_created``, …)."""
        db.execute(
            "INSERT INTO ws_audit(agent_id, event, data, created_at) VALUES (?,?,?,?)",
            (agent_id, event, json.dumps(data, default=str), now_rfc3339()),
        )

    def audit_events(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Audit events, oldest first (``data`` parsed)."""
        sql = "SELECT * FROM ws_audit" + (" WHERE agent_id=?" if agent_id else "") + " ORDER BY seq"
        return [_compact(r, ("data",)) for r in self.store.query(sql, (agent_id,) if agent_id else ())]
