"""What a plane service may use of the runtime that owns it: :class:`RuntimeHost`.

Plane services (tasks, work, agents, turns, workspaces, memory, models) are
built by the :class:`~holon_nb.runtime.facade.Runtime` facade and given the
facade itself, but they see it only through this protocol, so no plane
imports the facade (which imports every plane). Each plane's service is typed
with its class, imported for type checking only: mypy checks every call a plane
makes on another, while at run time no plane imports the ones above it (the
import-linter contracts in ``pyproject.toml`` say which plane may use which).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...tools.context import CallContext
    from ...tools.receipts import Scrubber
    from ...tools.registry import Registry
    from ..agents.approvals import ApprovalBroker
    from ..agents.conversations import ConversationStore
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
    from .context import RuntimeToolContext
    from .events import EventBus, RuntimeEvent
    from .loop import LoopThread
    from .result import ToolResult
    from .settings import RuntimeSettings
    from .store import Store

__all__ = ["RuntimeHost"]


class RuntimeHost(Protocol):
    """The runtime as plane services see it (structural: ``Runtime`` satisfies it).

    Foundation (``runtime.core``): ``home``, ``workspace``, ``settings``,
    ``registry``, ``events``, ``store``, the loop thread ``_loop`` and
    ``_start_soon``, the D6 scrubber. Plane services (``tasks``, ``work``,
    ``agents``, ``workspaces``, ``memory``, ``model_catalog``, ``approvals``,
    ``turns``, ``providers``, ``conversations``) by their classes.
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

    @property
    def conversations(self) -> ConversationStore: ...

    def _start_soon(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def _check_open(self) -> None: ...

    def _scrubber(self) -> Scrubber: ...

    def scrubber(self) -> Scrubber: ...

    def agent_tasks(self, agent_id: str) -> AgentTasks: ...

    def tool_context(self, call: CallContext) -> RuntimeToolContext: ...

    def _finish_call(
        self,
        env: dict[str, Any],
        args: Any,
        agent_id: str,
        execution_id: str,
        duration_ms: int,
        budget_tokens: int | None = None,
    ) -> ToolResult: ...

    async def async_call(
        self,
        name: str,
        args: dict[str, Any] | str | None = None,
        agent: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> ToolResult: ...

    def call(
        self,
        name: str,
        args: dict[str, Any] | str | None = None,
        agent: str | None = None,
        context: dict[str, Any] | None = None,
        *,
        raise_on_error: bool = False,
    ) -> ToolResult: ...

    def run_turn(
        self, message: str, agent: str | None = None, model: str | None = None, max_rounds: int | None = None
    ) -> TurnResult: ...

    def subscribe(self, fn: Callable[[RuntimeEvent], None]) -> Callable[[], None]: ...
