"""Hostile inputs: every registered tool, fed generated arguments, returns an envelope — never an exception.

Inputs come from each tool's published schema (hypothesis-jsonschema) and from
outside it: wrong types, unknown fields, result fields, huge strings,
non-UTF-8 bytes, lone surrogates and NUL characters. Shell text, shells and
wait windows are replaced by a few harmless values so no generated input runs
an arbitrary command or waits for long; everything else is as generated.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from holon_nb.runtime import Runtime
from holon_nb.tools import REGISTRY, input_schema
from holon_nb.tools._dispatch import RESULT_FIELDS

SAFE_CMDS = ["true", "echo x", "printf '\\377'", "", "exit 3", "echo \0nul", "echo \ud800", "sleep 0.05"]
SAFE_SHELLS = [None, "sh", "bash", "/nonexistent/sh", ""]
TOOLS = REGISTRY.names()
HOSTILE = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Runtime:
    base = tmp_path_factory.mktemp("hostile")
    (base / "W").mkdir()
    rt = Runtime(home=base / "home", workspace=base / "W")
    yield rt
    rt.close()


def _tame(value: Any, data: st.DataObject) -> Any:
    """Replace shell text, shells and waits with harmless values (recursively, so batch items too)."""
    if isinstance(value, dict):
        out = {k: _tame(v, data) for k, v in value.items()}
        if isinstance(out.get("cmd"), str):
            out["cmd"] = data.draw(st.sampled_from(SAFE_CMDS))
        if isinstance(out.get("shell"), str):
            out["shell"] = data.draw(st.sampled_from(SAFE_SHELLS))
        for key in ("yield_time_ms", "timeout_ms"):
            if isinstance(out.get(key), int) and not isinstance(out.get(key), bool):
                out[key] = out[key] % 400
        if isinstance(out.get("items"), list):
            out["items"] = out["items"][:3] + out["items"][12:14]
        return out
    if isinstance(value, list):
        return [_tame(v, data) for v in value]
    return value


def _check(result: Any, name: str) -> None:
    env = result.envelope
    assert env["tool_name"] == name
    assert env["status"] in ("success", "error")
    if env["status"] == "error":
        assert "result" not in env and env["error"]["kind"]
        assert env["error"]["kind"] != "internal_error", env  # bad input is a typed error, not a handler bug
        json.loads(result.full_receipt)
    else:
        assert "error" not in env
    assert isinstance(result.receipt, str)
    json.dumps(result.display_envelope)


def _stop_all(rt: Runtime) -> None:
    for tid in rt.active_tasks():
        rt.call("TaskStop", {"task_id": tid})


@pytest.mark.parametrize("name", TOOLS)
def test_schema_valid_inputs(runtime: Runtime, name: str) -> None:
    schema = input_schema(REGISTRY.get(name).input_model)

    @HOSTILE
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        args = _tame(data.draw(from_schema(schema)), data)
        _check(runtime.call(name, args), name)

    run()
    _stop_all(runtime)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4),
    max_leaves=12,
)
_keys = st.sampled_from(
    sorted(
        RESULT_FIELDS
        | {
            "cmd",
            "task_id",
            "items",
            "input",
            "limit",
            "block",
            "_raw",
            "tty",
            "accepts_input",
            "yield_time_ms",
            "command",
            "patch",
        }
    )
)


@pytest.mark.parametrize("name", TOOLS)
def test_outside_the_schema(runtime: Runtime, name: str) -> None:
    @HOSTILE
    @given(data=st.data(), shape=st.sampled_from(["json", "dict", "text", "bytes", "huge", "stringified"]))
    def run(data: st.DataObject, shape: str) -> None:
        if shape == "json":
            args: Any = data.draw(_json)
        elif shape == "dict":
            args = _tame(data.draw(st.dictionaries(_keys | st.text(max_size=8), _json, max_size=5)), data)
        elif shape == "text":
            args = data.draw(st.text(max_size=200))
        elif shape == "bytes":
            args = data.draw(st.binary(max_size=200)) + b"\xff\xfe"
        elif shape == "huge":
            args = {"cmd": "true", "task_id": "t" * 2_000_000, "input": "\ud800" * 10}
            _check(runtime.call(name, {"cmd": "true #" + "a" * 1_000_000}), name)  # redaction stays linear
        else:
            args = json.dumps(_tame(data.draw(st.dictionaries(_keys, _json, max_size=3)), data))
        _check(runtime.call(name, args), name)

    run()
    _stop_all(runtime)
