"""Tool-schema lowering, the validator and rejection naming (turn-loop spec §3, cases 31–33)."""

from __future__ import annotations

import copy
import json
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from holon_nb.providers._schema_lowering import (
    SchemaDefinitionError,
    ToolSchemaInvalid,
    denull_strict_arguments,
    lower_for_provider,
    lower_tool_schema,
    rejected_tool_name,
    source_tool_schema,
    validate_lowered,
    wire_strict_flag,
)

# §3.4(a): the seed WaitFor schema (exact).
SEED_WAIT_FOR = {
    "additionalProperties": False,
    "required": ["reason", "wake", "delivery"],
    "type": "object",
    "properties": {
        "delivery": {"enum": ["final", "silent"], "type": "string"},
        "reason": {"type": "string"},
        "recheck_after_ms": {"default": None, "format": "uint64", "minimum": 0.0, "type": ["integer", "null"]},
        "resource": {"default": None, "type": ["string", "null"]},
        "work_item_id": {"default": None, "type": ["string", "null"]},
        "wake": {"enum": ["operator_input", "task_result", "external", "timer", "system"], "type": "string"},
    },
}

# §3.4(b) source.
NESTED = {
    "type": "object",
    "required": ["payload"],
    "properties": {
        "mode": {"type": "string", "enum": ["a", "b"]},
        "payload": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "tags": {
                    "type": "array",
                    "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}},
                },
            },
        },
    },
}

# §3.4(c) source (upstream SpawnAgent's root allOf of if/then rules).
SPAWN = {
    "type": "object",
    "properties": {"agent_id": {"type": "string"}, "preset": {"type": "string"}},
    "required": [],
    "allOf": [{"if": {"properties": {"preset": {"const": "x"}}}, "then": {"required": ["agent_id"]}}],
}


def _dump(schema: dict) -> str:
    return json.dumps(schema, sort_keys=True)


# ------------------------------------------------------------------ case 31


def test_case_31_strict_lowering_of_seed_wait_for_is_exactly_3_4_a():
    source = copy.deepcopy(SEED_WAIT_FOR)
    strict = lower_tool_schema(source, "strict")
    expected = {
        **SEED_WAIT_FOR,
        "required": ["delivery", "reason", "recheck_after_ms", "resource", "wake", "work_item_id"],
    }
    assert strict == expected
    assert strict["required"] == expected["required"]  # order too: lexicographic
    assert list(strict["properties"]) == strict["required"]
    assert validate_lowered(strict, "strict") == []
    assert source == SEED_WAIT_FOR  # the input is not modified
    # the source is already relaxed output: nothing to change
    assert lower_tool_schema(SEED_WAIT_FOR) == SEED_WAIT_FOR
    assert validate_lowered(SEED_WAIT_FOR, "relaxed") == []
    assert _dump(lower_tool_schema(SEED_WAIT_FOR, "relaxed")) == _dump(SEED_WAIT_FOR)


# ------------------------------------------------------------------ case 32


def test_case_32_relaxed_lowering_of_3_4_b_adds_only_additional_properties():
    relaxed = lower_tool_schema(NESTED, "relaxed")
    expected = copy.deepcopy(NESTED)
    expected["additionalProperties"] = False
    expected["properties"]["payload"]["additionalProperties"] = False
    expected["properties"]["payload"]["properties"]["tags"]["items"]["additionalProperties"] = False
    assert relaxed == expected
    assert validate_lowered(relaxed, "relaxed") == []
    assert validate_lowered(relaxed, "strict") != []  # relaxed is not strict


def test_case_32_strict_lowering_of_3_4_b_is_exact():
    strict = lower_tool_schema(NESTED, "strict")
    assert strict == {
        "additionalProperties": False,
        "required": ["mode", "payload"],
        "type": "object",
        "properties": {
            "mode": {"enum": ["a", "b", None], "type": ["string", "null"]},
            "payload": {
                "additionalProperties": False,
                "required": ["name", "tags"],
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "tags": {
                        "type": ["array", "null"],
                        "items": {
                            "additionalProperties": False,
                            "required": ["k"],
                            "type": "object",
                            "properties": {"k": {"type": "string"}},
                        },
                    },
                },
            },
        },
    }
    assert validate_lowered(strict, "strict") == []


