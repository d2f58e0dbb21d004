"""Command tasks: promotion, lifecycle, output, input, stop, restart reconciliation.

Implements the task model of commands spec §6–§9 over the SQLite store and
the live process handles of :mod:`holon_nb.runtime.tasks._processes`. Methods run
on the runtime's loop thread.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ...tools._text import cut
from ..core._rows import task_in
from ..core._store import Store, is_busy, new_id, now_rfc3339
from ._edits import FileEdits
from ._group_journal import GroupJournal, reap
from ._launch import CommandEnv
from ._process_groups import end_group
from ._processes import CommandProcess
from ._snapshot import ShellSnapshots

if TYPE_CHECKING:
    from ...render._scrubbing import Scrubber
    from ._ports import AgentEnv, DiskGrant, EventSink, ScrubberSource, StartSoon, TaskResults, TaskSettings

__all__ = ["TaskService", "ACTIVE", "TERMINAL"]

log = logging.getLogger("holon_nb.tasks")

ACTIVE = ("queued", "running", "cancelling")
TERMINAL = ("completed", "failed", "cancelled", "interrupted")
_PHASE = {"queued": 0, "running": 1, "cancelling": 2, **{s: 3 for s in TERMINAL}}
_IDENTITY = ("cmd", "cmd_digest", "workdir", "shell", "login", "tty", "promoted_from_exec_command")


@dataclass
class _Live:
    proc: CommandProcess
    stop_count: int = 0
    interrupted_reason: str | None = None  # set when the runtime itself ends the task (it closes)
    done: anyio.Event = field(default_factory=anyio.Event)


#: Runtimes alive in this process, by owner token (a closed or collected runtime leaves it).
_LIVE_OWNERS: set[str] = set()


def owner_token(runtime_id: str) -> str:
    """``<pid>:<process start ticks>:<runtime id>`` — who owns the tasks a runtime starts."""
    return f"{os.getpid()}:{_proc_start(os.getpid())}:{runtime_id}"


def owner_alive(owner: str | None) -> bool:
    """True when the runtime that recorded ``owner`` still runs (in this process or another)."""
    if not owner:
        return False
    pid_text, start, _ = (owner.split(":", 2) + ["", ""])[:3]
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == os.getpid():
        return owner in _LIVE_OWNERS
    return _proc_start(pid) == start


def command_digest(cmd: str) -> str:
    """SHA-256 hex of a command's UTF-8 text (lone surrogates kept as is): ``cmd_digest``."""
    return hashlib.sha256(cmd.encode("utf-8", "surrogatepass")).hexdigest()


