"""One MCP server's client session, owned by a task of the runtime's loop (issue 29).

States: ``stopped`` (never started, or stopped), ``starting``, ``ready``, ``crashed`` (it exited or its
connection broke; the next use restarts it after a backoff), ``failed`` (it could not start or initialise
within ``startup_timeout_s``; retried on the next use after the backoff), ``disabled`` (``enabled: false``).
A server starts on first use; its stderr is appended to ``<home>/logs/mcp/<server>.log``, never to the cell.
"""

from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path
from typing import Any

import anyio

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ._config import McpServerConfig
from ._ports import StartSoon

__all__ = ["ServerConnection", "BACKOFF_CAP_S"]

log = logging.getLogger("holon_nb.mcp")

#: Longest wait before a crashed server is started again (seconds); the wait doubles from 0.5 s per failure.
BACKOFF_CAP_S = 30.0


def _unavailable(name: str, message: str, hint: str | None = None) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="mcp_server_unavailable",
            message=message,
            details={"server": name},
            recovery_hint=hint
            or f"See the server's log (%holon mcp shows its path), then retry; {name} restarts on the next call.",
            retryable=True,
        )
    )


class ServerConnection:
    """The session with one configured server: lazy start, calls with timeouts, crash restarts with backoff.

    Args:
        config: The server's configuration.
        log_path: The file its stderr is appended to.
        start_soon: Starts the owner task on the runtime's loop.
    """

    def __init__(self, config: McpServerConfig, log_path: Path, start_soon: StartSoon) -> None:
        self.config = config
        self.log_path = log_path
        self._start_soon = start_soon
        self.state = "disabled" if not config.enabled else "stopped"
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp.types.Tool of its last tools/list
        self.tools_version = 0  # counts tools/list answers (the plane's specs are rebuilt when it changes)
        self.failures = 0
        self.restarts = 0
        self.next_start_at = 0.0
        self._session: Any = None
        self._scope = anyio.CancelScope()
        self._lock = anyio.Lock()
        self._stop = anyio.Event()
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._done.set()

    # ------------------------------------------------------------ lifecycle
    async def ensure(self) -> None:
        """Start the server unless it is ready; wait out the crash backoff first.

        Raises:
            ToolFailure: ``mcp_server_unavailable`` when it is disabled, cannot start, or does not initialise
                within ``startup_timeout_s``.
        """
        name = self.config.name
        if self.state == "ready":
            return
        if self.state == "disabled":
            raise _unavailable(
                name, f"MCP server {name} is disabled (enabled: false)", "Enable it in its configuration."
            )
        async with self._lock:
            if self.state == "ready":
                return
            wait = self.next_start_at - time.monotonic()
            if wait > self.config.startup_timeout_s:
                raise _unavailable(
                    name, f"MCP server {name} is {self.state} ({self.error}); it restarts in {wait:.0f} s"
                )
            if wait > 0:
                await anyio.sleep(wait)
            await self._done.wait()  # the previous owner task has let go of its process
            if self.state in ("crashed", "failed"):
                self.restarts += 1
            self.state, self.error = "starting", None
            self._stop, self._ready, self._done = anyio.Event(), anyio.Event(), anyio.Event()
            self._scope = anyio.CancelScope()
            self._start_soon(self._own)
            with anyio.move_on_after(self.config.startup_timeout_s):
                await self._ready.wait()
            if self.state == "starting":  # it hangs: stop the owner task (its process is killed as it unwinds)
                self._stop.set()
                self._scope.cancel()
                self._failed("failed", f"did not start and initialise within {self.config.startup_timeout_s:g} s")
            if self.state != "ready":
                raise _unavailable(name, f"MCP server {name} could not start: {self.error}")

    def _failed(self, state: str, error: str) -> None:
        self.state, self.error = state, error
        self.failures += 1
        self.next_start_at = time.monotonic() + min(BACKOFF_CAP_S, 0.5 * 2 ** (self.failures - 1))
        log.info("MCP server %s %s: %s", self.config.name, state, error)  # the receipt and %holon mcp say it

    async def _transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        cfg = self.config
        if cfg.transport == "stdio":
            import os

            from ._stdio import bounded_stdio

            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            errlog = stack.enter_context(open(self.log_path, "a", encoding="utf-8"))  # noqa: SIM115
            env = {**os.environ, **cfg.env}
            streams = await stack.enter_async_context(bounded_stdio(cfg.command, list(cfg.args), env, cfg.cwd, errlog))
        else:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = await stack.enter_async_context(create_mcp_http_client(headers=dict(cfg.headers)))
            streams = await stack.enter_async_context(streamable_http_client(cfg.url, http_client=client))
        return streams[0], streams[1]

    async def _own(self) -> None:
        """The owner task: enter the transport and the session, list the tools, hold them until stopped."""
        try:
            with self._scope:
                await self._serve()
        except Exception as exc:  # noqa: BLE001 - a server's failure is its state, shown by %holon mcp and receipts
            if self.state in ("starting", "ready"):
                self._failed("crashed" if self.state == "ready" else "failed", f"{type(exc).__name__}: {exc}"[:500])
        finally:
            self._session = None
            if self.state == "ready":
                self.state = "stopped"
            self._ready.set()
            self._done.set()

    async def _serve(self) -> None:
        from mcp import ClientSession

        async with contextlib.AsyncExitStack() as stack:
            read, write = await self._transport(stack)
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            tools: list[Any] = []
            cursor = None
            while True:
                from mcp.types import PaginatedRequestParams

                page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor or len(tools) > 10_000:
                    break
            self.tools, self._session, self.state = tools, session, "ready"
            self.tools_version += 1
            self._ready.set()
            await self._stop.wait()

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop the server (its process is ended as the owner task unwinds); wait up to ``timeout`` s."""
        self._stop.set()
        if self.state == "starting":
            self._scope.cancel()
        with anyio.move_on_after(timeout):
            await self._done.wait()
        if self.state != "disabled":
            self.state = "stopped"

    # ------------------------------------------------------------ calls
    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        """``tools/call`` with the server's ``tool_timeout_s``.

        Returns:
            The ``mcp.types.CallToolResult``.

        Raises:
            ToolFailure: ``mcp_timeout`` past the timeout; ``mcp_server_unavailable`` when the server is not
                running or its connection broke during the call (it is then restarted on the next call).
        """
        from mcp.shared.exceptions import MCPError

        await self.ensure()
        session, name = self._session, self.config.name
        if session is None:
            raise _unavailable(name, f"MCP server {name} stopped before the call")
        timeout = self.config.tool_timeout_s
        try:
            with anyio.fail_after(timeout):
                result = await session.call_tool(tool, args)
        except TimeoutError:
            raise ToolFailure(
                ToolError(
                    kind="mcp_timeout",
                    message=f"MCP server {name} did not answer {tool} within {timeout:g} s",
                    details={"server": name, "tool": tool, "timeout_s": timeout},
                    recovery_hint=f"Retry, or raise tool_timeout_s in the configuration of {name}.",
                    retryable=True,
                )
            ) from None
        except MCPError as exc:
            if exc.code == -32000 or "closed" in exc.error.message.lower():  # CONNECTION_CLOSED
                self._failed("crashed", f"connection closed during {tool}: {exc.error.message}")
                self._stop.set()
                raise _unavailable(name, f"MCP server {name} exited during {tool}") from None
            raise ToolFailure(
                ToolError(
                    kind="mcp_tool_error",
                    message=f"MCP server {name} refused {tool}: {exc.error.message}"[:500],
                    details={"server": name, "tool": tool, "code": exc.code},
                )
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            self._failed("crashed", f"{type(exc).__name__} during {tool}")
            self._stop.set()
            raise _unavailable(name, f"MCP server {name} exited during {tool}") from None
        except Exception as exc:  # noqa: BLE001 - a malformed answer (not a CallToolResult) is the server's error
            raise ToolFailure(
                ToolError(
                    kind="mcp_tool_error",
                    message=f"MCP server {name} answered {tool} with something that is not a tool result: "
                    f"{type(exc).__name__}: {exc}"[:500],
                    details={"server": name, "tool": tool, "exception_type": type(exc).__name__},
                )
            ) from None
        self.failures = 0
        return result
