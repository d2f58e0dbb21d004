"""Workspace bindings, execution roots and the active projection (workspace spec §1-§6).

``WorkspaceService`` (one per runtime, ``rt.workspaces``) owns the durable
tables (:mod:`.workspace_store`); ``AgentWorkspaces`` is what one tool call
sees (``ctx.workspaces``): the caller's cwd, execution root and bound roots
(D3), GetWorkspaceState, Attach/Detach/SwitchWorkspace. Git worktrees
(Create/RemoveWorktree) are in :mod:`.worktrees`.

The default workspace: the first time an agent is seen its bindings are
``[agent home, anchor of rt.workspace]`` (plus its parent's bindings for a
child, workspace spec §1.5) and its active projection is ``rt.workspace``'s discovered one
(cwd = ``rt.workspace``). All of it is in SQLite, so a runtime reopened on the
same home (a kernel restart) keeps what the agent switched to. holon_nb always
runs in host mode (workspace spec §1.4): occupancy and cleanup leases always apply.

Paths: every directory entering the plane (AttachWorkspace/SwitchWorkspace
``path``, the notebook directory, the agent home) is spelled by its
``realpath``, so a repository reached through a symlink is the same workspace
(one id) as the repository itself.

Projection repair (designed here; a review fix). Directories can vanish behind
the runtime's back (``rm -rf`` of a worktree, a deleted checkout). Whenever the
projection is read (every ExecCommand, ApplyPatch, workspace tool, and the first
read after a restart) it is checked, and repaired in one transaction:

- the cwd vanished but its execution root still exists → the cwd becomes the
  execution root (same directory tree, no surprise);
- the execution root itself vanished → the agent enters its **agent home**
  (``shared_read``), a directory holding only the agent's own state. The agent is
  never moved into another workspace's real checkout (not the canonical root of
  the vanished worktree, not the notebook's directory), so a relative ApplyPatch
  or a command meant for the vanished worktree cannot land in a real repository.

Each repair is an audit event (``workspace_projection_repaired``) and is recorded
with the projection as ``projection_repair`` = ``{from_execution_root_id,
from_path, reason ("cwd_missing" | "execution_root_missing"), repaired_at,
to_execution_root_id, to_cwd}``. GetWorkspaceState returns it (top level, and in
its receipt) until the agent next enters a projection (Switch, CreateWorktree
activation, …), which clears it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._store import now_rfc3339
from . import _targets as targets
from . import _worktrees as worktrees
from ._git import changed_files, git_dirs, short_branch, worktree_records
from ._paths import (
    AGENT_HOME_ALIAS,
    CANONICAL_ROOT,
    EXCLUSIVE_WRITE,
    GIT_WORKTREE_ROOT,
    SHARED_READ,
    Discovery,
    agent_home_id,
    canonical_root_id,
    contains,
    discover,
    normalize,
    real_dir,
    same_path,
    workspace_id_for,
    worktree_identity,
)
from ._refusals import refuse
from ._store import WorkspaceTables

if TYPE_CHECKING:
    from ...tools._context import CallContext
    from ..core._store import Store
    from ._ports import AgentHomes, LoopCall

__all__ = ["WorkspaceService", "AgentWorkspaces", "refuse"]


class WorkspaceService:
    """Workspace bindings, execution roots, git worktrees and the active projection (workspace spec §1-§8).

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store (the workspace tables live in it).
        workspace: The notebook's working directory, the default workspace.
        agent_homes: ``agent_id -> Path`` of each agent's home (created on demand).
        loop_call: Runs a coroutine function on the runtime's loop from another thread (:meth:`state`).

    Example::

        rt.workspaces.state("default")["active"]["cwd"]
    """

    def __init__(self, *, store: Store, workspace: Path, agent_homes: AgentHomes, loop_call: LoopCall):
        self.workspace = workspace
        self._agent_homes = agent_homes
        self._loop_call = loop_call
        self.tables = WorkspaceTables(store)
        self._lock: anyio.Lock | None = None
        self._real_homes: dict[str, str] = {}

    def start(self) -> None:
        """Release cleanup leases left by a runtime that stopped mid-removal (no removal survives it)."""
        self.tables.drop_all_leases()

    def bind(self, call: CallContext) -> AgentWorkspaces:
        """The view one tool call sees (its agent, profile and execution context)."""
        return AgentWorkspaces(self, call.agent_id, call)

    def view(self, agent_id: str) -> AgentWorkspaces:
        """The workspace view of ``agent_id`` outside a tool call (notebook, tests)."""
        return AgentWorkspaces(self, agent_id, None)

    def active_workspace_id(self, call: CallContext) -> str | None:
        """The id of the workspace active for ``call``'s agent, or None (set up or repaired first, as
        :meth:`AgentWorkspaces.active`)."""
        ws_id = self.bind(call).active().get("workspace_id")
        return ws_id if isinstance(ws_id, str) and ws_id else None

    async def close(self) -> None:
        """Nothing to stop: every transition is already durable."""

    @property
    def lock(self) -> anyio.Lock:
        """Serialises workspace transitions of every agent (created on the loop thread)."""
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    def agent_home(self, agent_id: str) -> str:
        """``<holon home>/agents/<agent_id>/`` (created), its realpath (resolved once per agent: it is
        read by every command, and ``os.path.realpath`` costs an ``lstat`` per path component)."""
        path = self._agent_homes(agent_id)  # recreates a vanished home
        real = self._real_homes.get(agent_id)
        if real is None:
            real = self._real_homes[agent_id] = real_dir(path)
        return real

    @property
    def default_path(self) -> str:
        """The notebook's working directory (``rt.workspace``, its realpath), the default workspace."""
        return real_dir(self.workspace)

    async def async_state(self, agent_id: str) -> dict[str, Any]:
        """GetWorkspaceState's result for ``agent_id`` (runs on the loop thread)."""
        return await self.view(agent_id).state()

    def state(self, agent_id: str = "default") -> dict[str, Any]:
        """GetWorkspaceState's result for ``agent_id``, from the kernel thread (for tables in the notebook).

        Returns:
            ``{agent_id, attached_workspace_ids, workspaces, active, execution_roots, occupancies, summary_text}``.

        Raises:
            RuntimeError: when called on the runtime thread (use :meth:`async_state`).
        """
        return self._loop_call(self.async_state, agent_id)


