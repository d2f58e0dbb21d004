"""The tool inventory (D8): generated from the registry, checked against upstream.

``docs/model-tool-schema-inventory.json`` is produced here, in upstream
Holon's format (``version``, ``source_of_truth``, ``stability_policy``,
``tools``), and never edited by hand. ``holon-nb inventory`` writes it,
``holon-nb inventory --check`` and ``tests/contract/test_inventory.py`` fail
when the checked-in copy is stale.

Hidden tools (``Stability.HIDDEN``: legacy aliases such as ``TaskList``) are
*not* in ``tools``: upstream's ``tools`` is the model-facing surface, and a
consumer that advertises every entry of it must keep doing the right thing.
They are listed apart, in the same entry shape plus ``alias_of``, under
``hidden_tools``, so the file still documents everything ``dispatch()``
accepts and the upstream comparison still covers them.

Example::

    from holon_nb.tools._inventory import inventory_text
    Path("docs/model-tool-schema-inventory.json").write_text(inventory_text())
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ._registry import REGISTRY, Registry
from ._schema import input_schema, slot_types
from ._spec import Family, ToolSpec

__all__ = [
    "INVENTORY_VERSION",
    "DIFFERENCE_ASPECTS",
    "generate_inventory",
    "inventory_text",
    "default_inventory_path",
    "default_differences_path",
    "parse_differences",
    "schema_differences",
    "tool_differences",
    "compare_with_upstream",
]

#: Format version of the inventory file (upstream's ``version: 2`` layout).
INVENTORY_VERSION = 2

#: What the upstream comparison looks at (D8). Per input field: ``field`` (exists on one side only),
#: ``type``, ``required``, ``enum`` and ``default`` (a default given on one side only, or another value).
#: Per tool: ``tool`` (path ``name``: model-facing on one side only; ``family``, ``stability``,
#: ``model_rendering``, ``success_result``: that attribute differs) and ``result`` (path
#: ``success_result_schema``: a result schema published on one side only, or another one).
DIFFERENCE_ASPECTS = ("field", "type", "required", "enum", "default", "tool", "result")

#: Tool attributes compared by :func:`tool_differences` (``result_envelope`` keys for the last two).
TOOL_ATTRIBUTES = ("family", "stability", "model_rendering", "success_result")

_SOURCE_OF_TRUTH = {
    "tool_definitions": "holon_nb/tools/_registry.py REGISTRY (one ToolSpec per tool)",
    "input_schemas": "strict pydantic input models (extra=forbid) rendered by holon_nb/tools/_schema.py input_schema()",
    "descriptions": "holon_nb/tools/descriptions/<Tool>.md",
    "model_rendering": "holon_nb/render/_receipt.py receipt_text()",
    "result_envelope": "holon_nb/tools/_envelope.py (ToolResultEnvelope as a plain dict)",
    "covered_result_schemas": "none: success_result_schema is null for every tool",
}

_STABILITY_POLICY = {
    "stable": "Name, input schema, result envelope family, and documented model rendering are intended to be "
    "compatibility-preserving.",
    "experimental": "Surface is available but may change while the runtime contract is still settling.",
    "deprecated": "Surface remains for compatibility but should not be introduced into new workflows.",
    "hidden": "Dispatchable by non-model surfaces (magics, Runtime.call, the CLI) but never advertised to a "
    "model; listed under hidden_tools, not tools.",
}

_ADDITIONS_NOTE = (
    "Beyond the contract: holon_nb's opt-in Notebook family (family `notebook`). Off by default "
    "(HolonNB.notebook_tools, or HolonNB.notebook_tools_agents per agent); never offered to private children; "
    "tools with asks_approval true are asked in the cell before each model call unless "
    "HolonNB.notebook_approve_all (%%agent --approve-all). Not compared with upstream."
)

_DIFF_LINE = re.compile(r"^- `(?P<tool>[A-Za-z][A-Za-z0-9]*)` `(?P<path>[^`]+)` (?P<aspect>[a-z]+): (?P<reason>.*)$")

DifferenceKey = tuple[str, str, str]


def _entry(spec: ToolSpec[Any, Any]) -> dict[str, Any]:
    return {
        "name": spec.name,
        "family": spec.family.value,
        "stability": spec.stability.value,
        "description": spec.description,
        "freeform_grammar": None,
        "input_schema": input_schema(spec.input_model),
        "related_surfaces": list(spec.related_surfaces),
        "result_envelope": {
            "canonical": "ToolResultEnvelope",
            "error_result": "ToolError",
            "model_rendering": spec.rendering.value,
            "success_result": spec.result_name,
            "success_result_schema": None,
        },
    }


def generate_inventory(registry: Registry | None = None) -> dict[str, Any]:
    """Build the inventory document from the registry.

    Args:
        registry: The registry to describe; default :data:`REGISTRY`.

    Returns:
        ``{"version", "source_of_truth", "stability_policy", "tools",
        "hidden_tools", "additions"}``; ``tools`` holds the contract's model-facing tools in registry
        order, ``hidden_tools`` the hidden ones (each with ``alias_of``, a tool
        name or None), ``additions`` the tools beyond the contract (the opt-in Notebook family of
        issue 28: ``{"note", "tools"}``, each entry with ``asks_approval``), which the upstream comparison
        never sees.
    """
    reg = registry or REGISTRY
    hidden = []
    contract = [s for s in reg if s.family is not Family.NOTEBOOK]
    for spec in contract:
        if not spec.model_facing:
            hidden.append({**_entry(spec), "alias_of": spec.alias_of})
    return {
        "version": INVENTORY_VERSION,
        "source_of_truth": dict(_SOURCE_OF_TRUTH),
        "stability_policy": dict(_STABILITY_POLICY),
        "tools": [_entry(s) for s in contract if s.model_facing],
        "hidden_tools": hidden,
        "additions": {
            "note": _ADDITIONS_NOTE,
            "tools": [{**_entry(s), "asks_approval": s.asks_approval} for s in reg if s.family is Family.NOTEBOOK],
        },
    }


def inventory_text(inventory: Mapping[str, Any] | None = None) -> str:
    """Serialise an inventory deterministically: sorted keys, 2-space indent, trailing newline.

    Args:
        inventory: The document; default :func:`generate_inventory`.

    Returns:
        The exact text of ``docs/model-tool-schema-inventory.json``.
    """
    doc = generate_inventory() if inventory is None else inventory
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _checkout_root() -> Path | None:
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "holon_nb").is_dir() else None


def default_inventory_path() -> Path:
    """Where the inventory lives: ``docs/`` of the source checkout, else of the current directory."""
    return (_checkout_root() or Path.cwd()) / "docs" / "model-tool-schema-inventory.json"


def default_differences_path() -> Path:
    """Where the list of intended upstream differences lives (``docs/inventory-differences.md``)."""
    return (_checkout_root() or Path.cwd()) / "docs" / "inventory-differences.md"


def parse_differences(text: str) -> tuple[dict[DifferenceKey, str], list[str]]:
    """Parse ``docs/inventory-differences.md``.

    Entries live in the section headed ``## Differences`` (up to the next
    ``## `` heading). There, every line starting with ``- ` `` is an entry and
    must read ``- `Tool` `path` aspect: reason`` where ``path`` is a dotted
    input field path (``items[].tty`` for a field of the array ``items``'
    elements) or, for the ``tool`` and ``result`` aspects, the tool attribute
    (``name``, ``family``, …, ``success_result_schema``); ``aspect`` is one of
    :data:`DIFFERENCE_ASPECTS` and ``reason`` is not empty. Every other line is
    commentary.

    Args:
        text: The Markdown text.

    Returns:
        ``(entries, problems)``: entries keyed by ``(tool, path, aspect)`` with
        their reason; one problem string per malformed or duplicate line.
    """
    entries: dict[DifferenceKey, str] = {}
    problems: list[str] = []
    in_section = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            in_section = line[3:].strip().lower() == "differences"
            continue
        if not in_section or not line.startswith("- `"):
            continue
        m = _DIFF_LINE.match(line.rstrip())
        if m is None or m["aspect"] not in DIFFERENCE_ASPECTS or not m["reason"].strip():
            problems.append(
                f"inventory-differences.md line {number}: expected "
                f"- `Tool` `field.path` <{'|'.join(DIFFERENCE_ASPECTS)}>: reason; got {line!r}"
            )
            continue
        key = (m["tool"], m["path"], m["aspect"])
        if key in entries:
            problems.append(f"inventory-differences.md line {number}: duplicate entry {' '.join(key)}")
        entries[key] = m["reason"].strip()
    return entries, problems


def _types(node: Mapping[str, Any]) -> set[str]:
    return slot_types(dict(node)) - {"any"}


def _enum(node: Mapping[str, Any]) -> list[Any] | None:
    values = node.get("enum")
    return None if values is None else sorted(values, key=lambda v: json.dumps(v))


def _default(node: Mapping[str, Any]) -> str:
    return json.dumps(node["default"], sort_keys=True) if "default" in node else "omitted"


def schema_differences(
    tool: str, ours: Mapping[str, Any], upstream: Mapping[str, Any], path: str = ""
) -> dict[DifferenceKey, str]:
    """Compare two input schemas on field names, types, required, enum values and defaults.

    Object nodes are walked through ``properties`` and array ``items``;
    ``description``, ``format`` and ``minimum`` are not compared. A default is
    compared as JSON (``false`` is not ``0``); an omitted default differs from
    ``"default": null``.

    Args:
        tool: Tool name (first element of each key).
        ours: Our schema node.
        upstream: Upstream's schema node at the same position.
        path: Dotted path of the node (``""`` for the root).

    Returns:
        ``{(tool, field path, aspect): explanation}``, empty when they agree.
    """
    out: dict[DifferenceKey, str] = {}
    ours_props: Mapping[str, Any] = ours.get("properties") or {}
    up_props: Mapping[str, Any] = upstream.get("properties") or {}
    ours_req, up_req = set(ours.get("required") or ()), set(upstream.get("required") or ())
    for name in sorted(set(ours_props) | set(up_props)):
        fpath = f"{path}{name}"
        if name not in up_props:
            out[(tool, fpath, "field")] = "field exists here but not upstream"
            continue
        if name not in ours_props:
            out[(tool, fpath, "field")] = "upstream field missing here"
            continue
        a, b = ours_props[name], up_props[name]
        if _types(a) != _types(b):
            out[(tool, fpath, "type")] = f"type {sorted(_types(a))} here, {sorted(_types(b))} upstream"
        if (name in ours_req) != (name in up_req):
            out[(tool, fpath, "required")] = (
                f"{'required' if name in ours_req else 'optional'} here, "
                f"{'required' if name in up_req else 'optional'} upstream"
            )
        if _enum(a) != _enum(b):
            out[(tool, fpath, "enum")] = f"enum {_enum(a)} here, {_enum(b)} upstream"
        if _default(a) != _default(b):
            out[(tool, fpath, "default")] = f"default {_default(a)} here, {_default(b)} upstream"
        out.update(schema_differences(tool, a, b, f"{fpath}."))
        if isinstance(a.get("items"), Mapping) and isinstance(b.get("items"), Mapping):
            out.update(schema_differences(tool, a["items"], b["items"], f"{fpath}[]."))
    return out


def _attribute(entry: Mapping[str, Any], name: str) -> Any:
    if name in ("model_rendering", "success_result", "success_result_schema"):
        return (entry.get("result_envelope") or {}).get(name)
    return entry.get(name)


def tool_differences(tool: str, ours: Mapping[str, Any], upstream: Mapping[str, Any]) -> dict[DifferenceKey, str]:
    """Compare two inventory entries of one tool on :data:`TOOL_ATTRIBUTES` and the success result schema.

    Args:
        tool: Tool name (first element of each key).
        ours, upstream: The two entries (``family``, ``stability``, ``result_envelope``, …).

    Returns:
        ``{(tool, attribute, "tool" | "result"): explanation}``, empty when they agree.
    """
    out: dict[DifferenceKey, str] = {}
    for name in TOOL_ATTRIBUTES:
        a, b = _attribute(ours, name), _attribute(upstream, name)
        if a != b:
            out[(tool, name, "tool")] = f"{name} {a!r} here, {b!r} upstream"
    a, b = _attribute(ours, "success_result_schema"), _attribute(upstream, "success_result_schema")
    if (a is None) != (b is None):
        out[(tool, "success_result_schema", "result")] = (
            "result schema published upstream, none here"
            if a is None
            else "result schema published here, none upstream"
        )
    elif a is not None and json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
        out[(tool, "success_result_schema", "result")] = "the published result schemas differ"
    return out


def _tool_pairs(
    ours: Mapping[str, Any], upstream: Mapping[str, Any]
) -> Iterator[tuple[str, Mapping[str, Any] | None, Mapping[str, Any] | None]]:
    """``(name, ours, upstream)`` for every tool model-facing on either side (a side without it: None).

    Upstream's inventory lists no hidden tools, so our hidden tools are paired only with upstream tools of
    the same name (an alias such as ``AgentGet``).
    """
    facing = {t["name"]: t for t in ours.get("tools", [])}
    hidden = {t["name"]: t for t in ours.get("hidden_tools", [])}
    up_tools = {t["name"]: t for t in upstream.get("tools", [])}
    for name in sorted(set(facing) | set(up_tools)):
        yield name, facing.get(name) or hidden.get(name), up_tools.get(name)


def compare_with_upstream(
    ours: Mapping[str, Any],
    upstream: Mapping[str, Any],
    differences: Mapping[DifferenceKey, str] | Iterable[DifferenceKey] | str,
) -> list[str]:
    """Compare our inventory with upstream's (D8).

    A tool model-facing on one side only is a ``tool`` difference at path
    ``name``. Tools of ``ours["tools"]`` and ``ours["hidden_tools"]`` that
    upstream also lists are compared with :func:`tool_differences` and, input
    schema by input schema, with :func:`schema_differences`. A difference must
    be listed in ``differences``; a listed difference that no longer exists is
    a problem too (the list must stay true).

    Args:
        ours: Our inventory document (:func:`generate_inventory`).
        upstream: Upstream's inventory document.
        differences: The intended differences: the Markdown text of
            ``docs/inventory-differences.md``, or keys ``(tool, path, aspect)``.

    Returns:
        Human-readable problems, empty when everything agrees.
    """
    problems: list[str] = []
    if isinstance(differences, str):
        listed, problems = parse_differences(differences)
        allowed: set[DifferenceKey] = set(listed)
    else:
        allowed = set(differences)
    found: dict[DifferenceKey, str] = {}
    for name, entry, up in _tool_pairs(ours, upstream):
        if entry is None or up is None:
            found[(name, "name", "tool")] = (
                "in upstream's inventory, not registered here" if entry is None else "model-facing here, not upstream"
            )
            continue
        found.update(tool_differences(name, entry, up))
        found.update(schema_differences(name, entry["input_schema"], up["input_schema"]))
    for key in sorted(found):
        if key not in allowed:
            problems.append(f"{key[0]} `{key[1]}` {key[2]}: {found[key]} (not listed in docs/inventory-differences.md)")
    for key in sorted(allowed - set(found)):
        problems.append(
            f"{key[0]} `{key[1]}` {key[2]}: listed in docs/inventory-differences.md but no longer "
            "differs from upstream; remove the line"
        )
    return problems
