"""The MCP plane: configured servers, their sessions, and their tools as registry entries (issue 29).

:class:`McpPlane` reads the configuration at each use (:func:`._config.load_servers`), keeps one
:class:`._connection.ServerConnection` per server, and turns each listed tool into an
:class:`~holon_nb.tools.builtin.external._mcp.McpToolSpec` named ``mcp__<server>__<tool>``.
:class:`McpRegistry` lays those specs over the built-in registry: with no server configured it lists exactly
the built-in tools. A name ``mcp__<server>__…`` of a configured server that has not started yet resolves to a
spec whose handler starts the server first (servers start lazily, on first use).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ...tools._registry import Registry
from ...tools._spec import ToolSpec
from ._cassette import McpCassette
from ._config import McpServerConfig, load_servers
from ._connection import ServerConnection
from ._ports import AddPreview, McpSettings, StartSoon
from ._results import error_text, payload_of
from ._schema import schema_problems

if TYPE_CHECKING:  # the tool models load with the first MCP tool (pydantic is not loaded by the runtime's import)
    from ...tools._context import ToolContext
    from ...tools.builtin.external._mcp import McpArguments, McpToolSpec

__all__ = ["McpPlane", "McpRegistry"]


def _mcp_tools() -> Any:
    from ...tools.builtin.external import _mcp

    return _mcp


log = logging.getLogger("holon_nb.mcp")


def _tool_dict(tool: Any) -> dict[str, Any]:
    if isinstance(tool, dict):
        return tool
    return {"name": tool.name, "description": tool.description or "", "input_schema": tool.input_schema or {}}


def _invalid(name: str, problems: list[str]) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"input for {name} does not match the tool schema",
            details={"tool_name": name, "parse_error": "; ".join(problems)},
            recovery_hint=f"Match the published input schema for {name}; see its description.",
        )
    )


class McpPlane:
    """The configured MCP servers of one runtime.

    Args:
        settings: Returns the runtime's settings (``mcp_servers``, ``mcp_cassette``, ``mcp_cassette_mode``).
        workspace: Where ``.mcp.json``/``pyproject.toml`` are read and a relative cassette path starts.
        home: The holon home; servers' stderr goes to ``<home>/logs/mcp/<server>.log``.
        start_soon: Starts a task on the runtime's loop.
        add_preview: Keeps a thumbnail of each image a call returns (the notebook shows it inline).
    """

    def __init__(
        self,
        settings: Callable[[], McpSettings],
        workspace: Path,
        home: Path,
        start_soon: StartSoon,
        add_preview: AddPreview | None = None,
    ) -> None:
        self._settings = settings
        self._add_preview = add_preview
        self.workspace, self.home = workspace, home
        self._start_soon = start_soon
        self._key: Any = None
        self._configs: dict[str, McpServerConfig] = {}
        self._conns: dict[str, ServerConnection] = {}
        self._cassette_key: Any = None
        self._cassette: McpCassette | None = None
        self._specs: tuple[McpToolSpec, ...] = ()
        self._specs_key: Any = None
        self.generation = 0
        self._stamp_at, self._stamp = -1.0, tuple[float, ...]()
        self._versions = 0  # counts configuration and cassette changes (the specs' cache key)

    # ------------------------------------------------------------ configuration
    def _current(self) -> McpSettings:
        return self._settings()

    def configs(self) -> dict[str, McpServerConfig]:
        """The configured servers by name (re-read when the settings or the environment's file change).

        Raises:
            McpConfigError: a configuration that cannot be used.
        """
        configured = self._current().mcp_servers
        key = (id(configured), repr(configured), os.environ.get("HOLON_NB_MCP_CONFIG", ""), self._files_stamp())
        if key != self._key:
            configs = load_servers(self.workspace, configured)
            for name, conn in list(self._conns.items()):
                if configs.get(name) != conn.config:  # removed or changed: its old process is stopped
                    self._start_soon(conn.stop)
                    del self._conns[name]
            self._configs, self._key = configs, key
            self._versions += 1
        return self._configs

    def _files_stamp(self) -> tuple[float, ...]:
        now = time.monotonic()
        if now - self._stamp_at < 1.0:  # the files are looked at once a second at most (each call asks)
            return self._stamp
        out = []
        for path in (self.workspace / ".mcp.json", self.workspace / "pyproject.toml"):
            try:
                out.append(path.stat().st_mtime)
            except OSError:
                out.append(0.0)
        self._stamp_at, self._stamp = now, tuple(out)
        return self._stamp

    def connection(self, server: str) -> ServerConnection:
        """The connection of a configured server (made on first use; not started)."""
        conn = self._conns.get(server)
        if conn is None:
            config = self.configs()[server]
            log_path = self.home / "logs" / "mcp" / f"{_mcp_tools().public_name(server, 'log')[5:-5] or 'server'}.log"
            conn = self._conns[server] = ServerConnection(config, log_path, self._start_soon)
        return conn

    def cassette(self) -> McpCassette | None:
        """The cassette in effect (see :mod:`._cassette`), or None."""
        settings = self._current()
        path_text = (settings.mcp_cassette or "").strip()
        mode = (settings.mcp_cassette_mode or os.environ.get("HOLON_NB_CASSETTE_MODE", "") or "auto").strip().lower()
        key = (path_text, mode)
        if key != self._cassette_key:
            self._cassette_key, self._cassette = key, None
            if path_text and mode not in ("off", ""):
                path = Path(path_text)
                path = path if path.is_absolute() else self.workspace / path
                effective = "replay" if mode in ("replay", "verify", "lenient") else mode
                if effective == "auto":
                    effective = "replay" if path.exists() else "record"
                self._cassette = McpCassette(path, effective)
            self._versions += 1
        return self._cassette

    # ------------------------------------------------------------ tools
    def _listed(self, server: str) -> list[dict[str, Any]] | None:
        cassette = self.cassette()
        if cassette is not None and cassette.mode == "replay":
            return cassette.tools(server)
        conn = self._conns.get(server)
        if conn is None or not conn.tools:
            return None
        return [_tool_dict(t) for t in conn.tools]

    def specs(self) -> tuple[McpToolSpec, ...]:
        """The specs of every tool of the started (or replayed) servers, in configuration order."""
        try:
            configs = self.configs()
        except Exception:  # noqa: BLE001 - a broken configuration shows in %holon mcp, not in every lookup
            return ()
        cassette = self.cassette()
        replaying = cassette is not None and cassette.mode == "replay"
        conns = [self._conns.get(name) for name in configs]
        key = (self._versions, replaying, tuple(c.tools_version if c else None for c in conns))
        if key != self._specs_key:
            listings = {name: self._listed(name) for name in configs}
            specs: list[McpToolSpec] = []
            taken: set[str] = set()
            for server, tools in listings.items():
                for tool in tools or []:
                    name = _mcp_tools().public_name(server, str(tool.get("name", "")), taken)
                    taken.add(name)
                    specs.append(self._spec(name, server, tool))
            self._specs, self._specs_key = tuple(specs), key
            self.generation += 1
        return self._specs

    def _spec(self, name: str, server: str, tool: dict[str, Any]) -> McpToolSpec:
        remote = str(tool.get("name", ""))
        schema = tool.get("input_schema") if isinstance(tool.get("input_schema"), dict) else {"type": "object"}

        async def handler(args: McpArguments, ctx: Any) -> dict[str, Any]:
            out = await self.call(server, remote, name, dict(args.model_extra or {}), schema)
            self._previews(ctx, out)
            return out

        shared = self.configs()[server].private_children
        return _mcp_tools().make_spec(name, server, remote, str(tool.get("description") or ""), schema, handler, shared)

    def _previews(self, ctx: ToolContext, payload: dict[str, Any]) -> None:
        execution_id = ctx.call.execution_id
        if self._add_preview is None or not execution_id:
            return
        import base64
        import binascii

        for i, block in enumerate(payload.get("content") or []):
            if block.get("type") == "image" and isinstance(block.get("data"), str):
                try:
                    data = base64.b64decode(block["data"], validate=True)
                except (binascii.Error, ValueError):
                    continue
                self._add_preview(execution_id, data, f"{payload.get('server')}/{payload.get('tool')} image {i}")

    def pending_spec(self, name: str) -> McpToolSpec | None:
        """For ``mcp__<server>__<tool>`` of a configured server whose tools are not known yet: a spec whose
        handler starts the server, then calls the tool it names (or answers ``unknown_tool``)."""
        if not name.startswith("mcp__"):
            return None
        try:
            configs = self.configs()
        except Exception:  # noqa: BLE001
            return None
        for server in configs:
            prefix = _mcp_tools().public_name(server, "x")[:-1]
            if name.startswith(prefix) and self._listed(server) is None:

                async def handler(args: McpArguments, ctx: Any, server: str = server) -> dict[str, Any]:
                    await self.start_server(server)
                    spec = next((s for s in self.specs() if s.name == name), None)
                    if spec is None:
                        raise ToolFailure(
                            ToolError(
                                kind="unknown_tool",
                                message=f"unknown tool {name}: MCP server {server} has no such tool",
                                details={"tool_name": name},
                                recovery_hint="%holon mcp lists each server's tools.",
                            )
                        )
                    out = await spec.handler(args, ctx)
                    return out if isinstance(out, dict) else out.model_dump(mode="json", exclude_unset=True)

                shared = configs[server].private_children
                return _mcp_tools().make_spec(
                    name, server, name[len(prefix) :], "", {"type": "object"}, handler, shared
                )
        return None

    async def start_server(self, server: str) -> None:
        """Start ``server`` unless it runs (or its cassette replays); record its tools when recording.

        Raises:
            ToolFailure: ``mcp_server_unavailable`` (see :meth:`ServerConnection.ensure`).
        """
        cassette = self.cassette()
        if cassette is not None and cassette.mode == "replay":
            if cassette.tools(server) is None:
                raise ToolFailure(
                    ToolError(
                        kind="mcp_server_unavailable",
                        message=f"the MCP cassette {cassette.path.name} has no tool list of server {server}",
                        details={"server": server},
                        recovery_hint="Record the cassette again (HolonNB.cassette_mode = 'record').",
                    )
                )
            return
        conn = self.connection(server)
        await conn.ensure()
        if cassette is not None:
            cassette.record_tools(server, [_tool_dict(t) for t in conn.tools])

    async def start_all(self) -> dict[str, str | None]:
        """Start every enabled server; return ``{server: error or None}``."""
        out: dict[str, str | None] = {}
        for name, config in self.configs().items():
            if not config.enabled:
                continue
            try:
                await self.start_server(name)
                out[name] = None
            except ToolFailure as exc:
                out[name] = exc.error.message
        return out

    async def call(self, server: str, tool: str, name: str, args: dict[str, Any], schema: Any) -> dict[str, Any]:
        """Check ``args`` against the tool's schema, call it (or replay it), and return the bounded payload.

        Raises:
            ToolFailure: ``invalid_tool_input`` (the parser's phrases), ``mcp_tool_error`` (the server's
                ``isError`` result), ``mcp_timeout``, ``mcp_server_unavailable``.
        """
        problems = schema_problems(args, schema)
        if problems:
            raise _invalid(name, problems)
        config = self.configs()[server]
        cassette = self.cassette()
        replayed = False
        if cassette is not None and cassette.mode == "replay":
            raw = cassette.answer(server, tool, args)
            if raw is None:
                raise ToolFailure(
                    ToolError(
                        kind="mcp_server_unavailable",
                        message=f"the MCP cassette {cassette.path.name} has no call of {tool} on {server} with these arguments",
                        details={"server": server, "tool": tool},
                        recovery_hint="Record the cassette again (HolonNB.cassette_mode = 'record').",
                    )
                )
            replayed = True
        else:
            result = await self.connection(server).call(tool, args)
            raw = {
                "content": [b.model_dump(mode="json", exclude_none=True) for b in result.content or []],
                "structured_content": result.structured_content,
                "is_error": bool(result.is_error),
            }
            if cassette is not None:
                cassette.record_call(server, tool, args, raw)
        payload = payload_of(server, tool, raw, config.max_result_chars)
        if raw.get("is_error"):
            raise ToolFailure(
                ToolError(
                    kind="mcp_tool_error",
                    message=f"{tool} on MCP server {server} failed: {error_text(payload)}",
                    details={"server": server, "tool": tool},
                )
            )
        if replayed:
            payload["replayed"] = True
        return payload

    # ------------------------------------------------------------ status and shutdown
    def status(self) -> list[dict[str, Any]]:
        """One row per configured server: ``{server, transport, state, error, restarts, tools, log}``."""
        rows = []
        cassette = self.cassette()
        for name, config in self.configs().items():
            conn = self._conns.get(name)
            state = conn.state if conn else ("disabled" if not config.enabled else "stopped")
            if cassette is not None and cassette.mode == "replay":
                state = "replayed" if cassette.tools(name) is not None else "not in cassette"
            rows.append(
                {
                    "server": name,
                    "transport": config.transport,
                    "state": state,
                    "error": conn.error if conn else None,
                    "restarts": conn.restarts if conn else 0,
                    "tools": [s.name for s in self.specs() if s.server == name],
                    "log": str(conn.log_path) if conn and config.transport == "stdio" else None,
                }
            )
        return rows

    def start(self) -> None:
        """Nothing starts with the runtime: each server starts on its first use."""

    async def close(self) -> None:
        """Stop every server (the runtime is closing; each server's process ends with it)."""
        for conn in list(self._conns.values()):
            await conn.stop()


class McpRegistry(Registry):
    """The built-in registry with the MCP plane's tools after it (see the module)."""

    def __init__(self, base: Registry, plane: McpPlane) -> None:  # no super().__init__: views of the two
        self.base, self.plane = base, plane
        self._cache: tuple[Any, tuple[ToolSpec[Any, Any], ...], dict[str, ToolSpec[Any, Any]]] | None = None

    @property
    def generation(self) -> int:
        """Changes whenever the MCP tools change (caches of advertised tools key on it)."""
        self.plane.specs()
        return self.plane.generation

    def _both(self) -> tuple[tuple[ToolSpec[Any, Any], ...], dict[str, ToolSpec[Any, Any]]]:
        extra = self.plane.specs()
        if self._cache is None or self._cache[0] is not extra:
            specs = (*self.base._specs, *extra)
            self._cache = (extra, specs, {s.name: s for s in specs})
        return self._cache[1], self._cache[2]

    @property
    def _specs(self) -> tuple[ToolSpec[Any, Any], ...]:  # type: ignore[override]
        return self._both()[0]

    @property
    def _by_name(self) -> dict[str, ToolSpec[Any, Any]]:  # type: ignore[override]
        return self._both()[1]

    def get(self, name: str) -> ToolSpec[Any, Any] | None:
        """A built-in tool, an MCP tool of a started server, or a pending one of a server not started yet."""
        if not name.startswith("mcp__"):
            return self.base.get(name)
        return self._both()[1].get(name) or self.plane.pending_spec(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[ToolSpec[Any, Any]]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)
