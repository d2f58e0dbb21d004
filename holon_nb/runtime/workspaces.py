"""Workspace bindings, execution roots, git worktrees and the active projection (workspace spec §1-§8).

Placeholder until the plane lands: the runtime constructs one service per
runtime and handlers reach it through ``ToolContext``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tools.context import CallContext
    from .core import Runtime

__all__ = ["WorkspaceService", "AgentWorkspaces"]


class WorkspaceService:
    """Workspace bindings, execution roots, git worktrees and the active projection (workspace spec §1-§8).

    Args:
        rt: The owning runtime (its store, home, settings, event bus and loop).
    """

    def __init__(self, rt: "Runtime"):
        self._rt = rt

    def start(self) -> None:
        """Called (from the constructing thread) once the loop thread runs; re-arm durable state here."""

    def bind(self, call: "CallContext") -> "AgentWorkspaces":
        """The view one tool call sees (its agent, profile and execution context)."""
        return AgentWorkspaces(self._rt, call)

    async def close(self) -> None:
        """Awaited on the loop thread while the runtime closes, before task runners stop."""


class AgentWorkspaces:
    """One agent's workspace view (placeholder: the default workspace is always active)."""

    def __init__(self, rt: "Runtime", call: "CallContext"):
        self._rt = rt
        self.call = call

    @property
    def cwd(self) -> Path:
        """The active projection's cwd (absolute)."""
        return self._rt.workspace

    @property
    def execution_root(self) -> Path:
        """The active projection's execution root (absolute)."""
        return self._rt.workspace

    def bound_roots(self) -> list[Path]:
        """The agent home plus anchors and live execution roots of attached workspaces (D3)."""
        return [self._rt.tasks.agent_home(self.call.agent_id), self._rt.workspace]
