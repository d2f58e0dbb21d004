"""The ports the MCP plane consumes (filled by :meth:`holon_nb.runtime.Runtime._compose`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

__all__ = ["StartSoon", "McpSettings", "AddPreview"]


class StartSoon(Protocol):
    """Start a coroutine function as a task of the runtime's loop (``LoopThread.start_soon``)."""

    def __call__(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None: ...


class McpSettings(Protocol):
    """What the plane reads of the runtime's settings, at each use."""

    @property
    def mcp_servers(self) -> Mapping[str, Any]: ...

    @property
    def mcp_cassette(self) -> str: ...

    @property
    def mcp_cassette_mode(self) -> str: ...


class AddPreview(Protocol):
    """Keep a thumbnail of an image a call received (``ImagePlane.add_preview(execution_id, data, label)``)."""

    def __call__(self, execution_id: str, data: bytes, label: str) -> None: ...
