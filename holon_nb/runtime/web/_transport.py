"""A connection pinned to validated addresses, and a body reader with a hard cap.

WebFetch runs each hop's request on a worker thread with httpx's blocking client (about 1.7x
faster than the async client on the runtime loop for a large body); the loop keeps the hop's
deadline and cancellation and calls :meth:`PinnedBackend.abort` to stop the thread's socket.

:class:`PinnedTransport` is an ``httpx.HTTPTransport`` whose connection pool uses
:class:`PinnedBackend`: every TCP connection for the validated host goes to one of the
addresses the policy already checked, so no second DNS lookup happens and DNS rebinding
cannot change the target (workspace spec §9.1 rule 10). TLS still uses the URL's host name
for SNI and certificate checks, and the ``Host`` header is the URL's host, because only the
socket's destination changes.

:func:`read_capped` streams the raw body and decodes ``Content-Encoding`` itself with a bound
on every step (``zlib`` ``max_length``), so a compression bomb stops at the cap instead of
inflating a whole chunk first (workspace spec §9.2 rule 4). It hashes the kept bytes as they arrive (each
chunk is hashed while it is still in the CPU cache; no second pass over a 5 MB body).
"""

from __future__ import annotations

import functools
import hashlib
import socket
import ssl
import threading
import typing
import zlib

import httpcore
import httpx

__all__ = ["ACCEPT_ENCODING", "CappedBody", "FetchedBody", "PinnedBackend", "PinnedTransport", "read_capped"]

#: The encodings :func:`read_capped` decodes; sent as ``Accept-Encoding``.
ACCEPT_ENCODING = "gzip, deflate"
#: Bytes asked of the socket per read. httpcore asks 64 KiB; a larger read means fewer trips through
#: h11 and the reader for a big body (a read returns what has arrived, never waits for the full size).
_READ_BYTES = 256 * 1024


