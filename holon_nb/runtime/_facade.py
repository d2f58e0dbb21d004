"""The headless runtime: ``Runtime`` owns the loop thread, the store and the services.

Example::

    with Runtime(home="/tmp/h") as rt:
        r = rt.call("ExecCommand", {"cmd": "echo hi"})
        print(r.receipt)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..render import ReceiptContext, Scrubber, dumps_envelope, model_receipt
from ..render._ansi import without_escapes
from ..tools._context import CallContext, resolve_shell
from ..tools._dispatch import EarlyStart, classify_exception, start_early
from ..tools._envelope import error_envelope
from ..tools._errors import RuntimeClosed, RuntimeStartupError, ToolCallError
from ..tools._registry import REGISTRY, Registry
from ..tools._spec import Profile
from .agents._approvals import ApprovalBroker
from .agents._plane import AgentPlane
from .core._context import RuntimeToolContext, ToolPlanes
from .core._events import EventBus, RuntimeEvent
from .core._ids import DEFAULT_AGENT_ID, check_call_types
from .core._loop import LoopThread
from .core._records import ExecutionRecords
from .core._result import ToolResult
from .core._rows import task_status_counts
from .core._settings import RuntimeSettings, resolve_home
from .core._store import Store, is_busy, new_id
from .core._writing import dispatch_call
from .housekeeping._budget import DiskBudget
from .housekeeping._records import REFUSED_KEEP_CHARS, refused_input_digest
from .images._service import ImagePlane
from .mcp import McpPlane, McpRegistry
from .memory._service import MemoryService
from .models._catalog import ModelCatalogService
from .tasks._agent import AgentTasks
from .tasks._early import EarlyCommand
from .tasks._homes import AgentHomes
from .tasks._service import TaskService
from .triggers import TriggerService
from .web import WebService
from .work._service import WorkService
from .workspaces._paths import path_labels
from .workspaces._service import WorkspaceService

if TYPE_CHECKING:
    from ..tools.builtin.notebook._port import NotebookPort
    from .agents._conversations import ConversationStore
    from .housekeeping import PruneReport
    from .models._providers import ProviderRegistry
    from .turns._records import TurnResult
    from .turns._service import TurnService
    from .work._agent import AgentWork

__all__ = ["Runtime", "DEFAULT_AGENT_ID"]

log = logging.getLogger("holon_nb.runtime")
_args_json = json.JSONEncoder(default=str).encode  # json.dumps(args, default=str), its encoder made once
_ROW_PAGES_BYTES = 8192  # the B-tree pages an execution record's insert rewrites besides its own (two 4 KiB pages)


class Runtime:
    """One holon_nb runtime: a loop thread, a SQLite store under the holon home, the tools.

    Args:
        home: The holon home; None means ``$HOLON_NB_HOME`` or ``<workspace>/.holon``.
        workspace: The default workspace (the notebook's directory); None means the cwd.
        settings: Runtime options; None means defaults (and the environment).
        registry: The tool registry (tests pass their own).

    Raises:
        RuntimeStartupError: when the loop thread cannot start, or the home's database stays locked by
            another process past ``settings.store_busy_timeout_s`` (the message names the cause).
    """

    # the plane services, built by :meth:`_compose`
    disk: DiskBudget
    records: ExecutionRecords
    workspaces: WorkspaceService
    memory: MemoryService
    model_catalog: ModelCatalogService
    images: ImagePlane
    agents: AgentPlane
    work: WorkService
    triggers: TriggerService
    tasks: TaskService
    approvals: ApprovalBroker
    mcp: McpPlane

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        settings: RuntimeSettings | None = None,
        registry: Registry | None = None,
    ):
        self.workspace = Path(workspace if workspace is not None else os.getcwd()).resolve()
        self.home = resolve_home(home, self.workspace)
        if not self.home.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            # as pytest's cache and venv do: a home made beside a notebook in a git repository (its
            # database, logs and artifacts) is never committed by accident
            (self.home / ".gitignore").write_text("# created by holon_nb: the holon home is local state\n*\n")
        self.settings = settings or RuntimeSettings()
        self.registry = REGISTRY if registry is None else registry
        self.events = EventBus()
        self._loop = LoopThread()
        self._closed = False
        self._pruned_at = 0.0
        self._lock = threading.Lock()
        #: the scrubber's cache: (os.environ's bytes, the settings it was checked against, scrubber, secret settings)
        self._scrub: tuple[dict[Any, Any], RuntimeSettings, Scrubber, tuple[Any, ...]] | None = None
        #: the kernel port of the Notebook tool family (issue 28): the notebook layer installs it on load
        self.notebook: NotebookPort | None = None
        self._profiles: dict[str, Profile] = {}  # agent id -> profile (async_call: read once per agent)
        self.web = WebService(lambda: self.settings)  # before the store: the scrubber asks it for web provider keys
        try:
            self.store = Store(
                self.home / "holon.sqlite3",
                busy_timeout_s=self.settings.store_busy_timeout_s,
                scrubber=self._scrubber,  # D6: rows are scrubbed as they are written
                on_loop_thread=self._loop.in_loop_thread,  # its waits there are counted (issue 25)
            )
        except sqlite3.OperationalError as exc:  # locked while its schema is created, or not a database
            raise self._startup_error(exc) from exc
        try:
            self._start()
        except sqlite3.OperationalError as exc:  # StoreBusy, or a file that is not a database
            self._abort_start()
            raise self._startup_error(exc) from exc
        except BaseException:
            self._abort_start()
            raise
        self._finalizer = weakref.finalize(self, LoopThread.stop, self._loop)
        self._auto_prune()

    def _startup_error(self, exc: sqlite3.OperationalError) -> RuntimeStartupError:
        return RuntimeStartupError(
            f"the holon home's database {self.home / 'holon.sqlite3'} could not be opened: {exc}"
            + (
                " — another kernel or process on this home holds its write lock; close it or wait, then "
                "try again (HolonNB.store_busy_timeout_s sets how long to wait)"
                if is_busy(exc)
                else ""
            )
        )

    def _abort_start(self) -> None:
        """Undo a half-done start: stop the loop thread if it runs, close the store."""
        self._closed = True
        try:
            self._loop.stop()
        finally:
            tasks = getattr(self, "tasks", None)
            if tasks is not None:
                tasks.forget_owner()
            self.store.close()

    def _start(self) -> None:
        self.store.ensure_agent(DEFAULT_AGENT_ID, Profile.PUBLIC_NAMED.value, name="default")
        self._labels_later = self._deferred_labels()  # every ToolResult's path labels, read when shown
        self._compose()
        self.interrupted_at_start = self.tasks.reconcile_after_restart()
        self._services = (self.workspaces, self.memory, self.agents, self.work, self.triggers, self.mcp)
        self._loop.start(on_stop=self._on_loop_stop)
        self.tasks.start_shell_snapshot(resolve_shell(None), str(self.workspace))  # in the background
        for service in self._services:
            service.start()

    def _compose(self) -> None:
        """The composition root: build every plane service, in dependency order, with only the ports it
        consumes (the protocols of its package's ``ports`` module); no service is changed once built."""
        loop, store, publish = self._loop, self.store, self.events.publish

        def settings() -> RuntimeSettings:  # read at each use: assigning new settings applies them
            return self.settings

        homes = AgentHomes(self.home)
        # issue 25 item 3a: the home's size cap holds while output is written, not only when pruned later
        self.disk = DiskBudget(lambda: self.settings.max_home_bytes, self._reclaim)
        self.records = ExecutionRecords(store, loop)  # each call's record, written off its path
        self.workspaces = WorkspaceService(
            store=store, workspace=self.workspace, agent_homes=homes, loop_call=loop.call
        )
        self.memory = MemoryService(
            store=store,
            home=self.home,
            workspace=self.workspace,
            settings=settings,
            loop=loop,
            scrub=lambda text: self._scrubber().text(text),
            workspaces=self.workspaces.tables,
        )
        self.model_catalog = ModelCatalogService(settings)
        self.images = ImagePlane(catalog=self.model_catalog, settings=settings)  # ViewImage / GenerateImage
        self.work = WorkService(
            store=store,
            clock=self.settings.clock,
            agent_homes=homes,
            memory=self.memory,
            workspaces=self.workspaces,
            scrubber=self._scrubber,
            publish=publish,
            loop=loop,
        )
        self.triggers = TriggerService(store, self.work, settings, loop.start_soon, loop.portal_call)
        self.tasks = TaskService(  # last: its results go to the work plane's queue, its commands see the triggers
            store=store,
            home=self.home,
            env=os.environ,  # the live mapping: a variable set in a cell after loading reaches the next command
            publish=publish,
            start_soon=loop.start_soon,
            settings=settings,
            scrubber=self._scrubber,
            results=self.work,
            agent_homes=homes,
            disk_grant=self.disk.grant,
            agent_env=self.triggers.env_for,  # HOLON_EXTERNAL_TRIGGER_URL (workspace spec §14.1 rule 3)
        )
        self.mcp = McpPlane(settings, self.workspace, self.home, loop.start_soon, self.images.add_preview)  # issue 29
        self.registry = McpRegistry(self.registry, self.mcp)
        self.approvals = ApprovalBroker(  # asks before a model's tool call (the turn loop calls check)
            settings=settings,
            registry=self.registry,
            publish=publish,
            scrubber=self._scrubber,
            tool_context=self.tool_context,
        )
        self.agents = AgentPlane(  # above the work, task and trigger planes; below the turns, built on first use
            store=store,
            home=self.home,
            work=self.work,
            workspaces=self.workspaces,
            agent_homes=homes,
            tasks=self.tasks,
            catalog=self.model_catalog,
            installed_models=lambda: self.turns.providers.installed(),  # rt.providers: the turn plane's registry
            triggers=self.triggers,
            publish=publish,
            subscribe=self.events.subscribe,
            start_soon=loop.start_soon,
            turns=lambda: self.turns,  # the agents -> turns call: a port filled here, never an upward import
        )
        self._tool_planes = ToolPlanes(  # what a call's ToolContext reaches
            workspaces=self.workspaces,
            work=self.work,
            agents=self.agents,
            memory=self.memory,
            images=self.images,
            model_catalog=self.model_catalog,
            web=lambda: self.web,
            triggers=self.triggers,
            agent_homes=homes,
            agent_tasks=self.agent_tasks,
            settings=settings,
            scrubber=self._scrubber,
            notebook=lambda: self.notebook,
        )

    @property
    def settings(self) -> RuntimeSettings:
        """The runtime's options; assigning new ones applies them (the store's busy timeout included)."""
        return self._settings

    @settings.setter
    def settings(self, value: RuntimeSettings) -> None:
        self._settings = value
        store = self.__dict__.get("store")
        if store is not None:
            store.busy_timeout_s = value.store_busy_timeout_s

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **kwargs: Any) -> Runtime:
        """Start a runtime (same as the constructor); use as a context manager."""
        return cls(home, **kwargs)

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def _on_loop_stop(self) -> None:
        for service in reversed(self._services):
            await service.close()
        await self.tasks.close()
        await self.memory.flush()  # D6: index with this process's secrets while it still knows them

    def agent_tasks(self, agent_id: str, early: EarlyCommand | None = None) -> AgentTasks:
        """The task service as agent ``agent_id`` sees it (``ctx.commands`` of the tools)."""
        return AgentTasks(self.tasks, agent_id, early)

    def tool_context(
        self, call: CallContext, *, work_view: Callable[[CallContext], AgentWork] | None = None
    ) -> RuntimeToolContext:
        """The ``ToolContext`` a call made as ``call`` sees (``call.agent_id``, profile, execution context);
        ``work_view`` builds its ``ctx.work`` (a model turn's calls), None: the work plane's view."""
        return RuntimeToolContext(self._tool_planes, call, work_view=work_view)

    # ------------------------------------------------------------ calling tools
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeClosed("this runtime is closed; start a new one (or %reload_ext holon_nb)")
        self._loop.check()

    def call(
        self,
        name: str,
        args: dict[str, Any] | str | None = None,
        agent: str | None = None,
        context: dict[str, Any] | None = None,
        *,
        raise_on_error: bool = False,
    ) -> ToolResult:
        """Call a tool through the one dispatch path and wait for its result.

        Args:
            name: Tool name (``"ExecCommand"``).
            args: Arguments as a dict, or JSON text (non-JSON text becomes ``{"_raw": text}``).
            agent: Calling agent id; None means the default public named agent. An id not seen
                before is recorded as a public named agent (letters, digits, ``_-.``, 1-64 chars).
            context: Execution context (D11), e.g. ``{"brief": "…"}``.
            raise_on_error: Raise :class:`ToolCallError` for an error envelope.

        Returns:
            The :class:`ToolResult`; tool failures are error envelopes, not exceptions.

        Raises:
            RuntimeClosed: after ``close()``.
            TypeError: when ``name`` or ``agent`` is not a string, or ``context`` is not a dict
                (a programming mistake, not a tool input: tool inputs never raise).
            ValueError: when ``agent`` is not a valid agent id (e.g. ``"../x"``).
            ToolCallError: only with ``raise_on_error=True`` and an error envelope.
            RuntimeError: when called from the runtime thread itself (use ``async_call``).
        """
        self._check_open()
        check_call_types(name, agent, context)
        early = self._start_early(name, args, agent, context)
        try:
            result = self._loop.call(self._call, name, {} if args is None else args, agent, context, early)
        except concurrent.futures.CancelledError:
            self._loop.check()  # the loop died under the call: RuntimeDied names why
            raise RuntimeClosed(f"the runtime closed while {name} was running; its command was stopped") from None
        finally:
            if early is not None and early.handle.abandon():  # a no-op once the call ran it
                log.info("%s: the command started early was stopped: its call did not run it", name)
        if raise_on_error and not result.ok:
            raise ToolCallError(result.envelope)
        return result

    def submit_call(
        self, name: str, args: dict[str, Any] | str | None = None, agent: str | None = None
    ) -> concurrent.futures.Future[ToolResult]:
        """:meth:`call` without waiting: a future of its :class:`ToolResult` whose ``cancel()`` stops the call as
        Ctrl-C stops :meth:`call` (a command in its foreground window is stopped; issue 29's Stop of a served
        call). Raises what :meth:`call` raises before the call starts."""
        self._check_open()
        check_call_types(name, agent, None)
        return self._loop.submit(self._call, name, {} if args is None else args, agent, None)

    async def async_call(
        self,
        name: str,
        args: dict[str, Any] | str | None = None,
        agent: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> ToolResult:
        """:meth:`call` as a coroutine, for code on the runtime thread (same arguments, result and errors)."""
        self._check_open()
        check_call_types(name, agent, context)
        return await self._call(name, args, agent, context)

    def _start_early(
        self, name: str, args: Any, agent: str | None, context: dict[str, Any] | None
    ) -> EarlyStart | None:
        """The first step of a direct call of a known agent, on the calling thread (:func:`start_early`); for
        a tool without one (all but ExecCommand), nothing is made."""
        profile = self._profiles.get(agent or DEFAULT_AGENT_ID)
        spec = self.registry.get(name)
        if spec is None or spec.start_early is None or profile is None or context or self._loop.in_loop_thread():
            return None
        call = CallContext(agent_id=agent or DEFAULT_AGENT_ID, profile=profile)
        return start_early(name, args, RuntimeToolContext(self._tool_planes, call), registry=self.registry)

    async def _call(
        self, name: str, args: Any, agent: str | None, context: dict[str, Any] | None, early: EarlyStart | None = None
    ) -> ToolResult:
        """:meth:`async_call` once its arguments were checked (:meth:`call` checked them on its own thread, and
        may have started its command there: ``early``)."""
        agent_id = agent or DEFAULT_AGENT_ID
        execution_id = new_id("tool")
        profile = self._profiles.get(agent_id)  # an agent's profile never changes once recorded
        if profile is None:
            try:
                rec = self.store.agent(agent_id)
                if rec is None:  # an operator naming a new agent in a direct call: a public named agent from now on
                    await self.store.write(
                        lambda: self.store.ensure_agent(agent_id, Profile.PUBLIC_NAMED.value, name=agent_id)
                    )
            except sqlite3.OperationalError as exc:  # locked past store_busy_timeout_s: an envelope, not a traceback
                if not is_busy(exc):
                    raise
                env = error_envelope(name, classify_exception(name, exc))
                return self._finish_call(env, args, agent_id, execution_id, 0)
            profile = Profile(rec["profile"]) if rec else Profile.PUBLIC_NAMED
            if rec is not None:
                self._profiles[agent_id] = profile
        call = CallContext(agent_id=agent_id, profile=profile, execution=dict(context or {}), execution_id=execution_id)
        started = time.monotonic()
        handle, admitted = (None, None) if early is None else (early.handle, early.parsed)
        ctx = RuntimeToolContext(self._tool_planes, call, early=handle)
        env = await dispatch_call(self.store, name, {} if args is None else args, ctx, self.registry, admitted)
        duration_ms = int((time.monotonic() - started) * 1000)
        return self._finish_call(env, args, agent_id, execution_id, duration_ms)

    def _finish_call(
        self,
        env: dict[str, Any],
        args: Any,
        agent_id: str,
        execution_id: str,
        duration_ms: int,
        budget_tokens: int | None = None,
    ) -> ToolResult:
        # budget_tokens: a model turn's receipt budget (turn-loop spec §1.7 rule 3); None = the setting
        budget = self.settings.tool_output_budget_tokens if budget_tokens is None else budget_tokens
        scrub = self._scrubber()
        stored_env = dumps_envelope(env)
        text_scrubbed = ["args", "receipt", "scrubbed_args"]  # the record's texts scrub.text went through
        if "\\u001b" in stored_env or not scrub.absent_from_json(stored_env):
            shown, env = env, without_escapes(env)  # colour codes stay only in what the HTML card renders
            display = scrub.value(shown)  # what the notebook shows: its card renders the colours
            model_view = display if shown is env else scrub.value(env)  # D6: scrubbed, and no escape codes
            stored_env = dumps_envelope(model_view)
        else:  # no escape code, no secret in it (its JSON says so): all three views are the envelope (issue 12)
            display = model_view = env
            text_scrubbed += ["envelope", "scrubbed_envelope"]  # scrub.text leaves this JSON text unchanged
        receipt, full, projected = model_receipt(
            model_view, self.registry, ReceiptContext(execution_id, budget), scrub.text
        )
        try:
            args_text = args if isinstance(args, str) else _args_json(args)
        except (TypeError, ValueError, RecursionError):
            args_text = f"<arguments of type {type(args).__name__} that cannot be recorded as JSON>"
        stored_args = scrub.text(args_text)
        if len(stored_args) > REFUSED_KEEP_CHARS and env.get("error", {}).get("kind") == "invalid_tool_input":
            stored_args = refused_input_digest(stored_args, args, scrub.text)  # issue 25 item 3b: not in full
            text_scrubbed.remove("args")  # a digest of scrubbed pieces: the write scrubs it whole
            text_scrubbed.remove("scrubbed_args")
        record = {
            # D6: nothing persisted keeps a secret; only the envelope returned below keeps inputs as given
            "id": execution_id,
            "agent_id": agent_id,
            "tool_name": env["tool_name"],
            "status": env["status"],
            "args": stored_args,
            "envelope": stored_env,
            "receipt": full,
            "duration_ms": duration_ms,
            "scrubbed_args": stored_args,
            "scrubbed_envelope": stored_env,
            # the write scrubs these texts again only if the scrubber changed meanwhile (issue 27 item 7)
            "scrubbed_by": (scrub, tuple(text_scrubbed)),
        }
        self.records.add(record)
        # the home's cap counts the database: its growth is asked for (twice: the WAL, then the database file;
        # with the B-tree pages a row rewrites), and a call that would pass the cap reclaims first (issue 25 3b)
        self.disk.grant(2 * (2 * (len(stored_args) + len(stored_env)) + len(full) + _ROW_PAGES_BYTES))
        if '"artifacts"' in stored_env and time.monotonic() - self._pruned_at > 30:
            self._auto_prune()
        return ToolResult(
            envelope=env,
            receipt=receipt,
            display_envelope=display,
            full_receipt=full,
            execution_id=execution_id,
            duration_ms=duration_ms,
            projected=projected,
            previews=tuple(self.images.take_preview(execution_id)),
            path_labels=self._labels_later,
            registry=self.registry,
        )

    def _deferred_labels(self) -> Callable[[], tuple[tuple[str, str], ...]]:
        """:meth:`path_labels` for a result to read when it is displayed (issue 12: a call whose result
        is never displayed never reads them); holds the runtime weakly, so a result kept in a
        notebook's namespace does not keep a dropped runtime alive. Made once, at start."""
        method = weakref.WeakMethod(self.path_labels)
        base = ((str(self.home), "<holon home>"), (str(self.workspace), ""))

        def labels() -> tuple[tuple[str, str], ...]:
            bound = method()
            return bound() if bound is not None else base  # the runtime is gone: its home and workspace

        return labels

    def path_labels(self) -> tuple[tuple[str, str], ...]:
        """``(absolute path, label)`` pairs human receipts show shorter.

        The holon home reads ``<holon home>``, the workspace's own paths are relative, and
        another attached workspace reads ``<workspace NAME>`` (its linked worktrees, kept
        beside it, ``<worktrees of NAME>``), so a scratch clone's temporary path never
        reaches a saved notebook's text.
        """
        try:  # read once per change of the home, not once per call (issue 12)
            return self.store.cached(("path_labels",), self._read_path_labels)
        except sqlite3.Error:  # a closed store: nothing to cache against
            return self._read_path_labels()

    def _read_path_labels(self) -> tuple[tuple[str, str], ...]:
        try:
            rows = self.workspaces.tables.workspaces()
        except Exception:  # a runtime still starting (no workspace plane yet) or a closed store
            rows = []
        return path_labels(self.home, self.workspace, rows)

    # ------------------------------------------------------------ disk (D13)
    def prune(
        self, *, dry_run: bool = False, max_home_bytes: int | None = None, max_age_days: float | None = None
    ) -> PruneReport:
        """Prune command artifacts and ended tasks' logs of the home by the settings' policy (D13); when the
        home is still over its cap, old execution records too (issue 25 item 3b).

        Args:
            dry_run: Report what would be removed; remove nothing (records are not weighed).
            max_home_bytes, max_age_days: Override ``settings.max_home_bytes`` / ``artifact_max_age_days``.

        Returns:
            A :class:`~holon_nb.runtime.housekeeping.PruneReport` (``.text()`` says what was removed).

        Raises:
            RuntimeClosed: after ``close()``.
            StoreBusy: another process held the home's write lock past ``store_busy_timeout_s``.
        """
        from .housekeeping import PrunePolicy
        from .housekeeping._records import prune_home_and_records

        self._check_open()
        cap = self.settings.max_home_bytes if max_home_bytes is None else max_home_bytes
        days = self.settings.artifact_max_age_days if max_age_days is None else max_age_days
        policy = PrunePolicy(max_home_bytes=cap, max_age_s=days * 86400 if days else None)
        report = prune_home_and_records(self.store, self.home, policy, dry_run=dry_run)
        self._pruned_at = time.monotonic()
        if not dry_run:
            self.disk.measured(report.home_bytes_after)
            if report.removed or report.records_removed:
                log.info("%s", report.text(limit=5))
        return report

    def _reclaim(self, target: int) -> int | None:
        """Prune the home down to ``target`` bytes for the disk budget (a write would pass the cap); return the
        home's size after, or None when the prune failed. Tries the write lock once on the loop thread (the
        loop goes on; the budget grants from its estimate meanwhile), waits at most a quarter second elsewhere."""
        from .housekeeping._records import truncate_wal

        try:
            with self.store.patience(0 if self._loop.in_loop_thread() else 0.25):
                # the WAL first: what it holds is not in the database file yet, and a measure taken with it
                # there would miss the database's growth when it is checkpointed
                self.store.flush_executions()  # the queued records are part of what is measured
                truncate_wal(self.store)
                return self.prune(max_home_bytes=target).home_bytes_after
        except Exception as exc:  # housekeeping never breaks a call; the budget grants from its estimate
            log.warning("pruning the holon home for its size cap failed: %s", exc, exc_info=not is_busy(exc))
            return None

    def _auto_prune(self) -> None:
        """Prune at start and, at most every 30 s, after a call that kept an artifact (never raises). On the loop
        thread each write of the prune tries the lock once, so another process holding it never holds up the
        loop: what could not be written is logged (a pruned log's record: TaskOutput then finds no log)."""
        try:
            with self.store.patience(0) if self._loop.in_loop_thread() else contextlib.nullcontext():
                self.prune()
        except Exception as exc:  # housekeeping never breaks a call
            log.warning("pruning the holon home failed: %s", exc, exc_info=not is_busy(exc))

    def _scrubber(self) -> Scrubber:
        """The D6 scrubber, rebuilt when the environment or the configured secrets may have changed."""
        env = getattr(os.environ, "_data", os.environ)  # the raw bytes mapping: comparing it is cheap
        settings = self._settings  # frozen: new settings are a new object
        cached = self._scrub
        if cached is not None and cached[1] is settings and cached[0] == env:
            return cached[2]
        key = (settings.extra_secrets, settings.providers, settings.web_search, settings.x_search)
        if cached is None or cached[0] != env or cached[3] != key:
            extra = (*settings.extra_secrets, *self._provider_key_values())
            cached = (dict(env), settings, Scrubber(extra=extra), key)  # copied only when it changed
        self._scrub = (cached[0], settings, cached[2], key)
        return cached[2]

    def scrubber(self) -> Scrubber:
        """The D6 scrubber of this runtime: secret-named environment variables, ``settings.extra_secrets``,
        and the variables that provider configuration names as keys (``auth.env``, whatever their names)."""
        return self._scrubber()

    def _provider_key_values(self) -> tuple[str, ...]:
        """Values of the variables named by ``auth.env`` in ``$HOLON_NB_PROVIDERS`` and ``settings.providers``."""
        from .models._catalog import provider_config

        names: list[str] = []
        for settings in provider_config(os.environ, self.settings.providers)["providers"].values():
            auth = settings.get("auth") if isinstance(settings, dict) else None
            env = auth.get("env") if isinstance(auth, dict) else None
            names += (
                [env]
                if isinstance(env, str)
                else [e for e in env if isinstance(e, str)]
                if isinstance(env, list)
                else []
            )
        keys = tuple(os.environ[n] for n in names if os.environ.get(n, "").strip())
        return keys + self.web.secret_values()  # web search and xAI keys, whatever their variables' names

    # ------------------------------------------------------------ agent turns (turn-loop spec §1)
    @functools.cached_property
    def turns(self) -> TurnService:
        """The turn service: runs the turn loop, holds ``providers`` and ``conversations`` (created on first use)."""
        from .turns._service import TurnService

        return TurnService(
            store=self.store,
            work=self.work,
            registry=self.registry,
            settings=lambda: self.settings,
            workspace=self.workspace,
            scrubber=self._scrubber,
            publish=self.events.publish,
            loop=self._loop,
            check_open=self._check_open,
            x_search_available=lambda: self.web.x_search_available(),
            approvals=self.approvals,
            finish_call=self._finish_call,
            tool_context=self.tool_context,
            agent_summary=self.agents.summary,
            tool_servers=self.mcp.start_all,
        )

    @property
    def providers(self) -> ProviderRegistry:
        """Providers turns may use: ``rt.providers.register("scripted@default/scripted", ScriptedProvider(...))``."""
        return self.turns.providers

    @property
    def conversations(self) -> ConversationStore:
        """Durable turns, transcripts and token totals of the agents."""
        return self.turns.conversations

    def run_turn(
        self, message: str, agent: str | None = None, model: str | None = None, max_rounds: int | None = None
    ) -> TurnResult:
        """Run one agent turn (model call → tool calls → results back → …) and wait for its end.

        Args:
            message: The operator's message.
            agent: The agent id; None means the default agent.
            model: Model ref ``provider@endpoint/model``; None means ``$HOLON_MODEL``.
            max_rounds: Optional cap on model rounds (``max_tool_rounds``); None means no cap.

        Returns:
            The ``TurnResult`` (``final_text``, ``terminal``, ``rounds`` with each call's envelope, ``usage``).

        Raises:
            RuntimeClosed: after ``close()``. See ``TurnService.run`` for the rest.
        """
        return self.turns.run_sync(message, agent=agent, model=model, max_rounds=max_rounds)

    def run_turns(
        self,
        message: str,
        agent: str | None = None,
        model: str | None = None,
        max_rounds: int | None = None,
        *,
        max_wakes: int = 5,
        timeout_s: float | None = None,
    ) -> list[TurnResult]:
        """Run a turn, then each turn its woken waits start, until the agent has nothing to wait for.

        After a turn that completes with a wait active (``WaitFor`` on a task, a timer, operator input…),
        this blocks until a queued message triggers one of the agent's waits (a task result, a timer
        tick, ``%holon say``, …) and runs a turn with that message as input; see
        :class:`~holon_nb.runtime.turns._follow.TurnFollower`.

        Args:
            message, agent, model, max_rounds: As :meth:`run_turn` (``max_rounds`` applies to each turn).
            max_wakes: Most turns started by wakes after the first (≥ 0).
            timeout_s: Longest wait for one wake, in seconds; None waits as long as a wait is active.

        Returns:
            Every turn's ``TurnResult``, oldest first.

        Raises:
            RuntimeClosed: after ``close()``; ValueError for a bad ``max_wakes``/``timeout_s``. See
            ``TurnService.run`` for the rest.
        """
        from .turns._follow import TurnFollower

        follower = TurnFollower(self, agent, max_wakes=max_wakes, timeout_s=timeout_s)
        return follower.run(message, model=model, max_rounds=max_rounds)

    async def async_run_turn(
        self, message: str, agent: str | None = None, model: str | None = None, max_rounds: int | None = None
    ) -> TurnResult:
        """The coroutine behind :meth:`run_turn`; runs on the runtime thread."""
        return await self.turns.run(message, agent=agent, model=model, max_rounds=max_rounds)

    # ------------------------------------------------------------ observing
    def subscribe(self, fn: Callable[[RuntimeEvent], None]) -> Callable[[], None]:
        """Subscribe to runtime events (called on the runtime thread); returns an unsubscribe function."""
        return self.events.subscribe(fn)

    def active_tasks(self) -> list[str]:
        """Ids of tasks that are queued, running or cancelling."""
        return self.tasks.active_ids()

    def wait_for_tasks(self, timeout: float | None = None) -> list[str]:
        """Block until every live task has ended or ``timeout`` seconds pass.

        Returns:
            The ids of tasks still running afterwards.
        """
        self._check_open()
        return self._loop.call(self.tasks.wait_idle, timeout)

    def messages(self, agent: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        """The agent's message queue (``TaskResult`` messages and others), oldest first."""
        return self.store.messages(agent or DEFAULT_AGENT_ID, kind)

    def status(self) -> dict[str, Any]:
        """A read-only summary: home, workspace, loop thread, task counts. Changes no state."""
        try:
            counts = task_status_counts(self.store.query)
        except sqlite3.Error:  # closed, or locked past the bound: status still answers
            counts = {}
        return {
            "home": str(self.home),
            "workspace": str(self.workspace),
            "loop_thread_alive": self._loop.alive,
            "closed": self._closed,
            # why the loop died, when it did (RuntimeDied); %reload_ext holon_nb recovers
            "loop_error": (
                f"{type(self._loop.death).__name__}: {self._loop.death}" if self._loop.death is not None else None
            ),
            "background_failures": self._loop.background_failures,
            "store": self.store.stats(),
            "model_facing_tools": len([s for s in self.registry if s.model_facing]),
            "registered_tools": len(self.registry),
            "tasks": counts,
            "agent": DEFAULT_AGENT_ID,
        }

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def close(self) -> None:
        """Stop live tasks, stop the loop thread and close the store. Safe to call twice.

        Calls still running in other threads are cancelled (their commands stopped);
        live tasks end ``interrupted`` with reason ``runtime_closed``.

        Raises:
            RuntimeError: when called on the runtime thread (from a subscriber callback).
        """
        if self._loop.in_loop_thread():
            raise RuntimeError(
                "Runtime.close() cannot run on the runtime thread (a subscriber callback): "
                "close the runtime from the kernel or another thread"
            )
        with self._lock:
            if self._closed:
                return
            self._closed = True
        dead = self._loop.death is not None or not self._loop.alive
        self._loop.stop()
        # the finalizer (stop the loop at exit) holds the loop, whose on_stop holds this runtime: detached,
        # a closed runtime is freed with everything it cached
        self._finalizer.detach()
        if dead:  # on_stop never ran on a dead loop: end what the runtime started from here
            self.tasks.close_sync()
        self.tasks.snapshots.wait_captures(2.0)  # a login shell is never killed: give a running capture time to end
        self.store.close()
