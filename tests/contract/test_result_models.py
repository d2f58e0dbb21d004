"""Every registered tool declares a typed result (issue 27 item 3): ``ToolSpec.output_model``.

The model is named by the tool's ``result_name`` (the inventory's ``success_result``), is strict (unknown keys
and other JSON types are refused), never types a number ``float`` alone (validation would turn ``2`` into
``2.0`` and change the receipt), and its optional fields default to None (absent from the JSON form unless the
handler sets them). The inventory publishes no result schema (``success_result_schema`` is null, as upstream's).
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from holon_nb.tools._registry import REGISTRY
from holon_nb.tools.builtin.results._base import ResultModel

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = json.loads((ROOT / "docs" / "model-tool-schema-inventory.json").read_text(encoding="utf-8"))
ENTRIES = {e["name"]: e for e in INVENTORY["tools"] + INVENTORY["hidden_tools"] + INVENTORY["additions"]["tools"]}
SPECS = list(REGISTRY)


def test_every_tool_is_covered() -> None:
    # the contract's 41 model-facing tools and 3 hidden aliases, and the 7 opt-in Notebook tools (issue 28)
    assert len(SPECS) == len(ENTRIES) == 44 + 7
    assert {s.name for s in SPECS} == set(ENTRIES)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_output_model_is_named_by_result_name(spec: Any) -> None:
    model = spec.output_model
    assert isinstance(model, type) and issubclass(model, ResultModel), spec.name
    assert model.__name__ == spec.result_name == ENTRIES[spec.name]["result_envelope"]["success_result"]
    assert model.model_config.get("extra") == "forbid" and model.model_config.get("strict") is True
    assert model.__module__.startswith("holon_nb.tools.builtin.results."), model.__module__
    assert model.__doc__ and model.__doc__.strip(), f"{model.__name__} says what it holds"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_output_model_schema_is_consistent(spec: Any) -> None:
    """Its JSON schema is an object schema with no extra keys and the inventory publishes none for it."""
    schema = spec.output_model.model_json_schema()
    assert schema["type"] == "object" and schema.get("additionalProperties") is False
    assert "summary_text" not in schema["properties"], "summary_text is lifted into the envelope, not the result"
    assert ENTRIES[spec.name]["result_envelope"]["success_result_schema"] is None


def _floats(annotation: Any) -> bool:
    return annotation is float or any(_floats(a) for a in typing.get_args(annotation))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_fields_keep_json_as_given(spec: Any) -> None:
    for name, field in spec.output_model.model_fields.items():
        annotation = field.annotation
        if _floats(annotation):
            assert int in typing.get_args(annotation), f"{spec.result_name}.{name}: float without int"
        if not field.is_required():
            assert field.default is None, f"{spec.result_name}.{name}: optional fields default to None"


def test_aliases_share_their_tools_model() -> None:
    for spec in SPECS:
        if spec.alias_of:
            target = REGISTRY.get(spec.alias_of)
            assert target is not None and target.output_model is spec.output_model
