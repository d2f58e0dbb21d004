"""Magics of the work plane: work items, waits, timers, the agent summary and memory.

``%workitems`` (a live board), ``%workitem`` (create, update, pick, complete,
show), ``%waitfor``, ``%timers`` and ``%timer`` (create, show, cancel),
``%agent_status`` and ``%memory`` (search, get). Each calls its tool through
``Runtime.call`` and displays the receipt once; the inspection magics
(``%workitems``, ``%workitem show``, ``%timers``, ``%timer show``,
``%agent_status``, ``%memory``) change no work item, wait, timer or task.
"""

from __future__ import annotations

import re
from typing import Any, overload

from IPython.core.error import UsageError
from IPython.core.magic import line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from ..runtime.work._timers import MIN_INTERVAL_MS
from ._magics import SessionMagics, raise_option
from ._parsing import parse_quoted

__all__ = ["WorkMagics", "parse_duration_ms", "parse_todo"]

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
#: Shortest ``%timer create --every`` (ms): the runtime's minimum for repeating timers (CreateTimer refuses
#: less); the magic says so first, since below it is most likely a slip of ``1ms`` for ``1m``.
MIN_EVERY_MS = MIN_INTERVAL_MS
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_TODO = re.compile(r"^\s*\[(.)\]\s*(.*)$")
_TODO_STATES = {" ": "pending", "x": "completed", "X": "completed", ">": "in_progress", "~": "in_progress"}


def parse_duration_ms(text: str) -> int:
    """``"500ms"``, ``"2s"``, ``"1.5m"``, ``"1h"`` or a bare number of milliseconds → milliseconds.

    Raises:
        UsageError: for anything else.
    """
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"not a duration: {text!r} (use e.g. 500ms, 2s, 1.5m, 1h)")
    return round(float(m.group(1)) * _UNITS[m.group(2) or "ms"])


def parse_todo(text: str) -> dict[str, str]:
    """One todo item from ``"text"`` (pending), ``"[ ] text"``, ``"[>] text"`` (in progress) or ``"[x] text"``.

    Raises:
        UsageError: for an unknown box marker.
    """
    m = _TODO.match(text)
    if not m:
        return {"text": text.strip(), "state": "pending"}
    mark, body = m.groups()
    if mark not in _TODO_STATES:
        raise UsageError(f"unknown todo marker [{mark}] in {text!r}: use [ ] pending, [>] in progress, [x] completed")
    return {"text": body.strip(), "state": _TODO_STATES[mark]}


def _words(parts: list[str]) -> str:
    return " ".join(parts).strip()


