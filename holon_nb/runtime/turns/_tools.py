"""Tool execution inside a model turn: the per-call pipeline, deferrals and their commits.

Turn-loop spec §1.5, §1.7, §1.8.1, §1.8.3; agents spec §2, §4.5, §5.1, §5.16.

Every model call goes through the one :func:`~holon_nb.tools._dispatch.dispatch` with a
:class:`~holon_nb.tools._context.CallContext` carrying the round's advertised tools
(``exposed``), the response's ``stop_reason`` and the ``round``, so the exposure check and
the truncated-mutation guard run there; the receipt is rendered, scrubbed and projected by
``Runtime._finish_call`` exactly as for a direct call (the model gets ``ToolResult.receipt``).

What differs from a direct call (D11) is the work plane a handler sees (``ctx.work``): a
:class:`TurnWork` that

- settles a ``WaitFor delivery=silent`` in the same transaction as the turn's terminal record;
- stages a ``WaitFor delivery=final`` and answers ``deferred`` (``awaiting_final_brief``);
- promotes same-round preceding text to a ``CompleteWorkItem`` report (execution context
  ``report``, filled by the loop) and commits it with the turn's terminal record, or, without
  text, validates and answers ``deferred`` (``awaiting_completion_report``).

A deferral is an :class:`Obligation`; :meth:`TurnToolExecutor.commit` commits it with the
text of the text-only round that follows (wait + brief, or completion + report, plus the turn
terminal and the execution flipped to ``success``, in one transaction), and
:meth:`TurnToolExecutor.interrupt` abandons it (execution ``interrupted``, nothing committed).

Seam (issue 5, H4): :class:`TurnToolExecutor` is the single place tools run; a cassette
wraps its tool runner (``TurnHooks.wrap_tool_executor``) and returns recorded outcomes on
replay. The loop derives batch stops and turn ends from the envelopes alone
(:func:`~holon_nb.runtime.turns._calls.call_effect`), so a replayed envelope drives the loop as a
live one; a replayed deferral commits nothing here (its tool never ran).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...providers.base import ToolUseBlock
from ...render import dumps_envelope, render_error_receipt
from ...tools._context import GUARDED_MUTATION_TOOLS, TRUNCATION_STOP_REASONS, CallContext
from ...tools._dispatch import typed_payload
from ...tools._envelope import ToolError, error_envelope, success_envelope
from ...tools._errors import ToolFailure
from ..core._rows import set_execution_status
from ..core._writing import dispatch_call
from ..work._agent import AgentWork
from ..work._focus import complete, todo_warning
from ..work._items import WorkItemRecords
from ._calls import Obligation, ToolOutcome, TurnCall, TurnCancelled

if TYPE_CHECKING:
    from ...tools._context import ToolContext
    from ...tools._registry import Registry
    from ..core._store import Store
    from ..work._records import Tx
    from ..work._service import WorkService
    from ._ports import ApprovalCheck, CallFinisher, RunningTurn, ScrubberSource, ToolContexts

__all__ = ["TurnToolExecutor", "TurnWork"]

_COMPLETION_SUMMARY = "awaiting a final completion report before completing the work item"


class TurnWork(AgentWork):
    """``ctx.work`` for a tool call made by a model turn (see the module docstring)."""

    def __init__(self, svc: WorkService, call: CallContext, executor: TurnToolExecutor):
        super().__init__(svc, call)
        self._exec = executor

    def wait_for(
        self,
        reason: str,
        wake: str,
        delivery: str,
        resource: str | None,
        work_item_id: str | None,
        recheck_after_ms: int | None,
    ) -> dict[str, Any]:
        """WaitFor in a model turn: silent settles with the turn; final stages and defers (agents spec §4.5)."""
        staged = self.stage_wait(reason, wake, delivery, resource, work_item_id, recheck_after_ms)
        if staged.fast_path is not None:
            return dict(staged.fast_path)
        if delivery == "silent":
            hook = self._exec.terminal_hook(final_text="", reason="wait_for_silent")
            return AgentWork(self.svc, self.call).settle_wait(staged, before_commit=hook)
        self._exec.defer(
            self.call.execution_id,
            Obligation(
                kind="final_brief",
                execution_id=self.call.execution_id,
                staged=staged,
                work_item_id=staged.owner_work_item_id,
                seen_revision=staged.seen_revision,
                request_id=staged.wait_request_id,
            ),
        )
        return staged.deferred_payload()

    def complete_work_item(self, work_item_id: str) -> dict[str, Any]:
        """CompleteWorkItem in a model turn: promote same-round text, else defer (agents spec §5.16 rules 1, 6, 7)."""
        report = self.call.execution.get("report")
        text = report.strip() if isinstance(report, str) else ""
        if text:
            hook = self._exec.completion_hook(work_item_id, text)
            return complete(AgentWork(self.svc, self.call), work_item_id, text, before_commit=hook)
        try:
            done = complete(self, work_item_id, None)  # validates rules 2-5; writes nothing without a report
        except ToolFailure as failure:
            if failure.error.kind != "missing_completion_report":
                raise
        else:
            return done  # already completed: idempotent, non-terminal
        rec = self.svc.record(work_item_id) or {}
        request_id = self._exec.new_id("complreq")
        self._exec.defer(
            self.call.execution_id,
            Obligation(
                kind="completion",
                execution_id=self.call.execution_id,
                work_item_id=work_item_id,
                seen_revision=rec.get("revision"),
                request_id=request_id,
            ),
        )
        out: dict[str, Any] = {
            "disposition": "awaiting_completion_report",
            "completion_request_id": request_id,
            "work_item_id": work_item_id,
            "completed_transition": False,
            "expected_output": "final_text_only",
        }
        warning = todo_warning(rec)
        if warning:
            out["warnings"] = [warning]
        out["summary_text"] = _COMPLETION_SUMMARY
        return out


class TurnToolExecutor:
    """Runs one turn's tool calls (the cassette seam for tools; see the module docstring).

    Built by the turn loop with the turn plane's ports (:mod:`.ports`), and nothing else of the runtime.

    Args:
        turn: The running turn (:class:`~.ports.RunningTurn`: a :class:`~.loop.TurnLoop`).
        store: The runtime's store (a deferred execution's status).
        work: The work plane (each call's ``ctx.work`` is a :class:`TurnWork` on it).
        registry: The tool registry dispatch reads.
        approvals: The approval broker (asked before a call runs).
        finish_call: Records a call and renders its receipt as for a direct call.
        scrubber: The runtime's current D6 scrubber.
        tool_context: The ``ToolContext`` of a call, given its ``work`` view.
    """

    def __init__(
        self,
        turn: RunningTurn,
        *,
        store: Store,
        work: WorkService,
        registry: Registry,
        approvals: ApprovalCheck,
        finish_call: CallFinisher,
        scrubber: ScrubberSource,
        tool_context: ToolContexts,
    ):
        self.turn = turn
        self._store = store
        self._work = work
        self._registry = registry
        self._approvals = approvals
        self._finish_call = finish_call
        self._scrubber = scrubber
        self._tool_context = tool_context
        self._deferred: dict[str, Obligation] = {}

    def new_id(self, prefix: str) -> str:
        """An id from the turn's (injectable) generator."""
        return self.turn.new_id(prefix)

    # ------------------------------------------------------------ hooks used by TurnWork
    def defer(self, execution_id: str, obligation: Obligation) -> None:
        """Remember a deferral made by the call ``execution_id``."""
        self._deferred[execution_id] = obligation

    def terminal_hook(self, final_text: str, reason: str) -> Callable[[Tx], None]:
        """A hook writing the turn's ``completed`` terminal in the caller's transaction."""

        def hook(t: Tx) -> None:
            self.turn.settle_in(t.db, "completed", final_text, reason)

        return hook

    def completion_hook(self, work_item_id: str, report: str, execution_id: str | None = None) -> Callable[[Tx], None]:
        """A hook settling the turn when the transaction completed ``work_item_id`` for this turn."""

        def hook(t: Tx) -> None:
            item = WorkItemRecords.load(t.db, work_item_id)
            intent = (item or {}).get("completion_intent") or {}
            if item is not None and item["state"] == "completed" and intent.get("source_turn_id") == self.turn.turn_id:
                if execution_id:
                    set_execution_status(t.db, execution_id, "success")
                self.turn.settle_in(t.db, "completed", report, "work_item_completed")

        return hook

    # ------------------------------------------------------------ the seam
    def execution_context(self, call: ToolUseBlock, report: str | None) -> dict[str, Any]:
        """The D11 execution context of a model call: the turn's binding, authority, and ``report``."""
        ctx: dict[str, Any] = {"binding": self.turn.state.binding, "authority": self.turn.state.authority}
        if call.name == "CompleteWorkItem" and report is not None:
            ctx["report"] = report
        return ctx

    async def execute_call(self, call: TurnCall) -> ToolOutcome:
        """The tool runner the loop calls (``call``: a ``TurnCall``); wrap this for cassettes."""
        return await self.execute(
            ToolUseBlock(call.id, call.name, call.input, call.kind),
            round=call.round,
            stop_reason=call.stop_reason,
            report=call.report,
        )

    async def execute(
        self, call: ToolUseBlock, *, round: int, stop_reason: str | None, report: str | None = None
    ) -> ToolOutcome:
        """Run one call through dispatch and render its receipt (turn-loop spec §1.5, §1.7).

        Args:
            call: The provider's tool_use block.
            round: The 1-based round.
            stop_reason: The response's stop reason (truncated-mutation guard).
            report: For CompleteWorkItem, the same-round preceding text (agents spec §5.16 rule 1).

        Returns:
            The :class:`ToolOutcome`; a deferral is ``status: "deferred"``. Never raises for tool failures.
        """
        execution_id = self.new_id("tool")
        cc = CallContext(
            agent_id=self.turn.agent_id,
            profile=self.turn.profile,
            execution=self.execution_context(call, report),
            exposed=self.turn.exposed,
            stop_reason=stop_reason,
            round=round,
            execution_id=execution_id,
            model_route=self.turn.model_route,
        )
        ctx = self._tool_context(cc, work_view=lambda call: TurnWork(self._work, call, self))
        started = time.monotonic()
        denied = await self._approval(call, ctx, stop_reason)  # the user may be asked first (issue 5)
        cancelled = self.turn.state.cancel_requested
        if cancelled:  # Stop was pressed while the user was asked: the call does not run
            raise TurnCancelled(cancelled)
        env = denied or await dispatch_call(self._store, call.name, call.input, ctx, self._registry)
        duration_ms = int((time.monotonic() - started) * 1000)
        if execution_id in self._deferred:
            if env.get("status") == "success":
                env = {**env, "status": "deferred"}
                self._deferred[execution_id].tool_use_id = call.id
            else:
                del self._deferred[execution_id]
        res = self._finish_call(
            env, call.input, self.turn.agent_id, execution_id, duration_ms, budget_tokens=self.turn.tool_output_budget
        )
        return ToolOutcome(
            env, res.receipt, env.get("status") == "error", execution_id, duration_ms, res.display_envelope
        )

    async def _approval(self, call: ToolUseBlock, ctx: ToolContext, stop_reason: str | None) -> dict[str, Any] | None:
        """``rt.approvals.check`` for a call dispatch would run: advertised this round and not stopped by the
        truncated-mutation guard (dispatch refuses those without asking anyone).

        The question is interruptible: cancelling the turn cancels it (:meth:`TurnLoop.interruptible`).

        Raises:
            TurnCancelled: the turn was cancelled while the user was asked.
        """
        approvals = self._approvals
        if call.name not in self.turn.exposed and call.name != "Sleep":
            return None
        if stop_reason in TRUNCATION_STOP_REASONS and call.name in GUARDED_MUTATION_TOOLS:
            return None
        denied = None
        with self.turn.interruptible() as wait:
            denied = await approvals.check(call.name, call.input, ctx)
        if wait.cancelled_caught:
            raise TurnCancelled(self.turn.state.cancel_requested or "cancelled")
        return denied

    def obligation_for(self, tool_use_id: str) -> Obligation | None:
        """The obligation the call ``tool_use_id`` created by deferring (None if it did not defer)."""
        return next((o for o in self._deferred.values() if o.tool_use_id == tool_use_id), None)

    async def commit(self, ob: Obligation, text: str) -> tuple[bool, dict[str, Any]]:
        """Commit a deferral with the text-only round's text (turn-loop spec §1.8.1, agents §5.16 rule 7).

        One transaction: the wait + ``result`` brief (``final_brief``) or the completion + report
        (``completion``), the execution flipped to ``success`` and the turn terminal ``completed``.

        Returns:
            ``(True, success envelope)``, or ``(False, error envelope)`` after the obligation was
            interrupted (a settlement fence failed, or the completion request was invalidated).
        """
        name = "WaitFor" if ob.kind == "final_brief" else "CompleteWorkItem"
        if not ob.execution_id or (ob.kind == "final_brief" and ob.staged is None):
            return True, {}  # a replayed deferral: its tool never ran here, so there is nothing to commit
        view = AgentWork(self._work, self._call_context(name))
        try:
            if ob.kind == "final_brief":
                assert ob.staged is not None
                hook = self._flip_hook(ob, text)
                payload = view.settle_wait(ob.staged, text, before_commit=hook)
            else:
                reason = self._completion_invalid(ob)
                if reason is not None:
                    env = self._invalidated(ob, reason)
                    return False, env
                hook = self.completion_hook(ob.work_item_id or "", text, ob.execution_id)
                payload = complete(view, ob.work_item_id or "", text, before_commit=hook)
                payload["completion_report_source"] = "followup_final_text"
        except ToolFailure as failure:
            env = error_envelope(name, failure.error)
            reason = (failure.error.details or {}).get("reason") if isinstance(failure.error.details, dict) else None
            self.interrupt(ob, reason or failure.error.kind, env)
            return False, env
        spec = self._registry.get(name)
        try:  # the committed result fits its model like any other (a drift: internal_error, logged)
            env = success_envelope(name, payload if spec is None else typed_payload(spec, payload))
        except ToolFailure as failure:
            env = error_envelope(name, failure.error)
        with self._store.tx() as db:
            stored = dumps_envelope(self._scrubber().value(env))  # D6: stored envelopes are scrubbed
            set_execution_status(db, ob.execution_id, "success" if env["status"] == "success" else "error", stored)
        return True, env

    def interrupt(self, ob: Obligation, reason: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
        """Abandon a deferral: nothing is committed; the execution becomes ``interrupted`` (reason kept).

        Returns:
            The envelope stored for the interrupted execution.
        """
        name = "WaitFor" if ob.kind == "final_brief" else "CompleteWorkItem"
        if env is None:
            kind = (
                reason
                if reason in ("tool_call_not_allowed", "empty_final_brief", "empty_completion_report")
                else "tool_execution_failed"
            )
            env = error_envelope(
                name,
                ToolError(
                    kind=kind,
                    message=f"{name} was interrupted: {reason.replace('_', ' ')}; nothing was committed",
                    details={"reason": reason, "request_id": ob.request_id},
                ),
            )
        with self._store.tx() as db:
            stored = dumps_envelope(self._scrubber().value(env))  # D6: stored envelopes are scrubbed
            set_execution_status(db, ob.execution_id, "interrupted", stored)
        self._deferred.pop(ob.execution_id, None)
        return env

    # ------------------------------------------------------------ helpers
    def _call_context(self, name: str) -> CallContext:
        return CallContext(
            agent_id=self.turn.agent_id,
            profile=self.turn.profile,
            execution={"binding": self.turn.state.binding, "authority": self.turn.state.authority},
            exposed=self.turn.exposed,
            execution_id=self.new_id("tool"),
            model_route=self.turn.model_route,
        )

    def _flip_hook(self, ob: Obligation, text: str) -> Callable[[Tx], None]:
        def hook(t: Tx) -> None:
            set_execution_status(t.db, ob.execution_id, "success")
            self.turn.settle_in(t.db, "completed", text, "wait_for_final")

        return hook

    def _completion_invalid(self, ob: Obligation) -> str | None:
        """agents spec §5.16 rule 7 invalidation reasons, or None."""
        rec = self._work.record(ob.work_item_id or "")
        if rec is None:
            return "work_item_missing"
        if rec["revision"] != ob.seen_revision or rec["state"] != "open":
            return "work_item_revision_changed"
        focus = self._work.records.focus(self._work.reader(), self.turn.agent_id)
        if (focus["current_execution_binding"] or {}).get("turn_id") != self.turn.turn_id:
            return "execution_binding_changed"
        return None

    def _invalidated(self, ob: Obligation, reason: str) -> dict[str, Any]:
        env = error_envelope(
            "CompleteWorkItem",
            ToolError(
                kind="completion_report_request_invalidated",
                message=f"the completion report request was invalidated ({reason.replace('_', ' ')}); "
                f"work item {ob.work_item_id} stays open",
                details={"reason": reason, "completion_request_id": ob.request_id, "work_item_id": ob.work_item_id},
                recovery_hint="Re-read the work item and complete it again.",
            ),
        )
        return self.interrupt(ob, reason, env)

    def synthetic(
        self, call: ToolUseBlock, kind: str, message: str, details: dict[str, Any], hint: str | None = None
    ) -> ToolOutcome:
        """An error result for a call that is not executed (no handler runs, no execution record)."""
        env = error_envelope(call.name, ToolError(kind=kind, message=message, details=details, recovery_hint=hint))
        scrub = self._scrubber()
        return ToolOutcome(env, scrub.text(render_error_receipt(env)), True, None, 0, scrub.value(env))
