"""Limits every tool input meets before coercion and validation (issue 9: every input gets an envelope).

Two shapes of input used to escape the envelope: arguments nested about a
thousand levels deep (``RecursionError`` in the JSON decoder, coercion or
serialisation) and strings holding a lone UTF-16 surrogate (``"\\ud800"``),
which no UTF-8 file, SQLite text column or notebook display can encode. Both
are refused here with ``invalid_tool_input``; the walk is iterative, so no
depth can overflow the stack.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_INPUT_DEPTH", "input_problem", "loads_bounded", "has_surrogate", "encodable", "encodable_value"]

#: Deepest nesting of arrays and objects a tool input may have (the argument object itself is depth 1).
MAX_INPUT_DEPTH = 64

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


def _field(path: list[Any]) -> str | None:
    return path[0] if path and isinstance(path[0], str) else None


def _where(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def input_problem(value: Any, max_depth: int = MAX_INPUT_DEPTH) -> tuple[str, str | None] | None:
    """The first reason ``value`` (decoded JSON arguments) cannot be a tool input, or None.

    Args:
        value: The decoded arguments (dicts, lists, strings, numbers, booleans, None).
        max_depth: Deepest nesting allowed.

    Returns:
        ``(phrase, field)``: a serde-style phrase for ``details.parse_error`` (``nested deeper than
        64 levels at `a.b` ``, ``lone surrogate \\ud800 in `cmd` ``) and the top-level field it is in
        (None at the top level); None when the input is acceptable.
    """
    stack: list[tuple[Any, int, list[Any]]] = [(value, 1, [])]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if has_surrogate(item):
                code = ord(_SURROGATE.search(item).group(0))  # type: ignore[union-attr]
                return (f"lone surrogate \\u{code:04x} in `{_where(path)}` (text must be valid Unicode; "
                        "a surrogate is only valid as half of a pair)", _field(path))
            continue
        if isinstance(item, (dict, list, tuple)):
            if depth > max_depth:
                return f"arguments nested deeper than {max_depth} levels at `{_where(path[:8])}…`", _field(path)
            if isinstance(item, dict):
                for key, sub in item.items():
                    if isinstance(key, str) and has_surrogate(key):
                        code = ord(_SURROGATE.search(key).group(0))  # type: ignore[union-attr]
                        return f"lone surrogate \\u{code:04x} in a field name at `{_where(path)}`", _field(path)
                    stack.append((sub, depth + 1, path + [key] if depth < 12 else path))
            else:
                stack.extend((sub, depth + 1, path + [i] if depth < 12 else path) for i, sub in enumerate(item))
    return None


def loads_bounded(text: str) -> Any:
    """``json.loads`` whose nesting overflow is a ``ValueError`` like any other malformed JSON.

    Raises:
        ValueError: the text is not JSON, or nests too deeply for the decoder.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"arguments nested deeper than the JSON decoder allows (limit {MAX_INPUT_DEPTH})") from None
