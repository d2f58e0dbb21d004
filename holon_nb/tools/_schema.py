"""JSON schemas generated from the input models.

Produces self-contained schemas (no ``$ref``/``$defs``) in the contract's
style: nullable fields as ``"type": [T, "null"]``, ``additionalProperties:
false`` on every object, no titles. Used by the inventory (D8), by
schema-directed coercion (D4) and by provider lowering.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic loads with the first tool model, not with this module
    from pydantic import BaseModel

__all__ = ["input_schema", "input_schema_view", "slot_types"]


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            merged = {**_resolve(copy.deepcopy(defs[name]), defs)}
            merged.update({k: _resolve(v, defs) for k, v in node.items() if k != "$ref"})
            return merged
        return {k: _resolve(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_resolve(v, defs) for v in node]
    return node


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _tidy(v) for k, v in node.items() if k != "title"}
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and any(b.get("type") == "null" for b in any_of):
        rest = [b for b in any_of if b.get("type") != "null"]
        if len(rest) == 1:
            inner = dict(rest[0])
            del node["anyOf"]
            t = inner.get("type")
            if isinstance(t, str):
                inner["type"] = [t, "null"]
            elif isinstance(t, list) and "null" not in t:
                inner["type"] = [*t, "null"]
            if "enum" in inner and None not in inner["enum"]:
                inner["enum"] = [*inner["enum"], None]
            node = {**inner, **node}
            if node.get("default", 0) is None:
                del node["default"]
    if "const" in node and "enum" not in node:
        node["enum"] = [node.pop("const")]
    if node.get("type") == "object" and "properties" in node:
        node.setdefault("additionalProperties", False)
        node.setdefault("required", [])
    if node.get("default", 0) is None:
        del node["default"]
    return node


@cache
def _cached(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs = raw.get("$defs", {})
    schema = _tidy(_resolve(raw, defs))
    schema.pop("description", None)  # the tool's own description is the Markdown file
    return schema


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the self-contained JSON schema of an input model (a fresh copy).

    Args:
        model: A strict pydantic input model.

    Returns:
        A JSON-schema dict whose root is ``{"type": "object", ...}`` with no
        ``$ref``, ``$defs`` or ``title`` anywhere.
    """
    return copy.deepcopy(_cached(model))


def input_schema_view(model: type[BaseModel]) -> dict[str, Any]:
    """Like :func:`input_schema` but the shared cached dict: callers must not modify it."""
    return _cached(model)


def slot_types(schema: dict[str, Any]) -> set[str]:
    """Return the set of JSON types a schema position admits.

    ``anyOf``/``oneOf`` branches are unioned; a position with no declared
    type (or ``enum`` only) admits ``"string"`` when an enum value is a string.
    """
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    out: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key, []) or []:
            out |= slot_types(branch)
    if not out and "enum" in schema:
        out = {"string" if isinstance(v, str) else "other" for v in schema["enum"]}
    return out or {"any"}
