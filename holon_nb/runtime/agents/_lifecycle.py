"""Agent creation and invocation: CreateAgent and InvokeAgent's runtime side (agents spec §1.2, §5.5-§5.6).

``rt.agents.lifecycle`` is one :class:`AgentLifecycle` per runtime. It owns
the identity columns of the ``agents`` table (added here with guarded
``ALTER TABLE``: ``kind``, ``visibility``, ``ownership``, ``status``,
``lineage_parent_agent_id``, ``delegated_from_task_id``, ``model`` (JSON),
``template``, ``archived_at``).

- CreateAgent creates (or reuses) a public named agent, inherits the caller's
  attached workspaces (not its active entry) and queues the optional bootstrap
  message through the work plane's one enqueue path (agents spec §1.4).
- InvokeAgent creates a task owned by the caller — ``child_agent_task`` with a
  new private child, or ``agent_invocation_task`` for a resident agent —
  capturing the caller's work item at creation (agents spec §3.4 rule 3), queues the input
  message to the invoked agent in the same transaction and returns the task
  handle at once. The invoked agent's turn then runs in the background
  (:mod:`.agent_invocations`), and the task's ``task_result`` rejoins the caller.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._rows import AGENT_COLUMNS, agent_in, insert_agent
from ..core._rows import ensure_agent_columns as add_agent_columns
from ..core._store import Store, new_id, now_rfc3339
from ._invocations import InvocationRuns
from ._runs import ChildTurnOutcome, ChildTurnRunner, agent_model, model_ref
from ._templates import Template, load_template

if TYPE_CHECKING:
    from ...tools._context import CallContext
    from ._ports import (
        AgentHomeDirs,
        AgentWorkPlane,
        AgentWorkspacePlane,
        EventSink,
        EventSubscriptions,
        InstalledModels,
        ModelCatalog,
        StartSoon,
        TaskOwner,
        TurnPlane,
    )

__all__ = ["AGENT_COLUMNS", "AgentLifecycle", "ensure_agent_columns"]

log = logging.getLogger("holon_nb.agents")


def ensure_agent_columns(store: Store) -> None:
    """Add the identity columns (:data:`~holon_nb.runtime.core._rows.AGENT_COLUMNS`) to ``agents`` (idempotent; a
    column added concurrently is not an error)."""
    with store.tx() as db:
        add_agent_columns(db)


def _fail(kind: str, message: str, details: dict[str, Any], hint: str | None = None) -> ToolFailure:
    return ToolFailure(ToolError(kind=kind, message=message, details=details, recovery_hint=hint))


def _label(message: str) -> str:
    """The supervision task label: whitespace collapsed, at most 120 characters (agents spec §5.6 rule 3)."""
    text = re.sub(r"\s+", " ", message).strip()
    return text if len(text) <= 120 else text[:119] + "…"


class AgentLifecycle:
    """Creates agents, invokes them, and carries their background runs (agents spec §5.5-§5.6).

    Built by :class:`~.plane.AgentPlane` with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store (agent and task rows).
        home: The holon home (``agent:``/``agent_home:``/``user:`` templates are read under it).
        work: The work plane (one transaction with the message queue; the caller's work item).
        workspaces: The workspace plane (a new agent inherits the caller's attached workspaces).
        agent_homes: Each agent's home directory (a template is written into a new one).
        tasks: The task plane's owner token (InvokeAgent's task rows carry it).
        catalog: The model catalog (a requested model is checked against it).
        installed_models: The refs of the providers installed on the runtime (accepted as they are).
        publish: The runtime's event sink (``task_created``, …).
        subscribe: Subscribes to the runtime's events (TaskStop of a run's task cancels it).
        start_soon: Starts background runs in the runtime's task group.
        turns: The turn service, built on first use (an invoked agent's turn runs there).

    Attributes:
        turn_runner: The :data:`~.agent_runs.ChildTurnRunner` that runs an invoked agent's
            turn; replace it to drive children without a model (tests, notebooks).
    """

    def __init__(
        self,
        *,
        store: Store,
        home: Path,
        work: AgentWorkPlane,
        workspaces: AgentWorkspacePlane,
        agent_homes: AgentHomeDirs,
        tasks: TaskOwner,
        catalog: ModelCatalog,
        installed_models: InstalledModels,
        publish: EventSink,
        subscribe: EventSubscriptions,
        start_soon: StartSoon,
        turns: TurnPlane,
    ):
        self._store = store
        self._home = home
        self._work = work
        self._workspaces = workspaces
        self._agent_homes = agent_homes
        self._tasks = tasks
        self._catalog = catalog
        self._installed_models = installed_models
        self._publish = publish
        ensure_agent_columns(store)
        self.runs = InvocationRuns(
            store=store, work=work, publish=publish, subscribe=subscribe, start_soon=start_soon, turns=turns
        )

    @property
    def turn_runner(self) -> ChildTurnRunner:
        """The runner of invoked agents' turns (see :class:`~.agent_invocations.InvocationRuns`)."""
        return self.runs.turn_runner

    @turn_runner.setter
    def turn_runner(self, runner: ChildTurnRunner) -> None:
        self.runs.turn_runner = runner

    async def close(self) -> None:
        """Stop the background runs (their tasks end ``interrupted``, D7)."""
        await self.runs.close()

    # ------------------------------------------------------------ records
    def record(self, agent_id: str) -> dict[str, Any] | None:
        """The agent record (``model`` decoded), or None."""
        rec = self._store.agent(agent_id)
        if rec is not None and isinstance(rec.get("model"), str):
            rec["model"] = json.loads(rec["model"])
        return rec

    @staticmethod
    def _insert(db: Any, rec: dict[str, Any]) -> None:
        insert_agent(db, {**rec, "model": json.dumps(rec["model"]) if rec.get("model") else None}, now_rfc3339())

    def effective_model(self, agent_id: str) -> dict[str, Any] | None:
        """The agent's own model object, or None when it follows the runtime default."""
        return agent_model(self._store, agent_id)

    def _default_ref(self) -> str | None:
        ref = os.environ.get("HOLON_MODEL")
        return ref.strip() if isinstance(ref, str) and ref.strip() else None

    def resolve_model(
        self, caller_id: str, requested: dict[str, Any] | None, tool: str, route: str | None = None
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """agents spec §5.5 rule 5: the model the new agent stores, and the ``model_resolution`` result.

        Without ``requested`` the new agent inherits the caller's *effective* model: the model ref of the
        caller's running turn (``route``, the call's ``CallContext.model_route``) when called from a turn — the
        caller's own model object when it names that same ref (its parameters kept) —, else the caller's own
        model, else the runtime default (``$HOLON_MODEL``, stored as None: followed at run time).

        Args:
            caller_id: The calling agent.
            requested: The ``model`` argument, or None.
            tool: ``CreateAgent`` or ``InvokeAgent`` (for messages).
            route: The model ref of the caller's turn (``CallContext.model_route``); None for a direct call.

        Returns:
            ``(stored model or None (follow the runtime default), model_resolution)``.

        Raises:
            ToolFailure: ``model_request_rejected`` when the model is not available
                (see :meth:`_catalog_problem`).
        """
        if requested is None:
            own = self.effective_model(caller_id)
            turn_model = _model_of_route(route)
            if turn_model is not None and not (own and _same_ref(model_ref(own), route or "")):
                own = turn_model
            if own:
                provider, model = own["provider"], own["model"]
            else:
                ref = self._default_ref()
                provider, _, model = ref.rpartition("/") if ref and "/" in ref else (None, "", ref)
            out = {"resolved_provider": provider, "resolved_model": model or None, "resolution_status": "inherited"}
            params = {k: v for k, v in (own or {}).items() if k not in ("provider", "model")}
            if params:
                out["resolved_parameters"] = params
            if not own and not out["resolved_model"]:
                out["policy_notes"] = [
                    "no model is configured for the caller: the agent follows the runtime "
                    "default (HOLON_MODEL) when it runs"
                ]
            return dict(own) if own else None, out
        problem, notes = self._catalog_problem(requested)
        if problem is not None:
            raise _fail(
                "model_request_rejected",
                f"{tool}: model {requested['provider']}/{requested['model']} is not available: {problem}",
                {"tool_name": tool, "provider": requested["provider"], "model": requested["model"], "reason": problem},
                "Pick a model listed by ListProviderModels, or omit `model` to inherit yours.",
            )
        params = {k: v for k, v in requested.items() if k not in ("provider", "model")}
        out = {
            "requested": dict(requested),
            "resolved_provider": requested["provider"],
            "resolved_model": requested["model"],
            "resolution_status": "accepted",
        }
        if params:
            out["resolved_parameters"] = params
        if notes:
            out["policy_notes"] = notes
        return dict(requested), out

    def _catalog_problem(self, requested: dict[str, Any]) -> tuple[str | None, list[str]]:
        """``(why the model is not available or None, policy notes)`` for a requested model (agents spec §5.5 rule 5).

        Accepted: a provider installed on the runtime for that ref (``rt.providers``, e.g. a scripted
        provider), or a model the catalog (``rt.model_catalog``) lists as available. A model the catalog
        does not list is accepted, with a note, when its provider is configured (some model of it is
        available). Rejected: an unknown or unconfigured provider, a listed but unavailable model.
        """
        ref = model_ref(requested) or ""
        from ..models._providers import canonical_ref

        installed = self._installed_models()
        if ref in installed or canonical_ref(ref) in installed:
            return None, []
        catalog = self._catalog
        family, _, endpoint = requested["provider"].partition("@")
        provider = family if endpoint in ("", "default") else f"{family}:{endpoint}"
        try:
            models = catalog.provider_models(provider)
        except Exception as exc:  # noqa: BLE001 - a catalog failure must not block agent creation
            log.warning(
                "model catalog lookup failed (%s: %s); the model was not checked",
                type(exc).__name__,
                exc,
                exc_info=False,
            )
            return None, ["the model catalog could not be read: the model was not checked"]
        if not models:
            entry = _provider_entry(catalog, provider)
            if entry is not None and entry.get("availability") in ("available", "degraded"):
                # a configured provider without a built-in model list (vllm, ollama, a custom endpoint)
                return None, [
                    f"model {requested['model']} is not in the catalog of {provider}, whose provider is "
                    f"configured; it is used as given"
                ]
            if entry is not None:
                return f"provider {requested['provider']} is not configured", []
            return f"provider {requested['provider']} is not in the model catalog", []
        match = next((m for m in models if m["id"] == requested["model"]), None)
        if match is not None:
            if match["availability"] == "available":
                return None, []
            return match.get("unavailable_reason") or "unavailable", []
        if any(m["availability"] == "available" for m in models):
            return None, [f"model {requested['model']} is not in the catalog of {provider}; it is used as given"]
        reason = next((m.get("unavailable_reason") for m in models if m.get("unavailable_reason")), None)
        return reason or f"provider {requested['provider']} has no available model", []

    # ------------------------------------------------------------ workspaces
    def _inherit_workspaces(self, caller_id: str, agent_id: str) -> None:
        """agents spec §5.5 rule 4: the new agent's bindings gain the caller's attached workspaces (not its home, not
        its active entry or worktree)."""
        view = self._workspaces
        inherited = [w for w in view.view(caller_id).ensure()["attached"] if not w.startswith("agent_home:")]
        st = view.view(agent_id).ensure()
        attached = list(dict.fromkeys([*st["attached"], *inherited]))
        if attached == st["attached"]:
            return
        with self._store.tx() as db:
            state = view.tables.agent_state_in(db, agent_id)
            view.tables.put_agent_state(db, agent_id, attached, state["active"] if state else st["active"])

    # ------------------------------------------------------------ CreateAgent (agents spec §5.5)
    async def create_agent(
        self,
        call: CallContext,
        agent_id: str,
        *,
        initial_message: str | None,
        template: str | None,
        model: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Create or reuse the public named agent ``agent_id`` (agents spec §5.5 rules 3-7).

        Returns:
            ``{agent_id, created, bootstrap_message_id?, model_resolution, summary_text}``.

        Raises:
            ToolFailure: ``template_requires_new_agent``, ``agent_identity_conflict``, ``agent_deleting``,
                ``agent_deleted``, ``model_request_rejected``, ``invalid_tool_input`` (template),
                ``unsupported_runtime_capability`` (remote template).
        """
        existing = self.record(agent_id)
        if existing is not None:
            self._check_reusable(existing, template)
        tpl = await anyio.to_thread.run_sync(
            load_template, self._store, self._home, call.agent_id, template, "CreateAgent"
        )
        stored, resolution = self.resolve_model(call.agent_id, model, "CreateAgent", call.model_route)
        work = self._work.bind(call)
        with self._work.tx() as t:
            row = agent_in(t.db, agent_id)
            created = row is None
            if row is None:
                self._insert(
                    t.db,
                    {
                        "id": agent_id,
                        "profile": "public_named",
                        "kind": "named",
                        "visibility": "public",
                        "ownership": "self_owned",
                        "lineage_parent_agent_id": call.agent_id,
                        "model": stored,
                        "template": tpl.selector,
                    },
                )
            else:
                self._check_reusable(row, template)
            msg = None
            if initial_message is not None:
                msg = self._work.queue.enqueue(
                    t,
                    agent_id=agent_id,
                    kind="internal_followup",
                    text=initial_message,
                    origin={"kind": "system", "subsystem": "spawn_agent"},
                    authority=work.authority,
                    metadata={
                        "spawn_preset": "public_named",
                        "creator_agent_id": call.agent_id,
                        "spawned_agent_id": agent_id,
                        "bootstrap": True,
                    },
                )
            t.emit(
                "agent_created" if created else "agent_reused",
                agent_id=agent_id,
                creator_agent_id=call.agent_id,
                profile_preset="public_named",
            )
        if created:
            await self._init_home(agent_id, tpl)
            self._inherit_workspaces(call.agent_id, agent_id)
        else:
            own = self.effective_model(agent_id)
            resolution = self._reused_resolution(own, model)
        out: dict[str, Any] = {"agent_id": agent_id, "created": created}
        if msg is not None:
            out["bootstrap_message_id"] = msg["id"]
        out["model_resolution"] = resolution
        out["summary_text"] = f"{'created' if created else 'reused'} public named agent {agent_id}"
        return out

    def _reused_resolution(self, own: dict[str, Any] | None, requested: dict[str, Any] | None) -> dict[str, Any]:
        """A reused agent keeps its model; a requested one is reported, not applied."""
        ref = self._default_ref()
        provider, _, name = ref.rpartition("/") if ref and "/" in ref else (None, "", ref)
        out: dict[str, Any] = {
            "resolved_provider": own["provider"] if own else provider,
            "resolved_model": own["model"] if own else (name or None),
            "resolution_status": "inherited",
        }
        if requested is not None:
            out["requested"] = dict(requested)
            out["policy_notes"] = ["the agent already exists and keeps its model; the requested model was not applied"]
        return out

    @staticmethod
    def _check_reusable(rec: dict[str, Any], template: str | None) -> None:
        """agents spec §5.5 rule 3 for an existing record."""
        agent_id = rec["id"]
        status = rec.get("status") or "active"
        if status in ("deleting", "deleted"):
            raise _fail(
                f"agent_{status}",
                f"agent {agent_id} is {status}",
                {"agent_id": agent_id, "status": status},
                "Choose another agent_id.",
            )
        public_self_owned = rec["profile"] == "public_named" and not rec.get("parent_id")
        if not public_self_owned or status != "active":
            raise _fail(
                "agent_identity_conflict",
                f"agent {agent_id} exists and is not a public named agent",
                {"agent_id": agent_id, "profile_preset": rec["profile"], "status": status},
                "Choose another agent_id; private children are addressed through their supervision task.",
            )
        if template is not None:
            raise _fail(
                "template_requires_new_agent",
                f"agent {agent_id} already exists; a template applies only to a new agent",
                {"agent_id": agent_id, "template": template[:200]},
                "Omit `template` to reuse the agent, or choose a new agent_id.",
            )

    async def _init_home(self, agent_id: str, tpl: Template) -> None:
        home = self._agent_homes(agent_id)
        await anyio.to_thread.run_sync(tpl.apply, home)

    # ------------------------------------------------------------ InvokeAgent (agents spec §5.6)
    def _new_task(
        self, db: Any, caller_id: str, kind: str, summary: str, detail: dict[str, Any], work_item_id: str | None
    ) -> dict[str, Any]:
        ts = now_rfc3339()
        rec = {
            "id": detail["task_id"],
            "agent_id": caller_id,
            "work_item_id": work_item_id,
            "kind": kind,
            "status": "queued",
            "summary": summary,
            "detail": {k: v for k, v in detail.items() if k != "task_id"},
            "created_at": ts,
            "updated_at": ts,
            "owner": self._tasks.owner,
        }
        Store.insert_task(db, rec)
        return rec

    async def invoke_resident(self, call: CallContext, target_id: str, message: str) -> dict[str, Any]:
        """Resident mode (agents spec §5.6 rule 2): an ``agent_invocation_task`` and the message queued to ``target_id``.

        Raises:
            ToolFailure: ``agent_not_found``, ``agent_deleting``, ``agent_deleted``, ``agent_stopped``,
                ``agent_message_not_authorized`` (SendAgentMessage rules 2-3).
        """
        work = self._work.bind(call)
        work.authorize_message(target_id)
        task_id = new_id("task")
        captured = self._work.captured_work_item(call.agent_id)  # at creation, never moved (agents spec §3.4)
        binding = work.binding
        with self._work.tx() as t:
            msg = self._work.queue.enqueue(
                t,
                agent_id=target_id,
                kind="internal_followup",
                text=message,
                origin={"kind": "system", "subsystem": "agent_invocation"},
                authority=work.authority,
                source_refs={"invocation_task_id": task_id},
                metadata={"sender_agent_id": call.agent_id, "invocation_task_id": task_id},
                turn_id=binding.turn_id if binding else None,
            )
            self._new_task(
                t.db,
                call.agent_id,
                "agent_invocation_task",
                f"Invoke {target_id}: {_label(message)}",
                {
                    "task_id": task_id,
                    "mode": "resident",
                    "target_agent_id": target_id,
                    "message_id": msg["id"],
                    "label": _label(message),
                },
                captured,
            )
        self._publish(
            "task_created",
            task_id,
            agent_id=call.agent_id,
            task_kind="agent_invocation_task",
            target_agent_id=target_id,
        )
        self.runs.start_run(task_id)
        return {
            "agent_id": target_id,
            "mode": "resident",
            "task_handle": {"task_id": task_id, "task_kind": "agent_invocation_task", "status": "queued"},
            "summary_text": f"invocation {task_id} queued for {target_id}",
        }

    async def invoke_child(
        self,
        call: CallContext,
        message: str,
        *,
        template: str | None,
        workspace_mode: str,
        model: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Private-child mode (agents spec §5.6 rule 3): a ``child_agent_task`` and a new private child supervised by it.

        Raises:
            ToolFailure: ``invalid_tool_input`` / ``unsupported_runtime_capability`` (template),
                ``model_request_rejected``, ``spawn_agent_failed`` (the task is then ``failed``).
        """
        tpl = await anyio.to_thread.run_sync(
            load_template, self._store, self._home, call.agent_id, template, "InvokeAgent"
        )
        stored, resolution = self.resolve_model(call.agent_id, model, "InvokeAgent", call.model_route)
        work = self._work.bind(call)
        task_id, child_id = new_id("task"), "child_" + new_id("c")[2:]
        captured = self._work.captured_work_item(call.agent_id)
        label = _label(message)
        with self._work.tx() as t:
            self._insert(
                t.db,
                {
                    "id": child_id,
                    "profile": "private_child",
                    "kind": "child",
                    "visibility": "private",
                    "ownership": "parent_supervised",
                    "parent_id": call.agent_id,
                    "lineage_parent_agent_id": call.agent_id,
                    "delegated_from_task_id": task_id,
                    "model": stored,
                    "template": tpl.selector,
                },
            )
            msg = self._work.queue.enqueue(
                t,
                agent_id=child_id,
                kind="internal_followup",
                text=message,
                origin={"kind": "system", "subsystem": "agent_delegation"},
                authority=work.authority,
                source_refs={"supervision_task_id": task_id},
                metadata={"parent_agent_id": call.agent_id, "supervision_task_id": task_id, "delegation": True},
            )
            self._new_task(
                t.db,
                call.agent_id,
                "child_agent_task",
                label,
                {
                    "task_id": task_id,
                    "mode": "private_child",
                    "child_agent_id": child_id,
                    "parent_agent_id": call.agent_id,
                    "preset": "private_child",
                    "workspace_mode": workspace_mode,
                    "message_id": msg["id"],
                    "label": label,
                },
                captured,
            )
            t.emit("agent_created", agent_id=child_id, creator_agent_id=call.agent_id, profile_preset="private_child")
        self._publish(
            "task_created", task_id, agent_id=call.agent_id, task_kind="child_agent_task", child_agent_id=child_id
        )
        supervision: dict[str, Any] = {
            "parent_agent_id": call.agent_id,
            "child_agent_id": child_id,
            "supervision_task_id": task_id,
            "workspace_mode": workspace_mode,
            "cleanup_owner": "supervision_task",
            "followup_target": "parent_supervisor",
        }
        try:
            await self._init_home(child_id, tpl)
            self._workspaces.view(child_id).ensure()  # inherits the parent's bindings (workspace spec §1.5)
            if workspace_mode == "worktree":
                supervision["worktree"] = await self._child_worktree(call.agent_id, child_id)
                supervision["cleanup_status"] = "retained"
        except (ToolFailure, OSError) as exc:
            reason = exc.error.message if isinstance(exc, ToolFailure) else f"{type(exc).__name__}: {exc}"
            self.runs.finish(task_id, ChildTurnOutcome("spawn_failed", error=reason))
            raise _fail(
                "spawn_agent_failed",
                f"starting the private child failed: {reason}"[:512],
                {"task_id": task_id, "preset": "private_child", "workspace_mode": workspace_mode},
                "Retry with workspace_mode inherit, or from a git repository workspace.",
            ) from None
        self.runs.start_run(task_id)
        return {
            "agent_id": child_id,
            "mode": "private_child",
            "task_handle": {"task_id": task_id, "task_kind": "child_agent_task", "status": "queued"},
            "child_agent_id": child_id,
            "supervision_task_id": task_id,
            "child_supervision": supervision,
            "model_resolution": resolution,
            "summary_text": f"delegated child {child_id} started under supervision task {task_id}",
        }

    async def _child_worktree(self, parent_id: str, child_id: str) -> dict[str, Any]:
        """An isolated git worktree of the parent's active workspace, activated for the child."""
        active = self._workspaces.view(parent_id).active()
        res = await self._workspaces.view(child_id).create_worktree(
            active["workspace_id"],
            f"holon-child-{child_id}",
            "HEAD",
            label=child_id,
            activate=True,
            on_existing="error",
        )
        if res.get("disposition") != "created" or not res.get("activated"):
            raise _fail(
                "tool_execution_failed",
                f"worktree for {child_id} not created: "
                f"{res.get('conflict') or res.get('activation_error') or res.get('disposition')}",
                {},
            )
        return {
            "execution_root_id": res["execution_root_id"],
            "worktree_path": res["worktree_path"],
            "branch": res["branch"],
            "workspace_id": active["workspace_id"],
        }


def _model_of_route(route: str | None) -> dict[str, Any] | None:
    """``{provider, model}`` of a turn's model ref (``provider@endpoint/model`` or ``provider/model``; the
    endpoint is kept in ``provider`` unless it is ``default``), or None when there is none or it does not parse."""
    if not route:
        return None
    from ...providers._refs import ModelRefError, parse_model_ref

    try:
        ref = parse_model_ref(route)
    except (ModelRefError, ValueError):
        return None
    provider = ref.provider if ref.endpoint == "default" else f"{ref.provider}@{ref.endpoint}"
    return {"provider": provider, "model": ref.model}


def _same_ref(a: str | None, b: str) -> bool:
    """True when two model refs name the same route (compared canonically)."""
    from ..models._providers import canonical_ref

    return bool(a) and canonical_ref(a or "") == canonical_ref(b)


def _provider_entry(catalog: ModelCatalog, provider: str) -> dict[str, Any] | None:
    """The ``ListModelProviders`` entry of ``provider`` (by id, route provider or family), or None."""
    try:
        entries = catalog.providers()
    except Exception as exc:  # noqa: BLE001 - an unreadable catalog: treated as unknown
        log.warning("model catalog providers could not be read (%s: %s)", type(exc).__name__, exc, exc_info=False)
        return None
    return next((e for e in entries if provider in (e.get("id"), e.get("route_provider"))), None)
