"""ExecCommand and ExecCommandBatch: input models, handlers, receipts (commands spec §4–§5).

Shared launch fields are declared once in :class:`_LaunchFields` and composed,
so the schema itself makes batch-only fields invalid for a single command and
interactive fields invalid in a batch (design.md).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from ...render._ansi import strip_ansi, terminal_text
from ...render.human import batch_human, capped_note, exec_human
from .._context import ToolContext, resolve_shell
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, Rendering, ToolSpec
from .._text import command_diagnostics, command_preview, cut, cut_head_tail, kept_chars
from .results._commands import ExecCommandBatchResult, ExecCommandResult

__all__ = ["ExecCommandInput", "ExecCommandBatchInput", "BatchItem", "SPECS", "resolve_shell", "output_tokens"]

UInt = Annotated[int, Field(ge=0, le=2**64 - 1, json_schema_extra={"format": "uint64"})]
_EXACT_READ_LIMIT = 4_000_000  # chars; above this, previews are cut from spool head + memory tail


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class _LaunchFields(_Strict):
    workdir: str | None = Field(
        None, description="Working directory; relative paths join the active workspace cwd. null: the workspace cwd."
    )
    shell: str | None = Field(None, description="Shell program; null: derived from $SHELL (bash, zsh or sh).")
    login: bool | None = Field(None, description="Run as a login shell (`-lc`); null means true.")
    yield_time_ms: UInt | None = Field(None, description="Foreground wait in milliseconds.")
    max_output_tokens: UInt | None = Field(
        None, description="Output budget in tokens (4 characters each); null or 0: the runtime default (8000)."
    )


class ExecCommandInput(_LaunchFields):
    """Arguments of ExecCommand (commands spec §4.6)."""

    cmd: str = Field(description="Shell script text, passed to the shell unmodified.")
    tty: bool | None = Field(None, description="Run on a pseudo-terminal; null means false.")
    duplicate_policy: Literal["reuse_running", "start_new"] = Field(
        "reuse_running",
        description="reuse_running returns an identical active task instead of starting another, unless ApplyPatch "
        "changed files under its workdir or execution root since it started.",
    )
    accepts_input: bool | None = Field(None, description="Keep stdin open for TaskInput; null: the value of tty.")
    yield_time_ms: UInt | None = Field(
        None,
        description="Foreground wait in milliseconds before promotion to a background task; null means 10000, 0 promotes at once.",
    )


class BatchItem(_LaunchFields):
    """One command of ExecCommandBatch; unset fields fall back to the batch's top level."""

    cmd: str = Field(description="Shell script text.")
    yield_time_ms: UInt | None = Field(
        None, description="Hard timeout in milliseconds for this item; null: the batch value, else 30000."
    )


class ExecCommandBatchInput(_LaunchFields):
    """Arguments of ExecCommandBatch (commands spec §5.2)."""

    items: list[BatchItem] = Field(description="1 to 12 commands, run in order.")
    stop_on_error: bool | None = Field(
        None, description="Skip the remaining items after the first failed one; null means false."
    )
    yield_time_ms: UInt | None = Field(None, description="Default per-item timeout in milliseconds; null means 30000.")


# ---------------------------------------------------------------- launch helpers


def output_tokens(requested: int | None, ctx: ToolContext) -> int:
    """Effective output tokens (commands spec §4.3)."""
    default = max(1, int(ctx.setting("default_tool_output_tokens")))
    cap = max(int(ctx.setting("max_tool_output_tokens")), default)
    value = requested if requested else default
    return min(value, cap)


def _resolve_workdir(workdir: str | None, ctx: ToolContext) -> str:
    base = ctx.cwd
    if workdir is None:  # the projection's cwd, a directory (checked, or repaired, as it was read)
        return os.path.normpath(base)
    path = Path(workdir) if os.path.isabs(workdir) else base / workdir
    resolved = os.path.normpath(str(path))
    if not os.path.exists(resolved):
        raise ToolFailure(
            ToolError(
                kind="workdir_not_found",
                message=f"workdir {resolved} does not exist",
                details={"workdir": resolved},
                recovery_hint="Pass an existing directory as `workdir`, or omit it to use the workspace cwd.",
            )
        )
    return resolved


