"""Work-item records: insert, compare-and-set writes, focus state, continuation frames, briefs.

The record-level layer of agents spec §3: every write runs inside a caller's
:class:`~holon_nb.runtime.work._records.Tx`, checks the expected revision
(agents spec §3.5) and bumps it by one, appends the revision to ``work_item_revisions``,
re-indexes the item for memory search and queues a ``work_item_changed``
event for after the commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core._clock import fmt, utcnow
from ..core._store import new_id
from ._records import Tx, decode, fail, safe_text
from ._views import plan_meta_for

__all__ = ["WorkItemRecords", "revision_conflict", "todo_text"]

_COLUMNS = (
    "workspace_id",
    "objective",
    "state",
    "plan_status",
    "plan_meta",
    "todo_list",
    "work_refs",
    "blocked_by",
    "recheck_at",
    "recheck_consumed_at",
    "result_brief_id",
    "result_summary",
    "completion_intent",
    "turn_id",
)
_JSON = ("plan_meta", "todo_list", "work_refs", "completion_intent")


def revision_conflict(work_item_id: str, expected: int, actual: int | None) -> Exception:
    """The ``revision_conflict`` failure (agents spec §0.3)."""
    details: dict[str, Any] = {"record_type": "work_item", "record_id": work_item_id, "expected_revision": expected}
    if actual is not None:
        details["actual_revision"] = actual
    return fail(
        "revision_conflict",
        f"work item {work_item_id} changed since revision {expected} was read",
        details,
        "retry with fresh state",
        retryable=True,
    )


def _workspace(workspace_id: str | None) -> str | None:
    """The memory scope of a work-plane document: its workspace, or None (visible from every workspace)."""
    return workspace_id if workspace_id and workspace_id != "agent_home" else None


def todo_text(rec: dict[str, Any]) -> str:
    """The searchable text of a work item: objective, todos, plan preview."""
    lines = [rec["objective"]]
    lines += [f"[{t['state']}] {t['text']}" for t in rec.get("todo_list") or []]
    preview = (rec.get("plan_meta") or {}).get("preview")
    if preview:
        lines += ["", preview]
    return "\n".join(lines)


class WorkItemRecords:
    """Record-level access to work items of one home.

    Args:
        agent_home: ``agent_id -> Path`` of the agent home (created on demand).
        index: The memory service's ``index`` method (called inside the transaction).
    """

    def __init__(self, agent_home: Callable[[str], Path], index: Callable[..., None]):
        self.agent_home = agent_home
        self._index = index

    # ------------------------------------------------------------ reads
    @staticmethod
    def load(db: Any, work_item_id: str) -> dict[str, Any] | None:
        """The decoded record, or None (``db`` is a connection or anything with ``execute``)."""
        return decode(db.execute("SELECT * FROM work_items WHERE id=?", (work_item_id,)).fetchone())

    @staticmethod
    def texts(db: Any) -> list[str]:
        """Each work item's objective, plan, todo list and references as one line of text (every agent's; what
        the home's pruning keeps the paths and ids of)."""
        rows = db.execute("SELECT objective, plan_meta, todo_list, work_refs FROM work_items").fetchall()
        return [" ".join(str(v) for v in row if v) for row in rows]

    @staticmethod
    def focus(db: Any, agent_id: str) -> dict[str, Any]:
        """``{current_work_item_id, current_turn_work_item_id, current_execution_binding}`` of an agent."""
        row = decode(db.execute("SELECT * FROM agent_work_state WHERE agent_id=?", (agent_id,)).fetchone())
        if row is None:
            return {"current_work_item_id": None, "current_turn_work_item_id": None, "current_execution_binding": None}
        return {k: row[k] for k in ("current_work_item_id", "current_turn_work_item_id", "current_execution_binding")}

    def plan_path(self, agent_id: str, work_item_id: str) -> Path:
        """``<agent home>/work-items/<id>/plan.md``."""
        return self.agent_home(agent_id) / "work-items" / work_item_id / "plan.md"

    # ------------------------------------------------------------ writes
    def insert(self, t: Tx, rec: dict[str, Any]) -> dict[str, Any]:
        """Insert a new record at revision 1 and index it."""
        row = {**rec, "revision": 1}
        cols = ("id", "agent_id", "revision", "created_at", "updated_at", *_COLUMNS)
        values = [json.dumps(row.get(c)) if c in _JSON else row.get(c) for c in cols]
        t.db.execute(f"INSERT INTO work_items({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", values)
        self._log(t, row, {"created": True})
        return row

    def write(
        self, t: Tx, rec: dict[str, Any], changes: dict[str, Any], *, expected: int | None = None, note: str = "update"
    ) -> dict[str, Any]:
        """Compare-and-set ``changes`` onto ``rec`` at revision ``expected`` (default: ``rec``'s); bump it.

        Returns:
            The new record (revision + 1).

        Raises:
            ToolFailure: ``revision_conflict`` when the stored revision differs (or the row is gone).
        """
        expected = rec["revision"] if expected is None else expected
        now = fmt(utcnow())
        sets = ", ".join(f"{c}=?" for c in changes)
        values = [json.dumps(v) if c in _JSON else v for c, v in changes.items()]
        cur = t.db.execute(
            f"UPDATE work_items SET {sets}{',' if sets else ''} revision=revision+1, updated_at=?"
            " WHERE id=? AND revision=?",
            (*values, now, rec["id"], expected),
        )
        if cur.rowcount != 1:
            row = t.db.execute("SELECT revision FROM work_items WHERE id=?", (rec["id"],)).fetchone()
            raise revision_conflict(rec["id"], expected, row[0] if row else None)
        new = {**rec, **changes, "revision": expected + 1, "updated_at": now}
        self._log(t, new, {"note": note, "fields": sorted(changes)})
        return new

    def _log(self, t: Tx, rec: dict[str, Any], change: dict[str, Any]) -> None:
        t.db.execute(
            "INSERT INTO work_item_revisions(work_item_id, revision, agent_id, change, created_at) VALUES (?,?,?,?,?)",
            (rec["id"], rec["revision"], rec["agent_id"], json.dumps(change), rec["updated_at"]),
        )
        self._index(
            t.db,
            agent_id=rec["agent_id"],
            source_ref=f"work_item:{rec['id']}",
            source_kind="work_item",
            text=todo_text(rec),
            title=rec["objective"],
            updated_at=rec["updated_at"],
            workspace_id=_workspace(rec.get("workspace_id")),
        )
        t.emit(
            "work_item_changed",
            agent_id=rec["agent_id"],
            work_item_id=rec["id"],
            revision=rec["revision"],
            state=rec["state"],
        )

    def refresh_plan(self, rec: dict[str, Any]) -> dict[str, Any]:
        """Plan-artifact metadata read from disk now (stored with the next write, agents spec §5.12 rule 3)."""
        return plan_meta_for(self.plan_path(rec["agent_id"], rec["id"]))

    @staticmethod
    def set_focus(t: Tx, agent_id: str, **changes: Any) -> None:
        """Update the agent's focus state (``current_work_item_id`` / ``current_turn_work_item_id``)."""
        now = fmt(utcnow())
        t.db.execute("INSERT OR IGNORE INTO agent_work_state(agent_id, updated_at) VALUES (?,?)", (agent_id, now))
        for key, value in changes.items():
            assert key in ("current_work_item_id", "current_turn_work_item_id", "current_execution_binding")
            value = json.dumps(value) if key == "current_execution_binding" and value is not None else value
            t.db.execute(f"UPDATE agent_work_state SET {key}=?, updated_at=? WHERE agent_id=?", (value, now, agent_id))
        t.emit(
            "focus_changed", agent_id=agent_id, **{k: v for k, v in changes.items() if k != "current_execution_binding"}
        )

    # ------------------------------------------------------------ briefs
    def insert_brief(
        self,
        t: Tx,
        *,
        agent_id: str,
        text: str,
        source: str,
        work_item_id: str | None,
        wait_id: str | None = None,
        turn_id: str | None = None,
        citations: list[Any] | None = None,
    ) -> dict[str, Any]:
        """Insert one ``result`` brief and index it (``brief:<id>``)."""
        brief = {
            "id": new_id("brief"),
            "agent_id": agent_id,
            "kind": "result",
            "text": safe_text(text),
            "work_item_id": work_item_id,
            "wait_id": wait_id,
            "source": source,
            "citations": citations or [],
            "created_at": fmt(utcnow()),
            "turn_id": turn_id,
        }
        t.db.execute(
            "INSERT INTO briefs(id, agent_id, kind, text, work_item_id, wait_id, source, citations,"
            " created_at, turn_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                brief["id"],
                agent_id,
                "result",
                brief["text"],
                work_item_id,
                wait_id,
                source,
                json.dumps(brief["citations"]),
                brief["created_at"],
                turn_id,
            ),
        )
        owner = self.load(t.db, work_item_id) if work_item_id else None
        self._index(
            t.db,
            agent_id=agent_id,
            source_ref=f"brief:{brief['id']}",
            source_kind="brief",
            text=brief["text"],
            title="result brief",
            updated_at=brief["created_at"],
            workspace_id=_workspace(owner.get("workspace_id") if owner else None),
        )
        t.emit("brief_published", agent_id=agent_id, brief_id=brief["id"], work_item_id=work_item_id)
        return brief

    @staticmethod
    def brief(db: Any, brief_id: str | None) -> dict[str, Any] | None:
        """A stored brief, or None."""
        if not brief_id:
            return None
        return decode(db.execute("SELECT * FROM briefs WHERE id=?", (brief_id,)).fetchone())

    # ------------------------------------------------------------ continuation frames (agents spec §3.6)
    @staticmethod
    def frames(db: Any, agent_id: str) -> list[dict[str, Any]]:
        """Active continuation frames of an agent, oldest first."""
        rows = db.execute(
            "SELECT * FROM continuation_frames WHERE agent_id=? AND state='active' ORDER BY created_at, id", (agent_id,)
        ).fetchall()
        return [decode(r) for r in rows]

    @staticmethod
    def add_frame(
        t: Tx, agent_id: str, suspended: str, active: str, reason: str | None, turn_id: str | None
    ) -> dict[str, Any]:
        """Create an active frame: ``suspended`` waits for ``active`` to complete (``on_completed``)."""
        now = fmt(utcnow())
        frame = {
            "id": new_id("wic"),
            "agent_id": agent_id,
            "suspended_work_item_id": suspended,
            "active_work_item_id": active,
            "return_policy": "on_completed",
            "state": "active",
            "reason": reason,
            "created_at": now,
            "updated_at": now,
            "turn_id": turn_id,
        }
        t.db.execute(
            "INSERT INTO continuation_frames(id, agent_id, suspended_work_item_id, active_work_item_id,"
            " return_policy, state, reason, created_at, updated_at, turn_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (frame["id"], agent_id, suspended, active, "on_completed", "active", reason, now, now, turn_id),
        )
        return frame

    @staticmethod
    def close_frame(t: Tx, frame: dict[str, Any], state: str, reason: str) -> None:
        """Mark a frame ``resumed`` or ``cancelled`` with its resolution reason."""
        now = fmt(utcnow())
        stamp = "resolved_at" if state == "resumed" else "cancelled_at"
        t.db.execute(
            f"UPDATE continuation_frames SET state=?, resolution_reason=?, updated_at=?, {stamp}=? WHERE id=?",
            (state, reason, now, now, frame["id"]),
        )

    @staticmethod
    def frame_summary(frame: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        """``{frame_id, suspended_work_item_id, active_work_item_id, return_policy, reason}`` (agents spec §3.6)."""
        return {
            "frame_id": frame["id"],
            "suspended_work_item_id": frame["suspended_work_item_id"],
            "active_work_item_id": frame["active_work_item_id"],
            "return_policy": frame["return_policy"],
            "reason": reason if reason is not None else frame.get("reason"),
        }
