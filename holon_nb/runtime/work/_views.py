"""Read side of the work plane: scheduling derivation, WorkItemView, wait summaries, ordering.

Everything here is computed on read and never stored (agents spec §3.3);
rules are numbered as in the spec.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core._clock import fmt, utcnow
from ._records import decode

__all__ = [
    "FILTERS",
    "LIST_REPORT_CHARS",
    "PLAN_PREVIEW_CHARS",
    "ItemContext",
    "compact_wait",
    "derive",
    "list_page",
    "load_context",
    "matches_filter",
    "order_views",
    "plan_artifact",
    "plan_meta_for",
    "raw_record",
    "wait_summary",
    "work_item_view",
]

PLAN_PREVIEW_CHARS = 1600
_WAIT_ORDER = ("task", "operator", "timer", "external", "system")
_RANK = {
    "current_runnable": 0,
    "triggered_blocked": 1,
    "queued_runnable": 2,
    "yielded": 3,
    "waiting_for_operator": 4,
    "blocked": 5,
    "completing": 6,
    "completed_recent": 7,
}
FILTERS = (
    "all",
    "open",
    "completing",
    "completed",
    "current",
    "queued",
    "yielded",
    "blocked",
    "waiting_for_operator",
    "runnable",
)


@dataclass
class ItemContext:
    """What the derivation of one agent's items needs besides the records.

    Attributes:
        focus_id: The agent's ``current_work_item_id`` (may name a closed item).
        waits: Unresolved (active or triggered) waits by work item id, decoded rows.
        yielded: Ids suspended in an active continuation frame.
    """

    focus_id: str | None = None
    waits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    yielded: set[str] = field(default_factory=set)


def load_context(query: Callable[..., Any], agent_id: str) -> ItemContext:
    """Load focus, unresolved waits and yielded ids of ``agent_id`` (``query`` = ``store.query`` or ``db.execute``)."""
    ctx = ItemContext()
    rows = list(query("SELECT current_work_item_id FROM agent_work_state WHERE agent_id=?", (agent_id,)))
    ctx.focus_id = rows[0][0] if rows else None
    for row in query(
        "SELECT * FROM waits WHERE agent_id=? AND status IN ('active','triggered') AND work_item_id IS NOT NULL",
        (agent_id,),
    ):
        w = decode(row)
        assert w is not None
        ctx.waits.setdefault(w["work_item_id"], []).append(w)
    ctx.yielded = {
        r[0]
        for r in query(
            "SELECT suspended_work_item_id FROM continuation_frames WHERE agent_id=? AND state='active'", (agent_id,)
        )
    }
    return ctx


def derive(rec: dict[str, Any], ctx: ItemContext) -> dict[str, Any]:
    """The scheduling projection of one record (agents spec §3.3, first matching rule wins).

    Returns:
        ``{scheduling_state, reason_code, readiness, is_current, is_runnable, focus,
        candidate_class, diagnostics, triggered_at}``.
    """
    rid = rec["id"]
    if rec["state"] == "open" and rid not in ctx.waits and rid not in ctx.yielded and ctx.focus_id != rid:
        # the common case of a long list: a plain queued item (shared, read-only results)
        if rec.get("blocked_by"):
            return _QUEUED_BLOCKED
        return _QUEUED_NEEDS_INPUT if rec.get("plan_status") == "needs_input" else _QUEUED_RUNNABLE
    waits = ctx.waits.get(rid, [])
    active = [w["kind"] for w in waits if w["status"] == "active"]
    triggered = [w.get("triggered_at") or "" for w in waits if w["status"] == "triggered"]
    state, yielded = rec["state"], rec["id"] in ctx.yielded
    terminalizing = state in ("completed", "completing")
    sched, reason, ready = _scheduling(rec, yielded, active)
    focused = ctx.focus_id == rec["id"]
    is_current = focused and state == "open"
    if terminalizing:
        focus = state
    elif is_current:
        focus = "current"
    elif yielded:
        focus = "yielded"
    else:
        focus = "blocked" if rec.get("blocked_by") else "queued"
    diagnostics = [
        code
        for code, holds in (
            ("terminalizing_work_item_marked_current", terminalizing and focused),
            ("yielded_work_item_marked_current", yielded and focused),
            ("terminalizing_work_item_has_active_wait", terminalizing and bool(active)),
            ("multiple_active_wait_kinds", len(set(active)) > 1),
        )
        if holds
    ]
    return {
        "scheduling_state": sched,
        "reason_code": reason,
        "readiness": ready,
        "is_current": is_current,
        "is_runnable": ready == "runnable",
        "focus": focus,
        "candidate_class": _candidate_class(state, ready, is_current, bool(triggered)),
        "diagnostics": diagnostics,
        "triggered_at": max(triggered) if triggered else None,
    }


def _scheduling(rec: dict[str, Any], yielded: bool, active: list[str]) -> tuple[str, str, str]:
    """``(scheduling_state, reason_code, readiness)`` of a record: agents spec §3.3's rules, first match wins."""
    state = rec["state"]
    if state in ("completed", "completing"):
        return state, state, state
    if yielded:
        return "yielded_to_work_item", "continuation_yielded", "yielded"
    if active:
        kind = min(active, key=_WAIT_ORDER.index)
        return f"waiting_{kind}", f"active_{kind}_wait", "waiting_for_operator" if kind == "operator" else "blocked"
    if rec.get("blocked_by"):
        return "blocked", "manual_blocker", "blocked"
    if rec.get("plan_status") == "needs_input":
        return "waiting_operator", "plan_needs_input", "waiting_for_operator"
    return "runnable", "runnable", "runnable"


