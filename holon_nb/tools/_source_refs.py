"""The ``source_ref`` grammar of memory sources (agents spec §6).

A ``source_ref`` is ``<prefix>:<id>`` with ``prefix`` one of :data:`PREFIXES`
and ``id`` matching ``[A-Za-z0-9_.-]+``, or ``tool_execution:<id>:<sel>`` /
``tool_execution:<id>:batch_item:<n>:<sel>`` with ``sel`` one of
:data:`SELECTORS` and ``n`` a one-based decimal without a leading zero.

Parsing is pure (no store access). Checks run in upstream's order:
whitespace, missing prefix, the ``tool_execution`` shapes, empty id, opaque-id
check, unknown prefix — so ``skill:/x/SKILL.md`` is an opaque-id failure and
``memory:abc`` an unsupported prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._errors import HolonNBError

__all__ = [
    "PREFIXES",
    "SELECTORS",
    "ALLOWED_SOURCE_REF_PREFIXES",
    "NAMESPACES",
    "SourceRef",
    "SourceRefError",
    "parse_source_ref",
]

#: Plain ``<prefix>:<id>`` namespaces (agents spec §6).
PREFIXES = ("agent_memory", "workspace_profile", "brief", "message", "turn", "episode", "work_item", "task")
#: Selectors of ``tool_execution`` refs.
SELECTORS = ("cmd", "stdout", "stderr", "output")
#: What ``details.allowed_source_ref_prefixes`` lists in MemoryGet errors.
ALLOWED_SOURCE_REF_PREFIXES = tuple(f"{p}:" for p in (*PREFIXES, "tool_execution"))

#: Namespace → (result ``kind``, ``scope_kind``) per the table of agents spec §6.
#: ``tool_execution`` kinds depend on the selector and the tool (see memory_sources).
NAMESPACES: dict[str, tuple[str, str]] = {
    "agent_memory": ("agent_memory_markdown", "agent"),
    "workspace_profile": ("workspace_profile", "workspace"),
    "brief": ("brief", "workspace"),
    "message": ("message", "agent"),
    "turn": ("turn", "workspace"),
    "episode": ("context_episode", "workspace"),
    "work_item": ("work_item", "workspace"),
    "task": ("task", "agent"),
    "tool_execution": ("tool_execution_output", "agent"),
}

_SEGMENT = re.compile(r"[A-Za-z0-9_.\-]+")
_DIGITS = re.compile(r"[0-9]+")
_SHAPE_ERROR = (
    "tool_execution source_ref must match tool_execution:<id>:{cmd,stdout,stderr,output} or "
    "tool_execution:<id>:batch_item:<index>:{cmd,stdout,stderr,output}"
)


class SourceRefError(HolonNBError, ValueError):
    """A ``source_ref`` that does not follow the grammar.

    Attributes:
        validation_error: The exact ``validation_error`` string of agents spec §6.
    """

    def __init__(self, validation_error: str):
        super().__init__(validation_error)
        self.validation_error = validation_error


@dataclass(frozen=True)
class SourceRef:
    """A parsed ``source_ref``.

    Attributes:
        prefix: The namespace (``brief``, ``tool_execution``, …).
        id: The opaque identifier.
        batch_item: One-based batch item index of a ``tool_execution`` ref, or None.
        selector: ``cmd``/``stdout``/``stderr``/``output`` of a ``tool_execution`` ref, else None.
    """

    prefix: str
    id: str
    batch_item: int | None = None
    selector: str | None = None

    def __str__(self) -> str:
        if self.prefix != "tool_execution":
            return f"{self.prefix}:{self.id}"
        if self.batch_item is not None:
            return f"tool_execution:{self.id}:batch_item:{self.batch_item}:{self.selector}"
        return f"tool_execution:{self.id}:{self.selector}"

    @property
    def kind(self) -> str:
        """The result ``kind`` of plain namespaces (``tool_execution`` kinds depend on the tool)."""
        return NAMESPACES[self.prefix][0]

    @property
    def scope_kind(self) -> str:
        """``agent`` or ``workspace`` (agents spec §6 table)."""
        return NAMESPACES[self.prefix][1]


def _valid_segment(segment: str) -> bool:
    return _SEGMENT.fullmatch(segment) is not None


def _selector(text: str) -> str:
    if text not in SELECTORS:
        raise SourceRefError("unsupported tool_execution selector")
    return text


def _batch_index(text: str) -> int:
    if text.startswith("0"):
        raise SourceRefError("batch item index must be a one-based integer without leading zeroes")
    if not _DIGITS.fullmatch(text):
        raise SourceRefError("batch item index must be a one-based integer")
    return int(text)


def _tool_execution(suffix: str) -> SourceRef:
    parts = suffix.split(":")
    if len(parts) == 2 and _valid_segment(parts[0]):
        return SourceRef("tool_execution", parts[0], None, _selector(parts[1]))
    if len(parts) == 4 and parts[1] == "batch_item" and _valid_segment(parts[0]):
        index = _batch_index(parts[2])
        return SourceRef("tool_execution", parts[0], index, _selector(parts[3]))
    raise SourceRefError(_SHAPE_ERROR)


def parse_source_ref(text: str) -> SourceRef:
    """Parse a ``source_ref`` (agents spec §6); the text is taken verbatim (never trimmed).

    Raises:
        SourceRefError: with the spec's ``validation_error`` string — ``must not contain
            whitespace``, ``missing source_ref prefix``, ``missing source_ref identifier``,
            ``source_ref identifier must be an opaque id, not a path, URL, or query``,
            ``unsupported source_ref prefix``, ``unsupported tool_execution selector``, the two
            batch-index messages, or the message naming the two ``tool_execution`` shapes.
    """
    if any(ch.isspace() for ch in text):
        raise SourceRefError("must not contain whitespace")
    prefix, sep, suffix = text.partition(":")
    if not sep:
        raise SourceRefError("missing source_ref prefix")
    if prefix == "tool_execution":
        return _tool_execution(suffix)
    if not suffix:
        raise SourceRefError("missing source_ref identifier")
    if not _valid_segment(suffix):
        raise SourceRefError("source_ref identifier must be an opaque id, not a path, URL, or query")
    if prefix not in PREFIXES:
        raise SourceRefError("unsupported source_ref prefix")
    return SourceRef(prefix, suffix)