def test_case_32_strict_lowering_of_3_4_c_drops_root_allof():
    strict = lower_tool_schema(SPAWN, "strict")
    assert strict == {
        "type": "object",
        "additionalProperties": False,
        "required": ["agent_id", "preset"],
        "properties": {"agent_id": {"type": ["string", "null"]}, "preset": {"type": ["string", "null"]}},
    }
    relaxed = lower_tool_schema(SPAWN, "relaxed")
    assert relaxed == {
        "type": "object",
        "additionalProperties": False,
        "required": [],
        "properties": {"agent_id": {"type": "string"}, "preset": {"type": "string"}},
    }
    for lowered in (strict, relaxed):
        assert not {"allOf", "anyOf", "oneOf", "enum", "not"} & set(lowered)
    assert "allOf" in SPAWN  # Anthropic sends the source unchanged (§3.5)


def test_root_combinators_and_enum_are_all_dropped():
    source = {
        "type": "object",
        "properties": {},
        "anyOf": [{"required": []}],
        "oneOf": [{}],
        "not": {},
        "enum": [{}],
        "allOf": [{}],
    }
    for contract in ("relaxed", "strict"):
        lowered = lower_tool_schema(source, contract)
        assert lowered == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
        assert validate_lowered(lowered, contract) == []


# ------------------------------------------------------------------ case 33 and the validator


def test_case_33_strict_validator_requires_all_properties():
    errors = validate_lowered(
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": False},
        "strict",
    )
    assert len(errors) == 1
    assert errors[0].startswith("$: strict required must list all properties")
    assert (
        validate_lowered(
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": False},
            "relaxed",
        )
        == []
    )


@pytest.mark.parametrize(
    "schema, contract, fragment",
    [
        ({"type": "string"}, "relaxed", "$: the root type must be object"),
        (True, "relaxed", "$: a tool schema must be a JSON object, got bool"),
        (
            {"type": "object", "properties": {}, "additionalProperties": False, "oneOf": []},
            "relaxed",
            "$: the root must not contain oneOf",
        ),
        ({"type": "object", "additionalProperties": False}, "relaxed", "$: an object schema must have properties"),
        ({"type": "object", "properties": {}}, "relaxed", "$: an object schema must set additionalProperties to false"),
        (
            {"type": "object", "properties": {}, "additionalProperties": True},
            "relaxed",
            "$: an object schema must set additionalProperties to false",
        ),
        (
            {"type": "object", "properties": {}, "required": ["x"], "additionalProperties": False},
            "relaxed",
            "$: required entry `x` is missing from properties",
        ),
        (
            {"type": "object", "properties": {}, "required": [1], "additionalProperties": False},
            "relaxed",
            "$: required entries must be strings",
        ),
        (
            {"type": "object", "properties": {}, "additionalProperties": False},
            "strict",
            "$: a strict object schema must have a required array",
        ),
        (
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {"a": {"type": "array"}},
            },
            "relaxed",
            "$.properties.a: an array schema must define items",
        ),
        (
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {"a": {"type": "array", "items": {"type": "object", "properties": {}}}},
            },
            "relaxed",
            "$.properties.a.items: an object schema must set additionalProperties to false",
        ),
        (
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {
                    "a": {
                        "anyOf": [
                            {"type": "string"},
                            {"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": False},
                        ]
                    }
                },
            },
            "strict",
            "$.properties.a.anyOf[1]: a strict object schema must have a required array",
        ),
        (
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {"a": {"oneOf": [{"type": "object"}]}},
            },
            "relaxed",
            "$.properties.a.oneOf[0]: an object schema must have",
        ),
        (
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {"a": {"$ref": "#/$defs/A"}},
                "$defs": {"A": {"type": "string"}},
            },
            "relaxed",
            "$.properties.a: $ref is not allowed",
        ),
    ],
)
def test_validator_errors_carry_json_paths(schema, contract, fragment):
    errors = validate_lowered(schema, contract)
    assert any(e.startswith(fragment) for e in errors), errors


