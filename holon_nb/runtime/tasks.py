"""Command tasks: promotion, lifecycle, output, input, stop, restart reconciliation.

Implements the task model of commands spec §6–§9 over the SQLite store and
the live process handles of :mod:`holon_nb.runtime.processes`. Methods run
on the runtime's loop thread.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import anyio

from ..tools.text import cut, kept_chars
from .processes import CommandProcess, LaunchSpec
from .store import Store, new_id, now_rfc3339

__all__ = ["TaskService", "AgentTasks", "ACTIVE", "TERMINAL"]

ACTIVE = ("queued", "running", "cancelling")
TERMINAL = ("completed", "failed", "cancelled", "interrupted")
_PHASE = {"queued": 0, "running": 1, "cancelling": 2, **{s: 3 for s in TERMINAL}}
_IDENTITY = ("cmd", "cmd_digest", "workdir", "shell", "login", "tty", "promoted_from_exec_command")
_TASK_OUTPUT_CAP = 8000
_EXACT_LOG_BYTES = 8 * 1024 * 1024


@dataclass
class _Live:
    proc: CommandProcess
    stop_count: int = 0
    done: anyio.Event = field(default_factory=anyio.Event)


def _proc_start(pid: int) -> str | None:
    """The process start time in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
        return data.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _read_log(path: Path, budget: int) -> tuple[str, int] | None:
    """Return (text of at most about 2*budget chars covering head and tail, total chars) of a log file."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size <= _EXACT_LOG_BYTES:
        text = path.read_text(encoding="utf-8", errors="replace")
        return text, len(text)
    with open(path, "rb") as fh:
        head = fh.read(budget * 4).decode("utf-8", errors="ignore")[:budget]
        fh.seek(max(0, size - budget * 4))
        tail = fh.read().decode("utf-8", errors="ignore")[-budget:]
    total = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        while chunk := fh.read(1 << 20):
            total += len(chunk)
    return head + tail, total  # caller cuts with the known total


class TaskService:
    """Task records and live command handles of one runtime.

    Args:
        store: The runtime's store.
        home: The holon home (absolute).
        env: Base environment for commands.
        publish: ``(kind, task_id, **data)`` event publisher (called on the loop thread).
        start_soon: Starts a background coroutine in the runtime's task group.
        settings: Returns the runtime's current settings (read at each spawn, so
            a changed ``max_task_log_bytes`` applies to the next command).
    """

    def __init__(self, store: Store, home: Path, env: dict[str, str], publish: Callable[..., None],
                 start_soon: Callable[..., None], settings: Callable[[], Any]):
        self.store = store
        self.home = home
        self.env = env
        self.publish = publish
        self.start_soon = start_soon
        self.settings = settings
        self.live: dict[str, _Live] = {}
        self._homes_made: set[str] = set()
        (home / "spool").mkdir(parents=True, exist_ok=True)

    def agent_home(self, agent_id: str) -> Path:
        """``<home>/agents/<agent_id>/``, created with its ``tool-artifacts`` and ``task-output``."""
        path = self.home / "agents" / agent_id
        if agent_id not in self._homes_made or not path.is_dir():
            for sub in ("tool-artifacts", "task-output"):
                (path / sub).mkdir(parents=True, exist_ok=True)
            self._homes_made.add(agent_id)
        return path

    def for_agent(self, agent_id: str) -> "AgentTasks":
        """A view bound to one calling agent (what ``ctx.commands`` is)."""
        return AgentTasks(self, agent_id)

    # ------------------------------------------------------------ restart (D7)
    def reconcile_after_restart(self) -> list[str]:
        """Mark tasks left active by a dead runtime ``interrupted``; kill their orphaned groups.

        Returns:
            The ids of the tasks that were interrupted.
        """
        done = []
        for rec in self.store.tasks("status IN ('queued','running','cancelling')"):
            pgid, start = rec.get("pgid"), rec.get("proc_start")
            if pgid and start and _proc_start(pgid) == start:
                _kill_group(pgid)
            before = rec["status"]
            detail = dict(rec["detail"])
            detail.update(status_before_restart=before, interrupted_reason="runtime_restarted",
                          interrupted_at=now_rfc3339(), accepts_input=False, input_target=None)
            text = f"task {rec['id']} was interrupted because the runtime restarted"
            with self.store.tx() as db:
                Store.update_task(db, rec["id"], "interrupted", detail)
                Store.insert_message(db, rec["agent_id"], "TaskResult", text, rec["id"],
                                     {"status": "interrupted", "status_before_restart": before,
                                      "interrupted_reason": "runtime_restarted"})
            done.append(rec["id"])
        return done

    # ------------------------------------------------------------ snapshots
    def command_snapshot(self, rec: dict[str, Any], full: bool = True) -> dict[str, Any]:
        """The ``CommandTaskStatusSnapshot`` of a record (commands spec §7.1)."""
        d = rec["detail"]
        keys = _IDENTITY if not full else (*_IDENTITY, "output_path", "exit_status", "accepts_input", "input_target")
        snap = {k: d[k] for k in keys if d.get(k) is not None}
        if full:
            if d.get("output_summary") is not None:
                snap["result_summary"] = d["output_summary"]
            if d.get("terminal_reentry"):
                snap["terminal_reentry"] = True
            if rec["status"] in TERMINAL or d.get("cancel_requested"):
                snap["accepts_input"] = False
                snap.pop("input_target", None)
        return snap

    def snapshot(self, rec: dict[str, Any]) -> dict[str, Any]:
        """The ``TaskStatusSnapshot`` of a record (commands spec §8.1)."""
        snap = {
            "task_id": rec["id"], "kind": rec["kind"], "status": rec["status"],
            "created_at": rec["created_at"], "updated_at": rec["updated_at"], "wait_policy": "background",
        }
        if rec.get("summary"):
            snap["summary"] = rec["summary"]
        if rec["kind"] == "command_task":
            snap["command"] = self.command_snapshot(rec)
        d = rec["detail"]
        for key in ("status_before_restart", "interrupted_reason", "interrupted_at", "cancelled_reason"):
            if d.get(key) is not None:
                snap[key] = d[key]
        return snap

    # ------------------------------------------------------------ lifecycle
    def _set_status(self, task_id: str, status: str, updates: dict[str, Any],
                    message: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any] | None:
        """Apply a monotone status transition in one transaction (commands spec §6.2)."""
        with self.store.tx() as db:
            row = db.execute("SELECT * FROM tasks WHERE id=?", (task_id,)).fetchone()
            if row is None:
                return None
            rec = Store.task_row(row)
            cur = rec["status"]
            if _PHASE[status] < _PHASE[cur] or cur in TERMINAL:
                return rec  # monotone: never lower a phase, never leave a terminal state
            detail = {**rec["detail"], **updates}
            rec["updated_at"] = Store.update_task(db, task_id, status, detail)
            rec["status"], rec["detail"] = status, detail
            if message is not None:
                Store.insert_message(db, rec["agent_id"], "TaskResult", message[0], task_id, message[1])
        self.publish("task_status", task_id, status=status, exit_status=detail.get("exit_status"))
        return rec

    def promote(self, agent_id: str, proc: CommandProcess, detail: dict[str, Any]) -> dict[str, Any]:
        """Register a running process as a ``command_task`` and start its runner (commands spec §4.6 step 7).

        Returns:
            The ``TaskHandle`` dict.
        """
        task_id = new_id("task")
        cmd = detail["cmd"]
        log_path = self.agent_home(agent_id) / "task-output" / f"{task_id}.log"
        proc.promote(log_path)
        summary = "Run command: " + cmd[:80] + ("..." if len(cmd) > 80 else "")
        accepts = bool(detail.get("accepts_input"))
        full = {
            **detail,
            "cmd_digest": hashlib.sha256(cmd.encode("utf-8")).hexdigest(),
            "promoted_from_exec_command": True,
            "output_path": str(log_path),
            "accepts_input": accepts,
            "input_target": ("tty" if detail.get("tty") else "stdin") if accepts else None,
            "terminal_snapshot_ready": False,
            "exit_status": None,
        }
        ts = now_rfc3339()
        with self.store.tx() as db:
            Store.insert_task(db, {
                "id": task_id, "agent_id": agent_id, "kind": "command_task", "status": "queued",
                "summary": summary, "detail": full, "pgid": proc.pgid, "proc_start": _proc_start(proc.pid),
                "created_at": ts, "updated_at": ts,
            })
        live = _Live(proc)
        self.live[task_id] = live
        proc.on_output = lambda stream, text: self.publish("task_output", task_id, stream=stream, text=text)
        self.publish("task_promoted", task_id, agent_id=agent_id, summary=summary, cmd=cmd)
        self._set_status(task_id, "running", {})  # the process already runs: its runner starts now
        self.start_soon(self._run, task_id, live)
        return {"task_id": task_id, "task_kind": "command_task", "status": "queued"}

    async def _run(self, task_id: str, live: _Live) -> None:
        try:
            await live.proc.wait(None)
            await self._finish(task_id, live)
        finally:
            live.proc.on_output = None
            self.live.pop(task_id, None)
            live.done.set()

    async def _finish(self, task_id: str, live: _Live) -> None:
        rec = self.store.task(task_id)
        if rec is None:
            return
        proc, d = live.proc, rec["detail"]
        if live.stop_count or d.get("cancel_requested"):
            status = "cancelled"
        elif proc.exit_status == 0:
            status = "completed"
        else:
            status = "failed"
        summary = self._output_summary(proc, int(d.get("max_output_tokens") or 8000))
        updates: dict[str, Any] = {
            "exit_status": proc.exit_status, "terminal_snapshot_ready": True, "output_summary": summary,
            "accepts_input": False, "input_target": None, "output_lossy": proc.combined.lossy,
            "output_chars": proc.combined.total_chars, "output_bytes_dropped": proc.combined.bytes_dropped,
        }
        if proc.exit_status is None and proc.signal_name and status == "failed":
            updates["error"] = f"terminated by {proc.signal_name}"
        if status == "cancelled":
            updates["cancelled_reason"] = "force_stop_requested" if live.stop_count > 1 else "cancel_requested"
        lines = [f"command task {status}: {rec['summary']}", f"output_path: {d.get('output_path')}"]
        if proc.exit_status is not None:
            lines.append(f"exit_status: {proc.exit_status}")
        if summary:
            lines.append("output_summary:\n" + summary)
        if updates.get("error"):
            lines.append(f"error: {updates['error']}")
        meta = {"status": status, "exit_status": proc.exit_status}
        self._set_status(task_id, status, updates, ("\n".join(lines), meta))
        self.publish("task_ended", task_id, status=status, exit_status=proc.exit_status)

    @staticmethod
    def _output_summary(proc: CommandProcess, tokens: int) -> str | None:
        out = proc.stdout.tail().strip()
        err = proc.stderr.tail().strip()
        if out and err:
            text = f"stdout:\n{out}\n\nstderr:\n{err}"
        elif err:
            text = f"stderr:\n{err}"
        else:
            text = out or proc.combined.tail().strip()
        return cut(text, tokens * 4)[0] if text else None

    # ------------------------------------------------------------ queries
    def active_ids(self) -> list[str]:
        """Ids of all active tasks of this runtime home."""
        return [r["id"] for r in self.store.tasks("status IN ('queued','running','cancelling')")]

    async def wait_idle(self, timeout_s: float | None) -> list[str]:
        """Wait until no live task remains or ``timeout_s`` passes; return ids still live."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.live:
            if deadline is not None and time.monotonic() >= deadline:
                break
            await anyio.sleep(0.05)
        return list(self.live)

    async def close(self) -> None:
        """Stop every live task (used when the runtime closes)."""
        for task_id, live in list(self.live.items()):
            live.stop_count += 1
            self._set_status(task_id, "cancelling", {"cancel_requested": True, "accepts_input": False, "input_target": None})
            await live.proc.stop()
        with anyio.move_on_after(2):
            for live in list(self.live.values()):
                await live.done.wait()


