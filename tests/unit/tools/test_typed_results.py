"""Typed results (issue 27 item 3): dispatch validates success payloads against their tool's output model (every
one in strict mode, a sample of each tool's outside it).

A payload that does not fit is a programming error. In strict mode (the test suite) the caller gets an
``internal_error`` envelope naming the result model and the field, never a traceback, and the drift fails the test
(``tests/conftest.py``'s ``_no_result_drift``), and a payload whose JSON form validation would change counts too.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from _support import err, ok
from pydantic import BaseModel, ConfigDict

from holon_nb.render import dumps_envelope
from holon_nb.runtime import Runtime
from holon_nb.tools import REGISTRY, Family, ToolSpec
from holon_nb.tools.builtin.results._base import ResultModel, TaskHandle
from holon_nb.tools.builtin.results._commands import ExecCommandResult
from holon_nb.tools.builtin.results._tasks import TaskInputResult

dispatch_module = importlib.import_module("holon_nb.tools._dispatch")


class _NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    shape: str = "fits"


class ProbeResult(ResultModel):
    """The probe's result: a count, an optional note."""

    count: int
    note: str | None = None


_PAYLOADS = {
    "fits": {"count": 2, "summary_text": "two"},
    "unknown_field": {"count": 2, "colour": "red"},
    "missing_field": {"note": "no count"},
    "wrong_type": {"count": "2"},
    "bool_for_int": {"count": True},
    "model": ProbeResult(count=3),
}


async def _probe(args: _NoInput, ctx: object) -> object:
    return _PAYLOADS[args.shape]


PROBE = ToolSpec(
    name="Probe",
    family=Family.CORE_AGENT,
    input_model=_NoInput,
    handler=_probe,
    result_name="ProbeResult",
    output_model=ProbeResult,
    description_name="GetAgent",
)


@pytest.fixture
def probe_rt(tmp_path: Path) -> Runtime:
    with Runtime(home=tmp_path / "h", workspace=tmp_path, registry=REGISTRY.with_specs(PROBE)) as rt:
        yield rt


def test_a_fitting_payload_is_the_envelope_result_unchanged(probe_rt: Runtime) -> None:
    r = probe_rt.call("Probe", {})
    assert ok(r)["count"] == 2 and r.envelope["summary_text"] == "two"
    assert (
        dumps_envelope(r.envelope)
        == '{"tool_name":"Probe","status":"success","summary_text":"two","result":{"count":2}}'
    )
    assert r.typed == ProbeResult(count=2) and r.typed.note is None


def test_a_handler_may_return_its_model_instance(probe_rt: Runtime) -> None:
    r = probe_rt.call("Probe", {"shape": "model"})
    assert r.envelope["result"] == {"count": 3} and "summary_text" not in r.envelope


@pytest.mark.parametrize(
    ("shape", "field"),
    [("unknown_field", "colour"), ("missing_field", "count"), ("wrong_type", "count"), ("bool_for_int", "count")],
)
def test_a_drifting_payload_is_an_internal_error_naming_the_field(probe_rt: Runtime, shape: str, field: str) -> None:
    r = probe_rt.call("Probe", {"shape": shape})
    drifts, dispatch_module.RESULT_DRIFTS[:] = list(dispatch_module.RESULT_DRIFTS), []  # expected here
    e = err(r, "internal_error")
    assert e["details"]["exception_type"] == "ResultDrift"
    assert e["details"]["result_name"] == "ProbeResult" and e["details"]["result_field"] == field
    assert "Traceback" not in r.receipt and "ProbeResult" in r.receipt
    assert len(drifts) == 1 and drifts[0][0] == "Probe" and f"`{field}`" in drifts[0][1]
    assert r.typed is None


def test_outside_strict_mode_a_drift_is_logged_and_the_result_kept(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A user's call whose result drifted still returns what it did (its effects happened); the log says."""
    monkeypatch.setattr(dispatch_module, "STRICT_RESULTS", False)
    monkeypatch.setattr(dispatch_module, "_RESULTS_SEEN", {})
    payload = {"count": "three"}  # a str where the model declares an int
    with caplog.at_level("ERROR"):
        result = dispatch_module.typed_payload(PROBE, payload)
    assert result is payload
    assert any("does not fit ProbeResult" in r.getMessage() and "count" in r.getMessage() for r in caplog.records)


def test_outside_strict_mode_a_sample_of_each_tools_results_is_validated(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 27 item 7: a tool's first CHECK_FIRST results, then one in CHECK_EVERY; the rest pass as they came."""
    monkeypatch.setattr(dispatch_module, "STRICT_RESULTS", False)
    monkeypatch.setattr(dispatch_module, "_RESULTS_SEEN", {})
    first, every = dispatch_module.CHECK_FIRST, dispatch_module.CHECK_EVERY
    checked = []
    with caplog.at_level("ERROR"):
        for n in range(1, 2 * every + 1):
            caplog.clear()
            payload = {"count": "three"}
            assert dispatch_module.typed_payload(PROBE, payload) is payload
            if any("does not fit ProbeResult" in r.getMessage() for r in caplog.records):
                checked.append(n)
    assert checked == [*range(1, first + 1), every, 2 * every]


def test_strict_mode_is_what_the_suite_runs_under() -> None:
    assert dispatch_module.STRICT_RESULTS is True


def test_exec_command_result_is_typed(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "printf hi"})
    typed = r.typed
    assert isinstance(typed, ExecCommandResult)
    assert typed.disposition == "completed" and typed.exit_status == 0 and typed.stdout_preview == "hi"
    assert typed.task_handle is None and "task_handle" not in r.envelope["result"]  # absent stays absent
    assert typed.model_dump(mode="json", exclude_unset=True) == r.envelope["result"]


def test_an_error_has_no_typed_result(rt: Runtime) -> None:
    r = rt.call("TaskStatus", {"task_id": "task_000000000000000"})
    err(r, "task_not_found")
    assert r.typed is None


def test_optional_none_stays_explicit() -> None:
    """A field the handler set to None stays in the JSON form (``exclude_unset``, not ``exclude_none``)."""
    spec = REGISTRY.get("TaskInput")
    assert spec is not None and spec.output_model is TaskInputResult
    payload = {"task": {}, "accepted_input": True, "input_target": None, "bytes_written": 0, "summary_text": "s"}
    assert dispatch_module.typed_payload(spec, payload) == payload


def test_a_task_handle_is_typed(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "echo hi", "yield_time_ms": 0})
    typed = r.typed
    assert isinstance(typed, ExecCommandResult) and typed.disposition == "promoted_to_task"
    assert isinstance(typed.task_handle, TaskHandle) and typed.task_handle.task_kind == "command_task"
    assert typed.task_handle.task_id == r.envelope["result"]["task_handle"]["task_id"]
    assert typed.exit_status is None and "exit_status" not in r.envelope["result"]
