"""Every registered tool answers an integer longer than 4,300 digits with ``invalid_tool_input`` (issue 25 item 2(d)).

Python refuses to turn such an integer into decimal text (``sys.set_int_max_str_digits``), so
formatting a validation error or storing the arguments used to raise and came back as
``internal_error`` with a traceback. The integer arrives as a Python value in every
top-level field, nested in an array, as a JSON number in the arguments' text, and as a
string of digits at an integer position (which coercion would turn into an integer).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from holon_nb.runtime import Runtime
from holon_nb.tools import REGISTRY
from holon_nb.tools._schema import input_schema_view, slot_types

TOOLS = REGISTRY.names()
#: Python's default int-to-str limit; the guard refuses longer integers.
MAX_INT_DIGITS = 4300
DIGITS = "9" * 5000
HUGE = 10**5000 - 1  # 5,000 nines (int(DIGITS) itself is refused by Python)


def _fields(name: str) -> dict[str, Any]:
    spec = REGISTRY.get(name)
    assert spec is not None
    return input_schema_view(spec.input_model).get("properties") or {}


def _inputs(name: str) -> list[tuple[str, Any]]:
    fields = list(_fields(name)) or ["x"]
    inputs: list[tuple[str, Any]] = [(f"value in `{f}`", {f: HUGE}) for f in fields]
    inputs.append(("value in a list", {fields[0]: [1, {"n": HUGE}]}))
    inputs.append(("JSON text", "{" + ", ".join(f'"{f}": {DIGITS}' for f in fields) + "}"))
    inputs.append(("negative JSON text", '{"' + fields[0] + '": -' + DIGITS + "}"))
    return inputs


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Runtime:
    base = tmp_path_factory.mktemp("huge-int")
    (base / "W").mkdir()
    rt = Runtime(home=base / "home", workspace=base / "W")
    yield rt
    rt.close()


def _check(runtime: Runtime, name: str, label: str, args: Any, *, digits_named: bool = True) -> None:
    result = runtime.call(name, args)
    env = result.envelope
    assert env["status"] == "error", (label, env)
    error = env["error"]
    assert error["kind"] == "invalid_tool_input", (name, label, error)
    text = json.dumps(env)
    assert "set_int_max_str_digits" not in text, (name, label, text[:400])
    if digits_named:
        assert f"more than {MAX_INT_DIGITS} digits" in error["details"]["parse_error"], (name, label, error)
    result.receipt.encode("utf-8")
    json.dumps(result._repr_mimebundle_(), ensure_ascii=False)
    stored = runtime.store.execution(result.execution_id)
    assert stored is not None and stored["status"] == "error", (name, label)


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_refuses_a_huge_integer(runtime: Runtime, name: str) -> None:
    for label, args in _inputs(name):
        _check(runtime, name, label, args)


@pytest.mark.parametrize("name", TOOLS)
def test_a_string_of_too_many_digits_at_an_integer_position_is_refused(runtime: Runtime, name: str) -> None:
    numeric = [f for f, node in _fields(name).items() if "string" not in slot_types(node)]
    for field in numeric:
        _check(runtime, name, f"digits in `{field}`", {field: DIGITS}, digits_named=False)


def test_an_integer_within_the_limit_is_judged_by_the_schema(runtime: Runtime) -> None:
    """4,300 digits is not refused by the guard; the schema's own bound refuses it, cleanly."""
    env = runtime.call("ExecCommand", {"cmd": "true", "yield_time_ms": int("9" * MAX_INT_DIGITS)}).envelope
    assert env["error"]["kind"] == "invalid_tool_input"
    assert "digits" not in env["error"]["details"]["parse_error"]
    assert "less than or equal to" in env["error"]["details"]["parse_error"]
