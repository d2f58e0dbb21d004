"""The patch and workspace magics: ``%%patch``, ``%workspace``, ``%worktree``.

Each calls one tool through ``Runtime.call`` (the one dispatch path) and
displays its result once: ApplyPatch as a coloured diff card with the plain
receipt as ``text/plain``; workspace state as readable tables.
"""

from __future__ import annotations

import re
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..render.human import headline, shorten_value
from ..runtime import ToolResult
from ..runtime.core._result import RESULT_MIMETYPE
from ..tools._errors import ToolCallError
from ._display import Note, Table
from ._magics import SessionMagics, raise_option
from ._parsing import parse_quoted, split_verbatim, strip_comment, unquote

__all__ = ["WorkspaceMagics", "WorkspaceView", "restore_blank_context", "worktree_rows"]

# ---------------------------------------------------------------- the view of GetWorkspaceState


def _short(path: Any, width: int = 72) -> str:
    text = "" if path is None else str(path)
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _created(record: dict[str, Any]) -> tuple[str, str]:
    """Sort key of a person's view: oldest first (ids are random, so the record's id order changes per run)."""
    return (str(record.get("created_at") or ""), str(record.get("workspace_id") or record.get("execution_root_id")))


def worktree_rows(state: dict[str, Any], paths: Any = ()) -> list[list[Any]]:
    """Rows ``[execution_root_id, kind, path, branch, status]`` for every execution root of a state.

    ``status`` is ``active``, ``removed``, or the live cleanup status (``clean``/``dirty``/…);
    ``paths``: ``(absolute path, label)`` pairs shown shorter (``ToolResult.paths``).
    """
    state = shorten_value(state, paths)
    roots = sorted(state.get("execution_roots") or [], key=_created)
    active = (state.get("active") or {}).get("execution_root_id")
    rows = []
    for root in roots:
        wt = root.get("worktree") or {}
        cleanup = (wt.get("last_cleanup") or {}).get("status")
        if root.get("removed_at"):
            status = "removed"
        else:
            status = (
                ", ".join(x for x in ("active" if root.get("execution_root_id") == active else "", cleanup or "") if x)
                or "-"
            )
        branch = wt.get("branch") or ("(detached)" if wt.get("detached") else "")
        rows.append(
            [root.get("execution_root_id"), root.get("root_kind"), _short(root.get("filesystem_path")), branch, status]
        )
    return rows