def _candidate_class(state: str, ready: str, is_current: bool, triggered: bool) -> str:
    """The ``candidate_class`` a record is listed under (agents spec §3.3)."""
    if state == "completed":
        return "completed_recent"
    if state == "completing":
        return "completing"
    if ready == "yielded":
        return "yielded"
    if is_current and ready == "runnable":
        return "current_runnable"
    if triggered and ready != "runnable":
        return "triggered_blocked"
    if ready == "runnable":
        return "queued_runnable"
    return "waiting_for_operator" if ready == "waiting_for_operator" else "blocked"


def _queued(sched: str, reason: str, ready: str, klass: str) -> dict[str, Any]:
    return {
        "scheduling_state": sched,
        "reason_code": reason,
        "readiness": ready,
        "is_current": False,
        "is_runnable": ready == "runnable",
        "focus": "blocked" if reason == "manual_blocker" else "queued",
        "candidate_class": klass,
        "diagnostics": [],
        "triggered_at": None,
    }


_QUEUED_BLOCKED = _queued("blocked", "manual_blocker", "blocked", "blocked")
_QUEUED_NEEDS_INPUT = _queued("waiting_operator", "plan_needs_input", "waiting_for_operator", "waiting_for_operator")
_QUEUED_RUNNABLE = _queued("runnable", "runnable", "runnable", "queued_runnable")


def plan_meta_for(path: Path) -> dict[str, Any]:
    """Metadata of a plan file as stored with its work item: hash, bytes, preview, stat key."""
    try:
        data = path.read_bytes()
        st = path.stat()
        stat_key = [st.st_size, st.st_mtime_ns]
        updated_at = fmt(datetime.fromtimestamp(st.st_mtime, tz=timezone.utc))
    except OSError:
        data, stat_key, updated_at = b"", None, fmt(utcnow())
    text = data.decode("utf-8", errors="replace")
    return {
        "hash": "sha256:" + hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "updated_at": updated_at,
        "preview": text[:PLAN_PREVIEW_CHARS],
        "preview_complete": len(text) <= PLAN_PREVIEW_CHARS,
        "stat": stat_key,
    }


