"""holon_nb as an MCP server (issue 29): ``holon-nb mcp serve`` and ``%holon mcp serve``.

The server lists the model-facing tools of one profile (hidden tools, such as the external-trigger pair, are
never listed; MCP servers' own tools are not re-exported) with their published input schemas, and runs each
``tools/call`` through the runtime's one dispatch path (:meth:`holon_nb.runtime.Runtime.call`) as the agent
of that profile. A call's envelope comes back as ``structuredContent`` and its model-visible receipt as the
text content; an error envelope (a schema error included) is an ``isError`` result, never a protocol error.

Over streamable HTTP the server listens on 127.0.0.1 only and refuses (401) every request without the
bearer token it was started with (compared in constant time): a token of another runtime is refused too.
"""

from __future__ import annotations

import concurrent.futures
import hmac
import itertools
import json
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

__all__ = [
    "build_server",
    "serve_stdio",
    "serve_http",
    "bearer_guard",
    "new_token",
    "write_token_file",
    "HttpServe",
    "AGENT_OF",
]

#: The agent id calls arrive as, per profile (a private child profile gets an agent of its own).
AGENT_OF = {"public_named": "default", "private_child": "mcp_client_private"}


def new_token() -> str:
    """A fresh bearer token (32 random bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def _tool_list(rt: Any, profile: Any) -> list[Any]:
    """The tools a model of ``profile`` is offered (the turn loop's list: hidden and unconfigured ones left
    out), without the MCP servers' own tools."""
    from mcp import types

    return [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
        for t in rt.turns.advertised_tools(profile)
        if not t.name.startswith("mcp__")  # the MCP servers' own tools are not served again
    ]


def build_server(
    rt: Any, profile_name: str = "public_named", on_call: Callable[[dict[str, Any]], None] | None = None
) -> Any:
    """An ``mcp.server.lowlevel.Server`` over ``rt``'s tools for ``profile_name`` (see the module).

    Args:
        rt: The :class:`~holon_nb.runtime.Runtime` whose tools are served.
        profile_name: ``public_named`` or ``private_child``.
        on_call: Told ``{"phase": "start"|"end"|"stopped", "call", "tool", "agent", "stop"?, "result"?}`` around each
            call (the notebook's live receipts of ``%holon mcp serve``); ``stop()`` (start only) stops the call.

    Raises:
        ValueError: an unknown profile name.
    """
    from mcp import types
    from mcp.server.lowlevel import Server

    from ...tools._spec import Profile

    profile = Profile(profile_name)
    agent = AGENT_OF[profile.value]
    if rt.store.agent(agent) is None:
        rt.store.ensure_agent(agent, profile.value, name=agent)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=_tool_list(rt, profile))

    calls = itertools.count(1)

    async def call_tool(ctx: Any, params: Any) -> Any:
        name, args, n = params.name, dict(params.arguments or {}), next(calls)
        future = rt.submit_call(name, args, agent=agent)
        if on_call is not None:  # ``stop``: the notebook's Stop of this call (a command is stopped as by Ctrl-C)
            on_call({"phase": "start", "call": n, "tool": name, "args": args, "agent": agent, "stop": future.cancel})
        try:
            result = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except concurrent.futures.CancelledError:
            if on_call is not None:
                on_call({"phase": "stopped", "call": n, "tool": name, "agent": agent})
            text = f"{name} was stopped from the notebook serving these tools"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        if on_call is not None:
            on_call({"phase": "end", "call": n, "tool": name, "agent": agent, "result": result})
        envelope = json.loads(json.dumps(result.envelope, default=str))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.receipt)],
            structured_content=envelope,
            is_error=not result.ok,
        )

    from importlib import metadata

    try:
        version = metadata.version("holon_nb")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree that is not installed
        version = "0"
    return Server("holon-nb", version=version, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Any) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def bearer_guard(app: Callable[..., Awaitable[None]], token: str) -> Callable[..., Awaitable[None]]:
    """An ASGI wrapper refusing (401) every HTTP request whose ``Authorization`` is not ``Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b'{"error": "unauthorized: this holon-nb MCP server needs its bearer token"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


class HttpServe:
    """One streamable HTTP server on 127.0.0.1 (its own thread and event loop), bearer-guarded.

    Args:
        server: The MCP server (:func:`build_server`).
        token: The bearer token clients must send.
        port: 0 picks a free port.

    Attributes:
        url: ``http://127.0.0.1:<port>/mcp`` once :meth:`start` returned.
    """

    def __init__(self, server: Any, token: str, port: int = 0) -> None:
        self.server, self.token = server, token
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._uvicorn: Any = None
        self._thread: threading.Thread | None = None

    def _config(self) -> Any:
        import uvicorn

        app = bearer_guard(self.server.streamable_http_app(host="127.0.0.1"), self.token)
        return uvicorn.Config(app, log_level="warning", lifespan="on")

    async def serve(self) -> None:
        """Serve in the calling event loop until :meth:`stop`."""
        import uvicorn

        self._uvicorn = uvicorn.Server(self._config())
        await self._uvicorn.serve(sockets=[self._sock])

    def start(self) -> None:
        """Serve on a thread of its own; return once it accepts connections."""
        import uvicorn

        self._uvicorn = uvicorn.Server(self._config())
        self._thread = threading.Thread(
            target=lambda: anyio.run(lambda: self._uvicorn.serve(sockets=[self._sock])),
            name="holon-mcp-serve",
            daemon=True,
        )
        self._thread.start()
        for _ in range(500):
            if self._uvicorn.started or not self._thread.is_alive():
                break
            threading.Event().wait(0.01)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (and join the thread :meth:`start` made)."""
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._sock.close()


def write_token_file(path: Path, url: str, token: str) -> None:
    """Write ``{"url", "token"}`` to ``path``, readable by its owner only."""
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"url": url, "token": token}, f)


def serve_http(server: Any, token: str, port: int = 0, token_file: Path | None = None, announce: Any = None) -> None:
    """Serve over streamable HTTP in this thread until interrupted; write the token file first."""
    http = HttpServe(server, token, port)
    if token_file is not None:
        write_token_file(token_file, http.url, token)
    if announce is not None:
        announce(http.url)
    anyio.run(http.serve)