def _proc_start(pid: int) -> str | None:
    """The process start time in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    try:  # one open and one read, no file object: every command reads its leader's (issue 27 item 7)
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = os.read(fd, 4096)  # the whole line (well under a page: 52 numbers and a 16-byte name)
        finally:
            os.close(fd)
        return data.rsplit(b")", 1)[1].split()[19].decode("ascii", "replace")
    except (OSError, IndexError):
        return None


_TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")  # /proc's clock tick (USER_HZ), in ns
#: Start times taken from the boot clock that ``/proc`` confirmed, or -1 once it disagreed (then always ``/proc``).
_BOOT_CLOCK_CHECKS = [0]
_CHECKS_NEEDED = 3


def leader_start(pid: int, window: tuple[int, int] | None) -> str | None:
    """The start time of a child just created, in ``/proc`` clock ticks (:func:`_proc_start`'s value).

    ``/proc/<pid>/stat`` gives it as the boot clock (``CLOCK_BOOTTIME``) when the kernel created the process,
    in whole ticks; read there, it costs an open, a read and the kernel's walk of the process (40-80 us a
    command on a busy VM, issue 27 item 7). ``window`` is the boot clock read just before the child was
    created and just after: when both fall in the same tick, that tick is the start time, with no read.
    ``/proc`` is still read when the window spans a tick boundary, or ``window`` is None, and for the first
    few children of the process, to check the kernel keeps start times this way here; one disagreement
    turns the shortcut off for good.
    """
    checks = _BOOT_CLOCK_CHECKS[0]
    if window is None or checks < 0 or window[0] // _TICK_NS != window[1] // _TICK_NS:
        return _proc_start(pid)
    estimate = str(window[0] // _TICK_NS)
    if checks >= _CHECKS_NEEDED:
        return estimate
    actual = _proc_start(pid)
    if actual is not None:  # None: the child is gone already, nothing to compare
        _BOOT_CLOCK_CHECKS[0] = checks + 1 if actual == estimate else -1
    return actual


class TaskService:
    """Task records and live command handles of one runtime.

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store.
        home: The holon home (absolute).
        env: Base environment for commands (the live ``os.environ``: a variable set in a cell after loading
            reaches the next command).
        publish: The runtime's event sink (called on the loop thread).
        start_soon: Starts a background coroutine in the runtime's task group.
        settings: Returns the runtime's current settings (read at each spawn, so
            a changed ``max_task_log_bytes`` applies to the next command).
        scrubber: The runtime's current D6 scrubber; applied to everything stored
            for display — task summary, command, outputs, ``TaskResult`` messages —
            so a later process that no longer knows the secret cannot show it, and given to each spawn so
            task logs and artifacts are scrubbed as they are written. None: nothing is scrubbed.
        results: Where task results go: the one enqueue path that also triggers waits, a call after each
            such transaction commits, the work item a new task captures (the work plane).
        agent_homes: ``agent_id -> Path`` of each agent's home (created on demand).
        disk_grant: Issue 25 item 3a: bytes a spool write may add under the home's size cap (the runtime's
            ``DiskBudget``); None: no cap.
        agent_env: Variables added to an agent's commands (the trigger plane's URL); None: none.
    """

    def __init__(
        self,
        *,
        store: Store,
        home: Path,
        env: Mapping[str, str],
        publish: EventSink,
        start_soon: StartSoon,
        settings: Callable[[], TaskSettings],
        scrubber: ScrubberSource | None,
        results: TaskResults,
        agent_homes: Callable[[str], Path],
        disk_grant: DiskGrant | None = None,
        agent_env: AgentEnv | None = None,
    ):
        self.store = store
        self.home = home
        self.env = env
        self.publish = publish
        self.start_soon = start_soon
        self.settings = settings
        self._scrubber = scrubber
        self.results = results
        self.agent_home = agent_homes
        self.disk_grant = disk_grant
        self._agent_env = agent_env
        self.live: dict[str, _Live] = {}
        #: process groups this runtime started (pgid), foreground commands included: ended at close
        self.groups: set[int] = set()
        self._env_copy: tuple[dict[bytes, bytes], dict[str, str]] | None = None  # (os.environ's bytes, str copy)
        #: command_env's environments: (the agent's variables, the unset names) -> (the _environ() made from, env)
        self._env_made: dict[tuple[Any, ...], tuple[dict[str, str], CommandEnv]] = {}
        self.owner = owner_token(new_id("rt"))
        _LIVE_OWNERS.add(self.owner)
        #: where running commands spool their output (made once: a path join per command costs, issue 12)
        self.spool_dir = home / "spool"
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        #: every group this runtime starts, journaled before its first wait: a SIGKILL leaves it to the next runtime
        self.journal = GroupJournal(self.spool_dir / "groups", self.owner)
        self.snapshots = ShellSnapshots(home)
        #: files ApplyPatch changed: an identical running command started before them is not reused (issue 26)
        self.edits = FileEdits()

    def make_scrubber(self) -> Scrubber | None:
        """The runtime's current D6 scrubber (None when this service was given none)."""
        return self._scrubber() if self._scrubber is not None else None

    def scrub(self, text: str) -> str:
        """``text`` with the secret values the runtime knows replaced (D6)."""
        return self._scrubber().text(text) if self._scrubber is not None else text

    def command_env(self, agent_id: str | None = None) -> CommandEnv:
        """The environment of a command: the runtime's, ``HOLON_RUNTIME=1``, the agent's variables when
        ``agent_id`` is given, without the names of ``command_env_unset``.

        Read-only, and the same object while the process environment, the agent's variables and the setting
        are unchanged (issue 27 item 7: what follows recognises it by identity); copy it to change it.
        """
        environ = self._environ()
        agent: tuple[tuple[str, str], ...] = ()
        if agent_id is not None:
            agent = (("HOLON_AGENT_ID", agent_id), ("HOLON_AGENT_HOME", str(self.agent_home(agent_id))))
            if self._agent_env is not None:  # e.g. HOLON_EXTERNAL_TRIGGER_URL (workspace spec §14)
                agent += tuple(self._agent_env(agent_id).items())
        unset = self.settings().command_env_unset
        key = (agent, unset)  # the agent's variables name it (none: no agent)
        hit = self._env_made.get(key)
        if hit is not None and hit[0] is environ:
            return hit[1]
        env = {**environ, "HOLON_RUNTIME": "1", **dict(agent)}
        for name in unset:
            env.pop(name, None)
        made = CommandEnv(env)
        if len(self._env_made) >= 16:
            self._env_made.clear()
        self._env_made[key] = (environ, made)
        return made

    def _environ(self) -> dict[str, str]:
        """A copy of :attr:`env` as a dict, remade only when the environment changed (issue 12).

        Copying ``os.environ`` decodes every variable (~0.2 ms a command here); its encoded
        mapping (``os.environ._data``, bytes to bytes) is compared instead, a C-level dict
        comparison, so a variable set in a cell still reaches the next command.
        """
        data = getattr(self.env, "_data", None)
        if not isinstance(data, dict):  # not os.environ: a plain mapping given by a caller or a test
            return dict(self.env)
        cached = self._env_copy
        if cached is None or cached[0] != data:
            cached = self._env_copy = (dict(data), dict(self.env))
        return cached[1]

    def start_shell_snapshot(self, shell: str, cwd: str) -> None:
        """Capture ``shell``'s login profile in the background, for the first login command to use."""
        if self.settings().shell_snapshot:
            self.snapshots.start(shell, cwd, self.command_env())

    # ------------------------------------------------------------ restart (D7)
    def reconcile_after_restart(self) -> list[str]:
        """Mark tasks left active by a dead runtime ``interrupted``; kill their orphaned groups (D7).

        Tasks whose owning runtime still runs — another kernel or CLI on the
        same home, or another runtime in this process — are left alone. Process groups a dead
        runtime journaled (a command still in its foreground window when it was killed, with no
        task record) are ended too (:mod:`.group_journal`, issue 25 item 4b).

        Returns:
            The ids of the tasks that were interrupted.
        """
        reap(self.journal.path.parent, owner_alive, _proc_start)
        done = []
        for rec in self.store.tasks("status IN ('queued','running','cancelling')"):
            if owner_alive(rec.get("owner")):
                continue
            kill_recorded_group(rec)
            before = rec["status"]
            detail = dict(rec["detail"])
            detail.update(
                status_before_restart=before,
                interrupted_reason="runtime_restarted",
                interrupted_at=now_rfc3339(),
                accepts_input=False,
                input_target=None,
            )
            text = f"task {rec['id']} was interrupted because the runtime restarted"
            with self.store.tx() as db:
                Store.update_task(db, rec["id"], "interrupted", detail)
                self.results.enqueue_task_message(
                    db,
                    rec["agent_id"],
                    "TaskResult",
                    text,
                    rec["id"],
                    {
                        "status": "interrupted",
                        "status_before_restart": before,
                        "interrupted_reason": "runtime_restarted",
                    },
                )
            self.results.flush_task_events()
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
            "task_id": rec["id"],
            "kind": rec["kind"],
            "status": rec["status"],
            "created_at": rec["created_at"],
            "updated_at": rec["updated_at"],
            "wait_policy": "background",
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
    def _set_status(
        self, task_id: str, status: str, updates: dict[str, Any], message: tuple[str, dict[str, Any]] | None = None
    ) -> dict[str, Any] | None:
        """Apply a monotone status transition in one transaction (commands spec §6.2)."""
        with self.store.tx() as db:
            rec = task_in(db, task_id)
            if rec is None:
                return None
            cur = rec["status"]
            if _PHASE[status] < _PHASE[cur] or cur in TERMINAL:
                return rec  # monotone: never lower a phase, never leave a terminal state
            detail = {**rec["detail"], **updates}
            rec["updated_at"] = Store.update_task(db, task_id, status, detail)
            rec["status"], rec["detail"] = status, detail
            if message is not None:
                self.results.enqueue_task_message(db, rec["agent_id"], "TaskResult", message[0], task_id, message[1])
        self.results.flush_task_events()
        self.publish("task_status", task_id, status=status, exit_status=detail.get("exit_status"))
        return rec

    def promote(self, agent_id: str, proc: CommandProcess, detail: dict[str, Any]) -> dict[str, Any]:
        """Register a running process as a ``command_task`` and start its runner (commands spec §4.6 step 7).

        Returns:
            The ``TaskHandle`` dict.
        """
        task_id = new_id("task")
        raw_cmd = detail["cmd"]
        cmd = self.scrub(raw_cmd)  # identity is the digest of the raw text; what is stored is scrubbed
        log_path = self.agent_home(agent_id) / "task-output" / f"{task_id}.log"
        proc.promote(log_path)
        summary = "Run command: " + cmd[:80] + ("..." if len(cmd) > 80 else "")
        accepts = bool(detail.get("accepts_input"))
        initial = detail.get("initial_output")
        full = {
            **detail,
            "cmd": cmd,
            "initial_output": self.scrub(initial) if initial else initial,
            "cmd_digest": command_digest(raw_cmd),
            "promoted_from_exec_command": True,
            "output_path": str(log_path),
            "accepts_input": accepts,
            "input_target": ("tty" if detail.get("tty") else "stdin") if accepts else None,
            "terminal_snapshot_ready": False,
            "exit_status": None,
        }
        ts = now_rfc3339()
        work_item_id = self.results.captured_work_item(agent_id)  # captured at creation, never moved (agents spec §3.4)
        with self.store.tx() as db:
            Store.insert_task(
                db,
                {
                    "id": task_id,
                    "agent_id": agent_id,
                    "work_item_id": work_item_id,
                    "kind": "command_task",
                    "status": "queued",
                    "summary": summary,
                    "detail": full,
                    "pgid": proc.pgid,
                    "proc_start": _proc_start(proc.pid),
                    "created_at": ts,
                    "updated_at": ts,
                    "owner": self.owner,
                },
            )
        live = _Live(proc)
        self.live[task_id] = live
        proc.on_output = lambda stream, text: self.publish("task_output", task_id, stream=stream, text=text)
        self.publish("task_promoted", task_id, agent_id=agent_id, summary=summary, cmd=cmd)
        self._set_status(task_id, "running", {})  # the process already runs: its runner starts now
        self.start_soon(self._run, task_id, live)
        # registered as queued and running at once: report what is true now (spec allows either)
        return {"task_id": task_id, "task_kind": "command_task", "status": "running"}

    async def _run(self, task_id: str, live: _Live) -> None:
        try:
            await live.proc.wait(None)
            await self._record_end(task_id, live)
        finally:
            live.proc.on_output = None
            self.live.pop(task_id, None)
            live.done.set()

    async def _record_end(self, task_id: str, live: _Live) -> None:
        """Record the task's end, retrying while the store is locked (another kernel on the home).

        A locked store is retried with backoff until the write succeeds or the runtime closes; any
        other failure is logged with its traceback and retried a few times. Nothing escapes into the
        runtime's task group (a failure here used to end the loop thread).
        """
        delay, failures = 0.1, 0
        while True:
            try:
                await self._finish(task_id, live)  # waits for a locked home without blocking the loop
                if failures:
                    log.info("task %s: its end was recorded after %d failed attempts", task_id, failures)
                return
            except Exception as exc:
                failures += 1
                busy = is_busy(exc)
                if failures == 1:
                    log.warning("task %s: recording its end failed; retrying", task_id, exc_info=not busy)
                if self.store.closed or (not busy and failures >= 5):
                    log.error(
                        "task %s: its end could not be recorded (%s); the next runtime on this home "
                        "marks it interrupted",
                        task_id,
                        exc,
                    )
                    return
                await anyio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def _finish(self, task_id: str, live: _Live) -> None:
        rec = self.store.task(task_id)
        if rec is None:
            return
        proc, d = live.proc, rec["detail"]
        if live.interrupted_reason:
            await self._interrupt(rec, live.interrupted_reason)
            return
        if live.stop_count or d.get("cancel_requested"):
            status = "cancelled"
        elif proc.exit_status == 0:
            status = "completed"
        else:
            status = "failed"
        summary = self._output_summary(proc, int(d.get("max_output_tokens") or 8000))
        summary = self.scrub(summary) if summary else summary
        updates: dict[str, Any] = {
            "exit_status": proc.exit_status,
            "terminal_snapshot_ready": True,
            "output_summary": summary,
            "accepts_input": False,
            "input_target": None,
            "output_lossy": proc.combined.lossy,
            "output_chars": proc.combined.total_chars,
            "output_bytes_dropped": proc.combined.bytes_dropped,
            "output_capped_by": proc.combined.capped_by,
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
        await self.store.write(lambda: self._set_status(task_id, status, updates, ("\n".join(lines), meta)))
        self.publish("task_ended", task_id, status=status, exit_status=proc.exit_status)

    async def _interrupt(self, rec: dict[str, Any], reason: str) -> None:
        """End a task the runtime itself stopped (it is closing): ``interrupted``, never a user cancel (D7)."""
        before = rec["status"]
        updates = {
            "status_before_restart": before,
            "interrupted_reason": reason,
            "interrupted_at": now_rfc3339(),
            "accepts_input": False,
            "input_target": None,
            "terminal_snapshot_ready": True,
            "exit_status": None,
        }
        text = f"task {rec['id']} was interrupted because the runtime closed"
        meta = {"status": "interrupted", "status_before_restart": before, "interrupted_reason": reason}
        await self.store.write(lambda: self._set_status(rec["id"], "interrupted", updates, (text, meta)))
        self.publish("task_ended", rec["id"], status="interrupted", exit_status=None)

    def _output_summary(self, proc: CommandProcess, tokens: int) -> str | None:
        # D6: scrub first, then cut, so a secret straddling the cut leaves no prefix behind
        out, err = self.scrub(proc.stdout.tail()), self.scrub(proc.stderr.tail())
        scrubber = self.make_scrubber()
        if out.strip() and err.strip() and scrubber is not None:  # a secret printed half to each (issue 25 1c)
            out, err = scrubber.pair(out, err)
        out, err = out.strip(), err.strip()
        if out and err:
            text = f"stdout:\n{out}\n\nstderr:\n{err}"
        elif err:
            text = f"stderr:\n{err}"
        else:
            text = out or self.scrub(proc.combined.tail()).strip()
        return cut(text, tokens * 4)[0] if text else None

    # ------------------------------------------------------------ queries
    def active(self, where: str = "1=1", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Active (queued, running, cancelling) task records matching ``where``, none of a dead runtime.

        A task whose owning runtime died after this one started (a kernel restarted or killed while its
        command ran) is no active task: finding one, this marks the tasks of dead runtimes ``interrupted``
        first (:meth:`reconcile_after_restart`, D7, as at start) and reads again.
        """
        sql = f"status IN ('queued','running','cancelling') AND ({where})"
        # read once per change of the home (issue 12: every command asks, for its duplicate check)
        recs = self.store.cached(("active_tasks", where, params), lambda: self.store.tasks(sql, params))
        if all(owner_alive(r.get("owner")) for r in recs):
            return [dict(r) for r in recs]  # the cached records stay as read
        self.reconcile_after_restart()
        return self.store.tasks(sql, params)

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

    def register_group(self, pid: int, window: tuple[int, int] | None = None) -> None:
        """Remember the process group a command this runtime started leads (its ``pid`` is the group id), in
        memory (ended by :meth:`close` if still alive) and in the journal a later runtime reads if this one is
        killed: called by the launch the moment the child runs (:attr:`LaunchSpec.on_start`), with the boot
        clock ``window`` its start lies in (:func:`leader_start`)."""
        self.groups.add(pid)
        self.journal.record(pid, leader_start(pid, window))

    def forget_owner(self) -> None:
        """This runtime owns nothing any more (it closed, or failed to start)."""
        _LIVE_OWNERS.discard(self.owner)

    async def close(self) -> None:
        """Stop every live task and end every process group this runtime started (the runtime closes).

        Groups whose leader already exited (``(sleep 1000 &); echo done``) are ended too:
        SIGTERM, then SIGKILL after 0.2 s. This runtime then owns nothing.
        """
        self.forget_owner()
        for live in list(self.live.values()):
            live.interrupted_reason = "runtime_closed"
            await live.proc.stop()
        with anyio.move_on_after(2):
            for live in list(self.live.values()):
                await live.done.wait()
        await anyio.to_thread.run_sync(self.end_groups)

    def end_groups(self) -> int:
        """End every remembered process group that still has live members; return how many were ended."""
        ended = 0
        for pgid in sorted(self.groups):
            if end_group(pgid):
                ended += 1
        self.groups.clear()
        self.journal.close()
        return ended

    def close_sync(self) -> None:
        """:meth:`close` for a runtime whose loop died: end the groups from the calling thread."""
        self.forget_owner()
        for live in list(self.live.values()):
            live.proc.signal_group(signal.SIGKILL)
            self.groups.add(live.proc.pgid)
        self.end_groups()


def kill_recorded_group(rec: dict[str, Any]) -> bool:
    """Kill a task's recorded process group if it is still the same process (start time matches).

    Returns:
        True when a group was signalled.
    """
    pgid, start = rec.get("pgid"), rec.get("proc_start")
    if pgid and start and _proc_start(pgid) == start:
        _kill_group(pgid)
        return True
    return False


def _kill_group(pgid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.1)
