"""Schema-directed lenient scalar coercion (commands spec §2.2, decision D4).

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

from .schema import slot_types

__all__ = ["coerce_args"]

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_I64 = (-(2**63), 2**63 - 1)


def _coerce_scalar(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if _INT.fullmatch(text):
        value = int(text)
        if _I64[0] <= value <= _I64[1]:
            return value
    if _FLOAT.fullmatch(text):
        value = float(text)
        if math.isfinite(value):
            return value
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
