"""Tool-schema lowering for providers (turn-loop spec §3).

A tool's *source* schema (turn-loop spec §3.1) is self-contained draft-07: no ``$ref``/``$defs``,
no titles, every object node with ``properties`` and ``required``, optional
fields as ``"type": [T, "null"]``, an ``additionalProperties: false`` root.
:func:`source_tool_schema` brings raw pydantic output to that shape.

Providers then get one of two *lowerings*:

- ``relaxed`` (turn-loop spec §3.2, the default everywhere): no root combinator, every object
  node closed with ``additionalProperties: false``; wire flag ``"strict": false``.
- ``strict`` (turn-loop spec §3.3): additionally every object lists **all** its properties as
  required (lexicographic order) and the formerly optional ones become
  nullable; wire flag ``"strict": true``. The model then sends ``null`` for
  what it would have omitted; :func:`denull_strict_arguments` turns those nulls
  back into omissions where the source type does not admit ``null``.

:func:`validate_lowered` is the validator of turn-loop spec §3.3 (tests, and the strict
preflight); :func:`rejected_tool_name` names the tool a provider's schema
rejection is about (turn-loop spec §3.6).

Example::

    lowered = lower_tool_schema(input_schema(WaitForArgs), "strict")
    assert validate_lowered(lowered, "strict") == []

Pure functions over JSON values; no I/O, no imports of the runtime.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..tools._errors import HolonNBError

__all__ = [
    "CONTRACTS",
    "COMBINATORS",
    "SchemaDefinitionError",
    "ToolSchemaInvalid",
    "source_tool_schema",
    "lower_tool_schema",
    "validate_lowered",
    "wire_strict_flag",
    "lower_for_provider",
    "denull_strict_arguments",
    "rejected_tool_name",
]

#: The two lowering contracts (turn-loop spec §3).
CONTRACTS = ("relaxed", "strict")
#: Keys deleted at the root by both lowerings (turn-loop spec §3.2 step 1) and refused there by the validator.
COMBINATORS = ("allOf", "anyOf", "oneOf", "enum", "not")
#: Keywords removed from every schema node of a source schema (turn-loop spec §3.1).
_DROPPED = ("$schema", "title", "definitions", "$defs")
#: Numeric bounds written as floats in source schemas (turn-loop spec §3.1: ``"minimum": 0.0``).
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
#: Keys whose value is one subschema / a list of subschemas / a map name → subschema.
_SUB_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_SUB_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUB_MAP = ("properties", "patternProperties")


class SchemaDefinitionError(HolonNBError, ValueError):
    """A tool's schema cannot be made self-contained: an unknown, non-local or recursive ``$ref`` (turn-loop spec §3.1).

    Attributes:
        ref: The offending reference (``#/$defs/Node``).
    """

    def __init__(self, ref: str, message: str):
        super().__init__(message)
        self.ref = ref


class ToolSchemaInvalid(HolonNBError, ValueError):
    """A lowered schema failed the validator (turn-loop spec §3.3 preflight), raised before any network call.

    Attributes:
        tool_name: The tool whose schema is invalid.
        contract: ``relaxed`` or ``strict``.
        errors: The validator's messages, each starting with a JSON path (``$.properties.x: …``).
    """

    def __init__(self, tool_name: str, contract: str, errors: list[str]):
        super().__init__(f"{contract} schema of tool {tool_name} is invalid: {'; '.join(errors)}")
        self.tool_name = tool_name
        self.contract = contract
        self.errors = list(errors)


def _check_contract(contract: str) -> None:
    if contract not in CONTRACTS:
        raise ValueError(f"schema contract must be 'relaxed' or 'strict', got {contract!r}")


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


# ------------------------------------------------------------------ turn-loop spec §3.1 source schemas


def _lookup(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise SchemaDefinitionError(ref, f"only local $ref ('#/...') can be inlined, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaDefinitionError(ref, f"$ref {ref!r} names no definition")
        node = node[part]
    if not isinstance(node, dict):
        raise SchemaDefinitionError(ref, f"$ref {ref!r} does not name a schema object")
    return node


def _inline(node: Any, root: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(v, root, stack) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node and isinstance(node["$ref"], str):
        ref = node["$ref"]
        if ref in stack:
            raise SchemaDefinitionError(
                ref, f"recursive $ref {ref!r} ({' -> '.join((*stack, ref))}): a tool's argument schema must be finite"
            )
        target = _inline(copy.deepcopy(_lookup(ref, root)), root, (*stack, ref))
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **_inline(rest, root, stack)}
    return _walk_children(node, lambda child: _inline(child, root, stack))


def _walk_children(node: dict[str, Any], fn: Any) -> dict[str, Any]:
    """Apply ``fn`` to every subschema of ``node`` (not to annotation values such as ``default``)."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUB_ONE and isinstance(value, dict):
            out[key] = fn(value)
        elif key in _SUB_LIST and isinstance(value, list):
            out[key] = [fn(v) if isinstance(v, dict) else v for v in value]
        elif key in _SUB_MAP and isinstance(value, dict):
            out[key] = {name: fn(v) if isinstance(v, dict) else v for name, v in value.items()}
        elif key == "items" and isinstance(value, list):
            out[key] = [fn(v) if isinstance(v, dict) else v for v in value]
        else:
            out[key] = value
    return out


def _is_null_branch(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and (node.get("type") == "null" or node.get("type") == ["null"])
        and not (set(node) - {"type", "title", "description"})
    )


def _tidy(node: dict[str, Any]) -> dict[str, Any]:
    node = _walk_children(node, _tidy)
    for key in _DROPPED:
        node.pop(key, None)
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and any(_is_null_branch(b) for b in any_of):
        (inner,) = [b for b in any_of if not _is_null_branch(b)]
        if isinstance(inner, dict) and _types(inner) and not any(k in inner for k in ("anyOf", "oneOf", "allOf")):
            merged = dict(inner)
            merged["type"] = [*(_types(inner)), *([] if "null" in _types(inner) else ["null"])]
            if isinstance(merged.get("enum"), list) and None not in merged["enum"]:
                merged["enum"] = [*merged["enum"], None]
            outer = {k: v for k, v in node.items() if k != "anyOf"}
            node = {**merged, **outer}
    if "const" in node and "enum" not in node:
        node["enum"] = [node.pop("const")]
    for key in _BOUNDS:
        if isinstance(node.get(key), int) and not isinstance(node.get(key), bool):
            node[key] = float(node[key])
    if "object" in _types(node):
        node.setdefault("properties", {})
        node.setdefault("required", [])
    return node


def source_tool_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Bring a generated argument schema to the source rules of turn-loop spec §3.1 (a new dict; idempotent).

    Inlines local ``$ref`` (``#/$defs/X``, ``#/definitions/X``), removes ``$schema``,
    ``title``, ``definitions`` and ``$defs`` at every schema level (never a property
    *named* ``title``), rewrites ``anyOf: [{type: T, …}, {type: "null"}]`` to
    ``type: [T, "null"]`` (an enum gains ``null``), turns ``const`` into a one-value
    ``enum``, writes numeric bounds as floats, gives every object node ``properties``
    and ``required`` and the root ``additionalProperties: false`` when it has none.

    Args:
        schema: A JSON-schema dict, e.g. ``Model.model_json_schema()`` or
            :func:`holon_nb.tools._schema.input_schema`.

    Returns:
        The source schema.

    Raises:
        SchemaDefinitionError: a recursive, unknown or non-local ``$ref``.
        TypeError: ``schema`` is not a dict.
    """
    if not isinstance(schema, dict):
        raise TypeError(f"a tool schema must be a JSON object (dict), got {type(schema).__name__}")
    out = _tidy(_inline(copy.deepcopy(schema), schema, ()))
    if "object" in _types(out):
        out.setdefault("additionalProperties", False)
    return out


# ------------------------------------------------------------------ turn-loop spec §3.2 relaxed, turn-loop spec §3.3 strict


def _close_objects(node: Any) -> None:
    """turn-loop spec §3.2 step 2: through properties, items, anyOf, oneOf, close every object node."""
    if not isinstance(node, dict):
        return
    if "object" in _types(node):
        node.setdefault("properties", {})
        node.setdefault("additionalProperties", False)
    props = node.get("properties")
    if isinstance(props, dict):
        for child in props.values():
            _close_objects(child)
    _close_objects(node.get("items"))
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            for child in node[key]:
                _close_objects(child)


def _make_nullable(node: dict[str, Any]) -> None:
    """turn-loop spec §3.3 step 3 (⚑ an enum without ``type`` keeps ``type`` absent)."""
    types = _types(node)
    if types:
        node["type"] = types if "null" in types else [*types, "null"]
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]


def _strengthen(node: Any, nullable: bool) -> None:
    """turn-loop spec §3.3 steps 1–3 on one node."""
    if not isinstance(node, dict):
        return
    types = _types(node)
    if "object" in types:
        node["additionalProperties"] = False
        props = node.get("properties")
        if isinstance(props, dict):
            required = node.get("required")
            original = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
            ordered = {name: props[name] for name in sorted(props)}
            for name, child in ordered.items():
                _strengthen(child, name not in original)
            node["properties"] = ordered
            node["required"] = list(ordered)
    if "array" in types and isinstance(node.get("items"), dict):
        _strengthen(node["items"], False)
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            for variant in node[key]:
                _strengthen(variant, False)
    if nullable:
        if not _admits_null(node) and "default" in node:
            _note_null_default(node)
        _make_nullable(node)


def _note_null_default(node: dict[str, Any]) -> None:
    """⚑ Say in the description what a forced ``null`` means where the source refused ``null``.

    Strict mode makes an optional field such as ``activate: boolean = true`` nullable, but the
    tool itself refuses an explicit ``null`` there (D4): the provider boundary drops it
    (:func:`denull_strict_arguments`) and the default applies. The model is told so.
    """
    note = f"null: the default ({json.dumps(node['default'])})."
    text = node.get("description")
    node["description"] = f"{text.rstrip()} {note}" if isinstance(text, str) and text.strip() else note


def lower_tool_schema(schema: dict[str, Any], contract: str = "relaxed") -> dict[str, Any]:
    """Lower a tool's argument schema for an OpenAI-style provider (turn-loop spec §3.2 / §3.3).

    The input is first brought to the source rules (:func:`source_tool_schema`; a
    source schema is unchanged by it). Then: root ``allOf``/``anyOf``/``oneOf``/
    ``enum``/``not`` deleted; every object node reachable through ``properties``,
    ``items``, ``anyOf``, ``oneOf`` gets ``properties: {}`` if missing and
    ``additionalProperties: false`` unless the key is present. ``strict`` further
    forces ``additionalProperties: false`` on objects, sets ``required`` to all
    property names (lexicographic, properties reordered to match) and makes each
    formerly optional property nullable (``"null"`` added to ``type``, ``null`` to
    ``enum``); array items and combinator variants are recursed into, never made
    nullable. ⚑ Where such a property did not admit ``null`` and has a ``default``, its
    description gains ``null: the default (<json>).`` — the tool refuses an explicit
    ``null`` there, so strict-mode arguments go through :func:`denull_strict_arguments`.

    Args:
        schema: The tool's source (or raw pydantic) schema; not modified.
        contract: ``"relaxed"`` (default) or ``"strict"``.

    Returns:
        A new schema dict. The wire flag goes beside it (:func:`wire_strict_flag`).

    Raises:
        ValueError: unknown ``contract``; :class:`SchemaDefinitionError` for a bad ``$ref``.
        TypeError: ``schema`` is not a dict.
    """
    _check_contract(contract)
    out = source_tool_schema(schema)
    for key in COMBINATORS:
        out.pop(key, None)
    _close_objects(out)
    if contract == "strict":
        _strengthen(out, False)
    return out


def wire_strict_flag(contract: str) -> bool:
    """The ``"strict"`` flag sent beside a lowered schema: False for relaxed, True for strict (turn-loop spec §3.2 step 3, §3.3 step 4)."""
    _check_contract(contract)
    return contract == "strict"


# ------------------------------------------------------------------ validator


def _validate(node: Any, path: str, strict: bool, errors: list[str]) -> None:
    """Append to ``errors`` what breaks the turn-loop spec §3.3 rules at ``node`` (JSON path ``path``) and below it."""
    if not isinstance(node, dict):
        if not isinstance(node, bool):
            errors.append(f"{path}: a schema must be an object, got {type(node).__name__}")
        return
    for key in ("$ref", "$defs", "definitions"):
        if key in node:
            errors.append(f"{path}: {key} is not allowed (lowered schemas are self-contained)")
    types = _types(node)
    if path == "$":
        if "object" not in types:
            errors.append(f"{path}: the root type must be object")
        for key in COMBINATORS:
            if key in node:
                errors.append(f"{path}: the root must not contain {key}")
    if "object" in types:
        _validate_object(node, path, strict, errors)
    if "array" in types:
        if "items" not in node:
            errors.append(f"{path}: an array schema must define items")
        else:
            _validate(node["items"], f"{path}.items", strict, errors)
    for key in ("anyOf", "oneOf"):
        variants = node.get(key)
        if isinstance(variants, list):
            for i, variant in enumerate(variants):
                _validate(variant, f"{path}.{key}[{i}]", strict, errors)


def _validate_object(node: dict[str, Any], path: str, strict: bool, errors: list[str]) -> None:
    """The object rules of turn-loop spec §3.3 at ``node``: properties, required, additionalProperties; then each property."""
    props = node.get("properties")
    if not isinstance(props, dict):
        errors.append(f"{path}: an object schema must have properties")
        props = {}
    required = node.get("required")
    names: list[str] = []
    if required is not None and not isinstance(required, list):
        errors.append(f"{path}: required must be an array")
    elif isinstance(required, list):
        for entry in required:
            if not isinstance(entry, str):
                errors.append(f"{path}: required entries must be strings, got {entry!r}")
            elif entry not in props:
                errors.append(f"{path}: required entry `{entry}` is missing from properties")
            else:
                names.append(entry)
    if node.get("additionalProperties", None) is not False:
        errors.append(f"{path}: an object schema must set additionalProperties to false")
    if strict:
        if required is None:
            errors.append(f"{path}: a strict object schema must have a required array")
        elif names != list(props) or len(required) != len(props):
            errors.append(
                f"{path}: strict required must list all properties in order (expected {list(props)}, got {required})"
            )
    for name, child in props.items():
        _validate(child, f"{path}.properties.{name}", strict, errors)


def validate_lowered(schema: dict[str, Any], contract: str) -> list[str]:
    """Check a lowered schema against the validator of turn-loop spec §3.3; empty list when valid.

    Rules: root ``type`` includes ``object``; none of :data:`COMBINATORS` at the root;
    no ``$ref``/``$defs``/``definitions`` anywhere; every object node has ``properties``,
    string ``required`` entries that exist in ``properties`` and
    ``additionalProperties: false``; ``strict`` also needs ``required`` present and equal
    to the property names (in key order); arrays define ``items``. Recurses through
    ``properties``, ``items``, ``anyOf``, ``oneOf``.

    Args:
        schema: The lowered schema.
        contract: ``"relaxed"`` or ``"strict"``.

    Returns:
        Messages, each starting with the JSON path (``$``, ``$.properties.<name>``,
        ``….items``, ``….anyOf[<i>]``), e.g. ``"$: strict required must list all properties …"``.

    Raises:
        ValueError: unknown ``contract``.
    """
    _check_contract(contract)
    if not isinstance(schema, dict):
        return [f"$: a tool schema must be a JSON object, got {type(schema).__name__}"]
    errors: list[str] = []
    _validate(schema, "$", contract == "strict", errors)
    return errors


def lower_for_provider(tool_name: str, schema: dict[str, Any], contract: str = "relaxed") -> dict[str, Any]:
    """Lower one tool's schema and run the validator as a preflight (turn-loop spec §3.3, §3.6 ⚑).

    Returns:
        The lowered schema.

    Raises:
        ToolSchemaInvalid: the lowered schema fails :func:`validate_lowered` (names the tool
            and the JSON paths) — before any request is sent.
        SchemaDefinitionError: a recursive or unknown ``$ref`` in the source.
    """
    try:
        lowered = lower_tool_schema(schema, contract)
    except SchemaDefinitionError as exc:
        raise ToolSchemaInvalid(tool_name, contract, [f"$: {exc}"]) from exc
    errors = validate_lowered(lowered, contract)
    if errors:
        raise ToolSchemaInvalid(tool_name, contract, errors)
    return lowered


# ------------------------------------------------------------------ strict-mode arguments back to source


def denull_strict_arguments(arguments: Any, source_schema: dict[str, Any]) -> Any:
    """Undo strict mode's forced nulls (turn-loop spec §3.3 step 4): ``null`` for an optional field = omitted.

    Under the strict contract the model must send every property, using ``null`` for
    the ones it would have left out. Where the source schema's type admits ``null``
    (``"type": [T, "null"]``) the value is kept (``null`` is a legal argument, its
    default). Where it does not (e.g. ``include_unavailable: boolean`` with default
    ``false``), the tool refuses an explicit ``null`` by design (D4: ``null`` only where
    the schema admits it), so the key is removed and the tool applies its default.
    Recurses into nested objects and array items; required fields and anything not an
    object are returned untouched (the tool's own validation reports them).

    Args:
        arguments: The parsed tool-call arguments (usually a dict).
        source_schema: The tool's **source** schema (not the lowered one).

    Returns:
        A new value; the input is not modified.
    """
    return _denull(arguments, source_tool_schema(source_schema))


def _admits_null(node: dict[str, Any]) -> bool:
    if "null" in _types(node) or (isinstance(node.get("enum"), list) and None in node["enum"]):
        return True
    return any(isinstance(b, dict) and _admits_null(b) for k in ("anyOf", "oneOf") for b in node.get(k) or [])


def _denull(value: Any, node: Any) -> Any:
    if not isinstance(node, dict):
        return value
    if isinstance(value, dict) and "object" in _types(node) and isinstance(node.get("properties"), dict):
        props = node["properties"]
        required = set(node.get("required") or [])
        out = {}
        for key, item in value.items():
            sub = props.get(key)
            if item is None and key not in required and isinstance(sub, dict) and not _admits_null(sub):
                continue
            out[key] = _denull(item, sub)
        return out
    if isinstance(value, list) and "array" in _types(node) and isinstance(node.get("items"), dict):
        return [_denull(v, node["items"]) for v in value]
    return value


# ------------------------------------------------------------------ turn-loop spec §3.6 naming a rejected tool

_TOOL_INDEX = re.compile(r"tools\[(\d+)\]")
_TOKEN = re.compile(r"[A-Za-z0-9_]+")


def rejected_tool_name(message: str | None, tool_names: Sequence[str] | Iterable[str]) -> str | None:
    """Name the tool a provider's schema rejection is about (turn-loop spec §3.6 ⚑), or None.

    Looks in the (already redacted) provider message for an advertised tool name as an
    exact token (``Invalid schema for function 'WaitFor': …`` → ``WaitFor``; ``GetAgent``
    does not match inside ``GetAgentX``) or a ``tools[<i>]`` index into ``tool_names``
    (``tools[2].function.parameters`` → the third name). The earliest hit in the message
    wins.

    Args:
        message: The provider's error message (may be None or empty).
        tool_names: The names advertised in the rejected request, in request order.

    Returns:
        The tool name, or None when nothing in the message names one.
    """
    if not message:
        return None
    names = list(tool_names)
    known = set(names)
    hits: list[tuple[int, str]] = []
    for m in _TOKEN.finditer(message):
        if m.group(0) in known:
            hits.append((m.start(), m.group(0)))
            break
    for m in _TOOL_INDEX.finditer(message):
        i = int(m.group(1))
        if i < len(names):
            hits.append((m.start(), names[i]))
            break
    return min(hits)[1] if hits else None