class AgentWorkspaces:
    """One agent's workspace view: its projection, bindings and the workspace transitions.

    Reading the projection (``cwd``, ``execution_root``, ``bound_roots()``)
    first sets up an agent never seen before (module docstring) and repairs a
    projection whose directory vanished: a missing cwd falls back to the
    execution root; a missing execution root falls back to the agent home, never
    to another workspace's checkout. Each repair is one transaction, an audit
    event (``workspace_projection_repaired``) and a ``projection_repair`` record
    that GetWorkspaceState shows until the next projection change (module docstring).
    """

    def __init__(self, svc: WorkspaceService, agent_id: str, call: CallContext | None):
        self.svc = svc
        self.tables = svc.tables
        self.agent_id = agent_id
        self.call = call

    # ------------------------------------------------------------ projection (sync; ExecCommand/ApplyPatch)
    @property
    def cwd(self) -> Path:
        """The active projection's cwd (absolute).

        Every command reads it (issue 12): the stored projection is read once per change of the home
        (:meth:`Store.cached`); its two directories are checked every time, and a vanished one is
        repaired by :meth:`active` as before. (A vanished agent home is made again where it is used:
        a command's environment, an artifact.)
        """
        cwd, root, path = self.tables.store.cached(("projection", self.agent_id), self._projection_paths)
        if os.path.isdir(cwd) and (root == cwd or os.path.isdir(root)):  # one stat when they are one directory
            return path
        return Path(self.active()["cwd"])

    def _projection_paths(self) -> tuple[str, str, Path]:
        act = self.active()
        return act["cwd"], act["execution_root"], Path(act["cwd"])

    @property
    def execution_root(self) -> Path:
        """The active projection's execution root (absolute)."""
        return Path(self.active()["execution_root"])

    @property
    def home(self) -> str:
        """This agent's home directory."""
        return self.svc.agent_home(self.agent_id)

    def bound_roots(self) -> list[Path]:
        """The agent home, then anchor and live execution roots of each attached workspace (D3), deduplicated."""
        st = self.ensure()
        out: list[str] = [self.home]
        for ws_id in st["attached"]:
            entry = self.tables.workspace(ws_id)
            if entry is None:
                continue
            out.append(entry["workspace_anchor"])
            out.extend(r["filesystem_path"] for r in self.tables.roots(ws_id, live_only=True))
        return [Path(p) for p in dict.fromkeys(out)]

    def active(self) -> dict[str, Any]:
        """The ``ActiveWorkspaceEntry`` (set up or repaired first, see the class docstring).

        Returns:
            The entry; after a repair it also holds ``projection_repair`` (module docstring),
            which :meth:`state` moves to the top level of GetWorkspaceState's result.
        """
        self.home  # noqa: B018 - recreates a vanished agent home
        st = self.ensure()
        act = st["active"]
        if os.path.isdir(act["cwd"]) and os.path.isdir(act["execution_root"]):
            return act
        with self.tables.store.tx() as db:
            cur = self._state_in(db)
            act = cur["active"]
            if os.path.isdir(act["cwd"]) and os.path.isdir(act["execution_root"]):
                return act  # repaired by a concurrent reader
            if os.path.isdir(act["execution_root"]):
                reason, from_path = "cwd_missing", act["cwd"]
                new = {**act, "cwd": act["execution_root"]}
            else:
                # never another workspace's real checkout: only the agent's own home (module docstring)
                reason, from_path = "execution_root_missing", act["execution_root"]
                home_ws = self._ensure_home(db)
                new = self.activate(db, home_ws, self._canonical_root(db, home_ws), SHARED_READ, self.home)
            repair = {
                "from_execution_root_id": act.get("execution_root_id"),
                "from_path": from_path,
                "reason": reason,
                "repaired_at": now_rfc3339(),
                "to_execution_root_id": new["execution_root_id"],
                "to_cwd": new["cwd"],
            }
            new = {**new, "projection_repair": repair}
            self.tables.put_agent_state(db, self.agent_id, self._state_in(db)["attached"], new)
            self.tables.audit(db, self.agent_id, "workspace_projection_repaired", {"cwd": new["cwd"], **repair})
        return new

    def ensure(self) -> dict[str, Any]:
        """The agent's ``{"attached", "active"}`` state, created on first sight (one transaction)."""
        st = self.tables.agent_state(self.agent_id)
        if st is not None:
            return st
        home = self.home
        with self.tables.store.tx() as db:
            row = db.execute("SELECT 1 FROM ws_agent_state WHERE agent_id=?", (self.agent_id,)).fetchone()
            if row is None:
                home_ws = self._ensure_home(db)
                attached = [home_ws["workspace_id"]]
                default_ws, disc = self._default_workspace(db)
                attached.append(default_ws["workspace_id"])
                attached.extend(self._parent_bindings())
                attached = list(dict.fromkeys(attached))
                self.tables.put_agent_state(db, self.agent_id, attached, {"occupancy_id": None})
                self._default_projection(db, default_ws, disc, home)
        return self.tables.agent_state(self.agent_id)  # type: ignore[return-value]

    def _parent_bindings(self) -> list[str]:
        """A child's inherited bindings: its parent's attached workspaces except the parent's home (workspace spec §1.5)."""
        rec = self.tables.store.agent(self.agent_id) or {}
        parent = rec.get("parent_id")
        pst = self.tables.agent_state(parent) if parent else None
        return [w for w in (pst or {}).get("attached", []) if not w.startswith(AGENT_HOME_ALIAS + ":")]

    def _state_in(self, db: Any) -> dict[str, Any]:
        row = db.execute("SELECT attached, active FROM ws_agent_state WHERE agent_id=?", (self.agent_id,)).fetchone()
        return {"attached": json.loads(row["attached"]), "active": json.loads(row["active"])}

    def _ensure_home(self, db: Any) -> dict[str, Any]:
        home = self.home
        ws = self.tables.ensure_workspace(
            db,
            {
                "workspace_id": agent_home_id(self.agent_id),
                "workspace_alias": AGENT_HOME_ALIAS,
                "workspace_kind": "agent_home",
                "owner_agent_id": self.agent_id,
                "workspace_anchor": home,
                "repo_name": "AgentHome",
            },
        )
        self._canonical_root(db, ws)
        return ws

    def _canonical_root(self, db: Any, ws: dict[str, Any]) -> dict[str, Any]:
        root_id = canonical_root_id(ws["workspace_id"])
        existing = self.tables.root_in(db, root_id)
        if existing is not None:
            return existing
        return self.tables.upsert_root(
            db,
            {
                "execution_root_id": root_id,
                "workspace_id": ws["workspace_id"],
                "filesystem_path": ws["workspace_anchor"],
                "root_kind": CANONICAL_ROOT,
            },
        )

    def ensure_workspace_for(self, db: Any, anchor: str) -> dict[str, Any]:
        """The registry entry of an anchor, with its canonical root (created; the agent-home directory maps
        to the agent home, workspace spec §4 rule 3). The anchor is spelled by its realpath (module docstring)."""
        anchor = real_dir(anchor)
        if same_path(anchor, self.home):
            return self._ensure_home(db)
        ws = self.tables.ensure_workspace(
            db,
            {
                "workspace_id": workspace_id_for(anchor),
                "workspace_anchor": anchor,
                "repo_name": os.path.basename(anchor) or None,
            },
        )
        self._canonical_root(db, ws)
        return ws

    def discover(self, path: str) -> Discovery:
        """workspace spec §1.3 discovery, except that anything inside the agent home is the agent home."""
        if contains(self.home, path):
            return Discovery(self.home, self.home, CANONICAL_ROOT, path)
        return discover(path)

    def _default_workspace(self, db: Any) -> tuple[dict[str, Any], Discovery]:
        disc = self.discover(self.svc.default_path)
        return self.ensure_workspace_for(db, disc.anchor), disc

    def _default_projection(self, db: Any, ws: dict[str, Any], disc: Discovery, fallback_cwd: str) -> dict[str, Any]:
        """Enter the default workspace's discovered projection (a worktree taken by another agent: its anchor)."""
        if disc.projection_kind == GIT_WORKTREE_ROOT:
            ident = worktree_identity(disc.execution_root)
            root = targets.register_root(self, db, ws, disc.execution_root, ident, "discovered")
            try:
                return self.activate(db, ws, root, EXCLUSIVE_WRITE, disc.cwd)
            except ToolFailure:
                return self.activate(db, ws, self._canonical_root(db, ws), SHARED_READ, ws["workspace_anchor"])
        if os.path.isdir(disc.cwd):
            return self.activate(db, ws, self._canonical_root(db, ws), SHARED_READ, disc.cwd)
        home_ws = self._ensure_home(db)
        return self.activate(db, home_ws, self._canonical_root(db, home_ws), SHARED_READ, fallback_cwd)

    def activate(self, db: Any, ws: dict[str, Any], root: dict[str, Any], mode: str, cwd: str) -> dict[str, Any]:
        """Enter ``root`` inside an open transaction (workspace spec §1.4 rule 1, §6 rule 8) and return the new active entry.

        Acquires occupancy (refusing ``occupancy_conflict`` / ``root_being_removed``),
        persists the projection, then releases the previous occupancy.

        Raises:
            ToolFailure: ``tool_execution_failed`` with the occupancy reason; the caller's
                transaction then rolls back and the previous projection stays.
        """
        cur = self._state_in(db)
        occ, reason = self.tables.acquire(db, root, self.agent_id, mode)
        if occ is None:
            raise refuse(
                reason or "occupancy_conflict",
                (
                    f"execution root {root['execution_root_id']} is being removed"
                    if reason == "root_being_removed"
                    else f"another agent holds exclusive_write on {root['filesystem_path']}"
                ),
                "Wait for the other agent to leave this root, or use a different worktree.",
                execution_root_id=root["execution_root_id"],
            )
        active = {
            "workspace_id": ws["workspace_id"],
            "workspace_anchor": ws["workspace_anchor"],
            "execution_root_id": root["execution_root_id"],
            "execution_root": root["filesystem_path"],
            "projection_kind": root["root_kind"],
            "access_mode": mode,
            "cwd": cwd,
            "occupancy_id": occ["occupancy_id"],
        }
        self.tables.put_agent_state(db, self.agent_id, cur["attached"], active)
        previous = cur["active"].get("occupancy_id")
        if previous != occ["occupancy_id"]:
            self.tables.release(db, previous)
        home = ws["workspace_id"] == agent_home_id(self.agent_id)
        self.tables.audit(
            db,
            self.agent_id,
            "workspace_used" if home else "workspace_entered",
            {"workspace_id": ws["workspace_id"], "execution_root_id": root["execution_root_id"], "cwd": cwd},
        )
        return active

    def directory(self, value: str, field: str, tool_name: str) -> str:
        """Resolve a path argument against the active cwd (workspace spec §2.3) and require an existing directory.

        Returns:
            The directory's realpath (a symlinked spelling of an attached repository is that repository).

        Raises:
            ToolFailure: ``invalid_tool_input`` (``details.field``, ``details.path``).
        """
        path = normalize(value, self.active()["cwd"])
        problem = None if os.path.isdir(path) else ("is not a directory" if os.path.exists(path) else "does not exist")
        if problem:
            raise ToolFailure(
                ToolError(
                    kind="invalid_tool_input",
                    message=f"{tool_name}: `{field}` {path} {problem}",
                    details={"tool_name": tool_name, "field": field, "validation_error": problem, "path": path},
                    recovery_hint=f"Pass an existing directory as `{field}` (relative paths join the active cwd).",
                )
            )
        return real_dir(path)

    async def create_worktree(
        self,
        workspace_id: str,
        branch: str,
        base_ref: str,
        label: str | None = None,
        activate: bool = True,
        on_existing: str = "reuse",
    ) -> dict[str, Any]:
        """CreateWorktree (workspace spec §7); see :func:`holon_nb.runtime.workspaces._worktrees.create_worktree`."""
        return await worktrees.create_worktree(self, workspace_id, branch, base_ref, label, activate, on_existing)

    async def remove_worktree(
        self,
        execution_root_id: str,
        return_to: str | None = None,
        branch_policy: str = "keep",
        merged_into: str | None = None,
    ) -> dict[str, Any]:
        """RemoveWorktree (workspace spec §8); see :func:`holon_nb.runtime.workspaces._worktrees.remove_worktree`."""
        return await worktrees.remove_worktree(self, execution_root_id, return_to, branch_policy, merged_into)

    # ------------------------------------------------------------ GetWorkspaceState (workspace spec §3)
    async def state(self) -> dict[str, Any]:
        """GetWorkspaceState's result (workspace spec §3): bindings, active projection, visible roots (live git overlay), occupancy.

        A pending ``projection_repair`` (module docstring) is returned at the top level, next to ``active``.
        """
        active = dict(self.active())
        repair = active.pop("projection_repair", None)
        attached = list(self.ensure()["attached"])
        roots = [
            r
            for r in self.tables.roots()
            if r["workspace_id"] in attached or (r.get("worktree") or {}).get("registered_by_agent_id") == self.agent_id
        ]
        ws_ids = set(attached) | {r["workspace_id"] for r in roots}
        workspaces = [w for w in self.tables.workspaces() if w["workspace_id"] in ws_ids]
        anchors = {w["workspace_id"]: w["workspace_anchor"] for w in workspaces}
        listings: dict[str, Any] = {}
        for root in roots:
            if root["root_kind"] == GIT_WORKTREE_ROOT and "removed_at" not in root:
                anchor = anchors.get(root["workspace_id"])
                if anchor is not None:
                    await _overlay_live_git(root, anchor, listings, self.agent_id)
        root_ids = {r["execution_root_id"] for r in roots}
        occupancies = [o for o in self.tables.occupancies() if o["execution_root_id"] in root_ids]
        result = {
            "agent_id": self.agent_id,
            "attached_workspace_ids": attached,
            "workspaces": workspaces,
            "active": active,
            "projection_repair": repair,
            "execution_roots": roots,
            "occupancies": occupancies,
            "summary_text": (
                "workspace bindings, active projection (repaired: its directory vanished), and worktree artifacts"
                if repair
                else "workspace bindings, active projection, and worktree artifacts"
            ),
        }
        return {k: v for k, v in result.items() if v is not None}

    # ------------------------------------------------------------ AttachWorkspace (§4)
    async def attach(self, path: str) -> dict[str, Any]:
        """Bind the workspace of an existing directory ``path`` (absolute, normalised) without switching (workspace spec §4)."""
        async with self.svc.lock:
            self.active()
            disc = self.discover(path)
            with self.tables.store.tx() as db:
                cur = self._state_in(db)
                ws = self.ensure_workspace_for(db, disc.anchor)
                already = ws["workspace_id"] in cur["attached"]
                if not already:
                    attached = self._prune_stale(db, cur)
                    attached.append(ws["workspace_id"])
                    self.tables.put_agent_state(db, self.agent_id, attached, cur["active"])
                    self.tables.audit(db, self.agent_id, "workspace_attached", {"workspace_id": ws["workspace_id"]})
        return {
            "workspace": ws,
            "already_attached": already,
            "active_unchanged": True,
            "discovered_projection_kind": disc.projection_kind,
            "discovered_execution_root": disc.execution_root,
            "summary_text": (
                "workspace was already attached; active projection was unchanged"
                if already
                else "workspace attached; active projection was unchanged"
            ),
        }

    def _prune_stale(self, db: Any, cur: dict[str, Any]) -> list[str]:
        """Drop bindings whose entry is gone or whose anchor is no longer a directory (workspace spec §4 rule 5)."""
        keep: list[str] = []
        for ws_id in cur["attached"]:
            entry = self.tables.workspace(ws_id)
            protected = ws_id == agent_home_id(self.agent_id) or ws_id == cur["active"].get("workspace_id")
            if protected or (entry is not None and os.path.isdir(entry["workspace_anchor"])):
                keep.append(ws_id)
            else:
                self.tables.audit(
                    db, self.agent_id, "workspace_detached", {"workspace_id": ws_id, "reason": "stale_workspace_anchor"}
                )
        return keep

    # ------------------------------------------------------------ DetachWorkspace (§5)
    async def detach(self, workspace_id: str) -> dict[str, Any]:
        """Remove one binding; an active target first switches to the agent home (workspace spec §5)."""
        if workspace_id in (AGENT_HOME_ALIAS, agent_home_id(self.agent_id)):
            raise ToolFailure(
                ToolError(
                    kind="protected_workspace",
                    message="the agent home cannot be detached",
                    details={"workspace_id": workspace_id},
                    recovery_hint="Detach other workspaces only; SwitchWorkspace moves away from the agent home.",
                )
            )
        async with self.svc.lock:
            self.active()
            with self.tables.store.tx() as db:
                cur = self._state_in(db)
                if workspace_id not in cur["attached"]:
                    raise refuse(
                        "not_attached",
                        f"workspace {workspace_id} is not attached",
                        "GetWorkspaceState lists attached_workspace_ids.",
                        workspace_id=workspace_id,
                    )
                retained = [
                    r for r in self.tables.roots(workspace_id, live_only=True) if r["root_kind"] == GIT_WORKTREE_ROOT
                ]
                switched = cur["active"].get("workspace_id") == workspace_id
                if switched:
                    home_ws = self._ensure_home(db)
                    self.activate(db, home_ws, self._canonical_root(db, home_ws), SHARED_READ, self.home)
                    cur = self._state_in(db)
                attached = [w for w in cur["attached"] if w != workspace_id]
                self.tables.put_agent_state(db, self.agent_id, attached, cur["active"])
                self.tables.audit(db, self.agent_id, "workspace_detached", {"workspace_id": workspace_id})
        return {
            "workspace_id": workspace_id,
            "detached": True,
            "switched_to_agent_home": switched,
            "retained_execution_roots": retained,
            "summary_text": (
                "switched to agent_home and detached workspace; worktree artifacts were retained"
                if switched
                else "workspace detached; worktree artifacts were retained"
            ),
        }

    # ------------------------------------------------------------ SwitchWorkspace (§6)
    async def switch(
        self,
        workspace_id: str | None = None,
        execution_root_id: str | None = None,
        path: str | None = None,
        cwd: str | None = None,
    ) -> dict[str, Any]:
        """Activate an attached workspace, a registered root, or the workspace of a directory (workspace spec §6).

        Args:
            workspace_id / execution_root_id / path: Exactly one selector (``path``
                absolute and normalised, an existing directory).
            cwd: Requested cwd; relative joins the target root, absolute must lie inside it.

        Returns:
            ``SwitchWorkspaceResult`` (``disposition`` ``switched`` or ``no_op``).

        Raises:
            ToolFailure: the workspace spec §1.6 reasons; the previous projection is then intact.
        """
        async with self.svc.lock:
            return await self.switch_locked(
                workspace_id=workspace_id, execution_root_id=execution_root_id, path=path, cwd=cwd
            )

    async def switch_locked(self, **selector: Any) -> dict[str, Any]:
        """:meth:`switch` for a caller already holding the service lock."""
        requested_cwd = selector.pop("cwd", None)
        active = self.active()
        target = targets.resolve_target(self, self.ensure()["attached"], **selector)
        cwd = target.effective_cwd(requested_cwd)
        if target.root_id is not None and target.root_id == active["execution_root_id"] and cwd == active["cwd"]:
            return _switch_result("no_op", active)
        if target.kind == GIT_WORKTREE_ROOT:
            records, err = await worktree_records(target.workspace["workspace_anchor"])
            record = next((r for r in records or [] if same_path(r.path, target.root_path)), None)
            if record is None:
                raise refuse(
                    "worktree_missing_from_git",
                    f"worktree {target.root_path} is missing from live git state",
                    "GetWorkspaceState shows registered roots; CreateWorktree makes a new one.",
                    path=target.root_path,
                    git_error=err or None,
                )
            dirs, err = await git_dirs(target.root_path)
            if dirs is None:
                raise refuse(
                    "git_failed", f"git could not inspect {target.root_path}: {err}"[:512], path=target.root_path
                )
            with self.tables.store.tx() as db:
                ident = targets.identity(record, dirs)
                root = targets.register_root(self, db, target.workspace, target.root_path, ident, "discovered")
                active = self.activate(db, target.workspace, root, EXCLUSIVE_WRITE, cwd)
        else:
            with self.tables.store.tx() as db:
                root = self._canonical_root(db, target.workspace)
                active = self.activate(db, target.workspace, root, SHARED_READ, cwd)
        return _switch_result("switched", active)


