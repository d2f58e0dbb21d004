"""Agent turns: ``rt.turns`` runs the turn loop of turn-loop spec §1 for an agent.

Public API: ``Runtime.run_turn(message, agent=None, model=None, max_rounds=None) -> TurnResult``
(blocking, from the kernel thread) and ``await Runtime.async_run_turn(...)`` (runtime thread).
The model ref defaults to ``$HOLON_MODEL``; providers resolve through ``rt.providers``
(:class:`~holon_nb.runtime.models._providers.ProviderRegistry`)::

    from holon_nb.providers.scripted import ScriptedProvider, Step
    p = ScriptedProvider([Step.tool_use("call_1", "GetAgent", {}), Step.text("done")])
    rt.providers.register("scripted@default/scripted", p)
    r = rt.run_turn("what is your state?", model="scripted@default/scripted")
    r.terminal, r.final_text, r.rounds[0].tool_calls[0].envelope["status"]   # completed, done, success

Conversations are durable (:mod:`~holon_nb.runtime.agents._conversations`): a later turn of the same
agent — also after a kernel restart — starts from the agent's earlier turns (``history_since=`` limits
that to turns started at or after an instant: a cassette replay pass passes its own start).

``rt.turns.cancel(agent, reason)`` (any thread) stops a running turn at once when it waits on the
provider or on an approval question, else before its next provider or tool call; it settles ``aborted``.

Events on ``rt.events`` (turn-loop spec §1.11; each with ``turn_id`` and ``agent_id``): ``turn_started``,
``lineage_selected``, ``round_started{round}``, ``provider_attempt{round, record}``,
``assistant_round{round, blocks, stop_reason, usage, text}``, ``tool_call{round, tool_use_id, name,
input}``, ``tool_result{round, tool_use_id, name, receipt, envelope, is_error, duration_ms, status}``,
``text_delta{round, text}`` / ``tool_call_delta{round, index, id, name, arguments}`` (streaming
providers built by the factory), ``interjection{point, message_id, text}``, ``turn_terminal{terminal,
reason, final_text, usage, usage_totals, error}`` (``terminal`` is the spec's ``kind``: the event bus
reserves that name).

Seams (issue 5, cassettes): ``rt.turns.hooks`` (:class:`~holon_nb.runtime.turns._records.TurnHooks`:
backoff ``sleep``, ``new_id``, ``now``, ``monotonic``, ``wrap_provider``, ``wrap_tool_executor``),
or per turn ``await rt.turns.run(..., hooks=…, provider=…)``.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ...providers._lineage import LineageCandidate, LineageProvider
from ...providers.base import (
    Provider,
    ProviderToolSpec,
)
from ...tools._schema import input_schema
from ...tools._spec import Family, Profile
from ...tools.builtin.external._mcp import McpToolSpec
from ..agents._conversations import ConversationStore
from ..core._store import new_id, now_rfc3339
from ..models._providers import ProviderRegistry
from ._loop import TurnLoop
from ._records import TurnHooks, TurnResult

if TYPE_CHECKING:
    from ...tools._registry import Registry
    from ..core._store import Store
    from ..work._service import WorkService
    from ._ports import (
        AgentSummaries,
        ApprovalCheck,
        CallFinisher,
        EventSink,
        OpenCheck,
        ScrubberSource,
        ToolContexts,
        ToolServers,
        TurnLoopThread,
        TurnSettings,
        XSearchAvailable,
    )

__all__ = ["TurnService", "DEFAULT_SYSTEM_PROMPT", "UNCONFIGURED_TOOLS"]

log = logging.getLogger("holon_nb.turns")

#: The system prompt of a turn (``{agent_id}`` is filled in); set ``rt.turns.system_prompt_template`` to change it.
DEFAULT_SYSTEM_PROMPT = (
    "You are {agent_id}, an agent of holon_nb running inside a Jupyter kernel. Use the tools "
    "offered to inspect and change the workspace; when you are done, answer the operator in "
    "plain text."
)
#: Id prefixes whose records have a unique id column (:meth:`TurnService.unused_id`).
_ID_TABLES = {"turn": "turns", "tool": "tool_executions"}
#: Model-facing tools never advertised unless configured (agents spec §1.3 rule 1).
UNCONFIGURED_TOOLS = frozenset({"XSearch"})


class TurnService:
    """Runs agent turns for one runtime (``rt.turns``; module docstring).

    Built by the runtime (``Runtime.turns``, on first use) with the ports of :mod:`.ports`, and nothing else of
    the runtime; the turn loop and its tool executor use the same ports, read from this service.

    Args:
        store: The runtime's store (agents, turns, transcripts).
        work: The work plane (queued input, interjections, execution bindings; model calls' ``TurnWork``).
        registry: The tool registry (advertised tools; dispatch).
        settings: Returns the runtime's current settings (``prompt_budget_tokens``, ``providers``).
        workspace: The runtime's workspace (scripted providers resolve relative paths against it).
        scrubber: The runtime's current D6 scrubber.
        publish: The runtime's event sink (turn events).
        loop: The runtime's loop thread (``run_sync`` runs a turn there; ``cancel`` cancels it there).
        check_open: Raises once the runtime is closed or its loop died.
        x_search_available: Whether XSearch is configured (then advertised).
        approvals: The approval broker (asked before a model's call).
        finish_call: Records a call and renders its receipt as for a direct call.
        tool_context: The ``ToolContext`` of a model's call (with the turn's ``TurnWork``).
        agent_summary: The agent plane's summary (the closure of a turn's result).

    Attributes:
        conversations: Durable turns and transcripts.
        providers: Installed providers and model-ref resolution.
        hooks: Default injectable pieces of every turn.
        prompt_budget_tokens: Estimated-token budget of one request (``(chars + 3) // 4`` of its JSON);
            None means unlimited. Older turns of the agent's history are dropped first; a turn whose own
            messages do not fit ends ``baseline_over_budget`` (turn-loop spec §1.10).
        tool_output_budget_tokens: Receipt budget (turn-loop spec §1.7 rule 3); None means
            ``rt.settings.tool_output_budget_tokens``.
        configured_tools: Names of normally unconfigured tools to advertise (e.g. ``{"XSearch"}``).
        system_prompt_template: The system prompt (``{agent_id}`` filled in).
    """

    def __init__(
        self,
        *,
        store: Store,
        work: WorkService,
        registry: Registry,
        settings: Callable[[], TurnSettings],
        workspace: Path,
        scrubber: ScrubberSource,
        publish: EventSink,
        loop: TurnLoopThread,
        check_open: OpenCheck,
        x_search_available: XSearchAvailable,
        approvals: ApprovalCheck,
        finish_call: CallFinisher,
        tool_context: ToolContexts,
        agent_summary: AgentSummaries,
        tool_servers: ToolServers | None = None,
    ):
        self.store = store
        self._tool_servers = tool_servers
        self.work = work
        self.registry = registry
        self.scrubber = scrubber
        self.publish = publish
        self.approvals = approvals
        self.finish_call = finish_call
        self.tool_context = tool_context
        self.agent_summary = agent_summary
        self._settings = settings
        self._loop = loop
        self._check_open = check_open
        self._x_search_available = x_search_available
        self.conversations = ConversationStore(store, scrub=lambda value: scrubber().value(value))
        self.providers = ProviderRegistry(settings, workspace)
        self.hooks = TurnHooks()
        self.prompt_budget_tokens: int | None = None
        self.tool_output_budget_tokens: int | None = None
        self.configured_tools: frozenset[str] = frozenset()
        self.system_prompt_template = DEFAULT_SYSTEM_PROMPT
        self._active: dict[str, TurnLoop] = {}
        self._lock = threading.Lock()
        self._tools: dict[tuple[Any, ...], tuple[ProviderToolSpec, ...]] = {}
        self.orphans_aborted = self.conversations.abort_orphans(now_rfc3339())

    # ------------------------------------------------------------ running
    def run_sync(
        self,
        message: str,
        agent: str | None = None,
        model: str | None = None,
        max_rounds: int | None = None,
        **kwargs: Any,
    ) -> TurnResult:
        """Blocking :meth:`run` from any thread but the runtime's (what ``Runtime.run_turn`` calls); keyword
        arguments (``history_since``, ``hooks``, ``provider``, …) go to :meth:`run`."""
        self._check_open()
        return self._loop.call(
            functools.partial(self.run, message, agent=agent, model=model, max_rounds=max_rounds, **kwargs)
        )

    async def run(
        self,
        message: str,
        *,
        agent: str | None = None,
        model: str | None = None,
        max_rounds: int | None = None,
        work_item_id: str | None = None,
        provider: Any = None,
        hooks: TurnHooks | None = None,
        source_message_id: str | None = None,
        history_since: str | None = None,
        runtime_notes: tuple[str, ...] = (),
    ) -> TurnResult:
        """Run one turn on the runtime thread (turn-loop spec §1.3).

        Args:
            message: The operator's message (the turn's input).
            agent: The agent id; None means the default agent. A new id becomes a public named agent.
            model: The model ref; None means ``$HOLON_MODEL`` (or the default installed provider).
            max_rounds: Optional ``max_tool_rounds`` cap (≥ 1); None means no cap (decision 024).
            work_item_id: Attribute the message to this work item (the turn's binding then names it).
            provider: Use this provider for the turn instead of resolving ``model`` (wrapped in a lineage
                unless it already is one).
            hooks: Injectable pieces for this turn (default ``self.hooks``).
            source_message_id: Admit this queued message of the agent as the turn's input (a scheduler or
                InvokeAgent hands its message over; its authority becomes the turn's) instead of queuing
                ``message`` as a new operator prompt.
            history_since: RFC 3339 instant; when given, only the agent's turns started (wall clock) at or after
                it are the turn's history (:meth:`ConversationStore.history_turns`). A cassette replay passes the
                start of its replay pass (the notebook: the kernel session's start), so the turns of an earlier
                replay of the same cassette in the same home do not drift the request's ``history_prefix``.
            runtime_notes: Runtime texts the first request carries after the message (for example the turn
                budget warning of a run of several turns, agents spec §2 ``max_turns``).

        Returns:
            The :class:`TurnResult` (provider failures are ``aborted``/``deferred_to_fallback``/…, not raised).

        Raises:
            TypeError / ValueError: a non-string message, a bad agent id, a bad ``max_rounds``, a
                ``source_message_id`` that is not the agent's message, a malformed ``history_since``.
            ModelRefError: no model configured, or a malformed ref.
            RuntimeError: the agent already runs a turn.
            ScriptExpectationError: a scripted step's ``expect`` failed (after settling the turn).
        """
        from ..core._ids import AGENT_ID, DEFAULT_AGENT_ID

        self._check_open()
        if not isinstance(message, str):
            raise TypeError(f"message must be a str, got {type(message).__name__}")
        agent_id = agent or DEFAULT_AGENT_ID
        if not isinstance(agent_id, str) or not AGENT_ID.fullmatch(agent_id) or ".." in agent_id:
            raise ValueError(f"not an agent id: {str(agent_id)[:80]!r}")
        if max_rounds is not None and (
            not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1
        ):
            raise ValueError(f"max_rounds must be a positive int or None, got {max_rounds!r}")
        history = self.conversations.history_turns(agent_id, history_since)  # ValueError before anything runs
        hooks = hooks or self.hooks
        relay = _DeltaRelay()
        rec = self.store.agent(agent_id)
        if rec is None:
            self.store.ensure_agent(agent_id, Profile.PUBLIC_NAMED.value, name=agent_id)
        profile = Profile(rec["profile"]) if rec else Profile.PUBLIC_NAMED
        if provider is not None:
            ref = getattr(provider, "route_ref", None) or model or "custom@default/provider"
            lineage = (
                provider
                if callable(getattr(provider, "complete_turn_with_diagnostics", None))
                else self._lineage_over(provider, ref, hooks)
            )
        else:
            ref = self.providers.model_ref(model)
            lineage = self.providers.lineage(
                ref,
                sleep=hooks.sleep,
                now=hooks.now,
                monotonic=hooks.monotonic,
                wrap=hooks.wrap_provider,
                start_at=self._recovery_start(agent_id),
                delta_listener=relay,
            )
        if self._tool_servers is not None and profile is Profile.PUBLIC_NAMED:
            await self._tool_servers()  # MCP servers start lazily: a turn is one of their first uses (issue 29)
        loop = TurnLoop(
            self,
            message=message,
            agent_id=agent_id,
            model_ref=ref,
            max_rounds=max_rounds,
            hooks=hooks,
            tools=self.advertised_tools(profile, agent_id),
            profile=profile,
            system_prompt=self.system_prompt_template.format(agent_id=agent_id),
            work_item_id=work_item_id,
            provider=lineage,
            history=history,
            source_message_id=source_message_id,
            runtime_notes=tuple(runtime_notes),
        )
        with self._lock:
            if agent_id in self._active:
                raise RuntimeError(f"agent {agent_id} is already running turn {self._active[agent_id].turn_id}")
            self._active[agent_id] = loop
        relay.loop = loop
        try:
            loop.start()
            return await loop.run()
        finally:
            with self._lock:
                self._active.pop(agent_id, None)
            if provider is None:
                await self._close_built(lineage)

    async def _close_built(self, lineage: Any) -> None:
        """Close a head provider built for this turn (SDK clients hold pooled connections)."""
        head = getattr(getattr(lineage, "head", None), "provider", None)
        close = getattr(head, "aclose", None)
        if head is None or close is None or self.providers.is_installed(head):
            return
        with anyio.CancelScope(shield=True):
            try:
                await close()
            except Exception:  # noqa: BLE001 - closing must not hide the turn's outcome
                log.warning("closing provider %s failed", getattr(head, "route_ref", head), exc_info=True)

    @staticmethod
    def _lineage_over(provider: Provider, ref: str, hooks: TurnHooks) -> LineageProvider:
        head = hooks.wrap_provider(provider) if hooks.wrap_provider else provider
        name = ref.split("@", 1)[0].split("/", 1)[0]
        return LineageProvider(
            [LineageCandidate(getattr(head, "route_ref", None) or ref, name, head)],
            sleep=hooks.sleep,
            now=hooks.now,
            monotonic=hooks.monotonic,
        )

    def _recovery_start(self, agent_id: str) -> str | None:
        """A queued ``model_lineage_recovery`` message names the fallback this turn starts at (turn-loop spec §2.3);
        it is consumed here."""
        recoveries = [
            m
            for m in self.work.queued(agent_id)
            if m["kind"] == "internal_followup"
            and isinstance(m.get("origin"), dict)
            and m["origin"].get("subsystem") == "model_lineage_recovery"
        ]
        if not recoveries:
            return None
        newest = max(recoveries, key=lambda m: m["seq"])
        meta = (newest.get("metadata") or {}).get("provider_recovery") or {}
        self.work.process_message(newest["id"])
        ref = meta.get("fallback_model_ref")
        return ref if isinstance(ref, str) and ref else None

    # ------------------------------------------------------------ control
    def active(self, agent: str | None = None) -> TurnLoop | None:
        """The running turn of ``agent`` (default agent when None), or None."""
        from ..core._ids import DEFAULT_AGENT_ID

        with self._lock:
            return self._active.get(agent or DEFAULT_AGENT_ID)

    def cancel(self, agent: str | None = None, reason: str = "cancelled") -> bool:
        """Stop the agent's running turn (turn-loop spec §1.3); callable from any thread (the kernel's Stop button).

        Takes effect at once when the turn waits — on the provider (a request in flight or its retry
        backoff, also a server that never answers) or on an approval question (unanswered; it is
        withdrawn: ``approval_decided`` with source ``cancelled``) — and otherwise before its next provider
        call or tool call. A tool already running finishes. The turn settles ``aborted`` with ``reason``;
        calls of the open round that did not run get ``turn_cancelled`` results.

        Returns:
            True when a turn was running.
        """
        loop = self.active(agent)
        if loop is None:
            return False
        loop.state.request_cancel(reason)  # visible at once, also if the loop thread is busy
        thread = self._loop
        if thread.in_loop_thread() or thread.portal is None or not thread.alive:
            loop.request_cancel(reason)
        else:
            try:  # cancel scopes belong to the runtime's event loop: cancel them there
                thread.portal.call(loop.request_cancel, reason)
            except RuntimeError:  # the loop is stopping: its own cancellation settles the turn
                pass
        return True

    def interject(self, text: str, agent: str | None = None) -> dict[str, Any]:
        """Queue an operator interjection; a running turn drains it at its next safe point (turn-loop spec §1.8.4).

        Returns:
            The queued message.
        """
        from ..core._ids import DEFAULT_AGENT_ID

        return self.work.operator_prompt(agent or DEFAULT_AGENT_ID, text, priority="interject")

    # ------------------------------------------------------------ request assembly (turn-loop spec §1.2, §1.4, turn-loop spec §1.10)
    def default_new_id(self, prefix: str) -> str:
        """The runtime's id generator (``<prefix>_<15 hex>``)."""
        return new_id(prefix)

    def unused_id(self, generate: Any, prefix: str) -> str:
        """An id from an injected generator (``TurnHooks.new_id``) that no stored record uses yet.

        A cassette's seeded ids repeat when the same cassette is replayed again in the same home; an id the
        store already holds (``turns`` for ``turn``, ``tool_executions`` for ``tool``) is skipped by asking the
        generator again (seeded ids then take the next number, deterministically). A generator that keeps
        answering used ids falls back to :meth:`default_new_id` after 1,000 tries.
        """
        table = _ID_TABLES.get(prefix)
        for _ in range(1000):
            value = generate(prefix)
            if table is None or not self.store.query(f"SELECT 1 FROM {table} WHERE id=?", (value,)):
                return value
        log.warning("the injected id generator kept answering used %s ids; using a random one", prefix)
        return self.default_new_id(prefix)

    def advertised_tools(self, profile: Profile, agent_id: str | None = None) -> tuple[ProviderToolSpec, ...]:
        """The model-facing tools of ``profile`` with their source schemas (agents spec §1.3 rule 1), cached.

        The opt-in Notebook family (issue 28) is left out unless ``notebook_tools`` is on, or ``agent_id`` is
        one of ``notebook_tools_agents``."""
        configured = self.configured_tools | ({"XSearch"} if self._x_search_available() else set())
        settings = self._settings()
        notebook = settings.notebook_tools or (agent_id is not None and agent_id in settings.notebook_tools_agents)
        # an MCP server's tools change the registry (its generation) when the server starts (issue 29)
        key = (profile, id(self.registry), configured, notebook, self.registry.generation)
        tools = self._tools.get(key)
        if tools is None:
            tools = tuple(
                ProviderToolSpec(
                    s.name, s.description, s.schema if isinstance(s, McpToolSpec) else input_schema(s.input_model)
                )
                for s in self.registry.model_facing(profile)
                if (s.name not in UNCONFIGURED_TOOLS or s.name in configured)
                and (notebook or s.family is not Family.NOTEBOOK)
            )
            self._tools[key] = tools
        return tools

    def budget(self) -> int | None:
        """The prompt budget in effect (estimated tokens): :attr:`prompt_budget_tokens`, else
        ``rt.settings.prompt_budget_tokens``; None or ``<= 0`` means unlimited."""
        budget = self.prompt_budget_tokens
        if budget is None:
            budget = self._settings().prompt_budget_tokens
        return budget if budget is not None and budget > 0 else None


class _DeltaRelay:
    """Streaming deltas of a built provider → ``text_delta``/``tool_call_delta`` turn events (turn-loop spec §1.11)."""

    def __init__(self) -> None:
        self.loop: TurnLoop | None = None

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        if self.loop is not None and kind in ("text_delta", "tool_call_delta"):
            self.loop.emit(kind, round=self.loop.state.next_round, **payload)
