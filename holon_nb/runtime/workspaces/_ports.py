"""What the workspace plane consumes: the ports :class:`~.service.WorkspaceService` is built with.

The runtime's composition root (``Runtime._compose``) passes them; the workspace plane sees nothing else of
the runtime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

__all__ = ["AgentHomes", "LoopCall"]


class AgentHomes(Protocol):
    """``agent_id -> Path`` of an agent's home, created (made again if it vanished)."""

    def __call__(self, agent_id: str, /) -> Path:
        """The agent's home."""
        ...


class LoopCall(Protocol):
    """Runs a coroutine function on the runtime's loop from another thread and waits for its result."""

    def __call__(self, fn: Callable[..., Awaitable[Any]], /, *args: Any) -> Any:
        """``await fn(*args)`` on the loop; its result."""
        ...
