"""A readable view of ``GetWorkspaceState``: the active projection, workspaces and execution roots.

``WorkspaceView`` displays as aligned ``text/plain`` tables (saved and
headless notebooks stay readable), an HTML rendering of the same tables,
and the scrubbed envelope as ``application/vnd.holon.tool-result+json`` so
tests and tools can read the data.
"""

from __future__ import annotations

from typing import Any

from ..runtime import ToolResult
from ..runtime.core.result import RESULT_MIMETYPE
from ..tools.human import headline, shorten_value
from .display import Note, Table

__all__ = ["WorkspaceView", "worktree_rows"]


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
