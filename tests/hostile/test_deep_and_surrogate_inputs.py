"""Every registered tool answers deeply nested and lone-surrogate input with ``invalid_tool_input`` (issue 9 item 6).

Each input arrives both as a Python value and as JSON text (a magic's and a model's
form). Nothing may raise (``RecursionError``, ``UnicodeEncodeError``), and the
displayed receipt must encode as UTF-8.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from holon_nb.runtime import Runtime
from holon_nb.tools import REGISTRY
from holon_nb.tools._coerce import MAX_INPUT_DEPTH, input_problem

TOOLS = REGISTRY.names()


def _nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    cur = root
    for _ in range(depth):
        cur["n"] = {}
        cur = cur["n"]
    return root


DEEP_TEXT = '{"a": ' + "[" * 1000 + "]" * 1000 + "}"
INPUTS: list[tuple[str, Any]] = [
    ("nested dict", {"cmd": "echo", "task_id": "t", **_nested(1000)}),
    ("nested list", {"items": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]] * 1 + [_nested(2000)]}),
    ("nested JSON text", DEEP_TEXT),
    ("nested JSON text past the decoder", "[" * 100_000 + "]" * 100_000),
    ("surrogate value", {"cmd": "echo \ud800", "task_id": "\ud800", "query": "\udfff", "patch": "\ud800"}),
    ("surrogate JSON text", '{"cmd": "echo \\ud800", "task_id": "\\ud800", "query": "\\udc00"}'),
    ("surrogate key", {"\ud800": 1}),
    ("surrogate in a list", {"items": ["ok", "\udcff"]}),
]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Runtime:
    base = tmp_path_factory.mktemp("deep")
    (base / "W").mkdir()
    rt = Runtime(home=base / "home", workspace=base / "W")
    yield rt
    rt.close()


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_refuses_nested_and_surrogate_input(runtime: Runtime, name: str) -> None:
    for label, args in INPUTS:
        result = runtime.call(name, args)
        env = result.envelope
        assert env["status"] == "error", (label, env)
        assert env["error"]["kind"] == "invalid_tool_input", (label, env["error"])
        bundle = result._repr_mimebundle_()
        json.dumps(bundle, ensure_ascii=False).encode("utf-8")  # what the kernel sends: must not raise
        result.receipt.encode("utf-8")
        stored = runtime.store.execution(result.execution_id)
        assert stored is not None and stored["status"] == "error"


def test_the_limit_is_a_depth_not_a_size() -> None:
    assert input_problem({"a": [{"b": "x" * 1_000_000}] * 1000}) is None
    assert input_problem(_nested(MAX_INPUT_DEPTH - 1)) is None
    problem = input_problem(_nested(MAX_INPUT_DEPTH))
    assert problem is not None and f"deeper than {MAX_INPUT_DEPTH}" in problem[0] and problem[1] == "n"
    assert input_problem({"ok": "surrogate pair \U0001f600 is fine"}) is None


def test_memory_search_still_indexes_after_refused_inputs(runtime: Runtime) -> None:
    """Refused inputs are recorded; indexing their (unparseable) arguments never breaks later searches."""
    runtime.call("ExecCommand", DEEP_TEXT)
    result = runtime.call("MemorySearch", {"query": "ExecCommand"})
    assert result.envelope["status"] == "success", result.envelope
