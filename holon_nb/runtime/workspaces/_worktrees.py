"""Linked git worktrees: CreateWorktree and RemoveWorktree (workspace spec §6-§8).

Functions here take the caller's :class:`~holon_nb.runtime.workspaces._service.AgentWorkspaces`
view. Worktree artifacts are ``ExecutionRootEntry`` records with ``worktree``
metadata; removal is a tombstone; an id already in the registry gets a
``:gen_<15hex>`` generation suffix (workspace spec §1.1).

Git runs in the workspace anchor, or inside a worktree only once its folder is
known to exist. A worktree whose folder vanished can still be removed (designed
here, a review fix): see :func:`remove_worktree`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._store import new_id, now_rfc3339
from ._git import (
    WorktreeRecord,
    changed_files,
    check_branch_name,
    git_dirs,
    repository_toplevel,
    rev_parse_commit,
    run_git,
    sanitize_label,
    short_branch,
    worktree_records,
)
from ._paths import (
    AGENT_HOME_ALIAS,
    GIT_WORKTREE_ROOT,
    admin_dir_points_to,
    agent_home_id,
    same_path,
)
from ._refusals import refuse
from ._targets import _require_attached, identity, register_root, resolve_target

if TYPE_CHECKING:
    from ._service import AgentWorkspaces

__all__ = ["create_worktree", "remove_worktree"]


def _set_cleanup(
    view: AgentWorkspaces, entry: dict[str, Any], status: str, files: list[str], error: str | None = None
) -> None:
    cleanup: dict[str, Any] = {"status": status, "changed_files": files, "inspected_at": now_rfc3339()}
    if error:
        cleanup["error"] = error
    with view.tables.store.tx() as db:
        view.tables.upsert_root(db, {**entry, "worktree": {**entry["worktree"], "last_cleanup": cleanup}})


# ---------------------------------------------------------------- CreateWorktree (workspace spec §7)


async def create_worktree(
    view: AgentWorkspaces,
    workspace_id: str,
    branch: str,
    base_ref: str,
    label: str | None,
    activate: bool,
    on_existing: str,
) -> dict[str, Any]:
    """Create, or safely reuse, a linked worktree of an attached workspace (§7). Conflicts are success results.

    Before git sees the branch: a ``branch`` starting with ``refs/`` is refused
    (it would become ``refs/heads/refs/...``), and the workspace must be a git
    repository whose work-tree root is its anchor (designed here; not the agent
    home, not a plain directory, not a folder that vanished).

    Raises:
        ToolFailure: ``invalid_tool_input`` (``refs/`` prefix, or a branch refused by
            ``git check-ref-format``) or ``tool_execution_failed`` with
            ``workspace_not_attached``, ``workspace_not_found``, ``not_a_git_repository``,
            ``base_ref_unresolved`` or ``git_failed``.
    """
    if branch.startswith("refs/"):
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"`{branch}`: pass a short branch name without refs/heads/",
                details={
                    "tool_name": "CreateWorktree",
                    "field": "branch",
                    "validation_error": "short branch name without refs/heads/ expected",
                },
                recovery_hint="Pass the short name, e.g. feature/x instead of refs/heads/feature/x.",
            )
        )
    async with view.svc.lock:
        view.active()
        ws_id = agent_home_id(view.agent_id) if workspace_id == AGENT_HOME_ALIAS else workspace_id
        _require_attached(ws_id, view.ensure()["attached"])
        ws = view.tables.workspace(ws_id)
        if ws is None:
            raise refuse("workspace_not_found", f"workspace {workspace_id} was not found", workspace_id=workspace_id)
        anchor = ws["workspace_anchor"]
        await _require_repository(view, ws)
        if not await check_branch_name(branch, anchor):
            raise ToolFailure(
                ToolError(
                    kind="invalid_tool_input",
                    message=f"`{branch}` is not a valid branch name",
                    details={
                        "tool_name": "CreateWorktree",
                        "field": "branch",
                        "validation_error": "rejected by git check-ref-format --branch",
                    },
                    recovery_hint="Use a short branch name such as feature/issue-12 (no spaces, no leading dash).",
                )
            )
        base = await rev_parse_commit(base_ref, anchor)
        if base is None:
            raise refuse(
                "base_ref_unresolved",
                f"base_ref {base_ref} does not resolve to a commit in {anchor}",
                "Pass an existing commit-ish such as main or a commit id.",
                base_ref=base_ref,
            )
        branch_ref = f"refs/heads/{branch}"
        records, err = await worktree_records(anchor)
        if records is None:
            raise refuse("git_failed", f"git worktree list failed: {err}"[:512], anchor=anchor)
        matching = [r for r in records if r.branch_ref == branch_ref]
        out: dict[str, Any] = {
            "created": False,
            "reused": False,
            "activated": False,
            "base_ref_applied": False,
            "requested_base_ref": base_ref,
            "resolved_base_commit": base,
            "branch": branch,
            "branch_ref": branch_ref,
            "branch_tip": await rev_parse_commit(branch_ref, anchor),
        }
        if matching:
            return await _existing(view, ws, matching, out, activate, on_existing)
        if out["branch_tip"] is not None:
            return _conflict(
                out, "branch exists without a live linked worktree", "branch-only conflict; no state changed"
            )
        return await _create(view, ws, branch, label, base, out, activate)


async def _require_repository(view: AgentWorkspaces, ws: dict[str, Any]) -> None:
    """Refuse (``not_a_git_repository``) unless the workspace anchor is the work-tree root of a git repository."""
    anchor = ws["workspace_anchor"]
    hint = "CreateWorktree needs an attached git repository: AttachWorkspace a repository, then use its workspace_id."
    why = None
    if ws["workspace_id"] == agent_home_id(view.agent_id):
        why = "the agent home holds the agent's own state and is not a git repository"
    elif not os.path.isdir(anchor):
        why = f"workspace anchor {anchor} no longer exists"
    else:
        top, err = await repository_toplevel(anchor)
        if top is None:
            why = f"{anchor} is not a git repository"
        elif not same_path(top, anchor):
            why = f"{anchor} is not a git repository root (it lies inside the repository at {top})"
    if why is not None:
        raise refuse(
            "not_a_git_repository",
            f"cannot create a worktree: {why}"[:512],
            hint,
            workspace_id=ws["workspace_id"],
            workspace_anchor=anchor,
        )


def _conflict(
    out: dict[str, Any], why: str, summary: str, disposition: str = "conflict", **extra: Any
) -> dict[str, Any]:
    res = {"disposition": disposition, **out, **{k: v for k, v in extra.items() if v}, "conflict": why}
    return {k: v for k, v in res.items() if v is not None} | {"summary_text": summary}


async def _existing(
    view: AgentWorkspaces,
    ws: dict[str, Any],
    matching: list[WorktreeRecord],
    out: dict[str, Any],
    activate: bool,
    on_existing: str,
) -> dict[str, Any]:
    paths = [r.path for r in matching]
    candidates = [
        e
        for e in view.tables.roots(ws["workspace_id"], live_only=True)
        if any(same_path(e["filesystem_path"], p) for p in paths)
    ]
    if len(matching) > 1:
        return _conflict(
            out,
            "multiple live worktrees match the requested branch",
            "branch match is ambiguous; no state changed",
            candidates=candidates,
        )
    record = matching[0]
    if not os.path.isdir(record.path):
        return _conflict(
            out,
            "matching worktree backing path is missing",
            "missing worktree path conflict; no state changed (RemoveWorktree of its execution root cleans it up)",
            worktree_path=record.path,
            candidates=candidates,
        )
    if same_path(record.path, ws["workspace_anchor"]):
        return _conflict(
            out,
            "branch is checked out by the canonical workspace",
            "canonical checkout already uses branch; no state changed",
            worktree_path=record.path,
        )
    if on_existing == "error":
        return _conflict(
            out,
            "matching live worktree already exists",
            "create-only policy rejected existing worktree",
            disposition="already_exists",
            worktree_path=record.path,
        )
    dirs, err = await git_dirs(record.path)
    if dirs is None:
        raise refuse("git_failed", f"git could not inspect {record.path}: {err}"[:512], path=record.path)
    path = next((c["filesystem_path"] for c in candidates), record.path)
    with view.tables.store.tx() as db:
        root = register_root(
            view,
            db,
            ws,
            path,
            identity(record, dirs),
            "discovered",
            out["requested_base_ref"],
            out["resolved_base_commit"],
        )
    activation_error = await _activate(view, root, activate)
    res = {
        "disposition": "reused",
        **out,
        "reused": True,
        "activated": activate and activation_error is None,
        "branch_tip": record.head or out["branch_tip"],
        "execution_root_id": root["execution_root_id"],
        "worktree_path": root["filesystem_path"],
        "activation_error": activation_error,
    }
    return {k: v for k, v in res.items() if v is not None} | {
        "summary_text": "reused the unique live linked worktree without applying base_ref"
    }


async def _activate(view: AgentWorkspaces, root: dict[str, Any], activate: bool) -> str | None:
    if not activate:
        return None
    try:
        await view.switch_locked(execution_root_id=root["execution_root_id"])
    except ToolFailure as failure:
        return failure.error.message
    return None


async def _create(
    view: AgentWorkspaces,
    ws: dict[str, Any],
    branch: str,
    label: str | None,
    base: str,
    out: dict[str, Any],
    activate: bool,
) -> dict[str, Any]:
    anchor = ws["workspace_anchor"]
    managed = os.path.join(os.path.dirname(anchor) or "/", f".holon-worktrees-{os.path.basename(anchor) or 'repo'}")
    os.makedirs(managed, exist_ok=True)
    path = os.path.join(managed, f"{sanitize_label(label or branch)}-{new_id('wt')}")
    added = await run_git(["worktree", "add", "-b", branch, path, base], anchor)
    if not added.success:
        raise refuse("git_failed", f"git worktree add failed: {added.stderr}"[:512], git_stderr=added.stderr[:2000])
    records, err = await worktree_records(anchor)
    record = next((r for r in records or [] if same_path(r.path, path)), None)
    dirs, err2 = await git_dirs(path)
    if record is None or dirs is None:
        raise refuse("git_failed", f"created worktree was not reported by git: {err or err2}"[:512], path=path)
    with view.tables.store.tx() as db:
        root = register_root(
            view, db, ws, path, identity(record, dirs), "runtime_created", out["requested_base_ref"], base
        )
    activation_error = await _activate(view, root, activate)
    with view.tables.store.tx() as db:
        view.tables.audit(
            db,
            view.agent_id,
            "worktree_created",
            {
                "workspace_id": ws["workspace_id"],
                "execution_root_id": root["execution_root_id"],
                "branch": branch,
                "requested_base_ref": out["requested_base_ref"],
                "resolved_base_commit": base,
                "activated": activate and activation_error is None,
            },
        )
    res = {
        "disposition": "created",
        **out,
        "created": True,
        "base_ref_applied": True,
        "activated": activate and activation_error is None,
        "branch_tip": record.head,
        "execution_root_id": root["execution_root_id"],
        "worktree_path": path,
        "activation_error": activation_error,
    }
    return {k: v for k, v in res.items() if v is not None} | {"summary_text": "created and registered linked worktree"}


# ---------------------------------------------------------------- RemoveWorktree (workspace spec §8)


def _removal(root_id: str, disposition: str, summary: str, **fields: Any) -> dict[str, Any]:
    res = {
        "execution_root_id": root_id,
        "disposition": disposition,
        "switched": False,
        "removed": False,
        "branch_deleted": False,
        **fields,
    }
    return {k: v for k, v in res.items() if v is not None and v != []} | {"summary_text": summary}


async def remove_worktree(
    view: AgentWorkspaces, execution_root_id: str, return_to: str | None, branch_policy: str, merged_into: str | None
) -> dict[str, Any]:
    """Safely remove a registered linked worktree (workspace spec §8); every check runs before the first change.

    A worktree whose folder vanished (designed here, a review fix) goes through
    :func:`_remove_vanished`: git runs only in the anchor, nothing is dirty-checked
    (there is nothing left to retain), and the entry is tombstoned with
    disposition ``removed``.

    Raises:
        ToolFailure: ``tool_execution_failed`` with the workspace spec §8 reasons.
    """
    async with view.svc.lock:
        active = view.active()
        entry = _removable(view, execution_root_id)
        if entry.get("removed_at"):
            wt = entry.get("worktree") or {}
            return _removal(
                execution_root_id,
                "already_removed",
                "worktree was already removed",
                branch=wt.get("branch"),
                branch_tip=wt.get("head_commit"),
            )
        wt = entry["worktree"]
        ws = view.tables.workspace(entry["workspace_id"])
        if ws is None:
            raise refuse(
                "workspace_not_found",
                f"workspace {entry['workspace_id']} was not found",
                workspace_id=entry["workspace_id"],
            )
        is_active = active["execution_root_id"] == execution_root_id
        selector = _return_selector(view, entry, return_to) if is_active else None
        mine = active.get("occupancy_id") if is_active else None
        if not os.path.isdir(entry["filesystem_path"]):
            _repair_holders(view, execution_root_id)
        with view.tables.store.tx() as db:
            others = [o for o in view.tables.live_occupancies_in(db, execution_root_id) if o["occupancy_id"] != mine]
        if others:
            raise refuse(
                "occupied",
                "worktree has active occupancy outside the current projection",
                "Wait until the other agent leaves this worktree.",
                execution_root_id=execution_root_id,
                holders=sorted({o["holder_agent_id"] for o in others}),
            )
        if not os.path.isdir(entry["filesystem_path"]):
            return await _remove_vanished(view, entry, ws, selector, branch_policy, merged_into)
        record = await _verify_live(entry, ws)
        files, err = await changed_files(entry["filesystem_path"])
        if files is None:
            raise refuse("git_failed", f"git status failed: {err}"[:512], path=entry["filesystem_path"])
        if files:
            _set_cleanup(view, entry, "retained_dirty", files)
            with view.tables.store.tx() as db:
                view.tables.audit(
                    db,
                    view.agent_id,
                    "worktree_cleanup_retained",
                    {"execution_root_id": execution_root_id, "changed_files": files},
                )
            return _removal(
                execution_root_id,
                "retained_dirty",
                "dirty worktree retained",
                branch=wt.get("branch"),
                branch_tip=record.head,
                changed_files=files,
            )
        await _prove_merged(record, ws["workspace_anchor"], branch_policy, merged_into)
        switched = False
        if selector is not None:
            await view.switch_locked(**selector)
            switched = True
        return await _remove_now(view, entry, record, ws, branch_policy, switched)


def _repair_holders(view: AgentWorkspaces, execution_root_id: str) -> None:
    """Repair the projection of every agent still occupying a root whose folder vanished.

    Each holder goes to its own agent home with a ``projection_repair`` record, which
    is exactly what its next tool call would do (:mod:`.workspaces`); its stale
    occupancy then no longer blocks the cleanup (workspace spec §8 rule 6 still applies to any
    occupancy that remains).
    """
    with view.tables.store.tx() as db:
        holders = sorted({o["holder_agent_id"] for o in view.tables.live_occupancies_in(db, execution_root_id)})
    for agent_id in holders:
        view.svc.view(agent_id).active()


def _removable(view: AgentWorkspaces, execution_root_id: str) -> dict[str, Any]:
    """workspace spec §8 rules 1, 3 and 4: the entry exists, is a worktree, has identity metadata, and the caller may remove it."""
    entry = view.tables.root(execution_root_id)
    if entry is None:
        raise refuse(
            "execution_root_not_found",
            f"execution root {execution_root_id} was not found",
            "GetWorkspaceState lists registered execution roots.",
            execution_root_id=execution_root_id,
        )
    if entry["root_kind"] != GIT_WORKTREE_ROOT:
        raise refuse(
            "canonical_root_not_removable",
            "canonical workspace roots cannot be removed",
            "Only linked worktrees can be removed; DetachWorkspace drops a binding.",
            execution_root_id=execution_root_id,
        )
    if entry.get("removed_at"):
        return entry
    wt = entry.get("worktree") or {}
    if not (wt.get("git_common_dir") and wt.get("git_dir")):
        raise refuse(
            "artifact_identity_unavailable",
            "registered worktree identity metadata is unavailable",
            "SwitchWorkspace into the worktree once to refresh its registration.",
            execution_root_id=execution_root_id,
        )
    authorized = wt.get("authorized_agent_ids") or []
    if view.agent_id not in authorized and not (not authorized and wt.get("registered_by_agent_id") == view.agent_id):
        raise refuse(
            "not_authorized",
            f"agent {view.agent_id} is not authorized to remove {execution_root_id}",
            "Ask the agent that registered this worktree to remove it.",
            execution_root_id=execution_root_id,
            registered_by_agent_id=wt.get("registered_by_agent_id"),
        )
    return entry


def _return_selector(view: AgentWorkspaces, entry: dict[str, Any], return_to: str | None) -> dict[str, Any]:
    """workspace spec §8 rule 5: where an active target returns to, validated before any change."""
    root_id = entry["execution_root_id"]
    if return_to is None:
        raise refuse(
            "return_to_required",
            "the worktree is active; removing it requires `return_to`",
            "Pass return_to: canonical, agent_home or another execution_root_id.",
            execution_root_id=root_id,
        )
    if return_to == root_id:
        raise refuse(
            "return_to_invalid",
            "return_to must select a different execution root",
            "Use canonical, agent_home or another root.",
            execution_root_id=root_id,
        )
    if return_to == "canonical":
        selector = {"workspace_id": entry["workspace_id"]}
    elif return_to == AGENT_HOME_ALIAS:
        selector = {"workspace_id": AGENT_HOME_ALIAS}
    else:
        selector = {"execution_root_id": return_to}
    resolve_target(view, view.ensure()["attached"], **selector).effective_cwd(None)
    return selector


async def _verify_live(entry: dict[str, Any], ws: dict[str, Any]) -> WorktreeRecord:
    """workspace spec §8 rule 7: live porcelain listing, generation identity, checkout identity, lock."""
    wt, path = entry["worktree"], entry["filesystem_path"]
    records, err = await worktree_records(ws["workspace_anchor"])
    record = next((r for r in records or [] if same_path(r.path, path)), None)
    if record is None:
        raise refuse(
            "worktree_missing_from_git",
            "registered worktree is missing from live git state",
            "GetWorkspaceState shows its last known state.",
            path=path,
            git_error=err or None,
        )
    dirs, err = await git_dirs(path)
    if dirs is None:
        raise refuse("git_failed", f"git could not inspect {path}: {err}"[:512], path=path)
    if not (same_path(dirs[0], wt["git_common_dir"]) and same_path(dirs[1], wt["git_dir"])):
        raise refuse(
            "generation_mismatch",
            "registered worktree generation does not match live git state",
            "The directory now holds a different worktree; GetWorkspaceState shows its root id.",
            recorded={"git_common_dir": wt["git_common_dir"], "git_dir": wt["git_dir"]},
            live={"git_common_dir": dirs[0], "git_dir": dirs[1]},
        )
    if wt.get("branch_ref") != record.branch_ref or bool(wt.get("detached")) != record.detached:
        raise refuse(
            "checkout_mismatch",
            "registered worktree checkout identity does not match live git state",
            "SwitchWorkspace into it to refresh the registration, then retry.",
            recorded_branch_ref=wt.get("branch_ref"),
            live_branch_ref=record.branch_ref,
        )
    if record.locked is not None:
        raise refuse(
            "worktree_locked",
            f"worktree is locked: {record.locked}".rstrip(": "),
            "Unlock it with git worktree unlock first.",
            path=path,
            lock_reason=record.locked,
        )
    return record


async def _prove_merged(record: WorktreeRecord, anchor: str, branch_policy: str, merged_into: str | None) -> None:
    """workspace spec §8 rule 9: a detached HEAD or ``delete_if_merged`` needs ``merged_into`` and ancestry."""
    if not (record.detached or branch_policy == "delete_if_merged"):
        return
    if merged_into is None:
        raise refuse(
            "merge_proof_required",
            "detached HEAD removal or branch deletion requires `merged_into`",
            "Pass merged_into: a ref (such as main) that contains the worktree HEAD.",
        )
    if not record.head:
        raise refuse("head_unavailable", "worktree HEAD commit is unavailable")
    out = await run_git(["merge-base", "--is-ancestor", record.head, merged_into], anchor)
    if out.returncode == 1:
        raise refuse(
            "not_merged",
            f"worktree HEAD is not merged into {merged_into}; artifact retained",
            "Merge the branch first, or keep it with branch_policy keep.",
            head=record.head,
            merged_into=merged_into,
        )
    if not out.success:
        raise refuse("git_failed", f"git merge-base failed: {out.stderr}"[:512], merged_into=merged_into)


async def _remove_now(
    view: AgentWorkspaces,
    entry: dict[str, Any],
    record: WorktreeRecord,
    ws: dict[str, Any],
    branch_policy: str,
    switched: bool,
) -> dict[str, Any]:
    """workspace spec §8 rules 10-11 under a cleanup lease: git worktree remove (never --force), tombstone, optional CAS delete."""
    root_id, path, anchor = entry["execution_root_id"], entry["filesystem_path"], ws["workspace_anchor"]
    with view.tables.store.tx() as db:
        if view.tables.grant_lease(db, root_id, view.agent_id) is None:
            raise refuse("occupied", "worktree has active occupancy; no cleanup lease", execution_root_id=root_id)
    try:
        removed = await run_git(["worktree", "remove", path], anchor)
        if not removed.success:
            _set_cleanup(view, entry, "failed", [], removed.stderr)
            return _removal(
                root_id,
                "failed",
                "git refused worktree removal; artifact retained",
                switched=switched,
                branch=short_branch(record.branch_ref),
                branch_tip=record.head,
                error=removed.stderr or "git worktree remove failed",
            )
        return await _finish_removal(view, entry, anchor, record.branch_ref, record.head, branch_policy, switched)
    finally:
        with view.tables.store.tx() as db:
            view.tables.drop_lease(db, root_id)


async def _finish_removal(
    view: AgentWorkspaces,
    entry: dict[str, Any],
    anchor: str,
    branch_ref: str | None,
    tip: str | None,
    branch_policy: str,
    switched: bool,
    note: str | None = None,
) -> dict[str, Any]:
    """workspace spec §8 rule 11 once git no longer has the worktree: tombstone, optional compare-and-swap branch
    deletion (refused while another live worktree has the branch checked out), audit, result."""
    root_id = entry["execution_root_id"]
    with view.tables.store.tx() as db:
        view.tables.tombstone_root(db, root_id)
    disposition, error, deleted = "removed", None, False
    if branch_policy == "delete_if_merged" and branch_ref and tip:
        records, _ = await worktree_records(anchor)
        holder = next((r.path for r in records or [] if r.branch_ref == branch_ref), None)
        if holder is not None:
            error = f"branch {short_branch(branch_ref)} is checked out by the worktree at {holder}; branch kept"
        else:
            dropped = await run_git(["update-ref", "-d", branch_ref, tip], anchor)
            deleted = dropped.success
            error = None if deleted else (dropped.stderr or "git update-ref -d failed")
        if not deleted:
            disposition = "removed_branch_retained"
    branch = short_branch(branch_ref)
    with view.tables.store.tx() as db:
        view.tables.audit(
            db,
            view.agent_id,
            "worktree_cleanup_removed",
            {
                "execution_root_id": root_id,
                "branch": branch,
                "branch_deleted": deleted,
                **({"directory_missing": True} if note else {}),
            },
        )
    summary = "worktree removed safely" if not error else "worktree removed but branch deletion failed safely"
    if note:
        summary += " (its directory was already gone)"
    return _removal(
        root_id,
        disposition,
        summary,
        switched=switched,
        removed=True,
        branch_deleted=deleted,
        branch=branch,
        branch_tip=tip,
        error="; ".join(e for e in (note, error) if e) or None,
    )


async def _remove_vanished(
    view: AgentWorkspaces,
    entry: dict[str, Any],
    ws: dict[str, Any],
    selector: dict[str, Any] | None,
    branch_policy: str,
    merged_into: str | None,
) -> dict[str, Any]:
    """RemoveWorktree of a registered worktree whose folder no longer exists (designed here, a review fix).

    Git runs only in the anchor, never in the missing folder.

    - Git still lists the path (it is ``prunable``): workspace spec §8 rule 7 as far as a missing
      folder allows — the recorded ``git_dir`` must still belong to this path
      (``generation_mismatch``), a lock refuses (``worktree_locked``), and for
      ``delete_if_merged`` the live checkout must match the record
      (``checkout_mismatch``); rule 9's proofs apply to the live HEAD. Then
      ``git worktree remove <path>`` (never ``--force``) drops exactly this
      worktree's git record; for a missing folder git needs no force. This is
      narrower than ``git worktree prune``, which would also drop the records
      of every other vanished worktree of the repository.
    - Git no longer lists it (someone ran ``git worktree prune``): nothing of
      git's is left to protect or lose; ``delete_if_merged`` still needs
      ``merged_into`` to contain the branch's current tip.

    Either way the entry is tombstoned with disposition ``removed`` (this call
    is what removes the artifact from the registry, and it may delete the
    branch; a repeated call then gets ``already_removed``) and ``error`` says
    the directory was already gone.

    Raises:
        ToolFailure: ``git_failed`` (anchor gone, listing failed), ``generation_mismatch``,
            ``worktree_locked``, ``checkout_mismatch``, ``merge_proof_required``, ``not_merged``.
    """
    wt, path, anchor = entry["worktree"], entry["filesystem_path"], ws["workspace_anchor"]
    root_id = entry["execution_root_id"]
    if not os.path.isdir(anchor):
        raise refuse(
            "git_failed",
            f"worktree directory {path} and its repository anchor {anchor} no longer exist; git cannot run",
            "Restore the repository, or leave the record (GetWorkspaceState shows it).",
            path=path,
            anchor=anchor,
        )
    records, err = await worktree_records(anchor)
    if records is None:
        raise refuse("git_failed", f"git worktree list failed in {anchor}: {err}"[:512], anchor=anchor)
    record = next((r for r in records if same_path(r.path, path)), None)
    if record is not None:
        if not admin_dir_points_to(wt["git_dir"], path):
            raise refuse(
                "generation_mismatch",
                "registered worktree generation does not match live git state",
                "Git's record of this path belongs to a different worktree.",
                recorded={"git_common_dir": wt["git_common_dir"], "git_dir": wt["git_dir"]},
                path=path,
            )
        if record.locked is not None:
            raise refuse(
                "worktree_locked",
                f"worktree is locked: {record.locked}".rstrip(": "),
                "Unlock it with git worktree unlock first.",
                path=path,
                lock_reason=record.locked,
            )
        if branch_policy == "delete_if_merged" and (
            wt.get("branch_ref") != record.branch_ref or bool(wt.get("detached")) != record.detached
        ):
            raise refuse(
                "checkout_mismatch",
                "registered worktree checkout identity does not match live git state",
                "Remove it with branch_policy keep, then delete the branch yourself if it is merged.",
                recorded_branch_ref=wt.get("branch_ref"),
                live_branch_ref=record.branch_ref,
            )
        await _prove_merged(record, anchor, branch_policy, merged_into)
        branch_ref, tip = record.branch_ref, record.head
        note = f"worktree directory {path} was already gone; git's record of it was removed"
    else:
        branch_ref, tip = wt.get("branch_ref"), None
        if branch_policy == "delete_if_merged":
            tip = await rev_parse_commit(branch_ref, anchor) if branch_ref else None
            if tip is not None or merged_into is None:  # a branch that is gone needs no ancestry proof
                await _prove_merged(WorktreeRecord(path, tip, branch_ref, False), anchor, branch_policy, merged_into)
        note = f"worktree directory {path} was already gone and no longer listed by git; registry entry tombstoned"
        if branch_policy == "delete_if_merged" and tip is None:
            note += "; its branch no longer exists"
    switched = False
    if selector is not None:
        await view.switch_locked(**selector)
        switched = True
    with view.tables.store.tx() as db:
        if view.tables.grant_lease(db, root_id, view.agent_id) is None:
            raise refuse("occupied", "worktree has active occupancy; no cleanup lease", execution_root_id=root_id)
    try:
        if record is not None:
            removed = await run_git(["worktree", "remove", path], anchor)
            if not removed.success:
                _set_cleanup(view, entry, "failed", [], removed.stderr)
                return _removal(
                    root_id,
                    "failed",
                    "git refused removing the record of the vanished worktree",
                    switched=switched,
                    branch=short_branch(branch_ref),
                    branch_tip=tip,
                    error=removed.stderr or "git worktree remove failed",
                )
        return await _finish_removal(view, entry, anchor, branch_ref, tip, branch_policy, switched, note)
    finally:
        with view.tables.store.tx() as db:
            view.tables.drop_lease(db, root_id)
