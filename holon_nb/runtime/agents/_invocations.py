"""The background runs of InvokeAgent tasks: one coroutine per task, settled with a ``task_result``.

``rt.agents.lifecycle.runs`` is one :class:`InvocationRuns` per runtime. For each
``child_agent_task`` / ``agent_invocation_task`` (agents spec §5.6) it runs the
invoked agent's turn through the swappable :data:`~.agent_runs.ChildTurnRunner`
(one turn at a time per invoked agent), then settles the task — ``completed``
when the turn's terminal is ``completed``, else ``failed`` — and enqueues its
``TaskResult`` message (the spec's ``task_result``, sanitised final text) to the
caller through the work plane's one enqueue path, in the same transaction, so a
``WaitFor(wake=task_result)`` on the task wakes. A private child is archived
(registry status ``stopped``) once its task is terminal.

Task ``status`` follows the command-task phases (queued → running → terminal,
monotone). ``TaskStop`` of such a task (``cancelled``) cancels its run; a
runtime that closes marks its live runs ``interrupted`` (``runtime_closed``),
and one that died leaves them to restart reconciliation (D7).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from ..core._events import RuntimeEvent
from ..core._rows import archive_agent, task_in
from ..core._store import Store, is_busy, now_rfc3339
from ..tasks._service import TERMINAL
from ..work._records import decode
from ._runs import (
    EXPECTED_RUN_ERRORS,
    ChildTurnOutcome,
    ChildTurnRequest,
    ChildTurnRunner,
    agent_model,
    default_turn_runner,
    model_ref,
    sanitize_final_text,
)

if TYPE_CHECKING:
    from ._ports import AgentWorkPlane, EventSink, EventSubscriptions, StartSoon, TurnPlane

__all__ = ["InvocationRuns"]

log = logging.getLogger("holon_nb.agents")

_PHASE = {"queued": 0, "running": 1, **{s: 3 for s in TERMINAL}}


def _archive_in(db: Any, child_id: str) -> None:
    """Archive a private child (registry status ``stopped``, ``archived_at``) inside an open transaction."""
    archive_agent(db, child_id, now_rfc3339())


class InvocationRuns:
    """Background runs of invoked agents (module docstring).

    Built by :class:`~.lifecycle.AgentLifecycle` with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store (task, message and agent rows).
        work: The work plane (a settled task's ``TaskResult`` goes through its one enqueue path).
        publish: The runtime's event sink (``task_status``, ``task_ended``).
        subscribe: Subscribes to the runtime's events (TaskStop of a run's task cancels it).
        start_soon: Starts a run in the runtime's task group.
        turns: The turn service, built on first use (the default runner runs the invoked agent's turn there).

    Attributes:
        turn_runner: Runs one invoked agent's turn; :func:`~.agent_runs.default_turn_runner` drives
            the runtime's turn loop. Replace it to drive children without a model (tests, notebooks).
    """

    def __init__(
        self,
        *,
        store: Store,
        work: AgentWorkPlane,
        publish: EventSink,
        subscribe: EventSubscriptions,
        start_soon: StartSoon,
        turns: TurnPlane,
    ):
        self._store = store
        self._work = work
        self._publish = publish
        self._start_soon = start_soon
        self._turns = turns
        self.turn_runner: ChildTurnRunner = default_turn_runner
        self._runs: dict[str, anyio.CancelScope] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._unsubscribe = subscribe(self._on_event)

    def start_run(self, task_id: str) -> None:
        """Start the task's background run in the runtime's task group (call on the loop thread)."""
        self._start_soon(self._run, task_id)

    def _lock(self, agent_id: str) -> anyio.Lock:
        """One turn at a time per invoked agent."""
        if agent_id not in self._locks:
            self._locks[agent_id] = anyio.Lock()
        return self._locks[agent_id]

    async def _run(self, task_id: str) -> None:
        rec = self._store.task(task_id)
        if rec is None or rec["status"] in TERMINAL:
            return
        d = rec["detail"]
        agent_id = d.get("child_agent_id") or d["target_agent_id"]
        outcome: ChildTurnOutcome | None = None
        with anyio.CancelScope() as scope:
            self._runs[task_id] = scope
            try:
                async with self._lock(agent_id):
                    rec = self._transition(task_id, "running", {"started_at": now_rfc3339()})
                    if rec is None or rec["status"] != "running":
                        return
                    msg = decode(self._store.message(d["message_id"]))
                    request = ChildTurnRequest(
                        self._turns,
                        agent_id,
                        msg or {"id": d["message_id"], "text": ""},
                        rec,
                        model_ref(agent_model(self._store, agent_id)),
                    )
                    outcome = await self.turn_runner(request)
            except Exception as exc:  # a runner failure fails the task; it never escapes into the task group
                error = f"{type(exc).__name__}: {exc}"[:512]
                if isinstance(exc, EXPECTED_RUN_ERRORS):  # a condition (no model…): one line, the result says it
                    log.warning("invoked agent run %s failed: %s", task_id, error, exc_info=False)
                else:  # a bug: keep the traceback for whoever debugs it
                    log.exception("invoked agent run %s failed", task_id)
                outcome = ChildTurnOutcome("failed", error=error)
            finally:
                self._runs.pop(task_id, None)
        await self._retrying(task_id, outcome, d.get("child_agent_id"))

    async def _retrying(self, task_id: str, outcome: ChildTurnOutcome | None, child_id: str | None) -> None:
        """Record the run's end, retrying while another process holds the home's write lock (issue 9):
        a locked store is retried with backoff until the runtime closes, nothing escapes the loop."""
        delay = 0.1
        while True:
            try:  # each try waits for the lock without blocking the loop (Store.write), up to its bound
                if outcome is not None:
                    await self._store.write(lambda: self.finish(task_id, outcome))
                elif child_id:  # stopped (TaskStop) or interrupted: the child is archived all the same
                    await self._store.write(lambda: self._archive(child_id))
                return
            except Exception as exc:
                if not is_busy(exc) or self._store.closed:
                    raise
                if delay == 0.1:
                    log.warning("invoked agent run %s: recording its end waits for the home's lock (%s)", task_id, exc)
                await anyio.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _archive(self, child_id: str) -> None:
        with self._store.tx() as db:
            _archive_in(db, child_id)

    def _transition(
        self, task_id: str, status: str, updates: dict[str, Any], result: tuple[str, dict[str, Any]] | None = None
    ) -> dict[str, Any] | None:
        """Monotone task transition in one transaction, with the ``TaskResult`` to the caller when given."""
        with self._work.tx() as t:
            rec = task_in(t.db, task_id)
            if rec is None:
                return None
            if rec["status"] in TERMINAL or _PHASE[status] < _PHASE.get(rec["status"], 0):
                return rec
            detail = {**rec["detail"], **updates}
            rec["updated_at"] = Store.update_task(t.db, task_id, status, detail)
            rec["status"], rec["detail"] = status, detail
            if result is not None:
                self._work.queue.enqueue(
                    t,
                    agent_id=rec["agent_id"],
                    kind="TaskResult",
                    text=result[0],
                    origin={"kind": "task", "task_id": task_id},
                    authority="runtime_instruction",
                    work_item_id=rec["work_item_id"],
                    metadata={**result[1], "work_item_id": rec["work_item_id"]},
                    origin_task_id=task_id,
                )
                child = detail.get("child_agent_id")
                # the child is archived after its terminal result (agents spec §5.6 rule 3)
                if child and status in TERMINAL:
                    _archive_in(t.db, child)
        self._publish("task_status", task_id, status=status, exit_status=None)
        if status in TERMINAL:
            self._publish("task_ended", task_id, status=status, exit_status=None)
        return rec

    def finish(self, task_id: str, outcome: ChildTurnOutcome) -> dict[str, Any] | None:
        """Settle a task from its run's outcome: ``completed`` iff the turn completed, else ``failed``.

        The ``TaskResult`` message (sanitised final text) is enqueued to the caller in the same
        transaction; a task already terminal (stopped, interrupted) is left as it is.

        Returns:
            The task record after the transition, or None when it does not exist.
        """
        rec = self._store.task(task_id)
        if rec is None:
            return None
        d = rec["detail"]
        status = "completed" if outcome.terminal == "completed" else "failed"
        text = sanitize_final_text(outcome.final_text or "")
        who = d.get("child_agent_id") or d.get("target_agent_id")
        kind_text = "child agent task" if rec["kind"] == "child_agent_task" else "agent invocation"
        lines = [f"{kind_text} {status}: {rec['summary']}", f"agent_id: {who}", f"turn_terminal: {outcome.terminal}"]
        if outcome.error:
            lines.append(f"error: {outcome.error}")
        if text:
            lines.append("result:\n" + text)
        updates = {
            "output_summary": text or None,
            "turn_terminal": outcome.terminal,
            "error": outcome.error,
            "finished_at": now_rfc3339(),
            **outcome.details,
        }
        meta = {"status": status, "task_kind": rec["kind"], "agent_id": who, "turn_terminal": outcome.terminal}
        return self._transition(task_id, status, updates, ("\n".join(lines), meta))

    def _on_event(self, event: RuntimeEvent) -> None:
        """TaskStop of an invoked agent's task (status ``cancelled``) cancels its run."""
        if event.kind == "task_status" and event.data.get("status") == "cancelled" and event.task_id in self._runs:
            self._runs[event.task_id].cancel()

    async def close(self) -> None:
        """Cancel live runs and mark their tasks ``interrupted`` (``runtime_closed``), with their results (D7)."""
        self._unsubscribe()
        for task_id, scope in list(self._runs.items()):
            scope.cancel()
            rec = self._store.task(task_id)
            if rec is None or rec["status"] in TERMINAL:
                continue
            before = rec["status"]
            text = f"task {task_id} was interrupted because the runtime closed"
            self._transition(
                task_id,
                "interrupted",
                {
                    "status_before_restart": before,
                    "interrupted_reason": "runtime_closed",
                    "interrupted_at": now_rfc3339(),
                },
                (
                    text,
                    {"status": "interrupted", "status_before_restart": before, "interrupted_reason": "runtime_closed"},
                ),
            )
