"""Arguments checked against an MCP tool's input schema, with the built-in parser's rules (issue 29).

The rules of :func:`holon_nb.tools._dispatch.parse_args`, applied to a JSON schema instead of a pydantic
model: a missing required field, a value of the wrong JSON type, a value outside an ``enum``/``const``, and
an unknown field are refused, with the same serde-style phrases (``unknown field `x```, ``missing field
`x```). Unknown fields are denied unless the schema allows them (``additionalProperties: true`` or a
schema). Local ``$ref`` (``#``, ``#/$defs/…``, ``#/definitions/…``) is followed; the walk is bounded by the
value's own depth and at most 32 references per position, so a schema whose references form a cycle
cannot recurse without end.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["schema_problems", "MAX_REF_HOPS"]

#: Most ``$ref`` hops at one position of the value (a ``$ref`` cycle that never reaches a type stops here).
MAX_REF_HOPS = 32
_MAX_DEPTH = 64
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _deref(node: Any, root: dict[str, Any]) -> tuple[Any, str | None]:
    hops = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        hops += 1
        if hops > MAX_REF_HOPS:
            return {}, f"`$ref` {node['$ref']} goes round a cycle"
        ref = node["$ref"]
        if ref == "#":
            target: Any = root
        elif ref.startswith("#/"):
            target = root
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                target = target.get(part) if isinstance(target, dict) else None
            if target is None:
                return {}, None  # an unresolvable reference constrains nothing (the server checks it)
        else:
            return {}, None  # a remote reference: not fetched, not checked here
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {**target, **rest} if isinstance(target, dict) and rest else target
    return node, None


def _where(path: str) -> str:
    return f" at {path}" if path else ""


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _check(value: Any, node: Any, root: dict[str, Any], path: str, depth: int, out: list[str]) -> None:
    if len(out) >= 8 or depth > _MAX_DEPTH:
        return
    node, problem = _deref(node, root)
    if problem:
        out.append(problem)
        return
    if node is False:
        out.append(f"no value is allowed for `{path or '(arguments)'}`")
        return
    if not isinstance(node, dict):
        return
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            if not any(_fits(value, b, root, path, depth) for b in branches):
                out.append(f"invalid type or value for `{path or '(arguments)'}`: it matches none of its {key} schemas")
                return
    for branch in node.get("allOf") or []:
        _check(value, branch, root, path, depth + 1, out)
    if "const" in node and value != node["const"]:
        out.append(f"invalid value for `{path}`: expected {json.dumps(node['const'])}")
        return
    enum = node.get("enum")
    if isinstance(enum, list) and value not in enum:
        expected = ", ".join(f"`{v}`" if isinstance(v, str) else json.dumps(v) for v in enum[:10])
        out.append(
            f"unknown variant `{value if isinstance(value, str) else json.dumps(value)}` for `{path}`, expected {expected}"
        )
        return
    types = node.get("type")
    names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    if names and not any(_TYPES.get(t, lambda v: True)(value) for t in names):
        got = json.dumps(value, default=repr)[:80]
        out.append(f"invalid type or value for `{path or '(arguments)'}`: expected {' or '.join(names)} (got {got})")
        return
    if isinstance(value, dict):
        _check_object(value, node, root, path, depth, out)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, (dict, bool)):
            for i, item in enumerate(value):
                _check(item, items, root, _join(path, i), depth + 1, out)


def _check_object(
    value: dict[str, Any], node: dict[str, Any], root: dict[str, Any], path: str, depth: int, out: list[str]
) -> None:
    props: dict[str, Any] = node["properties"] if isinstance(node.get("properties"), dict) else {}
    for name in node.get("required") or []:
        if isinstance(name, str) and name not in value:
            out.append(f"missing field `{name}`{_where(path)}")
    extra = node.get("additionalProperties", False if props or node.get("type") == "object" else True)
    for key, item in value.items():
        if key in props:
            _check(item, props[key], root, _join(path, key), depth + 1, out)
        elif extra is False:
            out.append(f"unknown field `{key}`{_where(path)}")
        elif isinstance(extra, dict):
            _check(item, extra, root, _join(path, key), depth + 1, out)


def _fits(value: Any, node: Any, root: dict[str, Any], path: str, depth: int) -> bool:
    found: list[str] = []
    _check(value, node, root, path, depth + 1, found)
    return not found


def schema_problems(args: dict[str, Any], schema: Any) -> list[str]:
    """The phrases naming what in ``args`` does not fit ``schema`` (at most 8; empty: it fits).

    A schema that is not an object (or an empty one) accepts any object without unknown-field checks only
    when it says so: ``{}`` or ``{"type": "object"}`` with ``additionalProperties`` true; an object schema
    with no ``additionalProperties`` denies fields it does not list (issue 29: the built-in parser's rule).
    """
    if not isinstance(schema, dict):
        return []
    out: list[str] = []
    _check(args, schema, schema, "", 0, out)
    return out
