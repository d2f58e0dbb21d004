"""The turn loop: rounds of provider call → sequential tool calls → results back (turn-loop spec §1.3).

One :class:`TurnLoop` runs one turn of one agent on the runtime thread. It is built and driven
by :class:`~holon_nb.runtime.turns._service.TurnService`; see ``Runtime.run_turn`` for the public API.

Turn ends (turn-loop spec §1.8): a round without tool calls (``completed``, final text = that reply, with the
text of output-limit-truncated rounds before it, turn-loop spec §1.8.2); a silent ``WaitFor`` (settled in the
wait's own transaction); a committed ``CompleteWorkItem`` (same transaction); a ``WaitFor
delivery=final`` or deferred ``CompleteWorkItem`` followed by a valid text-only round (turn-loop spec §1.8.3, one
corrective retry, D10); a terminal transition (``PickWorkItem``, ``task_result_queued``); a round
made only of legacy ``Sleep``; ``max_tool_rounds``; provider failures (context length, pending
fallback, plain failure); cancellation; a prompt that cannot fit (``baseline_over_budget``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio

from ...providers.base import (
    MAX_OUTPUT_STOP_REASONS,
    AssistantBlocks,
    Message,
    ProviderToolSpec,
    TokenUsage,
    ToolUseBlock,
    TurnRequest,
    TurnResponse,
    UserText,
    UserToolResults,
    to_dict,
)
from ...providers.scripted import ScriptExpectationError
from ...tools._spec import Profile
from ..core._store import now_rfc3339
from ._calls import (
    CallEffect,
    Obligation,
    ToolCallRecord,
    TurnCall,
    TurnCancelled,
    call_effect,
    find_cause,
    outcome_of,
    report_candidate,
    unique_call_ids,
)
from ._prompts import (
    CONTEXT_LENGTH_NOTICE,
    CONTINUE_PROMPT,
    CORRECTIVE_PROMPTS,
    MAX_OUTPUT_RECOVERIES,
    WORK_ITEM_UPDATES,
    interjection_text,
)
from ._records import RoundRecord, TurnHooks, TurnResult
from ._requests import RequestBuilder
from ._state import TurnState
from ._tools import TurnToolExecutor

log = logging.getLogger("holon_nb.turns")

if TYPE_CHECKING:
    from ._service import TurnService

__all__ = ["TurnLoop"]


class TurnLoop:
    """One turn (module docstring). Construct through :class:`~holon_nb.runtime.turns._service.TurnService`.

    The loop's own attributes are what the turn was given (message, agent, model, tools, hooks, provider,
    history); what changes while it runs is on :attr:`state` (a :class:`~.state.TurnState`).

    Used by the tool executor: ``turn_id``, ``agent_id``, ``profile``, ``exposed``, ``model_route``,
    ``tool_output_budget``, ``state`` (``binding``, ``authority``, ``cancel_requested``), :meth:`new_id`,
    :meth:`interruptible`, :meth:`settle_in`.
    """

    def __init__(
        self,
        service: TurnService,
        *,
        message: str,
        agent_id: str,
        model_ref: str,
        max_rounds: int | None,
        hooks: TurnHooks,
        tools: tuple[ProviderToolSpec, ...],
        profile: Profile,
        system_prompt: str,
        work_item_id: str | None = None,
        provider: Any = None,
        history: list[list[Message]] | None = None,
        source_message_id: str | None = None,
        runtime_notes: tuple[str, ...] = (),
    ):
        self.service = service  # the turn plane's ports are read from it (its store, work plane, event sink…)
        self.message = message
        self.agent_id = agent_id
        self.model_ref = model_ref
        self.max_rounds = max_rounds
        self.hooks = hooks
        self.tools = tools
        self.exposed = frozenset(t.name for t in tools)
        self.profile = profile
        self.system_prompt = system_prompt
        self.work_item_id = work_item_id
        self.source_message_id = source_message_id
        self.runtime_notes = tuple(runtime_notes)  # runtime texts for the first request (a turn budget warning)
        self.provider = provider
        self.history = list(history or [])
        self.tool_output_budget = service.tool_output_budget_tokens
        self.turn_id = self.new_id("turn")
        #: everything that changes while the turn runs (rounds, obligation, counters, cancel request, outcome)
        self.state = TurnState()
        self.executor = TurnToolExecutor(
            self,
            store=service.store,
            work=service.work,
            registry=service.registry,
            approvals=service.approvals,
            finish_call=service.finish_call,
            scrubber=service.scrubber,
            tool_context=service.tool_context,
        )
        run = self.executor.execute_call
        self.run_tool = hooks.wrap_tool_executor(run) if hooks.wrap_tool_executor else run
        #: builds each round's request and keeps what it caches between them (recap lines, estimates)
        self.requests = RequestBuilder(self, budget=service.budget, scrub=lambda text: service.scrubber().text(text))
        self._waits: set[anyio.CancelScope] = set()

    # ------------------------------------------------------------ small services
    def new_id(self, prefix: str) -> str:
        """An id ``<prefix>_<15 hex>`` from the injectable generator (never one a stored turn or tool execution
        already has: :meth:`TurnService.unused_id`)."""
        if self.hooks.new_id:
            return self.service.unused_id(self.hooks.new_id, prefix)
        return self.service.default_new_id(prefix)

    def now(self) -> str:
        """An RFC 3339 timestamp from the injectable clock."""
        if self.hooks.now is not None:
            return self.hooks.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return now_rfc3339()

    @property
    def model_route(self) -> str:
        """The route ref tools see (ApplyPatch picks its surface from it)."""
        return getattr(self.provider, "route_ref", None) or self.model_ref

    # ------------------------------------------------------------ cancellation (turn-loop spec §1.3)
    @contextmanager
    def interruptible(self) -> Iterator[anyio.CancelScope]:
        """A cancel scope around a wait that :meth:`request_cancel` interrupts (the provider request with its
        backoff, an approval question). Runtime thread only; after the block, ``scope.cancelled_caught`` tells
        whether the wait was interrupted."""
        with anyio.CancelScope() as scope:
            self._waits.add(scope)
            try:
                if self.state.cancel_requested:
                    scope.cancel()
                yield scope
            finally:
                self._waits.discard(scope)

    def request_cancel(self, reason: str) -> None:
        """Stop the turn (runtime thread): the flag is checked before each provider call and tool call, and a
        wait in progress (:meth:`interruptible`) is cancelled at once. The turn settles ``aborted`` with
        ``reason``."""
        self.state.request_cancel(reason)
        for scope in list(self._waits):
            scope.cancel()

    def emit(self, event_kind: str, /, **data: Any) -> None:
        """Publish a turn event on ``rt.events`` (turn-loop spec §1.11)."""
        self.service.publish(event_kind, None, turn_id=self.turn_id, agent_id=self.agent_id, **data)

    def settle_in(self, db: Any, kind: str, final_text: str | None, reason: str | None) -> bool:
        """Write this turn's one terminal record inside the open transaction ``db`` (turn-loop spec §1.1)."""
        if self.state.settled:
            return False
        done = self.service.conversations.settle(db, self.turn_id, kind, final_text, reason, self.now())
        if done:
            self.state.settle(kind, final_text, reason)
        return done

    # ------------------------------------------------------------ start
    def start(self) -> None:
        """Admit the message, bind the execution, persist the running turn (runtime thread or not)."""
        work = self.service.work
        if self.source_message_id:
            msg, owner = self._admit_queued(self.source_message_id)
        else:
            msg = work.enqueue(
                self.agent_id,
                "operator_prompt",
                self.message,
                origin={"kind": "operator"},
                authority=self.state.authority,
                work_item_id=self.work_item_id,
                turn_id=None,
            )
            owner = work.process_message(msg["id"]).get("owner") or {}
        self.state.binding = {
            "turn_id": self.turn_id,
            "source_message_id": msg["id"],
            "activation_id": self.new_id("act"),
            "ephemeral": False,
        }
        if owner.get("kind") == "work_item" and owner.get("work_item_id"):
            self.state.binding["work_item_id"] = owner["work_item_id"]
        work.begin_execution(self.agent_id, self.state.binding)
        fingerprint = (
            "sha256:"
            + hashlib.sha256(
                json.dumps(to_dict(list(self.tools)), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
                    "utf-8"
                )
            ).hexdigest()
        )
        now = self.now()
        with self.service.store.tx() as db:
            self.state.turn_index = self.service.conversations.begin(
                db,
                turn_id=self.turn_id,
                agent_id=self.agent_id,
                model_ref=self.model_ref,
                source_message_id=msg["id"],
                now=now,
                detail={"tools_fingerprint": fingerprint, "binding": self.state.binding},
            )
            self.service.conversations.append(
                db,
                agent_id=self.agent_id,
                turn_id=self.turn_id,
                round=0,
                messages=[(UserText(self.message), None)],
                now=now,
            )
        self.emit(
            "turn_started",
            turn_index=self.state.turn_index,
            model_ref=self.model_ref,
            message=self.message,
            source_message_id=msg["id"],
        )
        self._drain_pre_turn()
        self.emit(
            "lineage_selected", model_ref=self.model_ref, tools_fingerprint=fingerprint, tool_count=len(self.tools)
        )

    def _admit_queued(self, message_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Admit an already queued message as this turn's input (its authority becomes the turn's).

        Raises:
            ValueError: when the message is unknown or belongs to another agent.
        """
        row = self.service.work.queue.load(self.service.work.reader(), message_id)
        if row is None or row["agent_id"] != self.agent_id:
            raise ValueError(f"message {message_id} is not a message of agent {self.agent_id}")
        self.state.authority = row.get("authority") or self.state.authority
        if row["status"] == "queued":
            owner = self.service.work.process_message(message_id).get("owner") or {}
        else:  # admitted by the caller already: bind to the owner it names
            wid = row.get("work_item_id")
            owner = {"kind": "work_item", "work_item_id": wid} if wid else {"kind": "agent_lifecycle"}
        return row, owner

    # ------------------------------------------------------------ the loop (turn-loop spec §1.3)
    async def run(self) -> TurnResult:
        """Run rounds until the turn settles; return its :class:`TurnResult`.

        Raises:
            ScriptExpectationError: a scripted step's ``expect`` failed (the turn is settled ``aborted`` first).
            anyio cancellation: re-raised after settling ``aborted`` (reason ``cancelled``).
        """
        try:
            return await self._rounds()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                self._close_open_round("turn_cancelled", "the turn was cancelled before this call ran")
                self._finish("aborted", self.state.last_text(), "cancelled")
            raise
        finally:
            self.service.work.end_execution(self.agent_id, self.turn_id)

    async def _rounds(self) -> TurnResult:
        """Run rounds until one settles the turn.

        Each round is four named steps: :meth:`_gate` (cancel request, round cap, interjections for a
        continuation), :meth:`_request_round` (build the request, ask the provider, record its response), then the
        step its response calls for: :meth:`_obligation_round` while a text-only reply is owed,
        :meth:`_text_round` for a reply without tool calls, :meth:`_tool_round` otherwise. A step returns the
        settled :class:`TurnResult`, or None to go on with the next round.
        """
        while True:
            result = self._gate()
            if result is not None:
                return result
            requested = await self._request_round(self.state.next_round)
            if isinstance(requested, TurnResult):
                return requested
            rnd, response = requested
            calls = response.tool_uses
            if self.state.obligation is not None:
                result = await self._obligation_round(rnd, calls)
            elif not calls:
                result = self._text_round(rnd, response)
            else:
                result = await self._tool_round(rnd, calls)
            if result is not None:
                return result

    def _gate(self) -> TurnResult | None:
        """Before a round: settle on a cancel request or past the round cap; drain interjections for a continuation."""
        if self.state.cancel_requested:
            return self._finish("aborted", self.state.last_text(), self.state.cancel_requested)
        number = self.state.next_round
        if self.max_rounds and number > self.max_rounds:
            cap = f"Stopped after reaching the maximum tool loop depth ({self.max_rounds})."
            return self._finish("aborted", cap, "max_tool_rounds")
        if number > 1 and self.state.obligation is None and self.state.rounds:
            self._drain_interjections("before_provider_continuation", self.state.rounds[-1], persist=True)
        return None

    async def _request_round(self, number: int) -> TurnResult | tuple[RoundRecord, TurnResponse]:
        """Round *number*'s provider request: the recorded round and its response, or the turn settled.

        The turn settles ``baseline_over_budget`` when no request fits the prompt budget, ``aborted`` when a
        cancel interrupts the request, and by :meth:`_provider_failed` when the provider fails.
        """
        request = self.requests.build()
        if request is None:
            return self._finish("baseline_over_budget", "", "prompt_budget_exceeded")
        self.emit("round_started", round=number)
        response = timeline = None
        with self.interruptible() as wait:
            try:
                response, timeline = await self._complete(request)
            except Exception as exc:  # noqa: BLE001 - every provider failure settles the turn (turn-loop spec §1.8)
                if self.state.cancel_requested and wait.cancel_called:
                    return self._finish("aborted", self.state.last_text(), self.state.cancel_requested)
                return self._provider_failed(exc, number)
        if response is None:  # cancel() interrupted the provider request (or its backoff)
            return self._finish("aborted", self.state.last_text(), self.state.cancel_requested or "cancelled")
        blocks, renamed = unique_call_ids(response.blocks)
        if renamed:
            log.warning(
                "round %d: the model repeated tool-call ids; renamed %s",
                number,
                ", ".join(f"{old}->{new}" for old, new in renamed),
            )
            response = dataclasses.replace(response, blocks=blocks)
        rnd = RoundRecord(
            number,
            response.blocks,
            response.text,
            response.stop_reason,
            response.usage,
            timeline=timeline.to_dict() if timeline is not None else None,
        )
        self._record_response(rnd, response, timeline)
        return rnd, response

    def _text_round(self, rnd: RoundRecord, response: TurnResponse) -> TurnResult | None:
        """A reply without tool calls: go on for queued interjections or a cut-off reply, else complete the turn."""
        if self._drain_interjections("after_provider_round", rnd):
            self._push(rnd)
            return None
        if response.stop_reason in MAX_OUTPUT_STOP_REASONS and self.state.recoveries < MAX_OUTPUT_RECOVERIES:
            self.state.note_truncated(rnd.text)
            rnd.follow_ups.append(("max_output_tokens", CONTINUE_PROMPT))
            self._push(rnd)
            return None
        self._push(rnd)
        return self._finish(
            "completed",
            self.state.completed_text(rnd.text),
            "end_turn",
        )

    async def _tool_round(self, rnd: RoundRecord, calls: list[ToolUseBlock]) -> TurnResult | None:
        """Run a round's tool calls; settle when a call ends the turn or every call yields, else go on."""
        self._drain_interjections("before_tool_execution", rnd)
        effects = await self._run_calls(rnd, calls)
        ends = any(e.ends_turn for e in effects)
        obligation = next((e.obligation for e in effects if e.obligation), None)
        if not ends and obligation is None:
            self._drain_interjections("after_tool_results", rnd)
        self._push(rnd)
        if self.state.settled:
            return self._result()
        if obligation is not None:
            return None
        if ends:
            effect = next(e for e in effects if e.ends_turn)
            if effect.reason is not None:
                return self._finish(
                    "completed", effect.final_text if effect.final_text is not None else rnd.text, effect.reason
                )
            return self._finish("completed", rnd.text, "terminal_transition")
        if effects and all(e.yielding for e in effects) and not rnd.follow_ups:
            durations = [(c.envelope.get("result") or {}).get("duration_ms") for c in rnd.tool_calls]
            self.state.sleep_duration_ms = next((d for d in reversed(durations) if isinstance(d, int) and d > 0), None)
            return self._finish("completed", rnd.text or self.state.last_text(), "sleep")
        return None

    # ------------------------------------------------------------ provider
    async def _complete(self, request: TurnRequest) -> tuple[TurnResponse, Any]:
        provider = self.provider
        with_diag = getattr(provider, "complete_turn_with_diagnostics", None)
        if callable(with_diag):
            return await with_diag(request)
        return await provider.complete_turn(request), None

    def _record_response(self, rnd: RoundRecord, response: TurnResponse, timeline: Any) -> None:
        self.state.add_usage(response.usage, timeline.aggregated_token_usage if timeline is not None else None)
        with self.service.store.tx() as db:
            self.service.conversations.add_usage(
                db, self.agent_id, self.turn_id, response.input_tokens, response.output_tokens
            )
            self.service.conversations.append(
                db,
                agent_id=self.agent_id,
                turn_id=self.turn_id,
                round=rnd.round,
                messages=[(AssistantBlocks(rnd.blocks), None)],
                now=self.now(),
            )
        self._emit_attempts(rnd.round, timeline)
        self.emit(
            "assistant_round",
            round=rnd.round,
            blocks=to_dict(rnd.blocks),
            stop_reason=rnd.stop_reason,
            usage=rnd.usage.to_dict(),
            text=rnd.text,
        )

    def _emit_attempts(self, number: int, timeline: Any) -> None:
        if timeline is None:
            return
        for record in timeline.attempts:
            self.emit("provider_attempt", round=number, record=record.to_dict())

    def _provider_failed(self, exc: Exception, number: int) -> TurnResult:
        timeline = getattr(exc, "timeline", None)
        self._emit_attempts(number, timeline)
        if timeline is not None:
            self.state.add_usage(TokenUsage(), timeline.aggregated_token_usage)  # failed attempts count as well
        expectation = find_cause(exc, ScriptExpectationError)
        self.state.error = str(exc)
        if getattr(exc, "code", None) == "context_length_exceeded":
            result = self._finish("aborted", CONTEXT_LENGTH_NOTICE, "context_length_exceeded")
        elif fallback := getattr(exc, "pending_fallback_model_ref", None):  # a LineageFailed
            result = self._defer_to_fallback(exc, str(fallback), number)
        else:
            result = self._finish("aborted", self.state.last_text(), "provider_error")
        if expectation is not None:
            raise expectation
        return result

    def _defer_to_fallback(self, exc: Exception, fallback: str, number: int) -> TurnResult:
        side_effects = bool(self.state.rounds) or bool(self.state.last_text())
        kind = "provider_failed_needs_recovery" if side_effects else "deferred_to_fallback"
        notice = (
            f"The model provider failed for this turn ({exc}). The runtime queued a recovery turn that "
            f"continues with the fallback model {fallback}."
        )
        self.service.work.enqueue(
            self.agent_id,
            "internal_followup",
            notice,
            origin={"kind": "system", "subsystem": "model_lineage_recovery"},
            authority="runtime_instruction",
            priority="next",
            metadata={
                "provider_recovery": {
                    "fallback_model_ref": fallback,
                    "source_turn_id": self.turn_id,
                    "source_message_id": self.state.binding.get("source_message_id"),
                    "source_terminal_kind": kind,
                    "source_round": number,
                }
            },
            turn_id=self.turn_id,
        )
        return self._finish(kind, notice, "provider_lineage_failed")

    # ------------------------------------------------------------ tool calls (turn-loop spec §1.5)
    async def _run_calls(self, rnd: RoundRecord, calls: list[ToolUseBlock]) -> list[CallEffect]:
        self.state.open_batch(rnd, calls)
        effects: list[CallEffect] = []
        stopped_by: ToolUseBlock | None = None
        for block in calls:
            if stopped_by is not None:
                outcome = self.executor.synthetic(
                    block,
                    "not_executed_after_terminal_transition",
                    f"{block.name} was not executed: {stopped_by.name} ended or deferred the turn earlier in this "
                    f"round (batch stopped by {stopped_by.name})",
                    {"tool_name": block.name, "stopped_by": stopped_by.name, "stopped_by_tool_use_id": stopped_by.id},
                )
                status = "not_executed"
            elif self.state.cancel_requested:
                outcome = self.executor.synthetic(
                    block,
                    "turn_cancelled",
                    f"{block.name} was not executed: the turn was cancelled",
                    {"tool_name": block.name, "reason": self.state.cancel_requested},
                )
                status = "not_executed"
            else:
                index = rnd.blocks.index(block)
                report = report_candidate(rnd.blocks, index) if block.name == "CompleteWorkItem" else None
                call = TurnCall(block.id, block.name, block.input, rnd.round, rnd.stop_reason, report, block.kind)
                self.emit("tool_call", round=rnd.round, tool_use_id=block.id, name=block.name, input=block.input)
                try:
                    outcome = outcome_of(await self.run_tool(call))
                    status = outcome.envelope.get("status", "error")
                except TurnCancelled as stop:  # cancelled while the user was asked for approval
                    outcome = self.executor.synthetic(
                        block,
                        "turn_cancelled",
                        f"{block.name} was not executed: the turn was cancelled before it ran ({stop.reason})",
                        {"tool_name": block.name, "reason": stop.reason},
                    )
                    status = "not_executed"
            record = ToolCallRecord(
                block.id,
                block.name,
                block.input,
                outcome.envelope,
                outcome.receipt,
                outcome.is_error,
                outcome.execution_id,
                outcome.duration_ms,
                status,
                outcome.display_envelope or outcome.envelope,
            )
            rnd.tool_calls.append(record)
            effect = call_effect(outcome.envelope) if status != "not_executed" else CallEffect()
            if effect.obligation:
                self.state.obligation = self.executor.obligation_for(block.id) or Obligation(
                    kind=effect.obligation, tool_use_id=block.id, execution_id=outcome.execution_id or ""
                )
            if effect.batch_stop and stopped_by is None:
                stopped_by = block
            effects.append(effect)
            if block.name in WORK_ITEM_UPDATES and status in ("success", "deferred"):
                self.state.last_work_update_round = rnd.round
            self.emit(
                "tool_result",
                round=rnd.round,
                tool_use_id=block.id,
                name=block.name,
                receipt=outcome.receipt,
                envelope=record.display_envelope,
                is_error=outcome.is_error,
                duration_ms=outcome.duration_ms,
                status=status,
            )
        self.state.close_batch()
        return effects

    # ------------------------------------------------------------ text-only protocol (turn-loop spec §1.8.3)
    async def _obligation_round(self, rnd: RoundRecord, calls: list[ToolUseBlock]) -> TurnResult | None:
        ob = self.state.obligation
        assert ob is not None
        self.state.obligation_rounds.add(rnd.round)
        text = rnd.text.strip()
        if calls:
            violation = "tool_call_not_allowed"
        elif not text:
            violation = "empty_final_brief" if ob.kind == "final_brief" else "empty_completion_report"
        else:
            violation = None
        deferred = self.state.deferred_record(ob)
        if violation is None:
            ok, env = await self.executor.commit(ob, text)
            self.state.take_obligation()
            if deferred is not None:
                deferred.status = "success" if ok else "interrupted"
                deferred.settled_envelope = env
            self._push(rnd)
            if ok:
                if not self.state.settled:  # a replayed commit: nothing was settled in a transaction
                    return self._finish("completed", text, "text_only_round")
                return self._result()
            reason = ((env or {}).get("error") or {}).get("details", {}).get("reason") or "settlement_failed"
            # nothing was published: the refused brief (or report) is not this turn's final text (issue 25 item 6)
            return self._finish("aborted", "", f"{ob.kind}_interrupted:{reason}")
        for block in calls:
            outcome = self.executor.synthetic(
                block,
                "tool_call_not_allowed",
                f"{block.name} was not executed: the runtime is waiting for a text-only reply "
                f"({CORRECTIVE_PROMPTS[ob.kind][0]})",
                {"tool_name": block.name, "reason": violation},
            )
            rnd.tool_calls.append(ToolCallRecord.not_executed(block, outcome))
        if not ob.corrective_sent:
            ob.corrective_sent = True
            rnd.follow_ups.append(CORRECTIVE_PROMPTS[ob.kind])
            self._push(rnd)
            return None
        env = self.executor.interrupt(ob, violation)
        self.state.take_obligation()
        if deferred is not None:
            deferred.status, deferred.settled_envelope = "interrupted", env
        self._push(rnd)
        return self._finish("aborted", self.state.last_text(), f"{ob.kind}_protocol_abandoned:{violation}")

    # ------------------------------------------------------------ interjections (turn-loop spec §1.8.4)
    def _take_interjections(self, point: str, before_turn: bool = False) -> list[str]:
        """Admit the agent's queued operator interjections (oldest first); return their texts for the model."""
        rows = sorted(
            (
                m
                for m in self.service.work.queued(self.agent_id)
                if m["kind"] == "operator_prompt" and m.get("priority") == "interject"
            ),
            key=lambda m: m["seq"],
        )
        texts = []
        for row in rows:
            try:
                self.service.work.process_message(row["id"])
            except Exception:  # noqa: BLE001 - consumed by someone else meanwhile
                continue
            texts.append(interjection_text(row["id"], str(row["text"]), before_turn=before_turn))
            self.emit("interjection", point=point, message_id=row["id"], text=str(row["text"]))
        return texts

    def _drain_pre_turn(self) -> None:
        """Interjections queued while no turn ran (``%holon say``) open this turn: they go into its first request,
        after the runtime's own notes for it. The interjections join the transcript; the notes (a turn budget
        warning) belong to this turn's requests only, so later turns' history does not repeat them."""
        said = self._take_interjections("turn_start", before_turn=True)
        self.state.pre_turn = [*self.runtime_notes, *said]
        if said:
            with self.service.store.tx() as db:
                self.service.conversations.append(
                    db,
                    agent_id=self.agent_id,
                    turn_id=self.turn_id,
                    round=0,
                    messages=[(UserText(t), "pre_turn") for t in said],
                    now=self.now(),
                )

    def _drain_interjections(self, point: str, rnd: RoundRecord, persist: bool = False) -> bool:
        texts = self._take_interjections(point)
        if not texts:
            return False
        rnd.follow_ups += [("interjection", text) for text in texts]
        if persist and texts:
            with self.service.store.tx() as db:
                self.service.conversations.append(
                    db,
                    agent_id=self.agent_id,
                    turn_id=self.turn_id,
                    round=rnd.round,
                    messages=[(UserText(t), "interjection") for t in texts],
                    now=self.now(),
                )
        return bool(texts)

    def _push(self, rnd: RoundRecord) -> None:
        """Add the round to the turn and store its results and follow-ups in the transcript."""
        self.state.push(rnd)
        messages: list[tuple[Message, str | None]] = []
        if rnd.tool_calls:
            messages.append((UserToolResults(tuple(c.block() for c in rnd.tool_calls)), None))
        messages += [(UserText(text), reason) for reason, text in rnd.follow_ups]
        if messages:
            with self.service.store.tx() as db:
                self.service.conversations.append(
                    db, agent_id=self.agent_id, turn_id=self.turn_id, round=rnd.round, messages=messages, now=self.now()
                )

    def _close_open_round(self, kind: str, message: str) -> None:
        """On cancellation: answer the open round's unanswered calls, then push it."""
        calls = self.state.open_calls
        rnd = self.state.close_batch()
        if rnd is None:
            return
        answered = {c.tool_use_id for c in rnd.tool_calls}
        for block in calls:
            if block.id not in answered:
                out = self.executor.synthetic(
                    block, kind, f"{block.name} was not executed: {message}", {"tool_name": block.name}
                )
                rnd.tool_calls.append(ToolCallRecord.not_executed(block, out))
        self._push(rnd)

    def _finish(self, kind: str, final_text: str, reason: str) -> TurnResult:
        """Settle the turn (unless a tool already did), then build the result and publish ``turn_terminal``."""
        ob = self.state.take_obligation()
        if ob is not None:
            env = self.executor.interrupt(ob, reason)
            deferred = self.state.deferred_record(ob)
            if deferred is not None:
                deferred.status, deferred.settled_envelope = "interrupted", env
        if not self.state.settled:
            with self.service.store.tx() as db:
                self.settle_in(db, kind, final_text, reason)
        return self._result()

    def _closure(self) -> dict[str, Any]:
        """This turn's ClosureOutcome (agents spec §2), from the agent's state now that it has settled."""
        try:
            summary = self.service.agent_summary(self.agent_id, fallback_profile="public_named")
        except Exception:  # noqa: BLE001 - a closure is a report: never fail the turn's result over it
            return {"outcome": None}
        closure = (summary or {}).get("closure") or {"outcome": None}
        return closure if closure.get("turn_id") == self.turn_id else {"outcome": None}

    def _result(self) -> TurnResult:
        result = TurnResult(
            turn_id=self.turn_id,
            agent_id=self.agent_id,
            turn_index=self.state.turn_index,
            terminal=self.state.terminal or "aborted",
            reason=self.state.reason,
            final_text=self.state.final_text,
            rounds=list(self.state.rounds),
            usage=self.state.usage,
            aggregated_usage=self.state.aggregated,
            model_ref=self.model_ref,
            error=self.state.error,
            totals=self.service.conversations.totals(self.agent_id),
            sleep_duration_ms=self.state.sleep_duration_ms,
            closure=self._closure(),
        )
        self.emit(
            "turn_terminal",
            terminal=result.terminal,
            reason=result.reason,
            final_text=result.final_text,
            usage=result.usage.to_dict(),
            usage_totals=result.totals,
            error=result.error,
        )
        return result
