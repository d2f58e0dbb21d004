"""What the agent plane's approval broker consumes: the ports :class:`~.approvals.ApprovalBroker` is built with.

The runtime's composition root (``Runtime._compose``) passes them. The rest of the agent plane
(:class:`~.plane.AgentPlane`, which starts agents' turns, reads every plane and settles their tasks) still
sees the runtime through :class:`~holon_nb.runtime.core.host.RuntimeHost`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...render.scrubbing import Scrubber
    from ...tools.context import CallContext, ToolContext

__all__ = ["ApprovalSettings", "EventSink", "ScrubberSource", "ToolContexts"]


class ApprovalSettings(Protocol):
    """The runtime options the approval broker reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def approval(self) -> str:
        """The approval policy (``never``, ``on_request`` or ``always``)."""
        ...

    @property
    def approval_timeout_s(self) -> float:
        """Seconds to wait for an answer (``<= 0``: forever)."""
        ...


class EventSink(Protocol):
    """Publishes a runtime event ``(kind, task_id, **data)`` to the runtime's subscribers."""

    def __call__(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Deliver the event."""
        ...


class ScrubberSource(Protocol):
    """The runtime's current D6 scrubber (a question shows the call's arguments scrubbed)."""

    def __call__(self) -> Scrubber:
        """The scrubber to apply now."""
        ...


class ToolContexts(Protocol):
    """The ``ToolContext`` a call made as ``call`` sees (the approval rules read its workspace)."""

    def __call__(self, call: CallContext, /) -> ToolContext:
        """The context of ``call``."""
        ...
