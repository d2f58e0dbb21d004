"""What a plane service may use of the runtime that owns it: :class:`RuntimeHost`.

Plane services (tasks, work, agents, turns, workspaces, memory, models) are
built by the :class:`~holon_nb.runtime.facade.Runtime` facade and given the
facade itself, but they see it only through this protocol, so no plane
imports the facade (which imports every plane). Attributes naming another
plane's service are typed ``Any`` here on purpose: a plane that uses another
plane imports that plane's module for the type it needs, and the
import-linter contracts in ``pyproject.toml`` say which plane may use which.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...tools.context import CallContext
    from ...tools.receipts import Scrubber
    from ...tools.registry import Registry
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
    ``turns``, ``providers``, ``conversations``) are ``Any``.
    """

    home: Path
    workspace: Path
    settings: RuntimeSettings
    registry: Registry
    events: EventBus
    store: Store
    _loop: LoopThread
    tasks: Any
    work: Any
    agents: Any
    workspaces: Any
    memory: Any
    model_catalog: Any
    approvals: Any
    images: Any
    web: Any
    triggers: Any

    @property
    def turns(self) -> Any: ...

    @property
    def providers(self) -> Any: ...

    @property
    def conversations(self) -> Any: ...

    def _start_soon(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def _check_open(self) -> None: ...

    def _scrubber(self) -> Scrubber: ...

    def scrubber(self) -> Scrubber: ...

    def agent_tasks(self, agent_id: str) -> Any: ...

    def tool_context(self, call: CallContext) -> Any: ...

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
    ) -> Any: ...

    def subscribe(self, fn: Callable[[RuntimeEvent], None]) -> Callable[[], None]: ...
