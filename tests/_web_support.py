"""A local HTTP server for web-plane tests: routes are callables, every request is recorded.

Only 127.0.0.1 is ever bound. A route returns ``(status, headers, body)`` where ``body`` is
bytes or an iterable of byte chunks (streamed; a broken pipe from a client that stopped
reading ends it quietly).
"""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Callable, Iterable
from typing import Any

Route = Callable[["Request"], tuple[int, dict[str, str], "bytes | Iterable[bytes]"]]


class Request:
    """What a route sees: method, path, headers (lower-case keys), body."""

    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes):
        self.method, self.path, self.headers, self.body = method, path, headers, body


class LocalServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 with a route table.

    Args:
        routes: ``path -> route``.
        tls: A server-side TLS context: the server then speaks HTTPS.

    Attributes:
        port: The bound port.
        requests: Every request received, in order.
    """

    def __init__(self, routes: dict[str, Route] | None = None, tls: ssl.SSLContext | None = None):
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[Request] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                server.requests.append(req)
                route = server.routes.get(self.path.split("?")[0])
                if route is None:
                    status, headers, payload = 404, {"content-type": "text/plain"}, b"not found"
                else:
                    status, headers, payload = route(req)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                try:
                    if isinstance(payload, (bytes, bytearray)):
                        if "content-length" not in {k.lower() for k in headers}:
                            self.send_header("content-length", str(len(payload)))
                        self.end_headers()
                        self.wfile.write(payload)
                    else:
                        self.send_header("connection", "close")
                        self.end_headers()
                        for chunk in payload:
                            self.wfile.write(chunk)
                            self.wfile.flush()
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_POST = _serve

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str = "/") -> str:
        """``http://127.0.0.1:<port><path>``."""
        return f"http://127.0.0.1:{self.port}{path}"

    def paths(self) -> list[str]:
        """The paths requested so far."""
        return [r.path for r in self.requests]

    def close(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def page(body: bytes | str, content_type: str = "text/html; charset=utf-8", status: int = 200, **headers: str) -> Route:
    """A route answering ``body`` with ``content_type``."""
    data = body.encode() if isinstance(body, str) else body
    return lambda req: (status, {"content-type": content_type, **headers}, data)


def redirect(location: str | None, status: int = 302) -> Route:
    """A route answering a redirect to ``location`` (None: no Location header)."""
    return lambda req: (status, {"content-length": "0", **({"location": location} if location else {})}, b"")