def _switch_result(disposition: str, active: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "workspace_id",
        "workspace_anchor",
        "execution_root_id",
        "execution_root",
        "cwd",
        "projection_kind",
        "access_mode",
    )
    return {
        "disposition": disposition,
        **{k: active[k] for k in keys},
        "summary_text": f"{disposition} active workspace projection",
    }


def _missing_cleanup(path: str, record: Any, records: Any, err: str) -> dict[str, Any]:
    """``last_cleanup`` of a worktree whose folder is gone: status ``missing`` and what git says."""
    if record is not None:
        where = (
            f"git still lists it as prunable ({record.prunable})"
            if record.prunable is not None
            else "git still lists it"
        )
        if record.locked is not None:
            where += f"; it is locked: {record.locked}".rstrip(": ")
    elif records is not None:
        where = "git no longer lists it"
    else:
        where = f"git could not list the repository's worktrees: {err}"
    return {
        "status": "missing",
        "changed_files": [],
        "inspected_at": now_rfc3339(),
        "error": f"worktree directory {path} no longer exists; {where}; RemoveWorktree cleans up the record"[:512],
    }


async def _overlay_live_git(root: dict[str, Any], anchor: str, listings: dict[str, Any], agent_id: str) -> None:
    """Overlay live git facts on a worktree root, in the response only (workspace spec §3 rule 3).

    Git runs in the anchor (the listing) and, only when the worktree folder exists,
    inside it (``git status``). A vanished folder is reported with status ``missing``.
    """
    if anchor not in listings:
        listings[anchor] = await worktree_records(anchor)
    records, err = listings[anchor]
    wt = dict(
        root.get("worktree")
        or {
            "provenance": "discovered",
            "registered_by_agent_id": agent_id,
            "authorized_agent_ids": [agent_id],
            "detached": False,
        }
    )
    record = next((r for r in records or [] if same_path(r.path, root["filesystem_path"])), None)
    if not os.path.isdir(root["filesystem_path"]):
        if record is not None:
            wt.update(
                {
                    "branch": short_branch(record.branch_ref),
                    "branch_ref": record.branch_ref,
                    "head_commit": record.head,
                    "detached": record.detached,
                }
            )
        wt["last_cleanup"] = _missing_cleanup(root["filesystem_path"], record, records, err)
        root["worktree"] = {k: v for k, v in wt.items() if v is not None}
        return
    files, status_err = (await changed_files(root["filesystem_path"])) if record is not None else (None, "")
    if record is None or files is None:
        wt["last_cleanup"] = {
            "status": "inspection_failed",
            "changed_files": [],
            "error": (err or status_err or "worktree is missing from live git state")[:512],
            "inspected_at": now_rfc3339(),
        }
    else:
        wt.update(
            {
                "branch": short_branch(record.branch_ref),
                "branch_ref": record.branch_ref,
                "head_commit": record.head,
                "detached": record.detached,
            }
        )
        cleanup: dict[str, Any] = {
            "status": "dirty" if files else "clean",
            "changed_files": files,
            "inspected_at": now_rfc3339(),
        }
        if record.locked:
            cleanup["error"] = f"worktree is locked: {record.locked}"
        wt["last_cleanup"] = cleanup
    root["worktree"] = {k: v for k, v in wt.items() if v is not None}
