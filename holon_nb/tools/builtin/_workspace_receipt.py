"""GetWorkspaceState's model-facing receipt: a bounded compact-JSON summary (workspace spec §3).

The receipt needs the tool execution id (for ``output_ref``) and the turn's
tool-output budget: both come in the :class:`~holon_nb.render._receipt.ReceiptContext`.
A pending ``projection_repair`` (the active directory vanished and the agent was
moved to its home, :mod:`holon_nb.runtime.workspaces._service`) is always carried whole.
"""

from __future__ import annotations

import json
from typing import Any

from ...render import DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS, estimate_tokens

__all__ = ["render_workspace_state_receipt", "workspace_state_receipt"]

_ROOT_LIMIT = 10
_OCCUPANCY_LIMIT = 20
_WORKSPACE_LIMIT = 20
_STRING_LIMIT = 512


def _cap(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _STRING_LIMIT:
        return value[: _STRING_LIMIT - 1] + "…"
    return value


def _pick(record: dict[str, Any] | None, keys: tuple[str, ...]) -> dict[str, Any] | None:
    if record is None:
        return None
    return {k: _cap(record.get(k)) for k in keys}


def _root_summary(root: dict[str, Any]) -> dict[str, Any]:
    out = _pick(root, ("execution_root_id", "workspace_id", "filesystem_path", "root_kind", "created_at", "removed_at"))
    assert out is not None
    wt = root.get("worktree")
    cleanup = (wt or {}).get("last_cleanup") or {}
    out["worktree"] = (
        None
        if wt is None
        else {
            "branch": _cap(wt.get("branch")),
            "branch_ref": _cap(wt.get("branch_ref")),
            "head_commit": _cap(wt.get("head_commit")),
            "detached": bool(wt.get("detached")),
            "cleanup_status": _cap(cleanup.get("status")),
            "cleanup_error": _cap(cleanup.get("error")),
        }
    )
    return out


def _newest_first(roots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = sorted(roots, key=lambda r: r["execution_root_id"])
    return sorted(by_id, key=lambda r: r.get("created_at") or "", reverse=True)


def _select_roots(state: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """Active root, then occupied roots newest first, then all roots newest first (deduplicated)."""
    roots = state.get("execution_roots") or []
    active_id = (state.get("active") or {}).get("execution_root_id")
    occupied = {o["execution_root_id"] for o in state.get("occupancies") or [] if not o.get("released_at")}
    order = [r for r in roots if r["execution_root_id"] == active_id][:1]
    order += _newest_first([r for r in roots if r["execution_root_id"] in occupied])
    order += _newest_first(roots)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for root in order:
        if len(out) >= limit:
            break
        if root["execution_root_id"] not in seen:
            seen.add(root["execution_root_id"])
            out.append(root)
    return out


def _select_occupancies(occupancies: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    by_id = sorted(occupancies, key=lambda o: o["occupancy_id"])
    by_time = sorted(by_id, key=lambda o: o.get("acquired_at") or "", reverse=True)
    return sorted(by_time, key=lambda o: o.get("released_at") is not None)[:limit]


def _section(total: int, items: list[Any]) -> dict[str, Any]:
    return {"total": total, "returned": len(items), "truncated": len(items) < total, "items": items}


def workspace_state_receipt(
    state: dict[str, Any],
    output_ref: str,
    root_limit: int = _ROOT_LIMIT,
    occupancy_limit: int = _OCCUPANCY_LIMIT,
    workspace_limit: int = _WORKSPACE_LIMIT,
) -> dict[str, Any]:
    """The receipt object for given limits (every string capped at 512 characters)."""
    attached = state.get("attached_workspace_ids") or []
    workspaces = state.get("workspaces") or []
    occupancies = state.get("occupancies") or []
    roots = state.get("execution_roots") or []
    shown = attached[:_WORKSPACE_LIMIT]
    root_section = _section(len(roots), [_root_summary(r) for r in _select_roots(state, root_limit)])
    root_section["selection"] = "active_then_occupied_then_recent"
    return {
        "agent_id": _cap(state.get("agent_id")),
        "attached_workspace_ids": [_cap(w) for w in shown],
        "attached_workspace_ids_total": len(attached),
        "attached_workspace_ids_truncated": len(shown) < len(attached),
        "workspaces": _section(
            len(workspaces),
            [
                _pick(w, ("workspace_id", "workspace_alias", "workspace_anchor", "repo_name", "updated_at"))
                for w in workspaces[:workspace_limit]
            ],
        ),
        "active": _pick(
            state.get("active"),
            (
                "workspace_id",
                "workspace_anchor",
                "execution_root_id",
                "execution_root",
                "projection_kind",
                "access_mode",
                "cwd",
                "occupancy_id",
            ),
        ),
        **(
            {"projection_repair": {k: _cap(v) for k, v in state["projection_repair"].items()}}
            if state.get("projection_repair")
            else {}
        ),
        "execution_roots": root_section,
        "occupancies": _section(
            len(occupancies),
            [
                _pick(
                    o,
                    (
                        "occupancy_id",
                        "execution_root_id",
                        "workspace_id",
                        "holder_agent_id",
                        "access_mode",
                        "acquired_at",
                        "released_at",
                    ),
                )
                for o in _select_occupancies(occupancies, occupancy_limit)
            ],
        ),
        "output_ref": output_ref,
        "provider_projection_truncated": True,
    }


def render_workspace_state_receipt(env: dict[str, Any], context: Any = None) -> str:
    """Render GetWorkspaceState's receipt within the budget (workspace spec §3 halving rule).

    While the compact JSON exceeds the budget (estimated tokens), halve the
    occupancy limit down to 0, then the root limit (1 → 0), then the workspace
    limit; stop when all three are 0.
    """
    state = env["result"]
    execution_id = getattr(context, "execution_id", "unknown")
    budget = getattr(context, "budget_tokens", DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS)
    output_ref = f"tool_execution:{execution_id}:output"
    roots, occs, wss = _ROOT_LIMIT, _OCCUPANCY_LIMIT, _WORKSPACE_LIMIT
    while True:
        text = json.dumps(
            workspace_state_receipt(state, output_ref, roots, occs, wss),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        if estimate_tokens(text) <= budget or (roots == 0 and occs == 0 and wss == 0):
            return text
        if occs > 0:
            occs //= 2
        elif roots > 1:
            roots //= 2
        elif roots > 0:
            roots = 0
        else:
            wss //= 2
