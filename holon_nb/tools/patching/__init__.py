"""The ApplyPatch engine (commands spec §10), importable without a runtime.

Modules: ``unified`` (with ``headers`` for the names and header lines of
real diff output) and ``codex`` parse the two formats into ``model``
objects; ``detect`` picks the surface's format and the compatibility
fallback; ``paths`` resolves and confines targets (D3); ``content``, ``match``
and ``hunks`` apply hunks in memory (D1); ``plan`` keeps the call-local state;
``commit`` writes all or nothing (D2); ``result`` builds the payload and the
receipt; ``engine.apply_patch`` runs the whole call.
"""

from __future__ import annotations

from ._codex import CODEX_LARK_GRAMMAR, parse_codex
from ._detect import (
    CODEX_SURFACE,
    UNIFIED_SURFACE,
    ParsedPatch,
    detect_format,
    parse_patch,
    surface_for_route,
)
from ._engine import apply_patch
from ._failures import SYNTAX_RULES
from ._paths import PathPolicy
from ._result import render_receipt
from ._unified import parse_unified

__all__ = [
    "CODEX_LARK_GRAMMAR",
    "CODEX_SURFACE",
    "SYNTAX_RULES",
    "UNIFIED_SURFACE",
    "ParsedPatch",
    "PathPolicy",
    "apply_patch",
    "detect_format",
    "parse_codex",
    "parse_patch",
    "parse_unified",
    "render_receipt",
    "surface_for_route",
]