def test_strict_validator_wants_property_key_order():
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["b", "a"],
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    }
    assert validate_lowered(schema, "strict")[0].startswith("$: strict required must list all properties")
    schema["required"] = ["a", "b"]
    assert validate_lowered(schema, "strict") == []


def test_unknown_contract_is_refused():
    with pytest.raises(ValueError, match="relaxed' or 'strict"):
        lower_tool_schema(SEED_WAIT_FOR, "loose")
    with pytest.raises(ValueError):
        validate_lowered(SEED_WAIT_FOR, "STRICT")
    assert wire_strict_flag("relaxed") is False and wire_strict_flag("strict") is True


# ------------------------------------------------------------------ relaxed details (§3.2)


def test_relaxed_keeps_an_explicit_additional_properties_and_closes_nested_objects():
    source = {
        "type": "object",
        "properties": {
            "meta": {"type": "object", "additionalProperties": {"type": "string"}},
            "opt": {"anyOf": [{"type": "object"}, {"type": "string"}]},
            "list": {"type": "array", "items": {"type": ["object", "null"]}},
        },
    }
    relaxed = lower_tool_schema(source)
    assert relaxed["properties"]["meta"]["additionalProperties"] == {"type": "string"}  # explicit value kept
    assert relaxed["properties"]["opt"]["anyOf"][0] == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
    assert relaxed["properties"]["list"]["items"]["additionalProperties"] is False
    assert relaxed["properties"]["list"]["items"]["properties"] == {}
    # the validator reports the one node left open
    assert validate_lowered(relaxed, "relaxed") == [
        "$.properties.meta: an object schema must set additionalProperties to false"
    ]
    # strict forces it
    assert lower_tool_schema(source, "strict")["properties"]["meta"]["additionalProperties"] is False


def test_strict_enum_without_type_gains_null_but_no_type():
    strict = lower_tool_schema({"type": "object", "properties": {"e": {"enum": ["x", "y"]}}}, "strict")
    assert strict["properties"]["e"] == {"enum": ["x", "y", None]}  # ⚑ not type ["null"] as upstream


def test_strict_notes_the_default_where_the_source_refused_null():
    source = {
        "type": "object",
        "required": [],
        "properties": {
            "flag": {"type": "boolean", "default": True, "description": "Do it."},
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "note": {"type": ["string", "null"], "default": None, "description": "Free text."},
        },
    }
    props = lower_tool_schema(source, "strict")["properties"]
    assert props["flag"] == {
        "type": ["boolean", "null"],
        "default": True,
        "description": "Do it. null: the default (true).",
    }
    assert props["mode"]["description"] == 'null: the default ("a").'
    assert props["note"] == source["properties"]["note"]  # null already meant the default
    assert lower_tool_schema(source, "relaxed")["properties"] == source["properties"]


