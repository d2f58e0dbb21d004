"""The ``ToolContext`` a call sees: each plane's view, bound to the calling agent.

Built by :meth:`~holon_nb.runtime._facade.Runtime.tool_context` from :class:`ToolPlanes`, the plane services
the runtime's composition root gathers once (``Runtime._compose``); a model turn's calls get the same context
with their own ``work`` view (``work_view``). The context sees the planes a handler may reach, nothing else
of the runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...tools._context import CallContext

if TYPE_CHECKING:
    from ...render import Scrubber
    from ...tools.builtin.notebook._port import NotebookPort
    from ..agents._plane import AgentPlane
    from ..images._service import AgentImages, ImagePlane
    from ..memory._service import MemoryService, MemoryView
    from ..models._catalog import ModelCatalogService
    from ..tasks._agent import AgentTasks
    from ..tasks._early import EarlyCommand
    from ..triggers._service import TriggerService
    from ..web._service import WebService
    from ..work._agent import AgentWork
    from ..work._service import WorkService
    from ..workspaces._service import AgentWorkspaces, WorkspaceService
    from ._settings import RuntimeSettings

__all__ = ["RuntimeToolContext", "ToolPlanes", "_Context"]


@dataclass(frozen=True)
class ToolPlanes:
    """What a tool call's context reaches: the plane services handlers use, built once by the composition root.

    Attributes:
        workspaces, work, agents, memory, images, model_catalog: Planes whose ``bind(call)`` gives the call's view.
        web: Returns the web plane (read at each use: tests give a runtime another one, ``rt.web = …``).
        triggers: The trigger plane, used as it is.
        agent_homes: ``agent_id -> Path`` of each agent's home.
        agent_tasks: ``(agent_id, early) -> AgentTasks``: the task plane as that agent sees it (``ctx.commands``),
            with the command its call started early, if any.
        settings: Returns the runtime's current settings.
        scrubber: Returns the runtime's current D6 scrubber.
        notebook: Returns the kernel port the notebook layer installed (``rt.notebook``), or None outside a
            kernel (the Notebook family of issue 28 answers ``notebook_unavailable`` then).
    """

    workspaces: WorkspaceService
    work: WorkService
    agents: AgentPlane
    memory: MemoryService
    images: ImagePlane
    model_catalog: ModelCatalogService
    web: Callable[[], WebService]
    triggers: TriggerService
    agent_homes: Callable[[str], Path]
    agent_tasks: Callable[[str, EarlyCommand | None], AgentTasks]
    settings: Callable[[], RuntimeSettings]
    scrubber: Callable[[], Scrubber]
    notebook: Callable[[], NotebookPort | None] = lambda: None


class RuntimeToolContext:
    """The ``ToolContext`` one call sees.

    Args:
        planes: The plane services (:class:`ToolPlanes`).
        call: The call (its agent, profile, execution context).
        work_view: Builds ``ctx.work`` for the call (a model turn's ``TurnWork``); None: the work plane's own view.
        early: What the call started on its calling thread (``ToolSpec.start_early``), for ``ctx.commands`` to adopt.
    """

    def __init__(
        self,
        planes: ToolPlanes,
        call: CallContext,
        *,
        work_view: Callable[[CallContext], AgentWork] | None = None,
        early: EarlyCommand | None = None,
    ):
        self.call = call
        self._planes = planes
        self._work_view = work_view
        self._early = early
        self._commands: AgentTasks | None = None
        self._workspaces: AgentWorkspaces | None = None

    @property
    def cwd(self) -> Path:
        return self.workspaces.cwd

    @property
    def workspaces(self) -> AgentWorkspaces:
        if self._workspaces is None:
            self._workspaces = self._planes.workspaces.bind(self.call)
        return self._workspaces

    @property
    def work(self) -> AgentWork:
        if self._work_view is not None:
            return self._work_view(self.call)
        return self._planes.work.bind(self.call)

    @property
    def agents(self) -> AgentPlane:
        return self._planes.agents.bind(self.call)

    @property
    def memory(self) -> MemoryView:
        return self._planes.memory.bind(self.call)

    @property
    def images(self) -> AgentImages:
        return self._planes.images.bind(self.call)

    @property
    def model_catalog(self) -> ModelCatalogService:
        return self._planes.model_catalog.bind(self.call)

    @property
    def web(self) -> WebService:
        return self._planes.web()

    @property
    def triggers(self) -> TriggerService:
        return self._planes.triggers

    @property
    def notebook(self) -> NotebookPort | None:
        """The kernel port of the Notebook family (issue 28), or None outside a kernel."""
        return self._planes.notebook()

    @property
    def agent_home(self) -> Path:
        return self._planes.agent_homes(self.call.agent_id)

    def setting(self, name: str) -> Any:
        return getattr(self._planes.settings(), name)

    def scrub(self, text: str) -> str:
        """``text`` with the runtime's D6 secrets replaced (previews are cut from scrubbed text)."""
        return self._planes.scrubber().text(text)

    def scrub_streams(self, stdout: str, stderr: str) -> tuple[str, str]:
        """``(stdout, stderr)`` scrubbed apart and as one text (a secret split between them, issue 25 1c)."""
        scrubber = self._planes.scrubber()
        return scrubber.pair(scrubber.text(stdout), scrubber.text(stderr))

    @property
    def commands(self) -> AgentTasks:
        if self._commands is None:
            self._commands = self._planes.agent_tasks(self.call.agent_id, self._early)
        return self._commands


#: The name this class had before the runtime was split by plane (tests and benchmarks use it).
_Context = RuntimeToolContext
