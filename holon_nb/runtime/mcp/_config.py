"""MCP server configuration: the ``mcpServers`` shape of Claude Code and Codex (issue 29).

One entry per server name::

    {"command": "python", "args": ["server.py"], "env": {"K": "v"}}           # stdio
    {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "…"}}  # streamable HTTP

plus holon_nb's optional keys ``startup_timeout_s`` (Codex: ``startup_timeout_sec``), ``tool_timeout_s``
(``tool_timeout_sec``), ``max_result_chars``, ``enabled`` and ``cwd``. Sources, later ones overriding earlier
ones name by name: ``<workspace>/.mcp.json`` (Claude Code's project file), ``[tool.holon_nb.mcpServers]`` of
``<workspace>/pyproject.toml``, the JSON file ``$HOLON_NB_MCP_CONFIG``, then ``HolonNB.mcp_servers``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...tools._errors import HolonNBError

__all__ = ["McpConfigError", "McpServerConfig", "parse_server", "load_servers"]

_KNOWN = {
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "startup_timeout_s",
    "startup_timeout_sec",
    "tool_timeout_s",
    "tool_timeout_sec",
    "max_result_chars",
    "enabled",
    "private_children",
}


class McpConfigError(HolonNBError, ValueError):
    """An ``mcpServers`` entry that cannot be used (names the server and the key)."""


@dataclass(frozen=True)
class McpServerConfig:
    """One configured MCP server.

    Attributes:
        name: The server's name (the key of its entry).
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP).
        command, args, env, cwd: How to start a stdio server (``env`` is added to the runtime's environment).
        url, headers: Where a streamable HTTP server listens, and the headers each request carries.
        startup_timeout_s: Seconds to start and initialise (default 30).
        tool_timeout_s: Seconds one ``tools/call`` may take (default 120).
        max_result_chars: Most characters of content a call keeps (default 200,000; the rest is cut).
        enabled: False: listed by ``%holon mcp`` but never started.
        private_children: True: its tools are offered to private child agents too (family ``mcp_shared``);
            by default only public named agents get them (family ``mcp``).
    """

    name: str
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    startup_timeout_s: float = 30.0
    tool_timeout_s: float = 120.0
    max_result_chars: int = 200_000
    enabled: bool = True
    private_children: bool = False


def _strings(name: str, key: str, value: Any, kind: type) -> Any:
    if kind is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise McpConfigError(f"MCP server {name!r}: `{key}` must be a list of strings")
        return tuple(value)
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise McpConfigError(f"MCP server {name!r}: `{key}` must map strings to strings")
    return dict(value)


def _number(name: str, entry: Mapping[str, Any], keys: tuple[str, ...], default: float) -> float:
    for key in keys:
        if key in entry:
            value = entry[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise McpConfigError(f"MCP server {name!r}: `{key}` must be a positive number, got {value!r}")
            return float(value)
    return default


def parse_server(name: str, entry: Any) -> McpServerConfig:
    """Check one ``mcpServers`` entry and return its config.

    Raises:
        McpConfigError: not an object, an unknown key, neither ``command`` nor ``url`` (or both), a wrong type.
    """
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(f"an MCP server name must be a non-empty string, got {name!r}")
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"MCP server {name!r}: its entry must be an object with `command` or `url`")
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise McpConfigError(f"MCP server {name!r}: unknown key `{unknown[0]}` (known: {', '.join(sorted(_KNOWN))})")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise McpConfigError(f"MCP server {name!r}: give exactly one of `command` (stdio) or `url` (streamable HTTP)")
    kind = entry.get("type")
    if kind not in (None, "stdio", "http", "streamable-http", "streamable_http"):
        raise McpConfigError(f"MCP server {name!r}: `type` {kind!r} is not stdio or http (SSE is not supported)")
    common: dict[str, Any] = {
        "startup_timeout_s": _number(name, entry, ("startup_timeout_s", "startup_timeout_sec"), 30.0),
        "tool_timeout_s": _number(name, entry, ("tool_timeout_s", "tool_timeout_sec"), 120.0),
        "max_result_chars": int(_number(name, entry, ("max_result_chars",), 200_000)),
        "enabled": bool(entry.get("enabled", True)),
        "private_children": bool(entry.get("private_children", False)),
    }
    if command is not None:
        if not isinstance(command, str) or not command:
            raise McpConfigError(f"MCP server {name!r}: `command` must be a non-empty string")
        cwd = entry.get("cwd")
        return McpServerConfig(
            name=name,
            transport="stdio",
            command=command,
            args=_strings(name, "args", entry.get("args", []), list),
            env=_strings(name, "env", entry.get("env", {}), dict),
            cwd=str(cwd) if cwd is not None else None,
            **common,
        )
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise McpConfigError(f"MCP server {name!r}: `url` must be an http(s) URL, got {url!r}")
    return McpServerConfig(
        name=name,
        transport="http",
        url=url,
        headers=_strings(name, "headers", entry.get("headers", {}), dict),
        **common,
    )


def _entries(data: Any, source: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise McpConfigError(f"{source}: expected an object with `mcpServers`")
    servers = data.get("mcpServers", data.get("mcp_servers", {}))
    if not isinstance(servers, Mapping):
        raise McpConfigError(f"{source}: `mcpServers` must be an object of servers by name")
    return dict(servers)


def _file_entries(workspace: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    dot = workspace / ".mcp.json"
    if dot.is_file():
        out.update(_entries(json.loads(dot.read_text(encoding="utf-8")), str(dot)))
    pyproject = workspace / "pyproject.toml"
    if pyproject.is_file():
        import importlib

        try:
            tomllib: Any = importlib.import_module("tomllib")
        except ImportError:  # pragma: no cover - Python 3.10: pyproject entries need 3.11's tomllib
            tomllib = None
        if tomllib is not None:
            tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("holon_nb", {})
            if "mcpServers" in tool or "mcp_servers" in tool:
                out.update(_entries(tool, f"{pyproject} [tool.holon_nb]"))
    env_file = os.environ.get("HOLON_NB_MCP_CONFIG", "").strip()
    if env_file:
        path = Path(env_file).expanduser()
        out.update(_entries(json.loads(path.read_text(encoding="utf-8")), str(path)))
    return out


def load_servers(workspace: Path, configured: Mapping[str, Any]) -> dict[str, McpServerConfig]:
    """Every configured server by name: the files' entries (see the module), then ``configured`` on top.

    Raises:
        McpConfigError: an entry that cannot be used, or a file that is not valid JSON/TOML.
    """
    try:
        entries = _file_entries(workspace)
    except (ValueError, OSError) as exc:
        if isinstance(exc, McpConfigError):
            raise
        raise McpConfigError(f"MCP configuration file could not be read: {exc}") from None
    entries.update(configured)
    return {name: parse_server(name, entry) for name, entry in entries.items()}
