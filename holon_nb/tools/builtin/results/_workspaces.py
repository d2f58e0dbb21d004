"""Result models of ApplyPatch (commands spec §10.7) and the workspace plane's tools (workspace spec §3-§8)."""

from __future__ import annotations

from typing import Literal

from ._base import Record, Records, ResultModel

__all__ = [
    "ApplyPatchResult",
    "WorkspaceStateResult",
    "AttachWorkspaceResult",
    "DetachWorkspaceResult",
    "SwitchWorkspaceResult",
    "CreateWorktreeResult",
    "RemoveWorktreeResult",
]


class ApplyPatchResult(ResultModel):
    """The files a patch changed (``changed_files`` entries with their operation), their paths, and the
    metadata it ignored and the diagnostics it raised, when any."""

    changed_files: Records
    changed_paths: list[str]
    changed_file_count: int
    ignored_metadata: Records | None = None
    diagnostics: Records | None = None


class WorkspaceStateResult(ResultModel):
    """GetWorkspaceState: the agent's bindings, its active projection, execution roots and occupancies;
    ``projection_repair`` when the active projection's directory vanished and was repaired."""

    agent_id: str
    attached_workspace_ids: list[str]
    workspaces: Records
    active: Record
    projection_repair: Record | None = None
    execution_roots: Records
    occupancies: Records


class AttachWorkspaceResult(ResultModel):
    """A workspace bound to the agent without switching to it."""

    workspace: Record
    already_attached: bool
    active_unchanged: bool
    discovered_projection_kind: str
    discovered_execution_root: str


class DetachWorkspaceResult(ResultModel):
    """A binding removed; the active projection falls back to the agent home when it was on it."""

    workspace_id: str
    detached: bool
    switched_to_agent_home: bool
    retained_execution_roots: Records


class SwitchWorkspaceResult(ResultModel):
    """The active projection after a switch (``switched``) or a switch to where it already was (``no_op``)."""

    disposition: Literal["switched", "no_op"]
    workspace_id: str
    workspace_anchor: str
    execution_root_id: str
    execution_root: str
    cwd: str
    projection_kind: str
    access_mode: str


class CreateWorktreeResult(ResultModel):
    """A linked worktree created (``created``) or the unique live one for the branch reused (``reused``); or
    none, and why (``conflict``, with ``disposition`` ``conflict`` or ``already_exists`` and the
    ``candidates`` that matched)."""

    disposition: str | None = None
    created: bool
    reused: bool
    activated: bool
    base_ref_applied: bool
    requested_base_ref: str | None = None
    resolved_base_commit: str | None = None
    branch: str
    branch_ref: str
    branch_tip: str | None = None
    execution_root_id: str | None = None
    worktree_path: str | None = None
    activation_error: str | None = None
    conflict: str | None = None
    candidates: Records | None = None


class RemoveWorktreeResult(ResultModel):
    """A linked worktree removed safely, already removed, or kept (``disposition`` says which)."""

    execution_root_id: str
    disposition: str
    switched: bool
    removed: bool
    branch_deleted: bool
    branch: str | None = None
    branch_tip: str | None = None
    changed_files: Records | None = None
    error: str | None = None
