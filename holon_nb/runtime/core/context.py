"""The ``ToolContext`` a direct call sees: each plane's view, bound to the calling agent.

Built by :meth:`~holon_nb.runtime.facade.Runtime.tool_context`; the turn loop
subclasses it for a model's calls. Reaches the planes only through
:class:`~holon_nb.runtime.core.host.RuntimeHost`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...tools.context import CallContext

if TYPE_CHECKING:
    from ..agents.plane import AgentPlane
    from ..images.service import AgentImages
    from ..memory.service import MemoryView
    from ..models.catalog import ModelCatalogService
    from ..tasks.agent import AgentTasks
    from ..triggers.service import TriggerService
    from ..web.service import WebService
    from ..work.agent import AgentWork
    from ..workspaces.service import AgentWorkspaces
    from .host import RuntimeHost

__all__ = ["RuntimeToolContext", "_Context"]


class RuntimeToolContext:
    """The ``ToolContext`` one call sees."""

    def __init__(self, rt: RuntimeHost, call: CallContext):
        self.call = call
        self._rt = rt
        self._commands: AgentTasks | None = None
        self._workspaces: AgentWorkspaces | None = None

    @property
    def cwd(self) -> Path:
        return self.workspaces.cwd

    @property
    def workspaces(self) -> AgentWorkspaces:
        if self._workspaces is None:
            self._workspaces = self._rt.workspaces.bind(self.call)
        return self._workspaces

    @property
    def work(self) -> AgentWork:
        return self._rt.work.bind(self.call)

    @property
    def agents(self) -> AgentPlane:
        return self._rt.agents.bind(self.call)

    @property
    def memory(self) -> MemoryView:
        return self._rt.memory.bind(self.call)

    @property
    def images(self) -> AgentImages:
        return self._rt.images.bind(self.call)

    @property
    def model_catalog(self) -> ModelCatalogService:
        return self._rt.model_catalog.bind(self.call)

    @property
    def web(self) -> WebService:
        return self._rt.web

    @property
    def triggers(self) -> TriggerService:
        return self._rt.triggers

    @property
    def agent_home(self) -> Path:
        return self._rt.tasks.agent_home(self.call.agent_id)

    def setting(self, name: str) -> Any:
        return getattr(self._rt.settings, name)

    def scrub(self, text: str) -> str:
        """``text`` with the runtime's D6 secrets replaced (previews are cut from scrubbed text)."""
        return self._rt._scrubber().text(text)

    def scrub_streams(self, stdout: str, stderr: str) -> tuple[str, str]:
        """``(stdout, stderr)`` scrubbed apart and as one text (a secret split between them, issue 25 1c)."""
        scrubber = self._rt._scrubber()
        return scrubber.pair(scrubber.text(stdout), scrubber.text(stderr))

    @property
    def commands(self) -> AgentTasks:
        if self._commands is None:
            self._commands = self._rt.agent_tasks(self.call.agent_id)
        return self._commands


#: The name this class had before the runtime was split by plane (tests and benchmarks use it).
_Context = RuntimeToolContext