class WorkspaceView:
    """Display of one ``GetWorkspaceState`` result.

    Args:
        result: The tool result (success expected; an error displays as its receipt).
    """

    def __init__(self, result: ToolResult):
        self.result = result
        state = shorten_value(result.display_envelope.get("result") or {}, result.paths)
        active = state.get("active") or {}
        attached = set(state.get("attached_workspace_ids") or [])
        self.active = Table(
            f"active projection of agent {state.get('agent_id', '?')}",
            ["key", "value"],
            [
                [k, active.get(k)]
                for k in (
                    "workspace_id",
                    "execution_root",
                    "cwd",
                    "projection_kind",
                    "access_mode",
                    "execution_root_id",
                )
                if k in active
            ],
        )
        self.workspaces = Table(
            "workspaces",
            ["workspace_id", "anchor", "attached", "active"],
            [
                [
                    w.get("workspace_id"),
                    _short(w.get("workspace_anchor")),
                    "yes" if w.get("workspace_id") in attached else "no",
                    "yes" if w.get("workspace_id") == active.get("workspace_id") else "",
                ]
                for w in sorted(state.get("workspaces") or [], key=_created)
            ],
        )
        self.roots = Table(
            "execution roots",
            ["execution_root_id", "kind", "path", "branch", "status"],
            worktree_rows(state, result.paths),
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if not self.result.ok:
            return self.result._repr_mimebundle_(include, exclude)
        tables = [self.active, self.workspaces, self.roots]
        bundles = [t._repr_mimebundle_() for t in tables]
        # the first line every receipt has: Tool · status · time — summary
        first = headline(shorten_value(self.result.display_envelope, self.result.paths), self.result.duration_ms)
        return {
            "text/plain": "\n\n".join([first, *(b["text/plain"] for b in bundles)]),
            "text/html": Note(first)._repr_mimebundle_()["text/html"] + "".join(b["text/html"] for b in bundles),
            RESULT_MIMETYPE: self.result.display_envelope,
        }


# ---------------------------------------------------------------- the magics

_TRAILING_OPTION = re.compile(r"\s--(?:return-to|branch-policy|merged-into|raise)(?=[\s=]|$)")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _blank_ws(text: str) -> list[str]:
    return ["" if not line.strip() else line for line in text.splitlines()]


def restore_blank_context(cell: str, raw_cell: str) -> str:
    """Undo IPython's stripping of whitespace-only lines in a ``%%patch`` body.

    IPython hands a cell magic its body with whitespace-only lines emptied, so
    a blank context line of a unified diff (a single space) arrives as an
    empty line, which ApplyPatch rightly refuses (``invalid_hunk_empty_line``).
    When the raw cell (from IPython's input history) is the same cell, its
    body is used as typed. Otherwise an empty line inside a hunk, while the
    hunk header's counts say old and new lines are still due, is read as a
    blank context line.

    Args:
        cell: The body IPython passed to the magic.
        raw_cell: The cell as typed (first line ``%%patch …``), or "".

    Returns:
        The patch text to send.
    """
    first, _, body = raw_cell.partition("\n")
    if first.lstrip().startswith("%%patch") and _blank_ws(body) == _blank_ws(cell):
        return body + ("\n" if cell.endswith("\n") and not body.endswith("\n") else "")
    out, old, new = [], 0, 0
    for line in cell.split("\n"):
        m = _HUNK.match(line)
        if m and old <= 0 and new <= 0:
            old = int(m.group(1)) if m.group(1) is not None else 1
            new = int(m.group(2)) if m.group(2) is not None else 1
        elif old > 0 or new > 0:
            if line == "" and old > 0 and new > 0:
                line = " "
            tag = line[:1]
            old -= tag in (" ", "-")
            new -= tag in (" ", "+")
        out.append(line)
    return "\n".join(out)


@magics_class
class WorkspaceMagics(SessionMagics):
    """``%%patch`` (ApplyPatch), ``%workspace`` (state, attach, detach, switch), ``%worktree``."""

    # ------------------------------------------------------------ %%patch
    @cell_magic
    @magic_arguments()
    @raise_option
    def patch(self, line: str, cell: str) -> None:
        """Apply the cell body as a patch (ApplyPatch): a unified diff or a ``*** Begin Patch`` block.

        Relative paths resolve against the active workspace's execution root;
        the patch is all-or-nothing (a failed patch changes no file) and may
        only write inside the bound workspace roots. The receipt shows each
        file's diff.

        Example::

            %%patch
            --- a/notes.txt
            +++ b/notes.txt
            @@ -1,2 +1,2 @@
             title
            -draft
            +final
        """
        args = parse_quoted(self.patch, line)
        if not cell.strip():
            raise UsageError("%%patch needs the patch text in the cell body")
        self._call("ApplyPatch", {"patch": restore_blank_context(cell, self._raw_cell())}, args.raise_error)

    def _raw_cell(self) -> str:
        """The cell as typed (IPython's raw input history), or "" when unavailable."""
        history = getattr(self.shell, "history_manager", None)
        raw = getattr(history, "input_hist_raw", None) or [""]
        return raw[-1] if isinstance(raw[-1], str) else ""

    # ------------------------------------------------------------ %workspace
    def _state(self) -> Any:
        return self._session.rt.call("GetWorkspaceState", {})

    @line_magic
    @magic_arguments()
    @argument(
        "action",
        nargs="?",
        default="state",
        choices=("state", "attach", "detach", "switch"),
        help="state (default; changes nothing): bindings, active projection and execution roots; "
        "attach PATH; detach WORKSPACE_ID; switch (--id, --root or --path, optional --cwd).",
    )
    @argument(
        "target",
        nargs="*",
        help="attach: the directory; detach: the workspace id (or agent_home); switch: a directory. "
        "Taken verbatim after the options (spaces kept).",
    )
    @argument("--id", dest="workspace_id", default=None, help="switch: a workspace id (agent_home allowed).")
    @argument("--root", dest="execution_root_id", default=None, help="switch: an execution root id.")
    @argument("--path", default=None, help="switch: a directory inside an attached workspace or its worktree.")
    @argument("--cwd", default=None, help="switch: the cwd inside the target execution root.")
    @raise_option
    def workspace(self, line: str) -> None:
        """Show or change the agent's workspaces.

        ``$name`` and ``{expr}`` in the line expand to Python values.

        Examples::

            %workspace
            %workspace attach ../other-repo
            %workspace switch --path ../other-repo/src
            %workspace switch --id agent_home
            %workspace detach ws_0123456789abcde
        """
        head, rest = split_verbatim(strip_comment(line), self.workspace.parser, positionals=1)  # type: ignore[union-attr]  # @magic_arguments sets .parser; IPython's decorators do not type it
        args = parse_quoted(self.workspace, head)
        target = unquote(rest)  # verbatim: a path with spaces stays whole
        if args.action == "state":
            if target:
                raise UsageError("%workspace state takes no argument")
            result = self._state()
            display(WorkspaceView(result))
            self._maybe_raise(result, args.raise_error)
        elif args.action == "attach":
            if not target:
                raise UsageError("%workspace attach needs a directory, e.g. %workspace attach ../repo")
            self._call("AttachWorkspace", {"path": target}, args.raise_error)
        elif args.action == "detach":
            if not target:
                raise UsageError("%workspace detach needs a workspace id (see %workspace)")
            self._call("DetachWorkspace", {"workspace_id": target}, args.raise_error)
        else:
            payload = {
                k: v
                for k, v in (
                    ("workspace_id", args.workspace_id),
                    ("execution_root_id", args.execution_root_id),
                    ("path", args.path or (target or None)),
                    ("cwd", args.cwd),
                )
                if v is not None
            }
            self._call("SwitchWorkspace", payload, args.raise_error)

    def _maybe_raise(self, result: Any, raise_error: bool) -> None:
        if not result.ok and (raise_error or self._session.config.raise_on_tool_error):
            raise ToolCallError(result.display_envelope)

    # ------------------------------------------------------------ %worktree
    @line_magic
    @magic_arguments()
    @argument(
        "action",
        choices=("create", "remove", "list"),
        help="create BRANCH: a linked git worktree (activated unless --no-activate); "
        "remove EXECUTION_ROOT_ID; list: the execution roots (changes nothing).",
    )
    @argument(
        "target",
        nargs="?",
        default=None,
        help="create: the branch name; remove: the execution root id. Taken verbatim after the options.",
    )
    @argument("--base", default="HEAD", help="create: the base commit-ish (default HEAD).")
    @argument(
        "--workspace",
        dest="workspace_id",
        default=None,
        help="create: the attached workspace id (default: the active one).",
    )
    @argument("--label", default=None, help="create: naming hint for the worktree directory.")
    @argument("--no-activate", action="store_true", help="create: keep the current projection active.")
    @argument(
        "--on-existing",
        choices=("reuse", "error"),
        default=None,
        help="create: what to do when a live worktree of the branch exists (default reuse).",
    )
    @argument(
        "--return-to",
        default=None,
        help="remove: where to switch when removing the active worktree (canonical, agent_home or a root id).",
    )
    @argument(
        "--branch-policy",
        choices=("keep", "delete_if_merged"),
        default=None,
        help="remove: delete the branch only when merged into --merged-into (default keep).",
    )
    @argument("--merged-into", default=None, help="remove: the ref proving the branch is merged.")
    @raise_option
    def worktree(self, line: str) -> None:
        """Create, remove or list git worktrees (CreateWorktree, RemoveWorktree, GetWorkspaceState).

        Examples::

            %worktree create try-fix --base main
            %worktree list
            %worktree remove git_worktree_root:ws_…:/path --return-to canonical
        """
        line = strip_comment(line)
        if line.split(None, 1)[:1] == ["remove"]:
            # the root id embeds a path (which may hold spaces): take it verbatim, options before or after it
            head, rest = split_verbatim(line, self.worktree.parser, positionals=1)  # type: ignore[union-attr]  # @magic_arguments sets .parser; IPython's decorators do not type it
            tail = _TRAILING_OPTION.search(rest)
            if tail is not None:
                head, rest = f"{head} {rest[tail.start() :]}", rest[: tail.start()]
            args = parse_quoted(self.worktree, head)
            args.target = unquote(rest.strip()) or None
        else:
            args = parse_quoted(self.worktree, line)
        if args.action == "list":
            result = self._state()
            if result.ok:
                rows = worktree_rows(result.display_envelope.get("result") or {}, result.paths)
                display(
                    Table(
                        f"{len(rows)} execution roots", ["execution_root_id", "kind", "path", "branch", "status"], rows
                    )
                )
            else:
                display(result)
            self._maybe_raise(result, args.raise_error)
            return
        if not args.target:
            raise UsageError(
                f"%worktree {args.action} needs "
                + ("a branch name" if args.action == "create" else "an execution root id")
            )
        if args.action == "create":
            workspace_id = args.workspace_id or self._active_workspace_id()
            payload: dict[str, Any] = {"workspace_id": workspace_id, "branch": args.target, "base_ref": args.base}
            if args.label is not None:
                payload["label"] = args.label
            if args.no_activate:
                payload["activate"] = False
            if args.on_existing is not None:
                payload["on_existing"] = args.on_existing
            self._call("CreateWorktree", payload, args.raise_error)
        else:
            payload = {"execution_root_id": args.target}
            for key, value in (
                ("return_to", args.return_to),
                ("branch_policy", args.branch_policy),
                ("merged_into", args.merged_into),
            ):
                if value is not None:
                    payload[key] = value
            self._call("RemoveWorktree", payload, args.raise_error)

    def _active_workspace_id(self) -> str:
        result = self._state()
        active = (result.result or {}).get("active") or {}
        workspace_id = active.get("workspace_id")
        if not workspace_id:
            raise UsageError("no active workspace found; pass --workspace ID (see %workspace)")
        return str(workspace_id)
