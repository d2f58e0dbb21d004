"""Schema-directed lenient scalar coercion (commands spec §2.2, decision D4), and input limits.

A string is coerced only at a schema position whose declared type does not
admit ``string``: ``"true"``/``"false"`` → bool; the exact integer grammar →
int (signed 64-bit); the exact float grammar → finite float; a string whose
left-trimmed text starts with ``[`` or ``{`` and parses as JSON → that value
(not coerced again). Everything else is left for strict parsing to judge.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ._errors import HolonNBError
from ._schema import slot_types
from ._text import has_surrogate

__all__ = [
    "MAX_INPUT_DEPTH",
    "MAX_INT_DIGITS",
    "IntegerTooLong",
    "coerce_args",
    "input_problem",
    "loads_bounded",
    "parse_int_literal",
]

#: Deepest nesting of arrays and objects a tool input may have (the argument object itself is depth 1).
MAX_INPUT_DEPTH = 64

#: Most decimal digits of an integer in a tool input: Python's default int-to-str limit
#: (``sys.set_int_max_str_digits``), past which an integer cannot be written into an error message
#: or a record (issue 25 item 2(d)). No tool takes an integer anywhere near this long.
MAX_INT_DIGITS = 4300
_SURROGATE = re.compile("[\ud800-\udfff]")

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_I64 = (-(2**63), 2**63 - 1)


def _surrogate_code(text: str) -> int:
    """The code point of the first lone surrogate in ``text`` (which :func:`has_surrogate` found)."""
    found = _SURROGATE.search(text)
    assert found is not None
    return ord(found.group(0))


def _coerce_scalar(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if len(text) <= 24 and _INT.fullmatch(text):  # longer digit strings are past i64: left as text
        value = int(text)
        if _I64[0] <= value <= _I64[1]:
            return value
    if _FLOAT.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return number
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(parsed, (list, dict)):
            return parsed
    return text


def coerce_args(value: Any, schema: dict[str, Any]) -> Any:
    """Coerce string values inside ``value`` where ``schema`` forbids strings.

    Args:
        value: Decoded JSON arguments (any JSON value).
        schema: The self-contained JSON schema of that position.

    Returns:
        A new value with coercions applied; the input is not mutated.
    """
    types = slot_types(schema)
    if isinstance(value, str):
        if "string" in types or "any" in types:
            return value
        coerced = _coerce_scalar(value)
        # a stringified array/object is not coerced again; scalars are final
        return coerced
    if isinstance(value, dict):
        props = schema.get("properties")
        if not isinstance(props, dict):
            return value
        return {k: coerce_args(v, props[k]) if k in props else v for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return value
        return [coerce_args(v, items) for v in value]
    return value


# ---------------------------------------------------------------- input limits (issue 9: every input gets an envelope)
# Two shapes of input used to escape the envelope: arguments nested about a thousand levels deep
# (``RecursionError`` in the JSON decoder, coercion or serialisation) and strings holding a lone
# UTF-16 surrogate (``"\ud800"``). Dispatch refuses both with ``invalid_tool_input``; the walk is
# iterative, so no depth can overflow the stack.


def _field(path: list[Any]) -> str | None:
    return path[0] if path and isinstance(path[0], str) else None


def _too_many_digits(value: int) -> bool:
    """Whether ``value`` has more than :data:`MAX_INT_DIGITS` decimal digits (decided without printing it)."""
    bits = value.bit_length()
    if bits <= 3 * MAX_INT_DIGITS:  # 2**(3n) = 8**n < 10**n: at most n digits
        return False
    if bits > 4 * MAX_INT_DIGITS:  # 2**(4n) = 16**n > 10**n: more than n digits
        return True
    try:
        return len(str(abs(value))) > MAX_INT_DIGITS
    except ValueError:  # a process-wide int-to-str limit set below ours
        return True


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
        64 levels at `a.b` ``, ``lone surrogate \\ud800 in `cmd` ``, ``integer with more than 4300
        digits in `n` ``) and the top-level field it is in (None at the top level); None when the
        input is acceptable.
    """
    stack: list[tuple[Any, int, list[Any]]] = [(value, 1, [])]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() > 64 and _too_many_digits(item):
                return _long_integer(_where(path)), _field(path)
            continue
        if isinstance(item, str):
            if has_surrogate(item):
                code = _surrogate_code(item)
                return (
                    f"lone surrogate \\u{code:04x} in `{_where(path)}` (text must be valid Unicode; "
                    "a surrogate is only valid as half of a pair)",
                    _field(path),
                )
            continue
        if isinstance(item, (dict, list, tuple)):
            if depth > max_depth:
                return f"arguments nested deeper than {max_depth} levels at `{_where(path[:8])}…`", _field(path)
            if isinstance(item, dict):
                for key, sub in item.items():
                    if isinstance(key, str) and has_surrogate(key):
                        code = _surrogate_code(key)
                        return f"lone surrogate \\u{code:04x} in a field name at `{_where(path)}`", _field(path)
                    stack.append((sub, depth + 1, path + [key] if depth < 12 else path))
            else:
                stack.extend((sub, depth + 1, path + [i] if depth < 12 else path) for i, sub in enumerate(item))
    return None


def _long_integer(where: str) -> str:
    return f"integer with more than {MAX_INT_DIGITS} digits in `{where}` (no tool takes an integer that long)"


class IntegerTooLong(HolonNBError, ValueError):
    """JSON text holds an integer literal longer than :data:`MAX_INT_DIGITS` digits (its message is the phrase)."""


def parse_int_literal(literal: str) -> int:
    """``json.loads``'s ``parse_int`` for tool inputs: a literal past :data:`MAX_INT_DIGITS` digits is refused.

    Raises:
        IntegerTooLong: the literal has more than :data:`MAX_INT_DIGITS` digits.
    """
    if len(literal) - literal.startswith("-") > MAX_INT_DIGITS:
        raise IntegerTooLong(_long_integer("arguments"))
    return int(literal)


def loads_bounded(text: str) -> Any:
    """``json.loads`` whose nesting overflow is a ``ValueError`` like any other malformed JSON.

    Raises:
        IntegerTooLong: an integer literal has more than :data:`MAX_INT_DIGITS` digits.
        ValueError: the text is not JSON, or nests too deeply for the decoder.
    """
    try:
        return json.loads(text, parse_int=parse_int_literal)
    except RecursionError:
        raise ValueError(f"arguments nested deeper than the JSON decoder allows (limit {MAX_INPUT_DEPTH})") from None
