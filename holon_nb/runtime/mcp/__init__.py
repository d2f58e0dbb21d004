"""The MCP plane: MCP servers' tools inside holon_nb (issue 29); see :mod:`._plane`."""

from ._config import McpConfigError, McpServerConfig, load_servers, parse_server
from ._plane import McpPlane, McpRegistry

__all__ = ["McpConfigError", "McpServerConfig", "McpPlane", "McpRegistry", "load_servers", "parse_server"]
