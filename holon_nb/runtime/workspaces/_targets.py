"""Switch targets and execution-root records: where SwitchWorkspace goes, and how a worktree is registered
(workspace spec §1.1, §6).

Functions here take the caller's :class:`~holon_nb.runtime.workspaces._service.AgentWorkspaces` view.
An id already in the registry gets a ``:gen_<15hex>`` generation suffix (workspace spec §1.1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._store import new_id
from ._git import WorktreeRecord, short_branch
from ._paths import (
    AGENT_HOME_ALIAS,
    CANONICAL_ROOT,
    GIT_WORKTREE_ROOT,
    Discovery,
    agent_home_id,
    canonical_root_id,
    contains,
    normalize,
    real_contains,
    same_path,
    worktree_root_id,
)
from ._refusals import refuse

if TYPE_CHECKING:
    from ._service import AgentWorkspaces

__all__ = ["SwitchTarget", "resolve_target", "identity", "register_root"]


@dataclass(frozen=True)
class SwitchTarget:
    """Where a switch goes (workspace spec §6): the workspace entry, root path and kind, known root id, default cwd."""

    workspace: dict[str, Any]
    root_path: str
    kind: str
    root_id: str | None
    default_cwd: str

    def effective_cwd(self, requested: str | None) -> str:
        """The cwd to enter: ``requested`` (relative joins the root) or the default (workspace spec §6 rule 5).

        Raises:
            ToolFailure: ``execution_root_not_found`` when the root directory is gone,
                ``cwd_outside_execution_root`` (lexically or through a symlink), or
                ``invalid_tool_input`` (field ``cwd``) when the cwd is not an existing directory.
        """
        root = self.root_path
        if not os.path.isdir(root):
            raise refuse(
                "execution_root_not_found",
                f"execution root directory {root} no longer exists",
                "GetWorkspaceState lists the registered roots.",
                execution_root=root,
            )
        cwd = self.default_cwd if requested is None else normalize(requested, root)
        if not contains(root, cwd) or not real_contains(root, cwd):
            raise refuse(
                "cwd_outside_execution_root",
                f"cwd {cwd} is outside the execution root {root}",
                "Pass a cwd inside the target root (relative paths join it).",
                requested_cwd=requested,
                resolved_cwd=cwd,
                execution_root=root,
            )
        if not os.path.isdir(cwd):
            raise ToolFailure(
                ToolError(
                    kind="invalid_tool_input",
                    message=f"cwd {cwd} is not an existing directory",
                    details={
                        "tool_name": "SwitchWorkspace",
                        "field": "cwd",
                        "validation_error": "not an existing directory",
                        "path": cwd,
                    },
                    recovery_hint="Pass an existing directory inside the target root, or omit `cwd`.",
                )
            )
        return cwd


def resolve_target(
    view: AgentWorkspaces,
    attached: list[str],
    workspace_id: str | None = None,
    execution_root_id: str | None = None,
    path: str | None = None,
) -> SwitchTarget:
    """Resolve one switch selector (workspace spec §6 rules 2-4) without changing anything.

    Raises:
        ToolFailure: ``workspace_not_found``, ``workspace_not_attached``,
            ``execution_root_not_found`` or ``execution_root_removed``.
    """
    tables = view.tables
    if workspace_id is not None:
        if workspace_id in (AGENT_HOME_ALIAS, agent_home_id(view.agent_id)):
            ws = tables.workspace(agent_home_id(view.agent_id))
            assert ws is not None  # made when the agent was first seen
            return SwitchTarget(
                ws,
                ws["workspace_anchor"],
                CANONICAL_ROOT,
                canonical_root_id(ws["workspace_id"]),
                ws["workspace_anchor"],
            )
        ws = tables.workspace(workspace_id)
        if ws is None:
            raise refuse(
                "workspace_not_found",
                f"workspace {workspace_id} was not found",
                "GetWorkspaceState lists known workspaces; AttachWorkspace adds one by path.",
                workspace_id=workspace_id,
            )
        _require_attached(ws["workspace_id"], attached)
        return SwitchTarget(
            ws, ws["workspace_anchor"], CANONICAL_ROOT, canonical_root_id(workspace_id), ws["workspace_anchor"]
        )
    if execution_root_id is not None:
        entry = tables.root(execution_root_id)
        if entry is None:
            raise refuse(
                "execution_root_not_found",
                f"execution root {execution_root_id} was not found",
                "GetWorkspaceState lists registered execution roots.",
                execution_root_id=execution_root_id,
            )
        if entry.get("removed_at"):
            raise refuse(
                "execution_root_removed",
                f"execution root {execution_root_id} was removed",
                "Pick a live root from GetWorkspaceState, or CreateWorktree.",
                execution_root_id=execution_root_id,
                removed_at=entry["removed_at"],
            )
        _require_attached(entry["workspace_id"], attached)
        ws = tables.workspace(entry["workspace_id"])
        if ws is None:
            raise refuse(
                "workspace_not_found",
                f"workspace {entry['workspace_id']} was not found",
                workspace_id=entry["workspace_id"],
            )
        return SwitchTarget(
            ws, entry["filesystem_path"], entry["root_kind"], execution_root_id, entry["filesystem_path"]
        )
    assert path is not None
    disc = view.discover(path)
    bound = [w for w in (tables.workspace(i) for i in attached) if w]
    ws = next((w for w in bound if w["workspace_anchor"] == disc.anchor), None)
    if ws is None and disc.anchor == path and not os.path.isdir(os.path.join(path, ".git")):
        # A plain directory (workspace spec §1.3 rule 3) is its own anchor, so a subdirectory of an attached plain
        # workspace would never match it; upstream then refuses a path that is inside an attached
        # workspace. Fixed here: the innermost attached anchor containing the path is used.
        inside = [w for w in bound if contains(w["workspace_anchor"], path)]
        ws = max(inside, key=lambda w: len(w["workspace_anchor"]), default=None)
        if ws is not None:
            disc = Discovery(ws["workspace_anchor"], ws["workspace_anchor"], CANONICAL_ROOT, path)
    if ws is None:
        raise refuse(
            "workspace_not_attached",
            f"workspace for {path} is not attached; attach canonical root {disc.anchor} first",
            "AttachWorkspace with that path (a public named agent may), then switch.",
            path=path,
            workspace_anchor=disc.anchor,
        )
    if disc.projection_kind == CANONICAL_ROOT:
        root_id: str | None = canonical_root_id(ws["workspace_id"])
    else:
        root_id = next(
            (
                r["execution_root_id"]
                for r in tables.roots(ws["workspace_id"], live_only=True)
                if r["root_kind"] == GIT_WORKTREE_ROOT and same_path(r["filesystem_path"], disc.execution_root)
            ),
            None,
        )
    return SwitchTarget(ws, disc.execution_root, disc.projection_kind, root_id, disc.cwd)


def _require_attached(workspace_id: str, attached: list[str]) -> None:
    if workspace_id not in attached:
        raise refuse(
            "workspace_not_attached",
            f"workspace {workspace_id} is not attached; attach it before switching",
            "A public named agent can AttachWorkspace it.",
            workspace_id=workspace_id,
        )


def identity(record: WorktreeRecord, dirs: tuple[str, str]) -> dict[str, Any]:
    """Worktree identity from a live porcelain record and ``(git_common_dir, git_dir)``."""
    return {
        "git_common_dir": dirs[0],
        "git_dir": dirs[1],
        "branch_ref": record.branch_ref,
        "branch": short_branch(record.branch_ref),
        "head_commit": record.head,
        "detached": record.detached,
    }


def register_root(
    view: AgentWorkspaces,
    db: Any,
    ws: dict[str, Any],
    path: str,
    ident: dict[str, Any],
    provenance: str,
    requested_base_ref: str | None = None,
    resolved_base_commit: str | None = None,
) -> dict[str, Any]:
    """Register or refresh a linked worktree root inside an open transaction (workspace spec §6 rule 7, §7 rules 10 and 12).

    An existing live entry at ``path`` (same ``git_dir``) keeps its id, owner,
    authorized list and provenance; other live entries at ``path`` are
    tombstoned; a new entry whose base id is taken gets a ``:gen_`` id. A new
    entry is registered by, and authorized for, the caller.

    Returns:
        The stored ``ExecutionRootEntry``.
    """
    ws_id = ws["workspace_id"]
    rows = db.execute(
        "SELECT execution_root_id FROM ws_execution_roots WHERE workspace_id=? AND removed_at IS NULL AND root_kind=?",
        (ws_id, GIT_WORKTREE_ROOT),
    ).fetchall()
    live = [view.tables.root_in(db, r["execution_root_id"]) for r in rows]
    here = [e for e in live if e and same_path(e["filesystem_path"], path)]
    existing = next(
        (
            e
            for e in here
            if not (e.get("worktree") or {}).get("git_dir")
            or not ident.get("git_dir")
            or same_path(e["worktree"]["git_dir"], ident["git_dir"])
        ),
        None,
    )
    for stale in here:
        if stale is not existing:
            view.tables.tombstone_root(db, stale["execution_root_id"])
    if existing is not None:
        root_id = existing["execution_root_id"]
    else:
        root_id = worktree_root_id(ws_id, path)
        if view.tables.root_in(db, root_id) is not None:
            root_id = f"{root_id}:{new_id('gen')}"
    prev = (existing or {}).get("worktree") or {}
    owner = prev.get("registered_by_agent_id") or view.agent_id
    worktree = {
        "provenance": prev.get("provenance") or provenance,
        "registered_by_agent_id": owner,
        "authorized_agent_ids": list(prev.get("authorized_agent_ids") or [owner]),
        "branch": ident.get("branch"),
        "branch_ref": ident.get("branch_ref"),
        "head_commit": ident.get("head_commit"),
        "detached": bool(ident.get("detached")),
        "requested_base_ref": requested_base_ref or prev.get("requested_base_ref"),
        "resolved_base_commit": resolved_base_commit or prev.get("resolved_base_commit"),
        "git_common_dir": ident.get("git_common_dir"),
        "git_dir": ident.get("git_dir"),
        "last_cleanup": prev.get("last_cleanup"),
    }
    return view.tables.upsert_root(
        db,
        {
            "execution_root_id": root_id,
            "workspace_id": ws_id,
            "filesystem_path": normalize(path),
            "root_kind": GIT_WORKTREE_ROOT,
            "worktree": {k: v for k, v in worktree.items() if v is not None},
        },
    )
