"""``HolonMagics``: the magics of holon_nb — parse, call the runtime, display.

Every magic parses with ``magic_arguments`` (help from ``%name?``), calls a
tool through ``Runtime.call`` (the one dispatch path), displays the result's
mimebundle once and returns None. A usage mistake raises ``UsageError``; a
tool failure is an error receipt, raised as ``ToolCallError`` only with
``--raise`` or ``%config HolonNB.raise_on_tool_error = True``. Magics whose
line carries JSON or shell text are ``@no_var_expand``: ``$name`` reaches the
tool verbatim (style.md §2.10–§2.11).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import (
    Magics,
    cell_magic,
    line_magic,
    magics_class,
    no_var_expand,
)
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..runtime import ToolResult
from ..runtime.core._ids import DEFAULT_AGENT_ID
from ._display import Note, interrupted, raise_if_command_failed, show_result
from ._parsing import interpret_escapes, parse_line, split_verbatim, strip_comment, unquote
from ._status import config_table, status_table, tools_table

if TYPE_CHECKING:  # pragma: no cover
    from IPython.core.interactiveshell import InteractiveShell

    from ._session import _Session

__all__ = ["HolonMagics", "SessionMagics", "raise_option"]

raise_option = _raise = argument(
    "--raise",
    dest="raise_error",
    action="store_true",
    help="Raise ToolCallError after displaying an error receipt (default: HolonNB.raise_on_tool_error).",
)


class SessionMagics(Magics):
    """Base of holon_nb's magic classes: bound to one loaded session (runtime, config, live hub).

    Args:
        shell: The IPython shell.
        session: The loaded extension's session.
    """

    def __init__(self, shell: Any, session: _Session):
        super().__init__(shell)
        self._session = session

    @property
    def ipython(self) -> InteractiveShell:
        """The shell these magics are registered on (``Magics.shell``, set once the extension is loaded)."""
        assert self.shell is not None
        return self.shell

    # ------------------------------------------------------------ shared steps
    def _rt_call(self, name: str, args: dict[str, Any] | str, **kwargs: Any) -> ToolResult:
        """``Runtime.call``; Ctrl-C while it blocks ends the cell with one line naming what stopped.

        Raises:
            KeyboardInterrupt: when interrupted, shown by IPython as that one line (:func:`interrupted`).
        """
        try:
            return self._session.rt.call(name, args, **kwargs)
        except KeyboardInterrupt:
            raise interrupted(_interrupted_call(name, args)) from None

    def _call(
        self, name: str, args: dict[str, Any] | str, raise_error: bool = False, context: dict[str, Any] | None = None
    ) -> ToolResult:
        """Call a tool (``context``: D11 execution context), display its result (and a live view), maybe raise.

        ``raise_error`` (a magic's ``--raise``) also raises :class:`CommandFailed` for an ExecCommand or
        ExecCommandBatch whose command ran and failed (:func:`raise_if_command_failed`);
        ``HolonNB.raise_on_tool_error`` raises for error envelopes only.
        """
        s = self._session
        result = self._rt_call(name, args, context=context)
        r = result.result or {}
        task_id = (r.get("task_handle") or {}).get("task_id") if name == "ExecCommand" else None
        if r.get("disposition") == "promoted_to_task" and task_id in s.live.tracks():
            # the view below (then the task's final receipt) shows the output: the card does not repeat it
            display(result.output_shown_below(), raw=True)
            s.live.show_live(task_id, r.get("initial_output_preview"))
            return result
        show_result(result, raise_on_error=raise_error or s.config.raise_on_tool_error)
        if raise_error:
            raise_if_command_failed(result)
        return result


def _interrupted_call(name: str, args: dict[str, Any] | str) -> str:
    """What Ctrl-C during a blocking call of ``name`` stopped, and what keeps running, in one line.

    Cancelling an ExecCommand or ExecCommandBatch in its foreground wait stops its commands; cancelling
    a wait (TaskOutput, WaitFor, Sleep, ...) stops only the waiting.
    """
    fields: dict[str, Any] = {}
    if isinstance(args, dict):
        fields = args
    else:
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        fields = parsed if isinstance(parsed, dict) else {}
    if name == "ExecCommand":
        cmd = str(fields.get("cmd", ""))
        cmd = cmd if len(cmd) <= 60 else cmd[:59] + "…"
        return f"stopped the command {cmd!r} in its foreground wait (--yield-ms 0 starts it as a background task)"
    if name == "ExecCommandBatch":
        return "stopped the batch's running command; the commands after it did not run"
    task_id = fields.get("task_id")
    if name == "TaskOutput" and task_id:
        return f"stopped waiting for {task_id}; the task keeps running — %task_stop {task_id} ends it"
    if name in ("WaitFor", "Sleep"):
        return f"stopped waiting ({name}); nothing else was stopped"
    return f"stopped {name} while it ran"


def _json_without_comment(rest: str) -> str:
    """``rest`` without a trailing ``# comment`` when what is left before it is JSON (or JSON and
    ``--raise``); otherwise unchanged, so text that is not JSON reaches the tool as typed."""
    stripped = strip_comment(rest)
    if stripped == rest:
        return rest
    candidate, _ = _trailing_raise(stripped)
    try:
        json.loads(candidate)
    except ValueError:
        return rest
    return stripped


def _trailing_raise(rest: str) -> tuple[str, bool]:
    """``(JSON, True)`` for ``JSON --raise`` (the option written after the arguments, where the README's
    "every tool magic takes --raise" leads people to put it); else ``(rest, False)`` unchanged. Text
    ending in ``--raise`` that is not JSON before it is sent as it is."""
    body = rest.rstrip()
    if not body.endswith("--raise") or not body[: -len("--raise")].endswith((" ", "\t")):
        return rest, False
    candidate = body[: -len("--raise")].rstrip()
    try:
        json.loads(candidate)
    except ValueError:
        return rest, False
    return candidate, True


@magics_class
class HolonMagics(SessionMagics):
    """The runtime, generic-tool, command and task magics (``%holon``, ``%tool``, ``%exec``, ``%task…``)."""

    # ------------------------------------------------------------ %holon
    @line_magic
    @magic_arguments()
    @argument(
        "subcommand",
        nargs="?",
        default="status",
        choices=("status", "tools", "config", "wait", "say", "prune", "mcp"),
        help="status: runtime summary (changes nothing); tools: every tool with family and stability; "
        "config: HolonNB options and runtime settings; wait: block until tasks end, show final receipts; "
        "say: tell a running agent turn something (an operator interjection); prune: remove old "
        "command artifacts and ended tasks' logs by HolonNB.max_home_bytes / artifact_max_age_days; "
        "mcp: the configured MCP servers, their state and tools (starts them); mcp serve: serve this runtime's "
        "tools to MCP clients.",
    )
    @argument("--dry-run", action="store_true", help="For `prune`: list what would be removed, remove nothing.")
    @argument("text", nargs="*", help="For `say`: the message (quote it, or write it as is).")
    @argument("--timeout", type=float, default=None, help="For `wait`: longest wait in seconds (default: no limit).")
    @argument("--agent", default=None, help="For `say`: the agent (default: default).")
    def holon(self, line: str) -> None:
        """Inspect the holon_nb runtime, wait for its background tasks, or interject in an agent's turn.

        ``say`` queues an operator interjection (turn-loop spec §1.8.4): a running turn of that agent
        (``%%agent`` without ``--wait`` runs in the background) reads it at its next safe point, as
        follow-up user text; with no turn running, the agent's next turn reads it.

        Examples::

            %holon status
            %holon tools
            %holon wait --timeout 30
            %holon say "also run the slow tests"
            %holon prune --dry-run
            %holon mcp
        """
        s = self._session
        words = line.split(None, 1)
        if words and words[0] == "say":
            self._say(strip_comment(words[1]) if len(words) > 1 else "")
            return
        if words and words[0] == "mcp":
            from ._status import holon_mcp

            holon_mcp(s, strip_comment(words[1]) if len(words) > 1 else "")
            return
        args = parse_line(self.holon, line)
        if args.subcommand == "say":  # reached only through options before it: %holon --agent x say …
            raise UsageError('write %holon say [--agent ID] "message"')
        if args.text:
            raise UsageError(f"%holon {args.subcommand} takes no text (got {' '.join(args.text)!r})")
        if args.subcommand == "wait":
            from ._session import wait_and_report

            try:
                still = wait_and_report(args.timeout)
            except KeyboardInterrupt:
                running = [t for t in s.live.tracks() if not s.live.ended(t)]
                running += [f"the turn of {a}" for a in (s.turns.running() if s.turns is not None else [])]
                keeps = f"; still running: {', '.join(running)} — %task_stop ID ends a task" if running else ""
                raise interrupted(f"stopped %holon wait{keeps}") from None
            tasks = s.live.ended_since_last_wait()
            turns = s.turns.ended_since_last_wait() if s.turns is not None else []
            display(Note(wait_note(tasks, turns, still, args.timeout)))
        elif args.subcommand == "tools":
            display(tools_table(s.rt.registry, s.config.notebook_tools or bool(s.config.notebook_tools_agents)))
        elif args.subcommand == "config":
            display(config_table(s.config, s.rt.settings))
        elif args.subcommand == "prune":
            display(Note(s.rt.prune(dry_run=args.dry_run).text()))
        else:
            display(status_table(s.rt, s.live.tracks()))

    def _say(self, rest: str) -> None:
        """``%holon say [--agent ID] TEXT``: queue an operator interjection (turn-loop spec §1.8.4)."""
        s = self._session
        agent = DEFAULT_AGENT_ID
        rest = rest.strip()
        if rest.startswith("--agent"):
            parts = rest.split(None, 2)
            if len(parts) < 2 or parts[0] not in ("--agent",):
                raise UsageError('%holon say --agent needs an agent id: %holon say --agent reviewer "…"')
            agent, rest = unquote(parts[1]), parts[2] if len(parts) > 2 else ""
        text = unquote(rest.strip()).strip()
        if not text:
            raise UsageError('%holon say needs a message: %holon say "also run the slow tests"')
        if s.rt.store.agent(agent) is None:
            raise UsageError(f"%holon say: no agent {agent!r} (%agents lists them)")
        # what the agent is doing before the message: once queued it may wake a --follow run at once
        in_turn = s.rt.turns.active(agent) is not None
        following = s.turns is not None and agent in s.turns.running()
        message = s.rt.turns.interject(text, agent=agent)
        if in_turn:
            when = "the running turn reads it at its next step"
        elif message.get("triggered_wait_id"):
            when = (
                "it woke the agent's wait for operator input; the %%agent --follow view runs its next turn"
                if following
                else "it woke the agent's wait for operator input; its next turn reads it first"
            )
        elif following:
            when = "the agent is following its waits (%%agent --follow): the turn its next wake starts reads it first"
        else:
            when = "no turn is running; its next turn reads it first"
        display(Note(f"interjection {message['id']} queued for agent {agent}: {when}"))

    # ------------------------------------------------------------ %tool / %%tool
    @line_magic("tool")
    @no_var_expand
    @magic_arguments(name="tool")
    @argument("name", help="Tool name, e.g. ExecCommand (every registered tool, hidden aliases included).")
    @argument("json", nargs="*", help="The arguments as JSON, verbatim (text that is not JSON is sent as a string).")
    @_raise
    def tool_line(self, line: str) -> None:
        """Call any tool: ``%tool NAME {json}``; text that is not JSON is passed on as a string.

        The JSON after the name is sent verbatim (no ``$`` expansion); a
        malformed argument gives an ``invalid_tool_input`` receipt, exactly as a
        model would get.

        Example::

            %tool ExecCommand {"cmd": "echo $HOME", "yield_time_ms": 0}
        """
        head, rest = split_verbatim(line, self.tool_line.parser, positionals=1)
        args = parse_argstring(self.tool_line, head)
        rest, trailing_raise = _trailing_raise(_json_without_comment(rest))
        self._call(args.name, rest or {}, args.raise_error or trailing_raise)

    @cell_magic("tool")
    @no_var_expand
    @magic_arguments(name="%tool")
    @argument("name", help="Tool name, e.g. ExecCommandBatch.")
    @_raise
    def tool_cell(self, line: str, cell: str) -> None:
        """Call any tool with the cell body as its JSON arguments: ``%%tool NAME``.

        Example::

            %%tool ExecCommandBatch
            {"items": [{"cmd": "echo one"}, {"cmd": "echo two"}]}
        """
        args = parse_line(self.tool_cell, line)
        body = cell.strip()
        self._call(args.name, body or {}, args.raise_error)

    # ------------------------------------------------------------ %exec / %%exec
    @line_magic("exec")
    @no_var_expand
    @magic_arguments(name="exec")
    @argument("command", nargs="*", help="The shell command, verbatim (after the options, or after --).")
    @argument(
        "--yield-ms",
        type=int,
        default=None,
        help="Foreground wait in milliseconds before the command becomes a background task "
        "(default 10000; 0 promotes at once).",
    )
    @argument("--tty", action="store_true", help="Run on a pseudo-terminal.")
    @argument("--stdin", action="store_true", help="Keep stdin open for %%task_input (accepts_input).")
    @argument("--workdir", default=None, help="Working directory (relative to the workspace).")
    @argument(
        "--max-output-tokens",
        type=int,
        default=None,
        help="Output budget in tokens (about 4 characters each; default HolonNB.default_tool_output_tokens).",
    )
    @argument("--shell", default=None, help="Shell program (default from $SHELL: bash, zsh or sh).")
    @argument("--no-login", action="store_true", help="Run with `-c` instead of a login shell `-lc`.")
    @argument(
        "--start-new",
        action="store_true",
        help="Start a new instance even when an identical command is already running.",
    )
    @argument(
        "--raise",
        dest="raise_error",
        action="store_true",
        help="Raise after the receipt: ToolCallError on an error receipt, CommandFailed when the command "
        "exited non-zero or was killed (a command still running after --yield-ms is not judged).",
    )
    def exec_line(self, line: str) -> None:
        """Run a shell command (ExecCommand): ``%exec [options] [--] COMMAND``.

        Everything after the options (or after ``--``) is the command,
        verbatim: ``$VAR`` reaches the shell, not Python. A command still
        running after ``--yield-ms`` becomes a background task with a live view
        here, and its final receipt appears in this cell when it ends. A
        command that exits non-zero is a successful call (its receipt says
        the exit status); with ``--raise`` it raises ``CommandFailed`` after
        the receipt, so a notebook test fails there.

        Example::

            %exec --yield-ms 0 -- pytest -q
            %exec --raise --yield-ms 600000 make test
        """
        head, cmd = split_verbatim(line, self.exec_line.parser)
        args = parse_argstring(self.exec_line, head)
        if not cmd:
            raise UsageError("%exec needs a command, e.g. %exec ls -la")
        payload: dict[str, Any] = {"cmd": cmd}
        optional = {
            "yield_time_ms": args.yield_ms,
            "workdir": args.workdir,
            "shell": args.shell,
            "max_output_tokens": args.max_output_tokens,
        }
        payload.update({k: v for k, v in optional.items() if v is not None})
        if args.tty:
            payload["tty"] = True
        if args.stdin:
            payload["accepts_input"] = True
        if args.no_login:
            payload["login"] = False
        if args.start_new:
            payload["duplicate_policy"] = "start_new"
        self._call("ExecCommand", payload, args.raise_error)

    @cell_magic("exec")
    @no_var_expand
    @magic_arguments(name="%exec")
    @argument("--stop-on-error", action="store_true", help="Skip the remaining commands after one fails.")
    @argument("--workdir", default=None, help="Working directory for every command.")
    @argument(
        "--yield-ms", type=int, default=None, help="Hard timeout of each command in milliseconds (default 30000)."
    )
    @argument(
        "--raise",
        dest="raise_error",
        action="store_true",
        help="Raise after the receipt: ToolCallError on an error receipt, CommandFailed when any command "
        "failed (non-zero exit, killed, timed out).",
    )
    def exec_cell(self, line: str, cell: str) -> None:
        """Run several commands in order (ExecCommandBatch): one command per line (blank lines and
        ``#`` comment lines are skipped; a command spanning lines, such as a heredoc, needs ``%exec``).

        Example::

            %%exec --stop-on-error
            python -m pip --version
            git status --short
        """
        args = parse_line(self.exec_cell, line)
        items = [{"cmd": c.strip()} for c in cell.splitlines() if c.strip() and not c.lstrip().startswith("#")]
        if not items:
            raise UsageError("%%exec needs at least one command line in the cell")
        payload: dict[str, Any] = {"items": items}
        if args.stop_on_error:
            payload["stop_on_error"] = True
        if args.workdir is not None:
            payload["workdir"] = args.workdir
        if args.yield_ms is not None:
            payload["yield_time_ms"] = args.yield_ms
        self._call("ExecCommandBatch", payload, args.raise_error)

    # ------------------------------------------------------------ task magics
    @line_magic
    @magic_arguments()
    @argument("--limit", type=int, default=None, help="Most entries (1..100; default 20).")
    @_raise
    def tasks(self, line: str) -> None:
        """List active background tasks (ListTasks). Changes no task state."""
        args = parse_line(self.tasks, line)
        self._call("ListTasks", {} if args.limit is None else {"limit": args.limit}, args.raise_error)

    @line_magic
    @magic_arguments()
    @argument("task_id", help="The task id, e.g. task_0123456789abcde.")
    @_raise
    def task(self, line: str) -> None:
        """Show a task's status (TaskStatus), plus a live view of its output while it runs.

        Changes no task state.
        """
        args = parse_line(self.task, line)
        result = self._call("TaskStatus", {"task_id": args.task_id}, args.raise_error)
        status = ((result.result or {}).get("task") or {}).get("status")
        if status in ("queued", "running", "cancelling") and self._session.live.knows(args.task_id):
            self._session.live.show_live(args.task_id, self._session.initial_output(args.task_id), origin=False)

    @line_magic
    @magic_arguments()
    @argument("task_id", help="The task id.")
    @argument("--no-block", action="store_true", help="Return at once instead of waiting for the task to end.")
    @argument(
        "--timeout-ms",
        type=int,
        default=None,
        help="Longest wait in milliseconds when blocking (default 30000; 0 checks once).",
    )
    @_raise
    def task_output(self, line: str) -> None:
        """Show a task's output (TaskOutput); by default waits for it to end."""
        args = parse_line(self.task_output, line)
        payload: dict[str, Any] = {"task_id": args.task_id}
        if args.no_block:
            payload["block"] = False
        if args.timeout_ms is not None:
            payload["timeout_ms"] = args.timeout_ms
        self._call("TaskOutput", payload, args.raise_error)

    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument("task_id", help="The task id (started with --stdin or --tty).")
    @argument("text", nargs="*", help="The text to send, verbatim after the id (escapes interpreted).")
    @argument(
        "--no-newline", action="store_true", help="Send TEXT exactly; by default a newline is appended for convenience."
    )
    @_raise
    def task_input(self, line: str) -> None:
        r"""Send text to a task's stdin or terminal (TaskInput): ``%task_input ID TEXT``.

        TEXT is taken verbatim after the id; ``\n``, ``\t``, ``\r``, ``\e``,
        ``\\``, ``\xHH`` and ``\uHHHH`` escapes are interpreted. A newline is
        appended unless ``--no-newline`` is given, before the id or as the last
        word (the TaskInput tool itself never adds one). After ``--`` the text
        is taken as it is: ``%task_input ID -- --no-newline`` sends that word.

        Example::

            %task_input task_0123456789abcde hello
        """
        head, text = split_verbatim(line, self.task_input.parser, positionals=1)  # type: ignore[union-attr]  # @magic_arguments sets .parser; IPython's decorators do not type it
        args = parse_argstring(self.task_input, head)
        before = line.rstrip()[: len(line.rstrip()) - len(text)].split()
        explicit = bool(before) and before[-1] == "--"  # after `--` the text is taken as it is
        words = text.rsplit(None, 1)
        if not explicit and words and words[-1] == "--no-newline":  # the flag may also follow the text
            text, args.no_newline = (words[0] if len(words) == 2 else ""), True
        data = interpret_escapes(text) + ("" if args.no_newline else "\n")
        if not data:
            raise UsageError("%task_input has nothing to send: give TEXT, or drop --no-newline to send a newline")
        # the id (never the text) gets Python expansion, like %task_output {tid}
        task_id = (
            self.ipython.var_expand(args.task_id, depth=1)
            if "{" in args.task_id or "$" in args.task_id
            else args.task_id
        )
        self._call("TaskInput", {"task_id": task_id, "input": data}, args.raise_error)

    @line_magic
    @magic_arguments()
    @argument("task_id", help="The task id.")
    @_raise
    def task_stop(self, line: str) -> None:
        """Stop a task and its whole process tree (TaskStop); a second stop forces it."""
        args = parse_line(self.task_stop, line)
        self._call("TaskStop", {"task_id": args.task_id}, args.raise_error)


def wait_note(tasks: list[tuple[str, str]], turns: list[str], still: list[str], timeout: float | None) -> str:
    """What ``%holon wait`` says: what ended (since the previous wait), what still runs, or that nothing ran.

    Everything that ended since the previous ``%holon wait`` is named once, whether it
    ended while this wait blocked or just before it, so a saved notebook reads the same
    however fast the machine was.

    Args:
        tasks: ``(task id, status)`` of tasks that ended since the previous wait.
        turns: Agents whose turn ended since the previous wait.
        still: What :func:`holon_nb.notebook.wait_and_report` returned (ids and ``turn of <agent>``).
        timeout: The ``--timeout`` in seconds (None: no limit).
    """
    parts = []
    if tasks:
        parts.append("ended: " + ", ".join(f"{t} ({status})" for t, status in tasks))
    if turns:
        parts.append("turns ended: " + ", ".join(turns))
    if still:
        parts.append(f"still running after {timeout} s: {', '.join(still)}")
    if not parts:
        return "%holon wait: nothing was running (no task or agent turn of this kernel is unfinished)"
    return "%holon wait: " + "; ".join(parts)