def _spawn_error(cmd: str, shell: str, workdir: str, exc: Exception) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="command_spawn_failed",
            message=f"could not start the command: {getattr(exc, 'strerror', None) or exc}",
            details={"cmd": cmd, "shell": shell, "workdir": workdir, "error": str(exc)},
            recovery_hint="Check `shell` and `workdir` (it must be a directory).",
        )
    )


async def _wait_or_stop(proc: Any, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for the process to finish; if the call is cancelled meanwhile
    (Ctrl-C in the kernel, the runtime closing), stop its process group first: a command
    never outlives a call that did not make it a task."""
    try:
        return await proc.wait(timeout_s)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await proc.stop()
        proc.discard_spools()
        raise


# ---------------------------------------------------------------- completed results


def _read_head(capture: Any, n: int) -> str:
    if capture.spool_path is None:
        return capture.tail()[:n]
    with open(capture.spool_path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read(n)


class _Stream:
    """A stream's complete trimmed text, or its head/tail for very large streams."""

    def __init__(self, capture: Any, scrub: Callable[[str], str]):
        # D6: every preview is cut from scrubbed text, so a secret straddling the cut leaves no prefix
        self.capture = capture
        self.name = capture.name
        # previews are what a terminal shows (\r and \b applied, escapes removed); colour (SGR) stays in
        # an untruncated preview for the HTML card, and the model's copy loses it (Runtime._finish_call).
        # Counts are of the visible text, so truncation notices never count removed escape bytes.
        self.text: str | None  # None: only the head and tail were read
        if capture.total_chars == 0:  # most commands' stderr, and true's stdout: nothing to read
            self.text, self.visible, self.total = "", "", 0
        elif capture.total_chars <= _EXACT_READ_LIMIT:
            self.text = terminal_text(scrub(capture.read_all()), keep_colour=True).strip()
            self.visible = strip_ansi(self.text)
            self.total = len(self.visible)
        else:
            self.text = None
            head = terminal_text(scrub(_read_head(capture, 600_000)))
            tail = terminal_text(scrub(capture.tail()))
            self.head = head.lstrip()
            self.tail_text = tail.rstrip()
            self.total = capture.total_chars - (len(head) - len(self.head)) - (len(tail) - len(self.tail_text))

    @property
    def blank(self) -> bool:
        return self.total == 0

    def preview(self, budget: int) -> tuple[str, bool]:
        if self.text is not None:
            if self.total <= budget:
                return self.text, False
            return cut(self.visible, budget)
        return cut_head_tail(self.head, self.tail_text, budget), True  # always longer than any budget


def completed_payload(
    proc: Any, cmd: str, tokens: int, ctx: ToolContext, diagnostics: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Build the ``completed`` ExecCommandResult of an exited process (commands spec §4.6 step 6).

    ``diagnostics``: the call's ``command_diagnostics`` when already made (None: made here).

    Previews are cut from the complete streams (spooled to disk); a truncated
    stream's complete raw text is kept as an artifact under the agent home.
    """
    budget = tokens * 4
    streams = [_Stream(c, ctx.scrub) for c in (proc.stdout, proc.stderr)]
    live = [s for s in streams if not s.blank]
    share = budget // len(live) if live else budget
    out: dict[str, Any] = {
        "disposition": "completed",
        "exit_status": proc.exit_status,
        "stdout_preview": None,
        "stderr_preview": None,
        "truncated": False,
        "command_diagnostics": command_diagnostics(cmd, tokens, ctx.scrub) if diagnostics is None else diagnostics,
    }
    artifacts: list[dict[str, str]] = []
    for st in live:
        preview, truncated = st.preview(share)
        out[f"{st.name}_preview"] = preview
        out[f"{st.name}_chars"] = st.total
        if st.capture.lossy:
            out[f"{st.name}_lossy"] = True
        if truncated:
            out["truncated"] = True
            out[f"{st.name}_kept_chars"] = kept_chars(st.total, share)
            out[f"{st.name}_artifact"] = len(artifacts)
            artifacts.append({"path": str(ctx.commands.keep_artifact(st.capture, st.name))})
            if st.capture.bytes_dropped:  # [D] issue 25 item 3a: the artifact is not the whole stream; say why
                out[f"{st.name}_artifact_bytes_dropped"] = st.capture.bytes_dropped
                out[f"{st.name}_artifact_capped_by"] = st.capture.capped_by
    if out["stdout_preview"] and out["stderr_preview"]:  # D6: a secret printed half to each (issue 25 item 1c)
        out["stdout_preview"], out["stderr_preview"] = ctx.scrub_streams(out["stdout_preview"], out["stderr_preview"])
    proc.discard_spools()
    if artifacts:
        out["artifacts"] = artifacts
    if proc.exit_status is not None:
        out["summary_text"] = f"command exited with status {proc.exit_status}"
    else:
        out["summary_text"] = f"command terminated by {proc.signal_name or 'a signal'}"
    members = proc.group_members() if hasattr(proc, "group_members") else []
    if members:  # [D] issue 9: a background child outlived the command; say so, the runtime ends it at close
        out["process_group_alive"] = True
        out["process_group_members"] = len(members)
        out["summary_text"] += (
            f"; {len(members)} process(es) it started still run in its process group (ended when the runtime closes)"
        )
    return out


# ---------------------------------------------------------------- ExecCommand


def _identity(cmd: str, workdir: str, shell: str | None, login: bool, tty: bool) -> dict[str, Any]:
    return {"cmd": cmd, "workdir": workdir, "shell": shell, "login": login, "tty": tty}


def _already_running(task: dict[str, Any], tokens: int, cmd: str, ctx: ToolContext) -> dict[str, Any]:
    status = task["status"]
    return {
        "disposition": "already_running",
        "task_handle": {"task_id": task["task_id"], "task_kind": "command_task", "status": status},
        "command": task.get("command", {}),
        "summary": task.get("summary"),
        "instructions": (
            "An identical command is already running; use TaskOutput or TaskStatus with this task_id, "
            'or set duplicate_policy="start_new" to start another instance.'
        ),
        "command_diagnostics": command_diagnostics(cmd, tokens, ctx.scrub),
        "summary_text": f"command already running as {task['task_id']} (status {status.title()})",
    }


def _launch_args(args: ExecCommandInput, ctx: ToolContext) -> tuple[str, str, bool, bool, bool]:
    """``(shell, workdir, login, tty, accepts_input)`` of the command an ExecCommand call starts
    (commands spec §4.6). Raises ToolFailure (``workdir_not_found``)."""
    workdir = _resolve_workdir(args.workdir, ctx)
    login = True if args.login is None else args.login
    tty = bool(args.tty)
    accepts_input = tty if args.accepts_input is None else args.accepts_input
    return resolve_shell(args.shell), workdir, login, tty, accepts_input


def _start_early(args: ExecCommandInput, ctx: ToolContext) -> Any:
    """ExecCommand's ``start_early`` (issue 27 item 7): its command, started on the calling thread for the
    handler's ``spawn`` to adopt; None, starting nothing, when the handler may give back a running task
    instead (this runtime runs one, and the call reuses running ones), or cannot start it without waiting."""
    if args.duplicate_policy == "reuse_running" and ctx.commands.runs_tasks():
        return None
    shell, workdir, login, tty, accepts_input = _launch_args(args, ctx)
    return ctx.commands.start_early(shell, args.cmd, workdir, login=login, tty=tty, accepts_input=accepts_input)


async def exec_command(args: ExecCommandInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ExecCommand (commands spec §4.6)."""
    tokens = output_tokens(args.max_output_tokens, ctx)
    # what the call started on its calling thread (_start_early) goes on as it was started
    shell, workdir, login, tty, accepts_input = ctx.commands.early_launch() or _launch_args(args, ctx)
    yield_ms = 10_000 if args.yield_time_ms is None else args.yield_time_ms
    identity = _identity(args.cmd, workdir, args.shell, login, tty)
    stale = None
    if args.duplicate_policy == "reuse_running":
        running = ctx.commands.find_active_command(identity)
        if running is not None and not running.get("changed_files"):
            return _already_running(running, tokens, args.cmd, ctx)
        stale = running  # [D] issue 26: started before ApplyPatch changed files it may read; a new run starts
    edit_mark = ctx.commands.edit_mark()
    try:
        proc = await ctx.commands.spawn(shell, args.cmd, workdir, login=login, tty=tty, accepts_input=accepts_input)
    except (OSError, ValueError) as exc:  # ValueError: NUL byte or unencodable text in argv
        raise _spawn_error(args.cmd, shell, workdir, exc) from None
    diagnostics = command_diagnostics(args.cmd, tokens, ctx.scrub)  # made while the command starts (issue 12)
    if yield_ms > 0 and await _wait_or_stop(proc, yield_ms / 1000):
        return _not_reused(completed_payload(proc, args.cmd, tokens, ctx, diagnostics), stale)
    proc.read_ready()  # output written before the yield ended, not yet read by the loop, is initial output
    initial = _Stream(proc.combined, ctx.scrub)
    preview, truncated = initial.preview(tokens * 4) if not initial.blank else (None, False)
    detail = {
        **identity,
        "yield_time_ms": yield_ms,
        "max_output_tokens": tokens,
        "accepts_input": accepts_input,
        "initial_output": preview,
        "edit_mark": edit_mark,
    }
    handle = await ctx.commands.promote(proc, detail)
    out: dict[str, Any] = {
        "disposition": "promoted_to_task",
        "task_handle": handle,
        "initial_output_truncated": truncated,
        "command_diagnostics": diagnostics,
        "summary_text": "command promoted to a managed task",
    }
    if preview is not None:
        out["initial_output_preview"] = preview
    return _not_reused(out, stale)


def _not_reused(out: dict[str, Any], stale: dict[str, Any] | None) -> dict[str, Any]:
    """Say in ``out`` which identical running task was not reused because files changed since it started."""
    if stale is not None:
        changed = stale["changed_files"]
        out["not_reused_task"] = {"task_id": stale["task_id"], "status": stale["status"], "changed_files": changed}
        out["summary_text"] += (
            f"; the identical command still running as {stale['task_id']} was not reused: "
            f"{len(changed)} file(s) it may read changed since it started"
        )
    return out


def _notices(result: dict[str, Any], name: str) -> list[str]:
    lines = []
    if result.get(f"{name}_artifact") is not None:
        total = result.get(f"{name}_chars", 0)
        omitted = total - result.get(f"{name}_kept_chars", total)
        path = result["artifacts"][result[f"{name}_artifact"]]["path"]
        lines.append(f"[{name} truncated: {omitted} of {total} characters not shown; full output: {path}]")
        if result.get(f"{name}_artifact_bytes_dropped"):
            dropped, note = result[f"{name}_artifact_bytes_dropped"], capped_note(result, f"{name}_artifact_capped_by")
            lines.append(f"[{name} artifact incomplete: its last {dropped} bytes were not kept{note}]")
    if result.get(f"{name}_lossy"):
        lines.append(f"[{name} decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD]")
    return lines


def _completed_lines(result: dict[str, Any], blank_lines: bool) -> list[str]:
    lines: list[str] = []
    for name in ("stdout", "stderr"):
        preview = result.get(f"{name}_preview")
        if preview is not None and preview.strip():
            if blank_lines:
                lines.append("")
            lines += [f"{name}:", preview, *_notices(result, name)]
    if result.get("artifacts"):
        if blank_lines:
            lines.append("")
        lines += ["Artifacts:", *[a["path"] for a in result["artifacts"]]]
    return lines


def _not_reused_lines(r: dict[str, Any]) -> list[str]:
    stale = r.get("not_reused_task")
    if not stale:
        return []
    return [
        "",
        f"[an identical command still runs as {stale['task_id']}, started before {len(stale['changed_files'])} "
        "file(s) it may read were changed by ApplyPatch: not reused; stop it with TaskStop if it is not needed]",
    ]


def render_exec_receipt(env: dict[str, Any], context: Any = None) -> str:
    """Text receipt of a successful ExecCommand (commands spec §4.6)."""
    r = env["result"]
    disp = r["disposition"]
    if disp == "completed":
        head = "Process exited" if r.get("exit_status") is None else f"Process exited with code {r['exit_status']}"
        lines = [head, *_completed_lines(r, blank_lines=True)]
        if r.get("process_group_alive"):
            note = (
                f"[{r.get('process_group_members')} process(es) started by this command still run in its "
                "process group; they are ended when the runtime closes]"
            )
            lines += ["", note]
        return "\n".join(lines + _not_reused_lines(r))
    task = r["task_handle"]
    if disp == "promoted_to_task":
        preview = r.get("initial_output_preview")
        lines = [
            "Command promoted to background task",
            f"Task: {task['task_id']}",
            "",
            "Initial output:",
            preview if preview and preview.strip() else "(none captured before promotion)",
        ]
        return "\n".join(lines + _not_reused_lines(r))
    lines = ["Command is already running", f"Task: {task['task_id']}", f"Status: {task['status'].title()}"]
    cmd = r.get("command") or {}
    if r.get("summary"):
        lines.append(f"Task summary: {r['summary']}")
    if cmd.get("cmd"):
        lines.append(f"Command: {cmd['cmd']}")
    if cmd.get("workdir"):
        lines.append(f"workdir={cmd['workdir']}")
    if cmd.get("shell"):
        lines.append(f"shell={cmd['shell']}")
    if r.get("instructions"):
        lines += ["", r["instructions"]]
    return "\n".join(lines)


# ---------------------------------------------------------------- ExecCommandBatch

_MAX_ITEMS = 12


def _batch_hint(raw: Any, parse_error: str) -> str | None:
    if not isinstance(raw, dict):
        return 'ExecCommandBatch takes an object: {"items": [{"cmd": "..."}, ...]}.'
    if "cmd" in raw:
        return (
            'ExecCommandBatch needs {"items":[{"cmd":"..."}]}; for one command use ExecCommand '
            "instead (a batch is not for one command)."
        )
    items = raw.get("items")
    if isinstance(items, list) and any(isinstance(i, dict) and ("tty" in i or "accepts_input" in i) for i in items):
        return (
            "Batch items cannot be interactive: `tty` and `accepts_input` are not accepted in a batch; "
            "use ExecCommand for an interactive command."
        )
    return None


async def exec_command_batch(args: ExecCommandBatchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ExecCommandBatch (commands spec §5.5)."""
    n = len(args.items)
    if n == 0:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message="ExecCommandBatch requires a non-empty `items`",
                details={"tool_name": "ExecCommandBatch", "field": "items", "validation_error": "must not be empty"},
                recovery_hint='Pass 1 to 12 commands as {"items":[{"cmd":"..."}]}.',
            )
        )
    if n > _MAX_ITEMS:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"ExecCommandBatch accepts at most {_MAX_ITEMS} items, got {n}",
                details={
                    "tool_name": "ExecCommandBatch",
                    "field": "items",
                    "validation_error": "too_many_items",
                    "max_items": _MAX_ITEMS,
                    "actual_items": n,
                },
                recovery_hint=f"Split the commands into smaller batches of at most {_MAX_ITEMS} items.",
            )
        )
    stop_on_error = bool(args.stop_on_error)
    items: list[dict[str, Any]] = []
    failed_before = False
    for index, item in enumerate(args.items, start=1):
        if failed_before and stop_on_error:
            items.append(
                {
                    "index": index,
                    "cmd": item.cmd,
                    "status": "skipped",
                    "error_kind": "skipped_after_previous_error",
                    "error_message": "skipped because an earlier item failed and stop_on_error is true",
                }
            )
            continue
        entry = await _run_item(index, item, args, ctx)
        failed_before |= entry["status"] in ("failed", "rejected")
        items.append(entry)
    counts = {s: sum(1 for i in items if i["status"] == s) for s in ("completed", "failed", "rejected", "skipped")}
    return {
        "item_count": n,
        "completed_count": counts["completed"],
        "failed_count": counts["failed"],
        "rejected_count": counts["rejected"],
        "skipped_count": counts["skipped"],
        "stop_on_error": stop_on_error,
        "items": items,
        "summary_text": f"ExecCommandBatch completed {counts['completed']}/{n} items",
    }


def _pick(item: BatchItem, top: ExecCommandBatchInput, name: str) -> Any:
    value = getattr(item, name)
    return getattr(top, name) if value is None else value


async def _run_item(index: int, item: BatchItem, top: ExecCommandBatchInput, ctx: ToolContext) -> dict[str, Any]:
    started = time.monotonic()
    entry: dict[str, Any] = {"index": index, "cmd": item.cmd}
    tokens = output_tokens(_pick(item, top, "max_output_tokens"), ctx)
    yield_ms = _pick(item, top, "yield_time_ms")
    yield_ms = 30_000 if yield_ms is None else yield_ms
    login = _pick(item, top, "login")
    login = True if login is None else login
    shell_arg = _pick(item, top, "shell")
    shell = resolve_shell(shell_arg)
    try:
        workdir = _resolve_workdir(_pick(item, top, "workdir"), ctx)
        try:
            proc = await ctx.commands.spawn(shell, item.cmd, workdir, login=login, tty=False, accepts_input=False)
        except (OSError, ValueError) as exc:
            raise _spawn_error(item.cmd, shell, workdir, exc) from None
        if yield_ms == 0 or not await _wait_or_stop(proc, yield_ms / 1000):
            await proc.stop()
            proc.discard_spools()
            raise ToolFailure(
                ToolError(
                    kind="command_timed_out",
                    message=f"command ran past its yield_time_ms of {yield_ms} ms and was stopped",
                    details={
                        "cmd_preview": command_preview(item.cmd, ctx.scrub),
                        "command_cost": len(item.cmd),
                        "workdir": workdir,
                        "yield_time_ms": yield_ms,
                    },
                )
            )
        result = completed_payload(proc, item.cmd, tokens, ctx)
        entry["status"] = "completed" if result.get("exit_status") == 0 else "failed"
        entry["result"] = result
    except ToolFailure as failure:
        entry["status"] = "failed"
        entry["error_kind"] = failure.error.kind
        entry["error_message"] = failure.error.message
    entry["duration_ms"] = int((time.monotonic() - started) * 1000)
    return entry


def render_batch_receipt(env: dict[str, Any], context: Any = None) -> str:
    """Text receipt of ExecCommandBatch (commands spec §5.6); never shows the raw ``cmd``."""
    r = env["result"]
    lines = [env.get("summary_text", "")]
    for item in r["items"]:
        lines += ["", f"[{item['index']}] {command_preview(item['cmd'])}"]
        status = item["status"]
        if status == "skipped":
            lines.append("skipped=stop_on_error")
        elif status == "rejected":
            lines += [f"rejected={item.get('error_kind')}", item.get("error_message", "")]
        elif item.get("result") is not None:
            res = item["result"]
            code = res.get("exit_status")
            lines.append(f"exit={code if code is not None else 'unknown'}")
            lines += _completed_lines(res, blank_lines=False)
            if item.get("error_message"):
                lines.append(f"error: {item['error_message']}")
        else:
            lines += ["failed=no_result", f"error: {item.get('error_message', '')}"]
    return "\n".join(lines)


SPECS = (
    ToolSpec(
        name="ExecCommand",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=ExecCommandInput,
        handler=exec_command,
        result_name="ExecCommandResult",
        output_model=ExecCommandResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_exec_receipt,
        human=exec_human,
        related_surfaces=("CLI task/process wrappers", "HTTP control-plane task APIs"),
        start_early=_start_early,
    ),
    ToolSpec(
        name="ExecCommandBatch",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=ExecCommandBatchInput,
        handler=exec_command_batch,
        result_name="ExecCommandBatchResult",
        output_model=ExecCommandBatchResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_batch_receipt,
        parse_hint=_batch_hint,
        human=batch_human,
        related_surfaces=("CLI task/process wrappers", "HTTP control-plane task APIs"),
    ),
)
