"""The replay network guard: any outbound connection fails loudly (turn-loop spec §4.3 "Replay").

While at least one :class:`NetworkGuard` is active, ``socket.socket.connect`` and ``connect_ex``
refuse every AF_INET/AF_INET6 address (loopback included) by raising
:class:`~holon_nb.providers.cassettes._errors.NetworkBlocked`, and the attempt is counted on every
active guard. Everything that opens a TCP connection from Python goes through these methods
(``socket.create_connection``, asyncio's ``sock_connect``, so httpx/httpcore and the ``openai`` /
``anthropic`` SDKs). Unix-domain sockets are allowed. The patch is process-wide (the runtime's
loop thread must be covered) and reference-counted: the originals come back when the last guard
ends.

Example::

    with NetworkGuard() as guard:
        ...replay...
    assert guard.attempts == []
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from ._errors import NetworkBlocked

__all__ = ["NetworkGuard"]

_lock = threading.Lock()
_active: list[NetworkGuard] = []
_originals: dict[str, Any] = {}


def _blocked(sock: socket.socket, address: Any) -> bool:
    return sock.family in (socket.AF_INET, socket.AF_INET6)


def _refuse(sock: socket.socket, address: Any) -> None:
    with _lock:
        for guard in _active:
            guard.attempts.append(address)
    raise NetworkBlocked(
        f"cassette replay: outbound connection to {address!r} refused by the network guard "
        "(a replayed cell must not reach the network; something bypassed the cassette)",
        address=address,
    )


def _connect(self: socket.socket, address: Any) -> None:
    if _blocked(self, address):
        _refuse(self, address)
    return _originals["connect"](self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    if _blocked(self, address):
        _refuse(self, address)
    return _originals["connect_ex"](self, address)


class NetworkGuard:
    """Context manager (also :meth:`start`/:meth:`stop`) that blocks outbound connections.

    Attributes:
        attempts: Addresses of refused connection attempts made while this guard was active.
    """

    def __init__(self) -> None:
        self.attempts: list[Any] = []
        self._on = False

    @property
    def active(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._on

    def start(self) -> NetworkGuard:
        """Activate the guard (idempotent); returns self."""
        with _lock:
            if self._on:
                return self
            if not _active:
                _originals["connect"] = socket.socket.connect
                _originals["connect_ex"] = socket.socket.connect_ex
                # a monkeypatch: the guard's functions take the place of socket.socket's own methods
                socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
                socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
            _active.append(self)
            self._on = True
        return self

    def stop(self) -> None:
        """Deactivate the guard (idempotent); the last active guard restores the socket methods."""
        with _lock:
            if not self._on:
                return
            _active.remove(self)
            self._on = False
            if not _active:
                socket.socket.connect = _originals.pop("connect")  # type: ignore[method-assign]
                socket.socket.connect_ex = _originals.pop("connect_ex")  # type: ignore[method-assign]

    def __enter__(self) -> NetworkGuard:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
