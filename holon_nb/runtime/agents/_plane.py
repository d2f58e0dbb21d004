"""The agent plane without a model: agents, profiles, message queues (agents spec §1, §5.2-§5.4).

The runtime constructs one service per runtime (``Runtime._compose``) with the ports of :mod:`.ports`, and
handlers reach it through ``ToolContext``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...tools._context import CallContext
    from ..core._store import Store
    from ._ports import (
        AgentHomeDirs,
        AgentTriggers,
        AgentWorkPlane,
        AgentWorkspacePlane,
        EventSink,
        EventSubscriptions,
        InstalledModels,
        ModelCatalog,
        StartSoon,
        TaskOwner,
        TurnPlane,
    )

__all__ = ["AgentPlane"]


class AgentPlane:
    """The agent plane without a model: agents, profiles, message queues (agents spec §1, §5.2-§5.4).

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store (agent, task and message rows).
        home: The holon home (templates are read under it).
        work: The work plane (the one enqueue path, work facts).
        workspaces: The workspace plane (a new agent inherits the caller's workspaces).
        agent_homes: Each agent's home directory.
        tasks: The task plane's owner token.
        catalog: The model catalog (a requested model is checked against it).
        installed_models: The refs of the providers installed on the runtime.
        triggers: The trigger plane's records (GetAgent lists an agent's active triggers).
        publish: The runtime's event sink.
        subscribe: Subscribes to the runtime's events.
        start_soon: Starts background runs in the runtime's task group.
        turns: The turn service, built on first use (an invoked agent's turn runs there: the agents -> turns
            call goes through this port, never through an import).
    """

    def __init__(
        self,
        *,
        store: Store,
        home: Path,
        work: AgentWorkPlane,
        workspaces: AgentWorkspacePlane,
        agent_homes: AgentHomeDirs,
        tasks: TaskOwner,
        catalog: ModelCatalog,
        installed_models: InstalledModels,
        triggers: AgentTriggers,
        publish: EventSink,
        subscribe: EventSubscriptions,
        start_soon: StartSoon,
        turns: TurnPlane,
    ):
        from ._lifecycle import AgentLifecycle  # imported when the runtime starts, not with holon_nb.runtime

        self._store = store
        self._work = work
        self._triggers = triggers
        #: CreateAgent / InvokeAgent and the background runs of invoked agents (agents spec §5.5-§5.6).
        self.lifecycle = AgentLifecycle(
            store=store,
            home=home,
            work=work,
            workspaces=workspaces,
            agent_homes=agent_homes,
            tasks=tasks,
            catalog=catalog,
            installed_models=installed_models,
            publish=publish,
            subscribe=subscribe,
            start_soon=start_soon,
            turns=turns,
        )

    def start(self) -> None:
        """Called (from the constructing thread) once the loop thread runs; re-arm durable state here."""

    def bind(self, call: CallContext) -> AgentPlane:
        """The view one tool call sees (its agent, profile and execution context)."""
        return self

    def summary(self, agent_id: str, fallback_profile: str | None = None) -> dict[str, Any] | None:
        """GetAgent's ``AgentSummary`` of ``agent_id``, or None when unknown (agents spec §5.2; read-only).

        See :func:`holon_nb.runtime.agents._summary.build_agent_summary`.
        """
        from ._summary import build_agent_summary

        return build_agent_summary(
            agent_id, fallback_profile, store=self._store, work=self._work, triggers=self._triggers
        )

    async def close(self) -> None:
        """Awaited on the loop thread while the runtime closes, before task runners stop."""
        await self.lifecycle.close()