def _kill_group(pgid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.1)


class AgentTasks:
    """The task service as seen by one calling agent: ``ctx.commands`` of the tools.

    Args:
        svc: The runtime's :class:`TaskService`.
        agent_id: The calling agent.
    """

    def __init__(self, svc: TaskService, agent_id: str):
        self.svc = svc
        self.agent_id = agent_id

    async def spawn(self, shell: str, cmd: str, workdir: str, *, login: bool, tty: bool,
                    accepts_input: bool) -> CommandProcess:
        """Start ``<shell> -lc|-c <cmd>`` in ``workdir`` (commands spec §4.1).

        Raises:
            OSError: when the process cannot start.
        """
        home = self.svc.agent_home(self.agent_id)
        env = {**self.svc.env, "HOLON_RUNTIME": "1", "HOLON_AGENT_ID": self.agent_id, "HOLON_AGENT_HOME": str(home)}
        spec = LaunchSpec(
            argv=(shell, "-lc" if login else "-c", cmd), cwd=workdir, env=env,
            spool_dir=self.svc.home / "spool", tty=tty, accepts_input=accepts_input,
            max_log_bytes=self.svc.settings().max_task_log_bytes,
        )
        return await CommandProcess.spawn(spec)

    def keep_artifact(self, capture: Any, stream: str) -> Path:
        """Move a stream's complete spool to ``tool-artifacts/exec-command-<uuid>-<stream>.log``."""
        dest = self.svc.agent_home(self.agent_id) / "tool-artifacts" / f"exec-command-{new_id('x')[2:]}-{stream}.log"
        if capture.spool_path is not None and Path(capture.spool_path).exists():
            os.replace(capture.spool_path, dest)
            capture.spool_path = None
        else:
            dest.write_text(capture.tail(), encoding="utf-8")
        return dest

    def find_active_command(self, identity: dict[str, Any]) -> dict[str, Any] | None:
        """An active command task of this agent with the same identity (commands spec §4.6 step 2)."""
        for rec in self.svc.store.tasks("agent_id=? AND kind='command_task' AND status IN ('queued','running','cancelling')",
                                        (self.agent_id,)):
            d = rec["detail"]
            if all(d.get(k) == v for k, v in identity.items()):
                return {"task_id": rec["id"], "status": rec["status"], "summary": rec["summary"],
                        "command": self.svc.command_snapshot(rec, full=False)}
        return None

    def promote(self, proc: CommandProcess, detail: dict[str, Any]) -> dict[str, Any]:
        """Promote a still-running process to a command task; return its ``TaskHandle``."""
        return self.svc.promote(self.agent_id, proc, detail)

    def list_active(self, agent_id: str) -> list[dict[str, Any]]:
        """``TaskListEntry`` dicts of the agent's active tasks, newest update first (commands spec §7)."""
        recs = self.svc.store.tasks("agent_id=? AND status IN ('queued','running','cancelling')", (agent_id,))
        recs.sort(key=lambda r: r["id"])
        recs.sort(key=lambda r: (r["updated_at"], r["created_at"]), reverse=True)
        out = []
        for r in recs:
            entry = {"id": r["id"], "kind": r["kind"], "status": r["status"], "summary": r.get("summary"),
                     "updated_at": r["updated_at"], "wait_policy": "background"}
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
        return bool(d.get("terminal_snapshot_ready") or d.get("output_path") or d.get("exit_status") is not None
                    or d.get("error") or d.get("output_summary") or d.get("initial_output"))

    def _output_snapshot(self, rec: dict[str, Any]) -> dict[str, Any]:
        d = rec["detail"]
        budget = min(int(d.get("max_output_tokens") or 8000) * 4, _TASK_OUTPUT_CAP)
        path = Path(d["output_path"]) if d.get("output_path") else None
        read = _read_log(path, budget) if path is not None else None
        live = self.svc.live.get(rec["id"])
        if read is not None and read[1] > 0:
            text, total = read
            if len(text) < total:  # head + tail of a large log
                head, tail = text[: len(text) // 2], text[len(text) // 2:]
                from ..tools.text import TRUNCATION_MARKER as marker
                room = budget - len(marker)
                preview = head[: room // 2] + marker + tail[-(room - room // 2):]
                truncated = True
            else:
                preview, truncated = cut(text, budget)
        else:
            text = d.get("initial_output") or d.get("output_summary") or ""
            total = len(text)
            preview, truncated = cut(text, budget)
        status = rec["status"]
        snap: dict[str, Any] = {
            "task_id": rec["id"], "kind": rec["kind"], "status": status, "summary": rec.get("summary"),
            "output_preview": preview, "output_truncated": truncated,
            "result_summary": d.get("output_summary"), "exit_status": d.get("exit_status"),
        }
        if truncated:
            snap["output_total_chars"] = total
            snap["output_kept_chars"] = kept_chars(total, budget)
        lossy = d.get("output_lossy") if live is None else live.proc.combined.lossy
        if lossy:
            snap["output_lossy"] = True
        dropped = d.get("output_bytes_dropped") if live is None else live.proc.combined.bytes_dropped
        if dropped:
            snap["output_bytes_dropped"] = dropped
        if path is not None and path.exists():
            snap["artifacts"] = [{"path": str(path)}]
            snap["output_artifact"] = 0
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
        return {
            "category": "task", "domain": "task", "kind": kind, "retryable": False,
            "task_id": rec["id"], "exit_status": code,
            "message": f"command task {rec['status']}" + (f" with exit status {code}" if code is not None else ""),
            "metadata": {"command": d.get("cmd"), "output_path": d.get("output_path"),
                         "error_present": bool(d.get("error")), "task_status": rec["status"]},
        }

    # ------------------------------------------------------------ TaskInput
    async def task_input(self, task_id: str, text: str) -> dict[str, Any] | None:
        """The ``TaskInputResult`` payload (commands spec §9.1), or None for an unknown id.

        Raises:
            ToolFailure: ``task_not_running`` / ``task_input_failed`` when delivery fails.
        """
        from ..tools.envelope import ToolError
        from ..tools.errors import ToolFailure

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
            raise ToolFailure(ToolError(kind="task_input_failed", message=f"writing to task {task_id} failed: {exc}",
                                        details={"task_id": task_id})) from None
        except (OSError, RuntimeError) as exc:
            raise ToolFailure(ToolError(kind="task_not_running", message=f"task {task_id} input channel is closed",
                                        details={"task_id": task_id, "error": str(exc)})) from None
        return {"task": snap, "accepted_input": True, "input_target": d.get("input_target"),
                "bytes_written": written, "summary_text": f"delivered input to task {task_id}"}

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
                return {"task": svc.snapshot(rec), "stop_requested": False, "force_stop_requested": False,
                        "summary_text": f"task {task_id} already {rec['status']}; nothing to stop"}
            rec = svc._set_status(task_id, "cancelled", {"cancelled_reason": "force_stop_requested",
                                                         "accepts_input": False, "input_target": None},
                                  (f"command task cancelled: {rec['summary']}", {"status": "cancelled"}))
            assert rec is not None
            return {"task": svc.snapshot(rec), "stop_requested": True, "force_stop_requested": True,
                    "summary_text": f"cancelled task {task_id}"}
        live.stop_count += 1
        if live.stop_count == 1:
            rec = svc._set_status(task_id, "cancelling", {"cancel_requested": True, "force_stop_requested": False,
                                                          "accepts_input": False, "input_target": None}) or rec
            svc.start_soon(live.proc.stop)
            force = False
        else:
            force = True
            rec = svc._set_status(task_id, "cancelling", {"force_stop_requested": True}) or rec
            if live.stop_count == 2:
                live.proc.signal_group(signal.SIGKILL)
        return {"task": svc.snapshot(rec), "stop_requested": True, "force_stop_requested": force,
                "summary_text": f"stop requested for task {task_id}"}
