"""A connection pinned to validated addresses, and a body reader with a hard cap.

:class:`PinnedTransport` is an ``httpx.AsyncHTTPTransport`` whose connection pool uses
:class:`PinnedBackend`: every TCP connection for the validated host goes to one of the
addresses the policy already checked, so no second DNS lookup happens and DNS rebinding
cannot change the target (workspace spec §9.1 rule 10). TLS still uses the URL's host name
for SNI and certificate checks, and the ``Host`` header is the URL's host, because only the
socket's destination changes.

:func:`read_capped` streams the raw body and decodes ``Content-Encoding`` itself with a bound
on every step (``zlib`` ``max_length``), so a compression bomb stops at the cap instead of
inflating a whole chunk first (§9.2 rule 4).
"""

from __future__ import annotations

import functools
import ssl
import typing
import zlib

import httpcore
import httpx

__all__ = ["ACCEPT_ENCODING", "PinnedBackend", "PinnedTransport", "read_capped"]

#: The encodings :func:`read_capped` decodes; sent as ``Accept-Encoding``.
ACCEPT_ENCODING = "gzip, deflate"


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """A network backend that connects ``host`` to pre-validated addresses only.

    Args:
        host: The URL host the addresses belong to (lower case).
        addresses: Validated IP addresses, tried in order.
        dial: Optional ``address -> address`` applied just before connecting. Tests use it to send
            a connection validated as a public address to a server on 127.0.0.1 (nothing else may
            be reached from a test); production passes None.

    A connection to any other host name raises ``httpcore.ConnectError`` (nothing is resolved).
    """

    def __init__(self, host: str, addresses: list[str], dial: typing.Callable[[str], str] | None = None):
        self._host = host.strip("[]").lower()
        self._addresses = list(addresses)
        self._dial = dial or (lambda address: address)
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
        if host.strip("[]").lower() != self._host:
            raise httpcore.ConnectError(f"connection to {host} refused: not the validated host")
        last: Exception | None = None
        for address in self._addresses:
            try:
                return await self._inner.connect_tcp(self._dial(address), port, timeout=timeout, local_address=local_address,
                                                     socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last if last is not None else httpcore.ConnectError(f"no address for {host}")

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[typing.Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by WebFetch")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every WebFetch (loading the CA bundle costs ~50 ms; contexts are shareable)."""
    return httpx.create_ssl_context(trust_env=False)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` (its exception mapping and stream types) over a pinned pool.

    Environment proxies are ignored (a proxy would make its own lookup), and one request uses
    one connection (``max_keepalive_connections=0``).
    """

    def __init__(self, host: str, addresses: list[str], dial: typing.Callable[[str], str] | None = None):
        super().__init__(verify=_ssl_context(), trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=1, max_keepalive_connections=0,
            network_backend=PinnedBackend(host, addresses, dial),
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


async def read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    """Read ``response``'s body, decoded, keeping at most ``cap`` bytes.

    Args:
        response: A streamed response (``client.send(..., stream=True)``).
        cap: ``max_response_bytes``.

    Returns:
        ``(body, truncated)``: ``truncated`` is True when more decoded bytes existed.

    Raises:
        zlib.error: a corrupt compressed body (the caller reports it); httpx transport errors.
    """
    encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
    decoders = [_Decoder(e) for e in reversed(encodings) if e in ("gzip", "x-gzip", "deflate")]
    if len(decoders) != len([e for e in encodings if e != "identity"]):
        decoders = []  # an encoding we did not offer: keep the bytes as sent
    body = bytearray()
    async for chunk in response.aiter_raw():
        pieces = [chunk]
        for decoder in decoders:  # each stage emits at most cap+1 bytes per input piece
            out = []
            for piece in pieces:
                while piece:
                    room = cap + 1 - len(body) - sum(map(len, out))
                    if room <= 0:
                        break
                    data, piece = decoder.feed(piece, room)
                    out.append(data)
                    if not data and piece:  # no progress: nothing more to decode now
                        break
            pieces = out
        for piece in pieces:
            body += piece[: cap + 1 - len(body)]
        if len(body) > cap:
            return bytes(body[:cap]), True
    return bytes(body), False