def plan_artifact(rec: dict[str, Any], agent_home: Path) -> dict[str, Any]:
    """The ``plan_artifact`` descriptor (agents spec §3.1); re-read only when the file changed on disk."""
    rel = f"work-items/{rec['id']}/plan.md"
    path = agent_home / rel
    meta = rec.get("plan_meta") or {}
    try:
        st = path.stat()
        current = [st.st_size, st.st_mtime_ns]
    except OSError:
        current = None
    if current != meta.get("stat") or "hash" not in meta:
        meta = plan_meta_for(path)
    return {
        "owner_agent_id": rec["agent_id"],
        "workspace_id": f"agent_home:{rec['agent_id']}",
        "workspace_alias": "agent_home",
        "relative_path": rel,
        "path": str(path),
        "hash": meta["hash"],
        "bytes": meta["bytes"],
        "updated_at": meta["updated_at"],
        "preview": meta["preview"],
        "preview_complete": meta["preview_complete"],
    }


def wait_summary(w: dict[str, Any]) -> dict[str, Any]:
    """``WaitConditionSummary`` of a decoded wait row (agents spec §4.1)."""
    out: dict[str, Any] = {
        "id": w["id"],
        "status": w["status"],
        "kind": w["kind"],
        "source": w["source"],
        "waiting_for": w["waiting_for"],
        "wake_sources": w["wake_sources"],
        "continuation": w["continuation"],
        "created_at": w["created_at"],
        "updated_at": w["updated_at"],
    }
    for key in ("work_item_id", "subject_ref", "turn_id"):
        if w.get(key) is not None:
            out[key] = w[key]
    if w["kind"] == "external" and w["status"] == "active":
        kinds = {s.get("kind") for s in w["wake_sources"]}
        recoverable = bool(kinds & {"timer", "system_tick"}) or bool((w["continuation"] or {}).get("recovery"))
        reason = (w["continuation"] or {}).get("no_fallback_reason")
        out["external_recoverability"] = (
            "recoverable" if recoverable else ("explicit_no_fallback" if reason else "weak")
        )
        if reason:
            out["no_fallback_reason"] = reason
    return out


def raw_record(rec: dict[str, Any], agent_home: Path) -> dict[str, Any]:
    """The raw ``WorkItemRecord`` (revision included) PickWorkItem returns (agents spec §3.1, §5.13)."""
    out = {k: v for k, v in rec.items() if k != "plan_meta"}
    out["plan_artifact"] = plan_artifact(rec, agent_home)
    return out


# Compact list views — a departure from agents spec §5.15 (review fix). Upstream lists full
# WorkItemViews; with the plan preview (1,600 chars), the plan's path and hash and each wait's
# continuation, a default ListWorkItems (limit 20) overran the 2,500-token tool-output budget
# (about 10,000 receipt characters) at about a dozen items, and the model only got a projection
# stand-in. In ListWorkItems results:
# - plan_artifact keeps {bytes} (owner, workspace and paths are fixed by the id:
#   <agent home>/work-items/<id>/plan.md; hash, times and preview are in GetWorkItem);
# - agent_id (always the caller), scheduling_state (a function of reason_code) and is_runnable
#   (readiness == "runnable") are left out: nothing is lost;
# - waits are brief summaries {id, kind, status, waiting_for, subject_ref?};
# - a completion report's text is cut to LIST_REPORT_CHARS (text_truncated: true).
# GetWorkItem (and the mutations) return the full view. Twenty typical items now take about
# 9,000 characters; a larger `limit` (up to 100) may still be projected, by design.
LIST_REPORT_CHARS = 200
_LIST_PLAN_KEYS = ("bytes",)
_LIST_DROPPED = ("agent_id", "scheduling_state", "is_runnable")


def compact_wait(w: dict[str, Any]) -> dict[str, Any]:
    """The list-view wait summary: ``{id, kind, status, waiting_for, subject_ref?}`` (see above)."""
    out = {"id": w["id"], "kind": w["kind"], "status": w["status"], "waiting_for": w["waiting_for"]}
    if w.get("subject_ref") is not None:
        out["subject_ref"] = w["subject_ref"]
    return out


