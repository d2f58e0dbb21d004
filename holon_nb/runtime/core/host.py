"""What the agent and turn planes, and the tool context, use of the runtime: :class:`RuntimeHost`.

The runtime's composition root (``Runtime._compose`` in :mod:`holon_nb.runtime.facade`) builds every plane
service. The planes below the agents (tasks, work, workspaces, memory, models, images, web, triggers) get only
the small protocols their packages declare in their ``ports`` modules. The agent plane, the turn plane and
the ``ToolContext`` of a call (:mod:`.context`), which reach across every plane, are given the facade itself
and see it only through this protocol, so no plane imports the facade (which imports every plane). Each
plane's service is typed with its class, imported for type checking only: mypy checks every call a plane
makes on another, while at run time no plane imports the ones above it (the import-linter contracts in
``pyproject.toml`` say which plane may use which).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...render.scrubbing import Scrubber
    from ...tools.registry import Registry
    from ..agents.approvals import ApprovalBroker
    from ..agents.plane import AgentPlane
    from ..images.service import ImagePlane
    from ..memory.service import MemoryService
    from ..models.catalog import ModelCatalogService
    from ..models.providers import ProviderRegistry
    from ..tasks.agent import AgentTasks
    from ..tasks.service import TaskService
    from ..triggers.service import TriggerService
    from ..turns.records import TurnResult
    from ..turns.service import TurnService
    from ..web.service import WebService
    from ..work.service import WorkService
    from ..workspaces.service import WorkspaceService
    from .events import EventBus, RuntimeEvent
    from .loop import LoopThread
    from .result import ToolResult
    from .settings import RuntimeSettings
    from .store import Store

__all__ = ["RuntimeHost"]


class RuntimeHost(Protocol):
    """The runtime as the agent and turn planes and the tool context see it (structural: ``Runtime`` satisfies it).

    Foundation (``runtime.core``): ``home``, ``workspace``, ``settings``,
    ``registry``, ``events``, ``store``, the loop thread ``_loop`` and
    ``_start_soon``, the D6 scrubber. Plane services (``tasks``, ``work``,
    ``agents``, ``workspaces``, ``memory``, ``model_catalog``, ``approvals``,
    ``turns``, ``providers``) by their classes.
    """

    home: Path
    workspace: Path
    settings: RuntimeSettings
    registry: Registry
    events: EventBus
    store: Store
    _loop: LoopThread
    tasks: TaskService
    work: WorkService
    agents: AgentPlane
    workspaces: WorkspaceService
    memory: MemoryService
    model_catalog: ModelCatalogService
    approvals: ApprovalBroker
    images: ImagePlane
    web: WebService
    triggers: TriggerService

    @property
    def turns(self) -> TurnService: ...

    @property
    def providers(self) -> ProviderRegistry: ...

    def _start_soon(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def _check_open(self) -> None: ...

    def _scrubber(self) -> Scrubber: ...

    def agent_tasks(self, agent_id: str) -> AgentTasks: ...

    def _finish_call(
        self,
        env: dict[str, Any],
        args: Any,
        agent_id: str,
        execution_id: str,
        duration_ms: int,
        budget_tokens: int | None = None,
    ) -> ToolResult: ...

    def run_turn(
        self, message: str, agent: str | None = None, model: str | None = None, max_rounds: int | None = None
    ) -> TurnResult: ...

    def subscribe(self, fn: Callable[[RuntimeEvent], None]) -> Callable[[], None]: ...
