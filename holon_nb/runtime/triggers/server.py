"""The local callback server: ``POST /api/callbacks/wake/<token>`` on 127.0.0.1 (workspace spec §14).

It is a uvicorn server running as a task on the runtime's own event loop (no extra thread),
serving a tiny ASGI app. uvicorn was chosen because it is maintained, small (it brings only
``h11``, which httpx already needs, and ``click``), can serve a socket we bound ourselves (so
the port is known before the first request), and runs as a coroutine on an existing asyncio
loop without touching signal handlers off the main thread. Its access log is off and its
logging configuration is not installed: a request path carries a bearer token and must never
be logged.

Answers: ``202`` for a delivery to an active trigger, ``404`` for an unknown or revoked token
(and for any other path), ``405`` for a method other than POST on the wake path (whatever the
token: a method error says nothing about the token), ``413`` for a body over 64 KiB.
"""

from __future__ import annotations

import json
import logging
import re
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["MAX_BODY_BYTES", "CallbackServer", "WAKE_PATH"]

log = logging.getLogger("holon_nb.runtime.triggers")

#: The wake path; a proxy prefix before it is accepted (jupyter-server-proxy's absolute mode).
WAKE_PATH = re.compile(r"^(?:/[^?#]*)?/api/callbacks/wake/([^/?#]*)$")
MAX_BODY_BYTES = 64 * 1024

#: ``async (token, body, content_type) -> dict | None``: the delivery result, or None for "no such trigger".
Deliver = Callable[[str, bytes, str | None], Awaitable[dict[str, Any] | None]]


async def _respond(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class CallbackServer:
    """The wake endpoint, started on demand on the runtime loop.

    Args:
        deliver: Called for each POST to the wake path (on the runtime loop).
        start_soon: Starts a background coroutine in the runtime's task group.
    """

    def __init__(self, deliver: Deliver, start_soon: Callable[..., None]):
        self._deliver = deliver
        self._start_soon = start_soon
        self._server: Any = None
        self._done: anyio.Event | None = None
        self.port: int | None = None

    @property
    def running(self) -> bool:
        """True while the server is serving."""
        return self._server is not None

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI application."""
        if scope["type"] != "http":
            return
        match = WAKE_PATH.match(scope.get("path") or "")
        if match is None:
            await _respond(send, 404, {"error": "not_found"})
            return
        if scope["method"] != "POST":
            await _respond(send, 405, {"error": "method_not_allowed", "allowed": ["POST"]})
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY_BYTES:
                await _respond(send, 413, {"error": "payload_too_large", "max_bytes": MAX_BODY_BYTES})
                return
        content_type = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"content-type"), None)
        try:
            result = await self._deliver(match.group(1), bytes(body), content_type)
        except Exception:  # noqa: BLE001 - logged without the path (it carries the token)
            log.exception("external trigger delivery failed")
            await _respond(send, 500, {"error": "delivery_failed"})
            return
        if result is None:
            await _respond(send, 404, {"error": "not_found"})
        else:
            await _respond(send, 202, {"status": "accepted", **result})

    async def ensure_started(self, port: int) -> int:
        """Start serving on ``127.0.0.1:port`` (0: a free port) unless already serving; return the port.

        Raises:
            OSError: when the port cannot be bound.
        """
        if self._server is not None:
            assert self.port is not None
            return self.port
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        config = uvicorn.Config(
            self.app,
            interface="asgi3",
            proxy_headers=False,
            lifespan="off",
            log_config=None,
            access_log=False,
            log_level="warning",
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        self._server, self._done, self.port = server, anyio.Event(), sock.getsockname()[1]
        done = self._done

        async def serve() -> None:
            try:
                await server.serve(sockets=[sock])
            finally:
                sock.close()
                done.set()

        self._start_soon(serve)
        with anyio.move_on_after(5):
            while not server.started:
                await anyio.sleep(0.005)
        return self.port

    async def stop(self) -> None:
        """Stop serving (idempotent); waits at most a few seconds for open connections."""
        server, done = self._server, self._done
        self._server = None
        if server is None or done is None:
            return
        server.should_exit = True
        with anyio.move_on_after(3):
            await done.wait()