def work_item_view(
    rec: dict[str, Any],
    d: dict[str, Any],
    agent_home: Path,
    *,
    include_todo: bool,
    ctx: ItemContext,
    brief: dict[str, Any] | None = None,
    compact: bool = False,
) -> dict[str, Any]:
    """The ``WorkItemView`` (agents spec §5.11): no revision; optional parts omitted when empty.

    ``compact`` gives the ListWorkItems form (plan artifact without preview, paths or hash; no
    agent_id, scheduling_state or is_runnable; brief wait summaries; report text cut), see the
    note above :data:`LIST_REPORT_CHARS`.
    """
    artifact = plan_artifact(rec, agent_home)
    if compact:
        artifact = {k: artifact[k] for k in _LIST_PLAN_KEYS}
    view: dict[str, Any] = {
        "id": rec["id"],
        "agent_id": rec["agent_id"],
        "workspace_id": rec["workspace_id"],
        "objective": rec["objective"],
        "state": rec["state"],
        "focus": d["focus"],
        "scheduling_state": d["scheduling_state"],
        "readiness": d["readiness"],
        "candidate_class": d["candidate_class"],
        "reason_code": d["reason_code"],
        "is_current": d["is_current"],
        "is_runnable": d["is_runnable"],
        "plan_status": rec["plan_status"],
        "plan_artifact": artifact,
        "created_at": rec["created_at"],
        "updated_at": rec["updated_at"],
    }
    if include_todo:
        view["todo_list"] = rec["todo_list"]
    if rec.get("work_refs"):
        view["work_refs"] = rec["work_refs"]
    for key in ("blocked_by", "recheck_at", "recheck_consumed_at"):
        if rec.get(key) is not None:
            view[key] = rec[key]
    if rec["state"] == "completed":
        report = _completion_report(rec, brief)
        if report and compact and len(report["text"]) > LIST_REPORT_CHARS:
            report = {**report, "text": report["text"][: LIST_REPORT_CHARS - 1] + "…", "text_truncated": True}
        if report:
            view["completion_report"] = report
    waits = ctx.waits.get(rec["id"], [])
    if waits:
        summary = compact_wait if compact else wait_summary
        view["active_wait_conditions"] = [summary(w) for w in sorted(waits, key=lambda w: w["created_at"])]
    if d["diagnostics"]:
        view["diagnostics"] = d["diagnostics"]
    if compact:
        for key in _LIST_DROPPED:
            del view[key]
    return view


def _completion_report(rec: dict[str, Any], brief: dict[str, Any] | None) -> dict[str, Any] | None:
    if brief is not None:
        return {
            "text": brief["text"],
            "source": "result_brief",
            "brief_id": brief["id"],
            "created_at": brief["created_at"],
        }
    if rec.get("result_summary"):
        return {"text": rec["result_summary"], "source": "work_item_result_summary"}
    return None


def matches_filter(name: str, rec: dict[str, Any], d: dict[str, Any]) -> bool:
    """Filter semantics of ListWorkItems (agents spec §5.15)."""
    if name == "all":
        return True
    if name in ("open", "completing", "completed"):
        return rec["state"] == name
    if name == "current":
        return d["is_current"]
    if name == "queued":
        return not d["is_current"] and rec["state"] == "open" and d["readiness"] == "runnable"
    if name == "blocked":
        return not d["is_current"] and d["readiness"] == "blocked"
    return d["readiness"] == name  # yielded, waiting_for_operator, runnable