def test_strict_never_makes_array_items_or_variants_nullable():
    source = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "array", "items": {"type": "string"}},
            "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
    }
    strict = lower_tool_schema(source, "strict")
    assert strict["properties"]["a"] == {"type": "array", "items": {"type": "string"}}
    assert strict["properties"]["b"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert strict["required"] == ["a", "b"]


# ------------------------------------------------------------------ §3.1 source rules on raw pydantic output


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    k: str
    title: str | None = None  # a *field* named title survives title-stripping


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", title="ArgsTitle")
    name: str = Field(title="Name")
    limit: int | None = Field(default=None, ge=0)
    mode: Literal["a", "b"] | None = None
    inner: _Inner | None = None
    items: list[_Inner] = Field(default_factory=list)
    one: Literal["only"] = "only"


def test_source_rules_post_process_pydantic_output():
    raw = _Args.model_json_schema()
    assert "$defs" in raw and "anyOf" in raw["properties"]["limit"]  # what pydantic emits
    source = source_tool_schema(raw)
    text = _dump(source)
    assert "$ref" not in text and "$defs" not in text and '"title": "' not in text
    assert source["additionalProperties"] is False and source["required"] == ["name"]
    props = source["properties"]
    assert props["limit"] == {"type": ["integer", "null"], "minimum": 0.0, "default": None}
    assert isinstance(props["limit"]["minimum"], float)
    assert props["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None], "default": None}
    inner = props["inner"]
    assert inner["type"] == ["object", "null"] and set(inner["properties"]) == {"k", "title"}
    assert inner["properties"]["title"] == {"type": ["string", "null"], "default": None}
    assert props["items"]["items"]["required"] == ["k"]
    assert props["one"]["enum"] == ["only"]
    assert source_tool_schema(source) == source  # idempotent
    for contract in ("relaxed", "strict"):
        assert validate_lowered(lower_tool_schema(raw, contract), contract) == []


def test_recursive_ref_is_a_definition_error():
    class Node(BaseModel):
        model_config = ConfigDict(extra="forbid")
        children: list[Node] = []

    with pytest.raises(SchemaDefinitionError, match="recursive") as info:
        source_tool_schema(Node.model_json_schema())
    assert info.value.ref.endswith("Node")
    with pytest.raises(ToolSchemaInvalid) as info2:
        lower_for_provider("Tree", Node.model_json_schema(), "strict")
    assert info2.value.tool_name == "Tree"


def test_unknown_and_remote_refs_are_definition_errors():
    with pytest.raises(SchemaDefinitionError, match="names no definition"):
        source_tool_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}})
    with pytest.raises(SchemaDefinitionError, match="only local"):
        source_tool_schema({"type": "object", "properties": {"a": {"$ref": "https://x/s.json"}}})
    with pytest.raises(TypeError):
        source_tool_schema(["not", "a", "schema"])  # type: ignore[arg-type]


def test_preflight_names_tool_and_path():
    bad = {"type": "object", "properties": {"a": {"type": "array"}}}
    with pytest.raises(ToolSchemaInvalid) as info:
        lower_for_provider("Broken", bad, "strict")
    assert info.value.tool_name == "Broken" and info.value.contract == "strict"
    assert info.value.errors == ["$.properties.a: an array schema must define items"]
    assert "Broken" in str(info.value) and "$.properties.a" in str(info.value)
    assert lower_for_provider("WaitFor", SEED_WAIT_FOR, "relaxed") == SEED_WAIT_FOR


# ------------------------------------------------------------------ strict arguments back to the source


def test_denull_drops_nulls_only_where_the_source_refuses_them():
    source = {
        "type": "object",
        "required": ["name"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "flag": {"type": "boolean", "default": False},
            "note": {"type": ["string", "null"]},
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["k"],
                    "properties": {"k": {"type": "string"}, "on": {"type": "boolean"}},
                },
            },
        },
    }
    sent = {"name": "n", "flag": None, "note": None, "rows": [{"k": "a", "on": None}, {"k": "b", "on": True}]}
    assert denull_strict_arguments(sent, source) == {
        "name": "n",
        "note": None,
        "rows": [{"k": "a"}, {"k": "b", "on": True}],
    }
    assert sent["flag"] is None  # input untouched
    # a required field stays null (the tool reports it), non-dicts pass through
    assert denull_strict_arguments({"name": None}, source) == {"name": None}
    assert denull_strict_arguments({"_raw": "{"}, source) == {"_raw": "{"}
    assert denull_strict_arguments("text", source) == "text"


# ------------------------------------------------------------------ §3.6 naming the rejected tool

NAMES = ["ExecCommand", "GetAgent", "WaitFor", "AgentGet"]


@pytest.mark.parametrize(
    "message, expected",
    [
        ("Invalid schema for function 'WaitFor': In context=(), 'required' is required", "WaitFor"),
        ("Invalid 'tools[1].function.parameters': schema must be a JSON Schema of 'type: \"object\"'", "GetAgent"),
        ("tools[9] is out of range and nothing else", None),
        ("function GetAgentX is unknown; ExecCommandBatch too", None),  # exact tokens only
        ("tools.2.custom.input_schema: WaitFor is broken", "WaitFor"),
        ("Invalid schema for function 'AgentGet' (tools[0])", "AgentGet"),  # the earliest hit wins
        ("", None),
        (None, None),
    ],
)
def test_rejected_tool_name(message, expected):
    assert rejected_tool_name(message, NAMES) == expected
