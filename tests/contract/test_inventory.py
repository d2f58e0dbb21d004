"""D8: the inventory is generated, fresh, self-contained and checked against upstream."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from holon_nb.tools._dispatch import RESULT_FIELDS
from holon_nb.tools._envelope import ERROR_KINDS
from holon_nb.tools._inventory import (
    compare_with_upstream,
    default_differences_path,
    default_inventory_path,
    generate_inventory,
    inventory_text,
    parse_differences,
    schema_differences,
)

#: A copy of shared/reference/upstream-model-tool-schema-inventory.json, so CI needs nothing outside the repo.
UPSTREAM = Path(__file__).with_name("data") / "upstream-model-tool-schema-inventory.json"
INVENTORY = generate_inventory()
ENTRIES = [*INVENTORY["tools"], *INVENTORY["hidden_tools"]]
SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
CAMEL = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$")


def _upstream() -> dict[str, Any]:
    return json.loads(UPSTREAM.read_text(encoding="utf-8"))


def _nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _nodes(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _nodes(value)


def _vocabulary(schema: Any) -> set[str]:
    """Every property name and string enum value anywhere in a schema."""
    words: set[str] = set()
    for node in _nodes(schema):
        props = node.get("properties")
        if isinstance(props, dict):
            words |= set(props)
        for value in node.get("enum") or ():
            if isinstance(value, str):
                words.add(value)
    return words


def test_upstream_copy_matches_the_shared_reference() -> None:
    shared = Path("/work/shared/reference/upstream-model-tool-schema-inventory.json")
    if not shared.exists():
        pytest.skip("shared reference not present on this machine")
    assert json.loads(shared.read_text(encoding="utf-8")) == _upstream(), f"refresh {UPSTREAM} from {shared}"


def test_checked_in_inventory_is_fresh() -> None:
    path = default_inventory_path()
    fresh = inventory_text()
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if current != fresh:
        diff = "".join(
            difflib.unified_diff(current.splitlines(True), fresh.splitlines(True), "checked in", "generated", n=2)
        )
        pytest.fail(
            f"{path} is stale; regenerate it with `holon-nb inventory` "
            f"(or `python -m holon_nb.cli inventory`) and commit it.\n{diff[:6000]}"
        )


def test_inventory_text_is_deterministic_and_upstream_shaped() -> None:
    text = inventory_text()
    assert text == inventory_text() and text.endswith("}\n")
    doc = json.loads(text)
    assert doc["version"] == _upstream()["version"]
    assert set(_upstream()["stability_policy"]) <= set(doc["stability_policy"])
    for entry in doc["tools"]:
        assert set(entry) == {
            "name",
            "family",
            "stability",
            "description",
            "freeform_grammar",
            "input_schema",
            "related_surfaces",
            "result_envelope",
        }
        assert entry["freeform_grammar"] is None and entry["stability"] != "hidden"
        assert entry["result_envelope"]["canonical"] == "ToolResultEnvelope"
        assert entry["result_envelope"]["error_result"] == "ToolError"
        assert entry["result_envelope"]["success_result_schema"] is None
        assert entry["result_envelope"]["model_rendering"] in ("canonical_json_envelope", "custom_text_receipt")
    for entry in doc["hidden_tools"]:
        assert entry["stability"] == "hidden"


def test_shared_tools_match_upstream_except_listed_differences() -> None:
    """Field names, types, required and enum values of every shared tool agree with upstream.

    Each intended difference is one line of docs/inventory-differences.md; a
    listed difference that disappeared fails too.
    """
    text = default_differences_path().read_text(encoding="utf-8")
    problems = compare_with_upstream(INVENTORY, _upstream(), text)
    assert not problems, "\n".join(problems)


def test_comparison_catches_drift() -> None:
    up = {
        "tools": [
            {
                "name": "T",
                "input_schema": {
                    "type": "object",
                    "required": ["a"],
                    "properties": {
                        "a": {"type": "string"},
                        "b": {"type": ["string", "null"], "enum": ["x", "y", None]},
                        "items": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"c": {"type": "integer"}}},
                        },
                    },
                },
            }
        ]
    }
    ours = {
        "tools": [
            {
                "name": "T",
                "input_schema": {
                    "type": "object",
                    "required": [],
                    "properties": {
                        "a": {"type": "integer"},
                        "b": {"type": ["string", "null"], "enum": ["x", None]},
                        "items": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"d": {"type": "integer"}}},
                        },
                    },
                },
            }
        ]
    }
    found = schema_differences("T", ours["tools"][0]["input_schema"], up["tools"][0]["input_schema"])
    assert set(found) == {
        ("T", "a", "type"),
        ("T", "a", "required"),
        ("T", "b", "enum"),
        ("T", "items[].c", "field"),
        ("T", "items[].d", "field"),
    }
    listed = "## Differences\n" + "".join(f"- `{t}` `{p}` {a}: on purpose\n" for t, p, a in found)
    assert compare_with_upstream(ours, up, listed) == []
    stale = listed + "- `T` `zzz` enum: gone\n"
    assert any("no longer differs" in p for p in compare_with_upstream(ours, up, stale))
    assert len(compare_with_upstream(ours, up, "")) == len(found)


def test_differences_file_is_well_formed() -> None:
    _, problems = parse_differences(default_differences_path().read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_descriptions_name_only_real_fields(entry: dict[str, Any]) -> None:
    """Every backticked name in a description exists (D8, closing upstream's description drift).

    The rule, for each span between backticks in the tool's description:

    - A span that is a lowercase snake_case identifier (``^[a-z][a-z0-9]*(_[a-z0-9]+)*$``,
      single words such as ``cmd`` included) names a field or a value. It must be
      1. a property name or string enum value anywhere in this tool's input schema
         (nested objects and array items included), or
      2. a result name: one of dispatch's ``RESULT_FIELDS`` (result fields callers
         mistake for inputs), or a property name or string enum value anywhere in
         upstream's ``success_result_schema`` for this tool (for an alias, its
         canonical tool), or
      3. an input field or enum value of another registered tool whose name the
         description mentions (ExecCommandBatch names ExecCommand's interactive
         fields to say a batch item cannot take them), or
      4. an error kind of the closed catalogue (``ERROR_KINDS``).
    - A span that is a CamelCase word must name a tool (ours or upstream's).
    - Every other span (JSON examples, shell commands, flags such as ``-lc``,
      escapes such as ``\\n``) is not a name and is not checked.
    """
    upstream = {t["name"]: t for t in _upstream()["tools"]}
    own = _vocabulary(entry["input_schema"])
    canonical = entry.get("alias_of") or entry["name"]
    result = set(RESULT_FIELDS)
    if canonical in upstream:
        result |= _vocabulary(upstream[canonical]["result_envelope"].get("success_result_schema"))
    mentioned: set[str] = set()
    for other in ENTRIES:
        if other["name"] != entry["name"] and re.search(rf"\b{other['name']}\b", entry["description"]):
            mentioned |= _vocabulary(other["input_schema"])
    tool_names = {e["name"] for e in ENTRIES} | set(upstream)
    unknown = []
    for span in re.findall(r"`([^`\n]+)`", entry["description"]):
        if SNAKE.match(span):
            if span not in own | result | mentioned | set(ERROR_KINDS):
                unknown.append(span)
        elif CAMEL.match(span) and span not in tool_names:
            unknown.append(span)
    assert not unknown, f"{entry['name']}'s description names {unknown}, which its schema and results lack"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_exported_schema_is_self_contained(entry: dict[str, Any]) -> None:
    schema = entry["input_schema"]
    assert schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf"} & set(schema), "provider lowering needs a plain object root"
    for node in _nodes(schema):
        assert "$ref" not in node and "$defs" not in node and "definitions" not in node
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, node


def test_description_rule_catches_a_missing_field() -> None:
    entry = dict(ENTRIES[0], description="Use `not_a_field_anywhere` and `cmd`.")
    with pytest.raises(AssertionError, match="not_a_field_anywhere"):
        test_descriptions_name_only_real_fields(entry)


def test_the_notebook_family_is_an_addition_beyond_the_contract() -> None:
    """Issue 28: the contract's tools stay as they were; the opt-in Notebook family is listed apart, with a note
    and each tool's gating, and never compared with upstream."""
    from holon_nb.tools._registry import REGISTRY

    assert len(ENTRIES) == 44 and all(e["family"] != "notebook" for e in ENTRIES)  # as before issue 28
    additions = INVENTORY["additions"]
    assert "Beyond the contract" in additions["note"] and "off by default" in additions["note"].lower()
    names = [e["name"] for e in additions["tools"]]
    assert names == [s.name for s in REGISTRY if s.family.value == "notebook"] and len(names) == 7
    assert {e["name"] for e in additions["tools"] if e["asks_approval"]} == {"RunCode", "EditNotebook", "ExecuteCell"}
    assert all(e["family"] == "notebook" and e["stability"] == "experimental" for e in additions["tools"])
