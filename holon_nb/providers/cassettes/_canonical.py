"""Canonical JSON, cassette hashes, first differing JSON pointer and bounded diffs (turn-loop spec §4.3).

Canonical JSON sorts keys at every level, has no whitespace, is UTF-8 without ASCII escaping,
keeps integers integral and prints floats in shortest round-trip form (Python's ``repr``)::

    canonical_json({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'
    cassette_hash(request) == "sha256:" + sha256("holon_nb.cassette:v1:" + canonical_json(request))
    cassette_hash(part, "tail") == "sha256:" + sha256("holon_nb.cassette:v1:tail:" + canonical_json(part))
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

__all__ = [
    "HASH_DOMAIN",
    "MAX_DIFF_LINES",
    "bounded_diff",
    "canonical_json",
    "cassette_hash",
    "first_difference",
    "json_pointer",
    "sha256_hex",
]

#: Domain prefix of every cassette hash (turn-loop spec §4.3).
HASH_DOMAIN = "holon_nb.cassette:v1:"
#: Drift diffs are cut to this many lines (turn-loop spec §4.3).
MAX_DIFF_LINES = 40


def canonical_json(value: Any) -> str:
    """Canonical JSON text of a JSON value (turn-loop spec §4.3).

    Raises:
        ValueError: for NaN/infinite floats (not JSON).
        TypeError: for values that are not JSON (sets, objects).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cassette_hash(value: Any, component: str | None = None) -> str:
    """``"sha256:<hex>"`` of ``value`` under the cassette domain; ``component`` names a component fingerprint
    (the component name is added to the domain: ``holon_nb.cassette:v1:<component>:``)."""
    domain = HASH_DOMAIN if component is None else f"{HASH_DOMAIN}{component}:"
    return "sha256:" + sha256_hex(domain + canonical_json(value))


def json_pointer(parts: list[Any]) -> str:
    """RFC 6901 pointer of a path (``["conversation", 3, "text"]`` → ``/conversation/3/text``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def first_difference(a: Any, b: Any, path: list[Any] | None = None) -> list[Any] | None:
    """The path to the first place where two JSON values differ (keys in sorted order, list items by index),
    or None when they are equal. A missing key or list item points at that key or index."""
    path = [] if path is None else path
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return path + [key]
            found = first_difference(a[key], b[key], path + [key])
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, path + [i])
            if found is not None:
                return found
        return None if len(a) == len(b) else path + [min(len(a), len(b))]
    if type(a) is not type(b) or a != b:
        return path
    return None


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False).splitlines()


def bounded_diff(recorded: Any, live: Any, label: str, limit: int = MAX_DIFF_LINES) -> str:
    """A unified diff (``--- recorded/<label>`` → ``+++ live/<label>``) of two JSON values printed with
    2-space indentation and sorted keys, at most ``limit`` lines (the last says how many were cut)."""
    lines = list(
        difflib.unified_diff(_pretty(recorded), _pretty(live), f"recorded/{label}", f"live/{label}", n=2, lineterm="")
    )
    if len(lines) > limit:
        cut = len(lines) - (limit - 1)
        lines = lines[: limit - 1] + [f"… ({cut} more diff lines)"]
    return "\n".join(lines)
