"""Local wire servers for provider tests: a threaded HTTP server on 127.0.0.1 that records every request
and answers with scripted replies (JSON bodies, SSE chunks, statuses, truncated bodies, silent streams).

Reusable by every suite that needs a provider to talk to something real (turn loop, cassettes): the SDK
clients make real HTTP requests to it; nothing is mocked.

Example::

    with WireServer() as srv:
        srv.script(Reply(json={"output": []}), Reply(status=429, json={"error": {"message": "slow"}}))
        ...  # point a provider at srv.base_url
        srv.requests[0].json["model"]

Replies:
    * ``Reply(json=...)`` — ``application/json`` body with a Content-Length (keep-alive).
    * ``Reply(sse=[...])`` — ``text/event-stream``; each item (str or bytes) is written and flushed on its
      own, then the connection closes. Build items with :func:`sse_event`.
    * ``Reply(..., hang_s=N)`` — after writing what it has, stay silent for N seconds (or until the server
      closes) before closing: the idle-timeout fixture.
    * ``Reply(body=..., truncate=True)`` — announce a longer Content-Length than sent, then close.
    * ``Reply(..., delay_s=N)`` — wait N seconds before answering (client timeouts).
    * ``Reply(handler=fn)`` is not needed: pass ``responder=fn`` to :class:`WireServer` to compute replies
      from the :class:`RecordedRequest` instead of a script.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Reply",
    "RecordedRequest",
    "WireServer",
    "sse_event",
    "sse_done",
    "anthropic_sse",
    "chat_chunk_sse",
    "responses_sse",
]


@dataclass
class Reply:
    """One scripted HTTP reply.

    Attributes:
        status: HTTP status code.
        json: A JSON value sent as ``application/json`` (ignored when ``body`` or ``sse`` is set).
        body: Raw body bytes/text (content type from ``content_type``).
        sse: Chunks of a ``text/event-stream`` body, each written and flushed separately.
        headers: Extra response headers.
        content_type: Content type of ``body``.
        hang_s: Seconds to stay silent after the body/chunks before closing (a silent stream).
        truncate: Announce ``len(body) + 100`` bytes and close after ``body`` (an incomplete body).
        delay_s: Seconds to wait before sending anything (a server that does not answer in time).
    """

    status: int = 200
    json: Any = None
    body: bytes | str | None = None
    sse: list[str | bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    hang_s: float = 0.0
    truncate: bool = False
    delay_s: float = 0.0


@dataclass
class RecordedRequest:
    """A request the server received: ``headers`` keys are lower-case; ``json`` is None if the body is not JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or None."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def sse_event(data: Any, event: str | None = None) -> str:
    """One SSE event: ``event:`` line (optional) and a ``data:`` line holding ``data`` (JSON unless a str)."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"


def sse_done() -> str:
    """The OpenAI stream terminator ``data: [DONE]``."""
    return "data: [DONE]\n\n"


def anthropic_sse(events: Iterable[dict[str, Any]]) -> list[str]:
    """Anthropic Messages SSE: each event dict is sent with ``event: <its type>``."""
    return [sse_event(e, e["type"]) for e in events]


def responses_sse(events: Iterable[dict[str, Any]]) -> list[str]:
    """OpenAI Responses SSE: each event dict is sent as ``event: <its type>`` plus ``data:``."""
    return [sse_event(e, e.get("type")) for e in events]


def chat_chunk_sse(chunks: Iterable[dict[str, Any]], done: bool = True) -> list[str]:
    """Chat Completions SSE: one ``data:`` line per chunk, then ``[DONE]`` unless ``done`` is False."""
    out = [sse_event(c) for c in chunks]
    return out + [sse_done()] if done else out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        req = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        owner = self.server.owner
        reply = owner._next_reply(req)
        try:
            self._write(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = _serve

    def _write(self, reply: Reply) -> None:
        stop = self.server.owner._stop
        if reply.delay_s and stop.wait(reply.delay_s):
            return
        self.send_response(reply.status)
        for k, v in reply.headers.items():
            self.send_header(k, v)
        if reply.sse is not None:
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in reply.sse:
                self.wfile.write(chunk.encode() if isinstance(chunk, str) else chunk)
                self.wfile.flush()
            if reply.hang_s:
                stop.wait(reply.hang_s)
            return
        if reply.body is not None:
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            ctype = reply.content_type
        else:
            data = json.dumps(reply.json if reply.json is not None else {}).encode()
            ctype = "application/json"
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data) + (100 if reply.truncate else 0)))
        if reply.truncate or reply.hang_s:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        if reply.hang_s:
            stop.wait(reply.hang_s)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: WireServer


class WireServer:
    """A scripted HTTP server on ``127.0.0.1`` (ephemeral port), run on a daemon thread.

    Args:
        responder: Optional ``fn(RecordedRequest) -> Reply`` used when the script is empty.

    Attributes:
        requests: Every request received, in order.
        base_url: ``http://127.0.0.1:<port>``.
    """

    def __init__(self, responder: Callable[[RecordedRequest], Reply] | None = None):
        self.requests: list[RecordedRequest] = []
        self._script: list[Reply] = []
        self._responder = responder
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *replies: Reply) -> WireServer:
        """Queue replies, answered in order (one per request)."""
        with self._lock:
            self._script.extend(replies)
        return self

    def remaining(self) -> int:
        """Replies not yet used."""
        with self._lock:
            return len(self._script)

    def _next_reply(self, req: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(req)
            if self._script:
                return self._script.pop(0)
        if self._responder is not None:
            return self._responder(req)
        return Reply(status=418, json={"error": {"message": "wire server script exhausted"}})

    def close(self) -> None:
        """Release hanging replies, stop serving and close the socket (idempotent)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> WireServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
