"""Lone surrogates (issue 9): text that UTF-8 cannot encode, made encodable for a notebook's output.

A lone UTF-16 surrogate (U+D800-U+DFFF) can reach a Python string (``surrogateescape``, a JSON ``\\ud800``);
no UTF-8 file, SQLite text or notebook output can hold it, and one in a mimebundle makes the kernel fail
to send the whole output. The mimebundle :func:`holon_nb.render.mimebundle` makes passes through :func:`encodable`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["encodable", "encodable_value", "has_surrogate"]

#: A lone UTF-16 surrogate code point, which no UTF-8 file, SQLite text or notebook output can encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate code point (U+D800–U+DFFF), which UTF-8 cannot encode."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def encodable(text: str) -> str:
    """``text`` with each lone surrogate written as a ``\\udXXX`` escape, so it encodes as UTF-8."""
    if not has_surrogate(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def encodable_value(value: Any) -> Any:
    """A JSON value with :func:`encodable` applied to every string (keys too); other values as given."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(k) if isinstance(k, str) else k: encodable_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable_value(v) for v in value]
    return value