class _TrackedStream(httpcore.NetworkStream):
    """A network stream whose socket :meth:`PinnedBackend.abort` can shut down from another thread."""

    def __init__(self, inner: httpcore.NetworkStream, owner: PinnedBackend):
        self._inner = inner
        self._owner = owner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max(max_bytes, _READ_BYTES), timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        with self._owner.lock:
            self._owner.closed = True
            self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return self._owner.track(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """A blocking network backend that connects ``host`` to pre-validated addresses only.

    Args:
        host: The URL host the addresses belong to (lower case).
        addresses: Validated IP addresses, tried in order.
        dial: Optional ``address -> address`` applied just before connecting. Tests use it to send
            a connection validated as a public address to a server on 127.0.0.1 (nothing else may
            be reached from a test); production passes None.

    A connection to any other host name raises ``httpcore.ConnectError`` (nothing is resolved).
    :meth:`abort` (from any thread) shuts the open connection down, so a read blocked on it returns.
    """

    def __init__(self, host: str, addresses: list[str], dial: typing.Callable[[str], str] | None = None):
        self._host = host.strip("[]").lower()
        self._addresses = list(addresses)
        self._dial = dial or (lambda address: address)
        self._inner = httpcore.SyncBackend()
        self.lock = threading.Lock()
        self.closed = False
        self.aborted = False
        self._socket: socket.socket | None = None

    def track(self, stream: httpcore.NetworkStream) -> httpcore.NetworkStream:
        """Wrap ``stream`` so :meth:`abort` can reach its socket; close it at once if already aborted."""
        with self.lock:
            self._socket = stream.get_extra_info("socket")
            self.closed = False
            if not self.aborted:
                return _TrackedStream(stream, self)
        stream.close()
        raise httpcore.ReadError("the request was stopped")

    def abort(self) -> None:
        """Stop the request: shut down its socket (a blocked read then returns) and refuse new ones."""
        with self.lock:
            self.aborted = True
            if self._socket is not None and not self.closed:
                try:  # the plain socket's shutdown: an SSLSocket's own would also drop its TLS state
                    socket.socket.shutdown(self._socket, socket.SHUT_RDWR)
                except OSError:
                    pass

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        if host.strip("[]").lower() != self._host:
            raise httpcore.ConnectError(f"connection to {host} refused: not the validated host")
        last: Exception | None = None
        for address in self._addresses:
            if self.aborted:
                break
            try:
                return self.track(
                    self._inner.connect_tcp(
                        self._dial(address),
                        port,
                        timeout=timeout,
                        local_address=local_address,
                        socket_options=socket_options,
                    )
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last if last is not None else httpcore.ConnectError(f"no address for {host}")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: typing.Iterable[typing.Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by WebFetch")


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every WebFetch (loading the CA bundle costs ~50 ms; contexts are shareable)."""
    return httpx.create_ssl_context(trust_env=False)


class PinnedTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` (its exception mapping and stream types) over a pinned pool.

    Environment proxies are ignored (a proxy would make its own lookup), and one request uses
    one connection (``max_keepalive_connections=0``).
    """

    def __init__(self, backend: PinnedBackend):
        super().__init__(verify=_ssl_context(), trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(), max_connections=1, max_keepalive_connections=0, network_backend=backend
        )


class _Decoder:
    """One bounded ``Content-Encoding`` decoder (gzip or deflate)."""

    def __init__(self, encoding: str):
        self._gzip = encoding in ("gzip", "x-gzip")
        self._obj = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes, room: int) -> tuple[bytes, bytes]:
        """Decode at most ``room`` bytes of output from ``data``; return (output, unconsumed input)."""
        try:
            out = self._obj.decompress(data, room)
        except zlib.error:
            if self._gzip or not self._first:
                raise
            # "deflate" sent as raw DEFLATE without the zlib header (common in practice)
            self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._obj.decompress(data, room)
        self._first = False
        return out, self._obj.unconsumed_tail


class FetchedBody:
    """A response body as read: its chunks (joined only when :attr:`data` is asked for), size and digest.

    Attributes:
        chunks: The decoded bytes in order.
        size: Their total length (``bytes_read``).
        sha256: The hex digest of their concatenation (workspace spec §9.2 rule 5).
        truncated: True when the body went on past ``max_response_bytes``.
    """

    __slots__ = ("chunks", "size", "sha256", "truncated", "_data")

    def __init__(self, chunks: list[bytes], size: int, sha256: str, truncated: bool):
        self.chunks, self.size, self.sha256, self.truncated = chunks, size, sha256, truncated
        self._data: bytes | None = None

    @property
    def data(self) -> bytes:
        """The whole body (joined on first use; a 5 MB join is a copy the ``raw`` mode never needs)."""
        if self._data is None:
            self._data = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
        return self._data


class CappedBody:
    """The decoded body of one response, kept up to ``cap`` bytes and hashed as it grows.

    Args:
        cap: ``max_response_bytes``.
        content_encoding: The response's ``Content-Encoding`` header. gzip, x-gzip, deflate and
            identity (in any stack) are decoded; any other encoding keeps the bytes as sent.

    Feed raw chunks with :meth:`feed` until it returns True (the cap is passed) or the body ends,
    then call :meth:`finish`. Each decoding stage emits at most ``cap + 1`` bytes per input piece,
    so memory stays bounded by the cap whatever the compression ratio.
    """

    def __init__(self, cap: int, content_encoding: str = ""):
        encodings = [e.strip().lower() for e in content_encoding.split(",") if e.strip()]
        decoders = [_Decoder(e) for e in reversed(encodings) if e in ("gzip", "x-gzip", "deflate")]
        if len(decoders) != len([e for e in encodings if e != "identity"]):
            decoders = []  # an encoding we did not offer: keep the bytes as sent
        self._decoders = decoders
        self._cap = cap
        self._parts: list[bytes] = []
        self._size = 0
        self._digest = hashlib.sha256()
        self.truncated = False

    def feed(self, chunk: bytes) -> bool:
        """Add one raw chunk; return True once more than ``cap`` decoded bytes exist (stop reading)."""
        pieces = [chunk]
        for decoder in self._decoders:
            out: list[bytes] = []
            produced = 0
            for piece in pieces:
                while piece:
                    room = self._cap + 1 - self._size - produced
                    if room <= 0:
                        break
                    data, piece = decoder.feed(piece, room)
                    out.append(data)
                    produced += len(data)
                    if not data and piece:  # no progress: nothing more to decode now
                        break
            pieces = out
        for piece in pieces:
            room = self._cap - self._size
            if len(piece) > room:
                self.truncated = True
                piece = piece[:room]
            if piece:
                self._parts.append(piece)
                self._digest.update(piece)
                self._size += len(piece)
            if self.truncated:
                return True
        return False

    def finish(self) -> FetchedBody:
        """The kept bytes and their digest."""
        return FetchedBody(self._parts, self._size, self._digest.hexdigest(), self.truncated)


def read_capped(response: httpx.Response, cap: int) -> FetchedBody:
    """Read ``response``'s body, decoded, keeping at most ``cap`` bytes (blocking; on a worker thread).

    Args:
        response: A streamed response (``client.stream(...)``).
        cap: ``max_response_bytes``.

    Returns:
        The :class:`FetchedBody`; its ``truncated`` is True when more decoded bytes existed.

    Raises:
        zlib.error: a corrupt compressed body (the caller reports it); httpx transport errors.
    """
    capped = CappedBody(cap, response.headers.get("content-encoding", ""))
    for chunk in response.iter_raw():
        if capped.feed(chunk):
            break
    return capped.finish()
