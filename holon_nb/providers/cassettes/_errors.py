"""Errors of record/replay cassettes (turn-loop spec §4.3).

Programmer-facing (style.md §2.6), drawn as a tree::

    HolonNBError
    └── CassetteError            base of every cassette failure
        ├── CassetteFormatError  the file is not a readable holon_nb cassette (format, version, JSON)
        ├── CassetteMissing      replay/verify/lenient asked for a cassette file that does not exist
        ├── CassetteDrift        the live run differs from the recording (preflight, key, tool, receipt, leftovers)
        ├── CassetteExhausted    more provider attempts (or tool calls) than the cassette recorded
        └── NetworkBlocked       an outbound connection was attempted while the replay network guard was on

None of them is a :class:`~holon_nb.providers.base.ProviderTransportError`: a retry wrapper must
let them through (they are not provider failures and must never be retried or turned into a
fallback).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...tools._errors import HolonNBError

__all__ = [
    "CassetteDrift",
    "CassetteError",
    "CassetteExhausted",
    "CassetteFormatError",
    "CassetteMissing",
    "NetworkBlocked",
]

#: How a cassette tells the user to re-record (notebook-tests spec §5, NT-08).
RERECORD_HINT = "re-record it with HOLON_NB_CASSETTE_MODE=record (or %%agent --mode record)"


class CassetteError(HolonNBError):
    """Base class of cassette failures.

    Attributes:
        path: The cassette file concerned (``str``), or None.
    """

    def __init__(self, message: str, *, path: str | None = None):
        super().__init__(message)
        self.path = path


class CassetteFormatError(CassetteError):
    """Raised when a cassette file is unreadable: bad JSON line, wrong ``format``, unsupported major ``version``,
    missing header."""


class CassetteMissing(CassetteError):
    """Raised when mode ``replay``/``verify``/``lenient`` is asked for a file that does not exist
    (before any model call; the message says how to record it)."""


class CassetteDrift(CassetteError):
    """The live run no longer matches the recording (turn-loop spec §4.3 "Drift").

    Attributes:
        kind: ``preflight`` (header mismatch, before any model call), ``mismatch`` (request key differs),
            ``tool`` (a tool call differs from the recorded one), ``receipt`` (verify: live receipt bytes
            differ), ``unconsumed`` (recorded interactions or tool calls left at cell end).
        component: First differing component: ``contract``, ``request_controls``, ``system``, ``tools``,
            ``history_prefix``, ``tail`` (kind ``mismatch``/``preflight``), ``tool`` or ``receipt``; None for
            ``unconsumed``.
        seq, round, attempt: Position of the recorded interaction (None when not applicable).
        pointer: First differing JSON pointer in the request (``/conversation/3/results/0/content``), or None.
        diff: A unified diff of the component, at most 40 lines ("" when not applicable).
        tools: For ``component="tools"``: names of the tools added, removed or changed (sorted).
        count: For ``unconsumed``: how many recorded records were left.
        field: For ``preflight`` header mismatches: the header field (``route_ref``, ``transport``, …).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        component: str | None = None,
        seq: int | None = None,
        round: int | None = None,
        attempt: int | None = None,
        pointer: str | None = None,
        diff: str = "",
        tools: Sequence[str] = (),
        count: int | None = None,
        field: str | None = None,
        path: str | None = None,
    ):
        super().__init__(message, path=path)
        self.kind = kind
        self.component = component
        self.seq = seq
        self.round = round
        self.attempt = attempt
        self.pointer = pointer
        self.diff = diff
        self.tools = tuple(tools)
        self.count = count
        self.field = field

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for notebook display and lenient-mode drift logs)."""
        return {
            "kind": self.kind,
            "component": self.component,
            "seq": self.seq,
            "round": self.round,
            "attempt": self.attempt,
            "pointer": self.pointer,
            "diff": self.diff,
            "tools": list(self.tools),
            "count": self.count,
            "field": self.field,
            "message": str(self),
            "path": self.path,
        }


class CassetteExhausted(CassetteError):
    """Raised when the run makes more provider attempts (or tool calls) than were recorded.

    Attributes:
        seq: The position that was asked for (0-based index among interactions or tool records).
        recorded: How many such records the cassette holds.
        layer: ``turn`` (provider attempts) or ``tool``.
    """

    def __init__(self, message: str, *, seq: int, recorded: int, layer: str = "turn", path: str | None = None):
        super().__init__(message, path=path)
        self.seq = seq
        self.recorded = recorded
        self.layer = layer


class NetworkBlocked(CassetteError):
    """Raised by the replay network guard on any outbound connection (AF_INET/AF_INET6).

    Deliberately not an ``OSError``: HTTP clients would otherwise classify it as an ordinary,
    retryable connection failure instead of failing loudly.

    Attributes:
        address: The address the code tried to reach.
    """

    def __init__(self, message: str, *, address: Any = None):
        super().__init__(message)
        self.address = address
