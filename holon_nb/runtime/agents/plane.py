"""The agent plane without a model: agents, profiles, message queues (agents spec §1, §5.2-§5.4).

Placeholder until the plane lands: the runtime constructs one service per
runtime and handlers reach it through ``ToolContext``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...tools.context import CallContext
    from ..core.host import RuntimeHost

__all__ = ["AgentPlane"]


class AgentPlane:
    """The agent plane without a model: agents, profiles, message queues (agents spec §1, §5.2-§5.4).

    Args:
        rt: The owning runtime (its store, home, settings, event bus and loop).
    """

    def __init__(self, rt: RuntimeHost):
        from .lifecycle import AgentLifecycle

        self._rt = rt
        #: CreateAgent / InvokeAgent and the background runs of invoked agents (agents spec §5.5-§5.6).
        self.lifecycle = AgentLifecycle(rt)

    def start(self) -> None:
        """Called (from the constructing thread) once the loop thread runs; re-arm durable state here."""

    def bind(self, call: CallContext) -> AgentPlane:
        """The view one tool call sees (its agent, profile and execution context)."""
        return self

    def summary(self, agent_id: str, fallback_profile: str | None = None) -> dict[str, Any] | None:
        """GetAgent's ``AgentSummary`` of ``agent_id``, or None when unknown (agents spec §5.2; read-only).

        See :func:`holon_nb.runtime.agents.summary.build_agent_summary`.
        """
        from .summary import build_agent_summary

        return build_agent_summary(self._rt, agent_id, fallback_profile)

    async def close(self) -> None:
        """Awaited on the loop thread while the runtime closes, before task runners stop."""
        await self.lifecycle.close()