def order_views(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Scheduler candidate order (agents spec §5.15): class rank, then the class's tie rule, then id."""
    groups: dict[int, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for rec, d in pairs:
        groups.setdefault(_RANK[d["candidate_class"]], []).append((rec, d))
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for rank in sorted(groups):
        group = sorted(groups[rank], key=lambda p: p[0]["id"])
        if rank == _RANK["triggered_blocked"]:
            group.sort(key=lambda p: p[1]["triggered_at"] or "", reverse=True)
        elif rank == _RANK["queued_runnable"]:
            group.sort(key=lambda p: p[0]["created_at"])
        else:
            group.sort(key=lambda p: p[0]["updated_at"], reverse=True)
        out += group
    return out


# ListWorkItems over many items: "plain" items (no unresolved wait, not yielded, not the focus) are
# classified, filtered and ordered by SQLite, one class at a time through a partial index, so a page costs
# the same at 100k items as at 1k; the count comes from ``work_item_counts`` (kept by triggers) minus the
# special items; the few special items are derived in Python and merged.
_COLS = "id, agent_id, state, blocked_by, plan_status, created_at, updated_at"
#: Plain classes in scheduler rank order: (rank, the index that orders it, WHERE (the partial index's), ORDER BY).
_CLASSES = (
    (2, "work_items_queued", "state='open' AND blocked_by IS NULL AND plan_status<>'needs_input'", "created_at, id"),
    (
        4,
        "work_items_needs_input",
        "state='open' AND blocked_by IS NULL AND plan_status='needs_input'",
        "updated_at DESC, id",
    ),
    (5, "work_items_blocked", "state='open' AND blocked_by IS NOT NULL", "updated_at DESC, id"),
    (6, "work_items_state_updated", "state='completing'", "updated_at DESC, id"),
    (7, "work_items_state_updated", "state='completed'", "updated_at DESC, id"),
)
_FILTER_CLASSES = {
    "all": (2, 4, 5, 6, 7),
    "open": (2, 4, 5),
    "completing": (6,),
    "completed": (7,),
    "current": (),
    "yielded": (),
    "queued": (2,),
    "runnable": (2,),
    "blocked": (5,),
    "waiting_for_operator": (4,),
}


def _plain_class(rec: dict[str, Any]) -> int:
    """The class of a record by its columns alone (``work_records.CLASS_SQL``)."""
    if rec["state"] == "completed":
        return 7
    if rec["state"] == "completing":
        return 6
    if rec["blocked_by"] is not None:
        return 5
    return 4 if rec["plan_status"] == "needs_input" else 2


def list_page(
    db: Any, agent_id: str, ctx: ItemContext, filter_name: str, limit: int
) -> tuple[int, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Filter, count and order an agent's work items (agents spec §5.15) without deriving every one.

    Returns:
        ``(total_matching, the first `limit` (record, derivation) pairs in scheduler order)``;
        records carry only the columns the derivation needs.
    """
    ids = {
        r[0]
        for r in db.execute(
            "SELECT work_item_id FROM waits WHERE status IN ('active','triggered') AND work_item_id IS NOT NULL"
        )
    }
    ids |= {r[0] for r in db.execute("SELECT suspended_work_item_id FROM continuation_frames WHERE state='active'")}
    if ctx.focus_id is not None:
        ids.add(ctx.focus_id)
    classes = _FILTER_CLASSES[filter_name]
    special, special_in_classes = [], 0
    marks = ",".join("?" * len(ids))
    rows = (
        db.execute(f"SELECT {_COLS} FROM work_items WHERE agent_id=? AND id IN ({marks})", (agent_id, *ids)).fetchall()
        if ids
        else []
    )
    for row in rows:
        rec = dict(row)
        special_in_classes += _plain_class(rec) in classes
        d = derive(rec, ctx)
        if matches_filter(filter_name, rec, d):
            special.append((rec, d))
    marks = ",".join("?" * len(rows))
    counted = dict(db.execute("SELECT klass, n FROM work_item_counts WHERE agent_id=?", (agent_id,)).fetchall())
    total = sum(counted.get(k, 0) for k in classes) - special_in_classes
    plain: list[tuple[dict[str, Any], dict[str, Any]]] = []
    skip = tuple(r["id"] for r in rows)
    for rank, index, where, order in _CLASSES:
        if rank not in classes or len(plain) >= limit:
            continue
        not_special = f" AND id NOT IN ({marks})" if skip else ""
        found = db.execute(
            f"SELECT {_COLS} FROM work_items INDEXED BY {index} WHERE agent_id=? AND {where}{not_special}"
            f" ORDER BY {order} LIMIT ?",
            (agent_id, *skip, limit - len(plain)),
        ).fetchall()
        plain += [(rec, derive(rec, ctx)) for rec in (dict(r) for r in found)]
    return total + len(special), order_views([*special, *plain])[:limit]
