"""The agent-plane summary GetAgent returns (agents spec §5.2), assembled on read.

Sources: the ``agents`` table (identity, lineage), ``tasks`` (active task
count, children's tasks), ``messages`` (queued input), the memory documents
(brief count), the conversations store (``turn_index``: the agent's turn count; ``token_usage``: its
winning-attempt totals) and the work service's :meth:`~.work.WorkService.agent_summary`
(current work item, waits, timers…), which is merged in as given. Nothing is
written: building a summary changes no state (agents spec §5.2 rule 2).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..core._rows import message_count, task_count
from ..memory._index import document_count
from ..tasks._service import ACTIVE
from ._conversations import ConversationStore

if TYPE_CHECKING:
    from ..core._store import Store
    from ._ports import AgentTriggers, AgentWorkPlane

__all__ = ["build_agent_summary", "AGENT_STATE_KEYS"]

#: Keys of the work summary that belong to the ``agent`` (AgentState) object.
AGENT_STATE_KEYS = frozenset(
    {
        "status",
        "pending",
        "turn_index",
        "current_work_item_id",
        "current_turn_work_item_id",
        "current_execution_binding",
    }
)
_DEFAULT_AGENT_ID = "default"


def _identity(rec: dict[str, Any]) -> dict[str, Any]:
    profile = rec["profile"]
    public = profile == "public_named"
    is_default = rec["id"] == _DEFAULT_AGENT_ID
    ident: dict[str, Any] = {
        "agent_id": rec["id"],
        "kind": "default" if is_default else ("named" if public else "child"),
        "visibility": "public" if public else "private",
        "ownership": "self_owned" if public and not rec.get("parent_id") else "parent_supervised",
        "profile_preset": profile,
        "status": rec.get("status") or "active",
        "is_default_agent": is_default,
    }
    if rec.get("parent_id"):
        ident["parent_agent_id"] = rec["parent_id"]
        ident["lineage_parent_agent_id"] = rec["parent_id"]
    if rec.get("lineage_parent_agent_id"):  # a named agent made by CreateAgent: lineage only, no parent
        ident["lineage_parent_agent_id"] = rec["lineage_parent_agent_id"]
    if rec.get("delegated_from_task_id"):
        ident["delegated_from_task_id"] = rec["delegated_from_task_id"]
    return ident


def _pending(work: AgentWorkPlane, agent_id: str) -> int:
    return message_count(work.reader(), agent_id, queued_only=True)


def _active_tasks(store: Store, agent_id: str) -> int:
    return task_count(store.query, agent_id, ACTIVE)


def _children(store: Store, work: AgentWorkPlane, agent_id: str) -> list[dict[str, Any]]:
    out = []
    for rec in store.agents(parent_id=agent_id):
        if (rec.get("status") or "active") != "active":
            continue
        out.append(
            {
                "identity": _identity(rec),
                "status": "awake_idle",
                "pending": _pending(work, rec["id"]),
                "active_task_count": _active_tasks(store, rec["id"]),
                "observability": "summary",
            }
        )
    return out


def _brief_count(store: Store, agent_id: str) -> int:
    return document_count(store.query, agent_id, "brief")


_WAIT_POSTURE = {
    "task": "waiting_for_task",
    "task_result": "waiting_for_task",
    "operator": "waiting_for_operator",
    "operator_input": "waiting_for_operator",
}


def _posture(summary: dict[str, Any]) -> dict[str, Any]:
    """Project a scheduling posture from the assembled facts (never a scheduling input, agents spec §5.2 rule 3)."""
    agent = summary["agent"]
    if summary["identity"]["status"] != "active":
        return {"posture": "stopped", "reason": f"agent is {summary['identity']['status']}"}
    waits = summary.get("active_wait_conditions") or []
    if waits:
        first = waits[0] if isinstance(waits[0], dict) else {}
        kind = str(first.get("kind") or "")
        posture = _WAIT_POSTURE.get(kind, "waiting_for_external")
        return {"posture": posture, "reason": f"{len(waits)} active wait condition(s)"}
    if agent.get("pending"):
        return {"posture": "has_queued_input", "reason": f"{agent['pending']} queued message(s)"}
    if summary.get("runnable_work_item_count"):
        return {
            "posture": "has_runnable_work",
            "reason": f"{summary['runnable_work_item_count']} runnable work item(s)",
        }
    tasks = summary["active_task_count"]
    reason = "no queued input, runnable work or active wait"
    return {"posture": "idle", "reason": reason + (f"; {tasks} background task(s) running" if tasks else "")}


def build_agent_summary(
    agent_id: str,
    fallback_profile: str | None = None,
    *,
    store: Store,
    work: AgentWorkPlane,
    triggers: AgentTriggers,
) -> dict[str, Any] | None:
    """The ``AgentSummary`` of ``agent_id`` (agents spec §5.2), or None when no such agent exists.

    Args:
        agent_id: The agent to describe.
        fallback_profile: When given, an agent without a record (a direct call as an
            unregistered id) is described with this profile instead of being unknown.
        store: The runtime's store (agent, task, memory and turn rows, read only).
        work: The work plane (queued messages, the agent's work facts).
        triggers: The trigger plane (the agent's active external triggers).

    Returns:
        ``{identity, agent, scheduling_posture, active_task_count, lifecycle, model, token_usage,
        closure, execution, loaded_agents_md, skills, active_children?, active_wait_conditions?,
        active_external_triggers, recent_brief_count, recent_event_count, …work facts}``.
        ``identity.status`` is ``active``, ``deleting`` or ``deleted``.
    """
    rec = store.agent(agent_id)
    if rec is None:
        if fallback_profile is None:
            return None
        rec = {"id": agent_id, "profile": fallback_profile, "name": None, "parent_id": None}
    identity = _identity(rec)
    pending = _pending(work, agent_id)
    active = _active_tasks(store, agent_id)
    summary: dict[str, Any] = {
        "identity": identity,
        "agent": {
            "agent_id": agent_id,
            "status": "awake_idle" if identity["status"] == "active" else "stopped",
            "pending": pending,
            "turn_index": 0,
        },
        "active_task_count": active,
        "lifecycle": {
            "accepts_external_messages": identity["visibility"] == "public" and identity["status"] == "active"
        },
        "model": None,
        "token_usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        "closure": {"outcome": None},  # set from the last ended turn below
        "execution": {"mode": "direct_calls", "profile_preset": identity["profile_preset"]},
        "loaded_agents_md": [],
        "skills": [],
        "active_external_triggers": [  # the trigger plane's public records (never the token; workspace §14)
            t for t in triggers.list(agent_id) if t["status"] == "active"
        ],
        "recent_brief_count": _brief_count(store, agent_id),
        "recent_event_count": message_count(work.reader(), agent_id),
    }
    if rec.get("name"):
        identity["name"] = rec["name"]
    children = _children(store, work, agent_id)
    if children:
        summary["active_children"] = children
    facts = work.agent_summary(agent_id) or {}
    for key, value in facts.items():
        if key in AGENT_STATE_KEYS:
            summary["agent"][key] = value
        elif key == "agent" and isinstance(value, dict):
            summary["agent"].update(value)
        elif key != "identity":
            summary[key] = value
    totals = ConversationStore.read_totals(store, agent_id)  # the agent's turns (turn-loop spec §2.3)
    summary["agent"]["turn_index"] = totals["turns"]
    summary["token_usage"] = {
        "input_tokens": totals["total_input_tokens"],
        "output_tokens": totals["total_output_tokens"],
        "total_tokens": totals["total_input_tokens"] + totals["total_output_tokens"],
    }
    if summary.get("active_wait_conditions") and "status" not in facts:
        summary["agent"]["status"] = "asleep"
    if "scheduling_posture" not in facts:
        summary["scheduling_posture"] = _posture(summary)
    summary["closure"] = _closure(store, agent_id, summary)
    return summary


#: ``waiting_reason`` of a waiting closure, by the kind of the agent's first active wait (agents spec §2).
_WAITING_REASONS = {
    "operator": "awaiting_operator_input",
    "operator_input": "awaiting_operator_input",
    "task": "awaiting_task_result",
    "task_result": "awaiting_task_result",
    "timer": "awaiting_timer",
}


def closure_outcome(summary: dict[str, Any], terminal: str | None) -> dict[str, Any]:
    """The ``ClosureOutcome`` of a turn that ended ``terminal``, from the agent's facts after it (agents spec §2).

    Returns:
        ``{"outcome": None}`` when there is no ended turn; else ``{"outcome": "failed"}`` for a turn that did
        not complete; ``{"outcome": "waiting", "waiting_reason": awaiting_operator_input | awaiting_task_result
        | awaiting_timer | awaiting_external_change}`` while a wait is active; ``{"outcome": "continuable"}``
        with queued input or runnable work left; else ``{"outcome": "completed"}``.
    """
    if terminal is None:
        return {"outcome": None}
    if terminal != "completed":
        return {"outcome": "failed"}
    waits = summary.get("active_wait_conditions") or []
    if waits:
        kind = str((waits[0] if isinstance(waits[0], dict) else {}).get("kind") or "")
        return {"outcome": "waiting", "waiting_reason": _WAITING_REASONS.get(kind, "awaiting_external_change")}
    if summary["agent"].get("pending") or summary.get("runnable_work_item_count"):
        return {"outcome": "continuable"}
    return {"outcome": "completed"}


def _closure(store: Store, agent_id: str, summary: dict[str, Any]) -> dict[str, Any]:
    """The closure of the agent's last ended turn (assembled on read), with its ``turn_id``."""
    try:
        rows = store.query(
            "SELECT id, status, terminal_kind FROM turns WHERE agent_id=? ORDER BY turn_index DESC LIMIT 1", (agent_id,)
        )
    except sqlite3.OperationalError:  # no turn has run in this home yet
        return {"outcome": None}
    if not rows or rows[0]["terminal_kind"] is None:  # none yet, or the last one still runs
        return {"outcome": None}
    return {**closure_outcome(summary, rows[0]["terminal_kind"]), "turn_id": rows[0]["id"]}