@magics_class
class WorkMagics(SessionMagics):
    """``%workitems``, ``%workitem``, ``%waitfor``, ``%timers``, ``%timer``, ``%agent_status``, ``%memory``.

    Free text (objectives, reasons, reports, briefs, summaries, queries) reaches
    the tool verbatim: ``{x}`` and ``$x`` in it are not Python expansions. Ids
    (work item, task, timer ids, ``--resource``, a ``source_ref``) accept
    ``{expr}`` / ``$name`` expansion, as ``%task_output {tid}`` does.
    """

    @overload
    def _id(self, value: str) -> str: ...
    @overload
    def _id(self, value: None) -> None: ...
    def _id(self, value: str | None) -> str | None:
        """Expand ``{expr}`` / ``$name`` in an id argument (never in free text)."""
        if value is None or ("{" not in value and "$" not in value):
            return value
        return self.ipython.var_expand(value, depth=2)

    # ------------------------------------------------------------ %workitems
    @line_magic
    @magic_arguments()
    @argument(
        "--filter",
        default=None,
        choices=(
            "all",
            "open",
            "completing",
            "completed",
            "current",
            "queued",
            "yielded",
            "blocked",
            "waiting_for_operator",
            "runnable",
        ),
        help="Which work items (default all).",
    )
    @argument("--limit", type=int, default=None, help="Most items (1..100; default 20).")
    @argument(
        "--static",
        action="store_true",
        help="A snapshot of the board that never changes afterwards (reads the store; no tool call).",
    )
    @argument("--receipt", action="store_true", help="The ListWorkItems receipt instead of a board.")
    @raise_option
    def workitems(self, line: str) -> None:
        """The work-item board: objective, state, readiness, focus, todos, blockers and waits.

        The board updates by itself when a work item, wait or timer changes
        (a timer firing, a task result arriving), without re-running the cell.
        Changes no state.
        """
        args = parse_quoted(self.workitems, line)
        payload: dict[str, Any] = {"include_todo_list": True}
        if args.filter:
            payload["filter"] = args.filter
        if args.limit is not None:
            payload["limit"] = args.limit
        if args.receipt:
            self._call("ListWorkItems", payload, args.raise_error)
            return
        from ._board import show_board

        show_board(self._session, payload, live=not args.static)

    # ------------------------------------------------------------ %workitem
    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument(
        "action",
        choices=("create", "update", "pick", "complete", "show"),
        help="create OBJECTIVE; update ID; pick ID; complete ID --report TEXT; show ID.",
    )
    @argument("words", nargs="*", help="create: the objective; others: the work item id.")
    @argument(
        "--todo",
        action="append",
        default=None,
        help="A todo item (repeat for several): 'text' or '[ ] text' pending, '[>] text' in progress, "
        "'[x] text' completed. On update the list replaces the old one.",
    )
    @argument("--no-todos", action="store_true", help="update: clear the todo list.")
    @argument("--plan", default=None, help="create: the first content of the item's plan.md.")
    @argument("--plan-status", choices=("draft", "ready", "needs_input"), default=None, help="create/update.")
    @argument("--objective", default=None, help="update: the new objective.")
    @argument("--reason", default=None, help="pick: why the focus changes (required with --clear-blocker).")
    @argument("--clear-blocker", action="store_true", help="pick: cancel the item's waits and clear its blocker.")
    @argument(
        "--report",
        default=None,
        help="complete: the completion report (execution context, as a model's same-round text).",
    )
    @raise_option
    def workitem(self, line: str) -> None:
        """Create, update, pick, complete or show one work item.

        Examples::

            %workitem create Make the test suite green --todo "reproduce" --todo "fix" --plan-status ready
            %workitem update work_0123456789abcde --todo "[x] reproduce" --todo "[>] fix"
            %workitem pick work_0123456789abcde --reason "more urgent"
            %workitem complete work_0123456789abcde --report "Fixed in abc123; tests green."
            %workitem show work_0123456789abcde
        """
        args = parse_quoted(self.workitem, line)
        words = _words(args.words)
        todos = [parse_todo(t) for t in args.todo] if args.todo else None
        if args.action == "create":
            if not words:
                raise UsageError("%workitem create needs an objective, e.g. %workitem create Fix the flaky test")
            payload: dict[str, Any] = {"objective": words}
            if todos is not None:
                payload["todo_list"] = todos
            if args.plan is not None:
                payload["plan"] = args.plan
            if args.plan_status is not None:
                payload["plan_status"] = args.plan_status
            self._call("CreateWorkItem", payload, args.raise_error)
            return
        if not words or " " in words:
            raise UsageError(f"%workitem {args.action} needs one work item id (see %workitems)")
        words = self._id(words)
        if args.action == "update":
            payload = {"work_item_id": words}
            if args.objective is not None:
                payload["objective"] = args.objective
            if args.plan_status is not None:
                payload["plan_status"] = args.plan_status
            if args.no_todos:
                payload["todo_list"] = []
            elif todos is not None:
                payload["todo_list"] = todos
            self._call("UpdateWorkItem", payload, args.raise_error)
        elif args.action == "pick":
            payload = {"work_item_id": words}
            if args.reason is not None:
                payload["reason"] = args.reason
            if args.clear_blocker:
                payload["clear_blocker"] = True
            self._call("PickWorkItem", payload, args.raise_error)
        elif args.action == "complete":
            if args.report is None or not args.report.strip():
                raise UsageError(
                    "%workitem complete needs the completion report: "
                    f'%workitem complete {words or "ID"} --report "what was done"'
                )
            self._call("CompleteWorkItem", {"work_item_id": words}, args.raise_error, context={"report": args.report})
        else:
            self._call("GetWorkItem", {"work_item_id": words, "include_todo_list": True}, args.raise_error)

    # ------------------------------------------------------------ %waitfor
    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument(
        "wake",
        choices=("operator_input", "task_result", "external", "timer", "system"),
        help="What should resume the work.",
    )
    @argument("reason", nargs="*", help="Why progress is paused (the blocker text).")
    @argument("--resource", default=None, help="task_result: the task id; timer: the timer id; others: optional.")
    @argument(
        "--delivery",
        choices=("silent", "final"),
        default=None,
        help="final publishes --brief as the operator-facing brief (default: final with --brief, else silent).",
    )
    @argument("--brief", default=None, help="The final brief (execution context for delivery=final).")
    @argument("--work-item", dest="work_item_id", default=None, help="The owning work item (default: the focus).")
    @argument("--recheck", default=None, help="Fallback recheck after this long (e.g. 30s, 5m).")
    @raise_option
    def waitfor(self, line: str) -> None:
        """Record an explicit wait (WaitFor): ``%waitfor WAKE REASON [--resource ID] [--brief TEXT]``.

        Examples::

            %waitfor task_result tests are running --resource {tid}
            %waitfor timer check CI again --resource {timer_id} --brief "Waiting for CI."
        """
        args = parse_quoted(self.waitfor, line)
        reason = _words(args.reason)
        if not reason:
            raise UsageError("%waitfor needs a reason after the wake kind, e.g. %waitfor operator_input need approval")
        delivery = args.delivery or ("final" if args.brief is not None else "silent")
        payload: dict[str, Any] = {"reason": reason, "wake": args.wake, "delivery": delivery}
        for key, value in (("resource", self._id(args.resource)), ("work_item_id", self._id(args.work_item_id))):
            if value is not None:
                payload[key] = value
        if args.recheck is not None:
            payload["recheck_after_ms"] = parse_duration_ms(args.recheck)
        context = {"brief": args.brief} if args.brief is not None else None
        self._call("WaitFor", payload, args.raise_error, context=context)

    # ------------------------------------------------------------ %timers / %timer
    @line_magic
    @magic_arguments()
    @argument(
        "--filter",
        choices=("all", "active", "completed", "cancelled"),
        default=None,
        help="Which timers (default all).",
    )
    @argument("--limit", type=int, default=None, help="Most timers (1..100; default 20).")
    @raise_option
    def timers(self, line: str) -> None:
        """List the agent's timers, newest first (ListTimers). Changes no state."""
        args = parse_quoted(self.timers, line)
        payload: dict[str, Any] = {}
        if args.filter:
            payload["filter"] = args.filter
        if args.limit is not None:
            payload["limit"] = args.limit
        self._call("ListTimers", payload, args.raise_error)

    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument(
        "action", choices=("create", "show", "cancel"), help="create (--in or --at) [SUMMARY]; show ID; cancel ID."
    )
    @argument("words", nargs="*", help="show/cancel: the timer id; create: the summary (or use --summary).")
    @argument("--in", dest="after", default=None, help="create: fire after this long (e.g. 500ms, 2s, 5m).")
    @argument("--at", dest="at", default=None, help="create: fire at this RFC 3339 time (with offset).")
    @argument("--every", default=None, help="create: then repeat at this interval (e.g. 1m).")
    @argument("--summary", default=None, help="create: the text of the timer_tick message.")
    @raise_option
    def timer(self, line: str) -> None:
        """Create, show or cancel a timer (CreateTimer, GetTimer, CancelTimer).

        A timer fires on the runtime thread, also while the kernel is idle,
        and survives a kernel restart (an overdue one fires once).

        Examples::

            %timer create --in 2s --summary "check the build"
            %timer create --in 5m check CI again
            %timer cancel timer_0123456789abcde
        """
        args = parse_quoted(self.timer, line)
        if args.action == "create":
            if (args.after is None) == (args.at is None):
                raise UsageError("%timer create needs exactly one of --in DURATION or --at TIME")
            payload: dict[str, Any] = {}
            if args.after is not None:
                payload["duration_ms"] = parse_duration_ms(args.after)
            else:
                payload["fire_at"] = args.at
            if args.every is not None:
                payload["interval_ms"] = parse_duration_ms(args.every)
                if payload["interval_ms"] < MIN_EVERY_MS:  # "1ms" for "1m": said before the runtime refuses it
                    raise UsageError(
                        f"--every {args.every}: a timer repeats at most once a second (CreateTimer refuses "
                        "a shorter interval_ms); the least is 1s (ms is a millisecond, m a minute)."
                    )
            if args.summary is not None and args.words:
                raise UsageError("%timer create takes the summary once: as words or as --summary, not both")
            summary = args.summary if args.summary is not None else " ".join(args.words) or None
            if summary is not None:
                payload["summary"] = summary
            self._call("CreateTimer", payload, args.raise_error)
            return
        if len(args.words) != 1:
            raise UsageError(f"%timer {args.action} needs one timer id (see %timers), got {len(args.words)} words")
        tool = "GetTimer" if args.action == "show" else "CancelTimer"
        self._call(tool, {"timer_id": self._id(args.words[0])}, args.raise_error)

    # ------------------------------------------------------------ %agent_status
    @line_magic
    @magic_arguments()
    @argument("agent_id", nargs="?", default=None, help="The agent (default: the notebook's agent).")
    @raise_option
    def agent_status(self, line: str) -> None:
        """The agent summary (GetAgent): identity, focus, waits, tasks, queue. Changes no state."""
        args = parse_quoted(self.agent_status, line)
        self._call("GetAgent", {} if args.agent_id is None else {"agent_id": args.agent_id}, args.raise_error)

    # ------------------------------------------------------------ %memory
    @line_magic
    @no_var_expand
    @magic_arguments()
    @argument("action", choices=("search", "get"), help="search QUERY; get SOURCE_REF.")
    @argument("words", nargs="*", help="search: the query; get: the source_ref (e.g. work_item:work_…).")
    @argument("--limit", type=int, default=None, help="search: most results (1..50; default 10).")
    @argument("--all-workspaces", action="store_true", help="search: include other workspaces' documents.")
    @argument("--max-chars", type=int, default=None, help="get: most characters (1..50000; default 12000).")
    @raise_option
    def memory(self, line: str) -> None:
        """Search the agent's memory or read one source (MemorySearch, MemoryGet). Changes no state.

        Examples::

            %memory search flaky test
            %memory get tool_execution:tool_0123456789abcde:output
        """
        args = parse_quoted(self.memory, line)
        words = _words(args.words)
        if not words:
            raise UsageError(
                f"%memory {args.action} needs " + ("a query" if args.action == "search" else "a source_ref")
            )
        if args.action == "search":
            payload: dict[str, Any] = {"query": words}
            if args.limit is not None:
                payload["limit"] = args.limit
            if args.all_workspaces:
                payload["include_all_workspaces"] = True
            self._call("MemorySearch", payload, args.raise_error)
        else:
            payload = {"source_ref": self._id(words)}
            if args.max_chars is not None:
                payload["max_chars"] = args.max_chars
            self._call("MemoryGet", payload, args.raise_error)
