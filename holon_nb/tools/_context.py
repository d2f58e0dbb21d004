"""What a handler may use: the :class:`ToolContext` protocol and :class:`CallContext`.

Handlers never import the runtime; the runtime implements ``ToolContext``
(style.md §2.1). ``CallContext`` describes who is calling and how.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._spec import Profile

if TYPE_CHECKING:
    from .builtin.notebook._port import NotebookPort

__all__ = ["CallContext", "ToolContext", "TRUNCATION_STOP_REASONS", "GUARDED_MUTATION_TOOLS", "resolve_shell"]

#: Provider stop reasons that trigger the truncated-mutation guard (commands spec §2.1).
TRUNCATION_STOP_REASONS = frozenset({"max_tokens", "max_output_tokens", "model_context_window_exceeded"})

#: The eleven guarded tools (agents spec §1.3 rule 5; one list for every plane).
GUARDED_MUTATION_TOOLS = frozenset(
    {
        "ApplyPatch",
        "CreateWorkItem",
        "UpdateWorkItem",
        "PickWorkItem",
        "CompleteWorkItem",
        "WaitFor",
        "SendAgentMessage",
        "CreateAgent",
        "InvokeAgent",
        "CreateTimer",
        "CancelTimer",
    }
)


@dataclass(frozen=True)
class CallContext:
    """Who calls a tool and under which round.

    Attributes:
        agent_id: The calling agent's id.
        profile: Its profile preset (decides the family gate).
        execution: Caller-supplied execution context (D11), e.g. ``{"brief": "…"}``.
        exposed: Tool names advertised this model round; None for direct calls
            (magics, ``Runtime.call``, CLI), which skip the exposure check.
        stop_reason: The provider's stop reason of the round, if any.
        round: The 1-based model round, if any.
        execution_id: The tool execution id (``tool_…``) assigned by the runtime.
        model_route: The model route of the round (``openai-codex/gpt-5``…), None for direct
            calls; it picks the ApplyPatch surface (commands spec §10.1).
    """

    agent_id: str
    profile: Profile = Profile.PUBLIC_NAMED
    execution: dict[str, Any] = field(default_factory=dict)
    exposed: frozenset[str] | None = None
    stop_reason: str | None = None
    round: int | None = None
    execution_id: str = ""
    model_route: str | None = None


@runtime_checkable
class ToolContext(Protocol):
    """Services the runtime offers handlers. Implemented in ``holon_nb.runtime``.

    All coroutine methods run on the runtime's loop thread.
    """

    call: CallContext

    @property
    def cwd(self) -> Path:
        """The active workspace cwd of the calling agent (absolute)."""

    @property
    def agent_home(self) -> Path:
        """``<holon home>/agents/<agent_id>/`` of the calling agent (exists)."""

    def setting(self, name: str) -> Any:
        """Return a runtime setting by name (see ``RuntimeSettings``)."""

    def scrub(self, text: str) -> str:
        """``text`` with the runtime's secret values replaced by ``[redacted]`` (D6). Previews and
        summaries are cut from scrubbed text, so a secret straddling a cut leaves no prefix."""

    def scrub_streams(self, stdout: str, stderr: str) -> tuple[str, str]:
        """``(stdout, stderr)`` scrubbed as one text too: a secret printed half to each is replaced (D6)."""

    @property
    def commands(self) -> Any:
        """The command/task service (``holon_nb.runtime.tasks._agent.AgentTasks``)."""

    @property
    def workspaces(self) -> Any:
        """The caller's workspace view (``holon_nb.runtime.workspaces._service.AgentWorkspaces``)."""

    @property
    def work(self) -> Any:
        """Work items, waits and timers for the caller (``holon_nb.runtime.work._service``)."""

    @property
    def agents(self) -> Any:
        """The agent plane for the caller (``holon_nb.runtime.agents._plane``)."""

    @property
    def memory(self) -> Any:
        """Memory search and ``source_ref`` resolution for the caller (``holon_nb.runtime.memory._service``)."""

    @property
    def images(self) -> Any:
        """ViewImage and GenerateImage for the caller (``holon_nb.runtime.images._service.AgentImages``)."""

    @property
    def model_catalog(self) -> Any:
        """Provider and model listing (``holon_nb.runtime.models._catalog.ModelCatalogService``)."""

    @property
    def web(self) -> Any:
        """WebFetch, WebSearch and XSearch (``holon_nb.runtime.web.WebService``)."""

    @property
    def triggers(self) -> Any:
        """External trigger capabilities (``holon_nb.runtime.triggers.TriggerService``)."""

    @property
    def notebook(self) -> NotebookPort | None:
        """The kernel port of the opt-in Notebook family (issue 28), or None outside a kernel."""


def resolve_shell(shell: str | None) -> str:
    """Resolve the shell program (commands spec §4.1): explicit, else from ``$SHELL``, else ``sh``.

    Here, not with ExecCommand, so the runtime can ask at start-up without loading any tool model.
    """
    if shell:
        return shell
    env_shell = os.environ.get("SHELL", "")
    for name in ("bash", "zsh", "sh"):
        if name in env_shell:
            return name
    return "sh"
