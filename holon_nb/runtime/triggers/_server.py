"""The local callback server: ``POST /api/callbacks/wake/<token>`` on 127.0.0.1 (workspace spec §14).

It is a uvicorn server running as a task on the runtime's own event loop (no extra thread),
serving a tiny ASGI app. uvicorn was chosen because it is maintained, small (it brings only
``h11``, which httpx already needs, and ``click``), can serve a socket we bound ourselves (so
the port is known before the first request), and runs as a coroutine on an existing asyncio
loop without touching signal handlers off the main thread. Its access log is off and its
logging configuration is not installed: a request path carries a bearer token and must never
be logged.

Nothing about a connection needs the token, so connections are bounded before any request is read
(issue 25 item 2a: 1,100 idle sockets once took all 1,024 descriptors of a kernel): the request's
headers must arrive within ``header_timeout_s`` of the connection opening (or of the previous
response on a kept-alive connection) and its body within ``body_timeout_s`` after them, else the
connection is closed; past ``max_connections`` open connections the oldest one still waiting for
its headers is closed to make room (the newcomer itself when every connection is inside a
request). See :class:`CallbackLimits`.

Answers: ``202`` for a delivery to an active trigger, ``404`` for an unknown or revoked token
(and for any other path), ``405`` for a method other than POST on the wake path (whatever the
token: a method error says nothing about the token), ``413`` for a body over 64 KiB.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["MAX_BODY_BYTES", "CallbackLimits", "CallbackServer", "WAKE_PATH"]

log = logging.getLogger("holon_nb.runtime.triggers")

#: The wake path; a proxy prefix before it is accepted (jupyter-server-proxy's absolute mode).
WAKE_PATH = re.compile(r"^(?:/[^?#]*)?/api/callbacks/wake/([^/?#]*)$")
MAX_BODY_BYTES = 64 * 1024

#: ``async (token, body, content_type) -> dict | None``: the delivery result, or None for "no such trigger".
Deliver = Callable[[str, bytes, str | None], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True)
class CallbackLimits:
    """Bounds on the callback server's connections (none of them needs the token).

    Attributes:
        header_timeout_s: Seconds a connection has to deliver a request's headers, counted from its
            opening or from the end of the previous response on a kept-alive connection.
        body_timeout_s: Seconds a request has to deliver its body once its headers are in.
        max_connections: Open connections at most; a new one past it closes the oldest connection still
            waiting for its headers (or itself when none is). A wake takes one connection for milliseconds.
    """

    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    max_connections: int = 64


class _BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the read deadlines and the connection cap of :class:`CallbackLimits`.

    uvicorn itself times out only a kept-alive connection that sends nothing after a response: a connection
    that never completes its first request stays open for ever. ``limits`` is set on the subclass that
    :func:`_bounded_protocol` makes for each server.
    """

    limits: ClassVar[CallbackLimits]
    _opened_at: float
    _deadline: asyncio.TimerHandle | None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection, arm its header deadline, and shed one connection when over the cap."""
        super().connection_made(transport)
        self._opened_at = self.loop.time()
        self._deadline = None
        self._arm(self.limits.header_timeout_s)
        open_now = [c for c in self.connections if not c.transport.is_closing()]
        if len(open_now) > self.limits.max_connections:
            waiting = [
                c for c in open_now if c is not self and isinstance(c, _BoundedH11Protocol) and c._awaiting_headers()
            ]
            victim = min(waiting, key=lambda c: c._opened_at, default=self)
            victim._drop()

    def connection_lost(self, exc: Exception | None) -> None:
        """Disarm the deadline as the connection goes."""
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Feed the parser; when a request's headers complete, its body gets its own deadline."""
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle and self.cycle is not None and not self.transport.is_closing():
            self._arm(self.limits.body_timeout_s)

    def on_response_complete(self) -> None:
        """After a response, the next request's headers are due within the header timeout again."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm(self.limits.header_timeout_s)

    def _awaiting_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._on_deadline)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _on_deadline(self) -> None:
        self._deadline = None
        if self._awaiting_headers() or self.cycle.more_body:
            self._drop()
        # else the app holds a complete request (a delivery may wait for the store); the response re-arms

    def _drop(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()


def _bounded_protocol(limits: CallbackLimits) -> type[_BoundedH11Protocol]:
    """The protocol class uvicorn instantiates per connection, bound to ``limits``."""
    return type("BoundedH11Protocol", (_BoundedH11Protocol,), {"limits": limits})


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
        limits: Read deadlines and the connection cap; :attr:`limits` may be replaced before the server starts.
    """

    def __init__(self, deliver: Deliver, start_soon: Callable[..., None], limits: CallbackLimits | None = None):
        self._deliver = deliver
        self._start_soon = start_soon
        self.limits = limits or CallbackLimits()
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
            sock.listen(self.limits.max_connections)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        config = uvicorn.Config(
            self.app,
            http=_bounded_protocol(self.limits),
            # asyncio listens again with this backlog and accepts up to this many connections per loop
            # iteration before any of them is seen: uvicorn's 2048 let a burst of idle sockets take ~750
            # descriptors before the cap could close one
            backlog=self.limits.max_connections,
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
