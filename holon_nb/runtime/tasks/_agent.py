"""The task service as one calling agent sees it: ``ctx.commands`` of the tools.

Spawning, promotion, ListTasks/TaskStatus snapshots, and the TaskOutput,
TaskInput and TaskStop behaviour of commands spec §8–§9, over
:class:`~holon_nb.runtime.tasks._service.TaskService`.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from ...render._ansi import terminal_text
from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ...tools._text import cut, cut_head_tail, kept_chars
from ..core._store import new_id
from ._early import EarlyCommand
from ._process_groups import end_group
from ._processes import CommandProcess, LaunchSpec
from ._service import TERMINAL, TaskService, command_digest, kill_recorded_group

__all__ = ["AgentTasks"]

_TASK_OUTPUT_CAP = 8000
_EXACT_LOG_BYTES = 8 * 1024 * 1024


def _read_log(path: Path, budget: int, known_chars: int | None) -> tuple[str, str, int] | None:
    """Read a task log as ``(head, tail, total chars)``; a small log is read whole (head = tail = text).

    A large log is read by head and tail only; its length comes from ``known_chars``
    (counted while the task wrote it) and is counted from the file only when unknown.
    """
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size <= _EXACT_LOG_BYTES:
        text = path.read_bytes().decode("utf-8", "replace")  # not read_text: it turns each \r into \n
        return text, text, len(text)
    with open(path, "rb") as fh:
        head = fh.read(budget * 4).decode("utf-8", errors="ignore")[:budget]
        fh.seek(max(0, size - budget * 4))
        tail = fh.read().decode("utf-8", errors="ignore")[-budget:]
    total = known_chars
    if total is None:
        total = 0
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
    return head, tail, total


class AgentTasks:
    """The task service as seen by one calling agent: ``ctx.commands`` of the tools.

    Args:
        svc: The runtime's :class:`TaskService`.
        agent_id: The calling agent.
    """

    def __init__(self, svc: TaskService, agent_id: str, early: EarlyCommand | None = None):
        self.svc = svc
        self.agent_id = agent_id
        self._early = early  # the call's command, started on the calling thread (:mod:`._early`)

    async def spawn(
        self, shell: str, cmd: str, workdir: str, *, login: bool, tty: bool, accepts_input: bool
    ) -> CommandProcess:
        """Start ``<shell> -lc|-c <cmd>`` in ``workdir`` (commands spec §4.1); the command the call already
        started on its thread when it is this one (:meth:`start_early`).

        Raises:
            OSError: when the process cannot start.
        """
        early = self._early
        if early is not None and early.key == (shell, cmd, workdir, login, tty, accepts_input):
            self._early = None
            proc = early.adopt()
            if proc is not None:
                return proc
        env: Mapping[str, str] = self.svc.command_env(self.agent_id)
        argv: tuple[str, ...] = (shell, "-lc" if login else "-c", cmd)
        if login and self.svc.settings().shell_snapshot:
            # the login profile's effect, recorded once, instead of running it again (tasks/_snapshot.py)
            launch = await self.svc.snapshots.launch(shell, cmd, workdir, env)
            if launch is not None:
                argv, env = launch
        return await CommandProcess.spawn(self._spec(argv, workdir, env, tty, accepts_input))

    def start_early(
        self, shell: str, cmd: str, workdir: str, *, login: bool, tty: bool, accepts_input: bool
    ) -> EarlyCommand | None:
        """:meth:`spawn`'s command started now, on the calling thread, for the call's :meth:`spawn` to adopt
        (issue 27 item 7); None, starting nothing, when it cannot start here without waiting: its login
        shell's snapshot is still being captured.

        Raises:
            OSError: when the process cannot start (nothing is left behind).
        """
        env: Mapping[str, str] = self.svc.command_env(self.agent_id)
        argv: tuple[str, ...] = (shell, "-lc" if login else "-c", cmd)
        if login and self.svc.settings().shell_snapshot:
            ready, launch = self.svc.snapshots.ready_launch(shell, cmd, workdir, env)
            if not ready:
                return None
            if launch is not None:
                argv, env = launch
        key = (shell, cmd, workdir, login, tty, accepts_input)
        return EarlyCommand(key, self._spec(argv, workdir, env, tty, accepts_input))

    def early_launch(self) -> tuple[str, str, bool, bool, bool] | None:
        """``(shell, workdir, login, tty, accepts_input)`` of the command the call started on its calling thread
        (:meth:`start_early`) and not yet adopted, for its handler to go on with; None when there is none."""
        early = self._early
        return None if early is None else (early.key[0], *early.key[2:])

    def runs_tasks(self) -> bool:
        """True when this runtime runs a command task (one an identical command could be given back)."""
        return bool(self.svc.live)

    def _spec(
        self, argv: tuple[str, ...], workdir: str, env: Mapping[str, str], tty: bool, accepts_input: bool
    ) -> LaunchSpec:
        return LaunchSpec(
            argv=argv,
            cwd=workdir,
            env=env,
            spool_dir=self.svc.spool_dir,
            tty=tty,
            accepts_input=accepts_input,
            max_log_bytes=self.svc.settings().max_task_log_bytes,
            scrubber=self.svc.make_scrubber(),
            disk_grant=self.svc.disk_grant,
            # journaled the moment it starts, and ended at close even if its leader exits first (issue 9)
            on_start=self.svc.register_group,
        )

    def keep_artifact(self, capture: Any, stream: str) -> Path:
        """Move a stream's complete spool to ``tool-artifacts/exec-command-<uuid>-<stream>.log``."""
        dest = self.svc.agent_home(self.agent_id) / "tool-artifacts" / f"exec-command-{new_id('x')[2:]}-{stream}.log"
        if capture.spool_path is not None and Path(capture.spool_path).exists():
            os.replace(capture.spool_path, dest)
            capture.spool_path = None
        else:
            dest.write_text(self.svc.scrub(capture.tail()), encoding="utf-8")
        return dest

    def find_active_command(self, identity: dict[str, Any]) -> dict[str, Any] | None:
        """An active command task of this agent with the same identity (commands spec §4.6 step 2),
        started by this runtime; its ``changed_files`` lists the files ApplyPatch changed since it started
        that it may read (:mod:`~holon_nb.runtime.tasks._edits`; such a task is not reused).

        A task another kernel on the home runs is not reused: its process, output pipes and input
        channel live in that kernel, which ends it when it closes, and a notebook that got it back
        would not run its command at all (two notebook tests running ``pytest`` on one home).
        Both kernels still list it, and TaskStop ends it from either.
        """
        if not self.svc.live:  # this runtime runs no task: none to reuse, and no store read (issue 27 item 7)
            return None
        digest = None
        for rec in self.svc.active("agent_id=? AND kind='command_task'", (self.agent_id,)):
            if rec.get("owner") != self.svc.owner:
                continue
            d = rec["detail"]
            digest = digest or command_digest(identity["cmd"])  # only when a task is running (issue 12)
            if d.get("cmd_digest") == digest and all(d.get(k) == v for k, v in identity.items() if k != "cmd"):
                return {
                    "task_id": rec["id"],
                    "status": rec["status"],
                    "summary": rec["summary"],
                    "command": self.svc.command_snapshot(rec, full=False),
                    "changed_files": self.svc.edits.changed_since(d.get("edit_mark", 0), identity["workdir"]),
                }
        return None

    def edit_mark(self) -> int:
        """Where the runtime's log of ApplyPatch edits stands: taken when a command starts, it tells later
        whether a file it may read changed after it started (``changed_files`` of :meth:`find_active_command`)."""
        return self.svc.edits.mark()

    def note_edits(self, execution_root: str, paths: list[str]) -> None:
        """Record that ApplyPatch, run in ``execution_root``, changed ``paths`` (absolute)."""
        self.svc.edits.record(execution_root, paths)

    async def promote(self, proc: CommandProcess, detail: dict[str, Any]) -> dict[str, Any]:
        """Promote a still-running process to a command task; return its ``TaskHandle``. While another process
        holds the home's write lock this waits for it without blocking the runtime's loop (``Store.write``).

        Raises:
            StoreBusy: the lock stayed taken past ``store_busy_timeout_s``.
        """
        return await self.svc.store.write(lambda: self.svc.promote(self.agent_id, proc, detail))

    def list_active(self, agent_id: str) -> list[dict[str, Any]]:
        """``TaskListEntry`` dicts of the agent's active tasks, newest update first (commands spec §7)."""
        recs = self.svc.active("agent_id=?", (agent_id,))
        recs.sort(key=lambda r: r["id"])
        recs.sort(key=lambda r: (r["updated_at"], r["created_at"]), reverse=True)
        out = []
        for r in recs:
            entry = {
                "id": r["id"],
                "kind": r["kind"],
                "status": r["status"],
                "summary": r.get("summary"),
                "updated_at": r["updated_at"],
                "wait_policy": "background",
            }
            if r["kind"] == "command_task":
                entry["command"] = self.svc.command_snapshot(r, full=False)
            out.append(entry)
        return out

    def status_snapshot(self, task_id: str) -> dict[str, Any] | None:
        """``TaskStatusSnapshot`` of a task, or None when unknown."""
        rec = self.svc.store.task(task_id)
        return None if rec is None else self.svc.snapshot(rec)

    # ------------------------------------------------------------ TaskOutput
    async def task_output(self, task_id: str, *, block: bool, timeout_s: float) -> dict[str, Any] | None:
        """The ``TaskOutputResult`` payload (commands spec §8.3), or None for an unknown id."""
        store = self.svc.store
        deadline = time.monotonic() + timeout_s
        while True:
            rec = store.task(task_id)
            if rec is None:
                return None
            if self._ready(rec):
                retrieval = "success"
                break
            if not block or time.monotonic() >= deadline:
                retrieval = "timeout" if block else "not_ready"
                break
            live = self.svc.live.get(task_id)
            with anyio.move_on_after(min(0.1, max(0.0, deadline - time.monotonic()))):
                if live is not None:
                    await live.done.wait()
                    await anyio.sleep(0)
                else:
                    await anyio.sleep(0.1)
        return {"retrieval_status": retrieval, "task": self._output_snapshot(rec)}

    @staticmethod
    def _ready(rec: dict[str, Any]) -> bool:
        if rec["status"] not in TERMINAL:
            return False
        if rec["kind"] != "command_task":
            return True
        d = rec["detail"]
        return bool(
            d.get("terminal_snapshot_ready")
            or d.get("output_path")
            or d.get("exit_status") is not None
            or d.get("error")
            or d.get("output_summary")
            or d.get("initial_output")
        )

    def _output_snapshot(self, rec: dict[str, Any]) -> dict[str, Any]:
        d = rec["detail"]
        budget = min(int(d.get("max_output_tokens") or 8000) * 4, _TASK_OUTPUT_CAP)
        path = Path(d["output_path"]) if d.get("output_path") else None
        live = self.svc.live.get(rec["id"])
        capture = live.proc.combined if live is not None else None
        dropped = capture.bytes_dropped if capture is not None else d.get("output_bytes_dropped")
        known = None if dropped else (capture.total_chars if capture is not None else d.get("output_chars"))
        read = _read_log(path, budget, known) if path is not None else None
        if read is not None and read[2] > 0:
            head, tail, total = read
            scrub = self.svc.scrub  # D6: scrub first, then cut (a log written before may hold a secret)
            if head is tail:  # the whole (small) log, as a terminal shows it (counts of what is shown)
                head = terminal_text(scrub(head))
                total = len(head)
                preview, truncated = cut(head, budget)
            else:  # cut from the log: a partial secret where the head ends or the tail starts goes too
                scrubber = self.svc.make_scrubber()
                if scrubber is not None:
                    head, tail = scrubber.edges(head, end=True), scrubber.edges(tail, start=True)
                preview, truncated = (
                    cut_head_tail(terminal_text(scrub(head)), terminal_text(scrub(tail)), budget),
                    total > budget,
                )
        else:
            text = terminal_text(self.svc.scrub(d.get("initial_output") or d.get("output_summary") or ""))
            total = len(text)
            preview, truncated = cut(text, budget)
        status = rec["status"]
        snap: dict[str, Any] = {
            "task_id": rec["id"],
            "kind": rec["kind"],
            "status": status,
            "summary": rec.get("summary"),
            "output_preview": preview,
            "output_truncated": truncated,
            "result_summary": d.get("output_summary"),
            "exit_status": d.get("exit_status"),
        }
        if truncated:
            snap["output_total_chars"] = total
            snap["output_kept_chars"] = kept_chars(total, budget)
        lossy = d.get("output_lossy") if capture is None else capture.lossy
        if lossy:
            snap["output_lossy"] = True
        if dropped:
            snap["output_bytes_dropped"] = dropped
            capped_by = capture.capped_by if capture is not None else d.get("output_capped_by")
            if capped_by:
                snap["output_capped_by"] = capped_by
        if path is not None and path.exists():
            snap["artifacts"] = [{"path": str(path)}]
            snap["output_artifact"] = 0
        elif d.get("output_pruned"):  # D13: the log was pruned by the home's policy; the summary stays
            snap["output_pruned"] = d["output_pruned"]
        if status in ("failed", "cancelled", "interrupted"):
            snap["failure_artifact"] = self._failure_artifact(rec, bool(preview))
        return snap

    @staticmethod
    def _failure_artifact(rec: dict[str, Any], has_output: bool) -> dict[str, Any]:
        d = rec["detail"]
        code = d.get("exit_status")
        if rec["status"] == "interrupted":
            kind = "command_task_interrupted"
        elif code not in (None, 0):
            kind = "command_task_exit_nonzero"
        elif d.get("error"):
            kind = "command_task_error"
        elif code is None and has_output:
            kind = "command_task_output"
        else:
            kind = "command_task_failed"
        metadata = {
            "command": d.get("cmd"),
            "output_path": d.get("output_path"),
            "error_present": "true" if d.get("error") else "false",
            "task_status": rec["status"],
        }
        return {  # upstream's published FailureArtifact: `summary` required, `metadata` values are strings
            "category": "task",
            "domain": "task",
            "kind": kind,
            "retryable": False,
            "task_id": rec["id"],
            "exit_status": code,
            "summary": f"command task {rec['status']}" + (f" with exit status {code}" if code is not None else ""),
            "metadata": {k: v for k, v in metadata.items() if isinstance(v, str)},
        }

    # ------------------------------------------------------------ TaskInput
    async def task_input(self, task_id: str, text: str) -> dict[str, Any] | None:
        """The ``TaskInputResult`` payload (commands spec §9.1), or None for an unknown id.

        Raises:
            ToolFailure: ``task_not_running`` / ``task_input_failed`` when delivery fails.
        """
        rec = self.svc.store.task(task_id)
        if rec is None:
            return None
        snap = self.svc.snapshot(rec)
        d = rec["detail"]
        live = self.svc.live.get(task_id)

        def refuse(summary: str) -> dict[str, Any]:
            out: dict[str, Any] = {"task": snap, "accepted_input": False, "summary_text": summary}
            if d.get("input_target"):
                out["input_target"] = d["input_target"]
            return out

        if rec["status"] in TERMINAL or rec["status"] == "cancelling":
            return refuse("task is not currently accepting input")
        if rec["kind"] != "command_task":
            return refuse("task does not support input delivery")
        if d.get("accepts_input") is not True or live is None:
            return refuse("task is not currently accepting input")
        data = text.encode("utf-8")
        try:
            written = await live.proc.write_input(data)
        except BrokenPipeError as exc:
            raise ToolFailure(
                ToolError(
                    kind="task_input_failed",
                    message=f"writing to task {task_id} failed: {exc}",
                    details={"task_id": task_id},
                )
            ) from None
        except (OSError, RuntimeError) as exc:
            raise ToolFailure(
                ToolError(
                    kind="task_not_running",
                    message=f"task {task_id} input channel is closed",
                    details={"task_id": task_id, "error": str(exc)},
                )
            ) from None
        return {
            "task": snap,
            "accepted_input": True,
            "input_target": d.get("input_target"),
            "bytes_written": written,
            "summary_text": f"delivered input to task {task_id}",
        }

    # ------------------------------------------------------------ TaskStop
    async def task_stop(self, task_id: str) -> dict[str, Any] | None:
        """The ``TaskStopResult`` payload (commands spec §9.2), or None for an unknown id."""
        svc = self.svc
        rec = svc.store.task(task_id)
        if rec is None:
            return None
        live = svc.live.get(task_id)
        if live is None:
            if rec["status"] in TERMINAL:
                summary = f"task {task_id} already {rec['status']}; nothing to stop"
                pgid = rec.get("pgid")
                if pgid in svc.groups and await anyio.to_thread.run_sync(end_group, pgid):
                    # its leader exited but processes it left in its group ran on: end them too
                    summary = f"task {task_id} already {rec['status']}; ended the processes left in its group"
                return {
                    "task": svc.snapshot(rec),
                    "stop_requested": False,
                    "force_stop_requested": False,
                    "summary_text": summary,
                }
            rec = svc._set_status(
                task_id,
                "cancelled",
                {"cancelled_reason": "force_stop_requested", "accepts_input": False, "input_target": None},
                (f"command task cancelled: {rec['summary']}", {"status": "cancelled"}),
            )
            assert rec is not None
            # another runtime on this home owns the process (or nobody does): once the record says
            # cancelled, signal the recorded group so no orphan keeps running
            await anyio.to_thread.run_sync(kill_recorded_group, rec)
            return {
                "task": svc.snapshot(rec),
                "stop_requested": True,
                "force_stop_requested": True,
                "summary_text": f"cancelled task {task_id}",
            }
        live.stop_count += 1
        if live.stop_count == 1:
            rec = (
                svc._set_status(
                    task_id,
                    "cancelling",
                    {
                        "cancel_requested": True,
                        "force_stop_requested": False,
                        "accepts_input": False,
                        "input_target": None,
                    },
                )
                or rec
            )
            svc.start_soon(live.proc.stop)
            force = False
        else:
            force = True
            rec = svc._set_status(task_id, "cancelling", {"force_stop_requested": True}) or rec
            if live.stop_count == 2:
                live.proc.signal_group(signal.SIGKILL)
        return {
            "task": svc.snapshot(rec),
            "stop_requested": True,
            "force_stop_requested": force,
            "summary_text": f"stop requested for task {task_id}",
        }
