"""Envelope and input validation: AC-01…AC-08, AC-56, §2.2 coercion (D4), §3.4 error receipts."""

from __future__ import annotations

import json

import anyio
import pytest
from _support import err, ok
from pydantic import BaseModel, ConfigDict

from holon_nb.render import render_error_receipt
from holon_nb.runtime import Runtime
from holon_nb.tools import REGISTRY, CallContext, Family, ToolSpec, dispatch
from holon_nb.tools._envelope import ToolError, error_envelope
from holon_nb.tools.builtin.results._base import ResultModel


def test_ac01_command_instead_of_cmd(rt: Runtime) -> None:
    e = err(rt.call("ExecCommand", {"command": "git status"}), "invalid_tool_input")
    pe = e["details"]["parse_error"]
    assert "command" in pe and "cmd" in pe


@pytest.mark.parametrize(
    "field",
    [
        "status",
        "task_handle",
        "disposition",
        "exit_status",
        "output_preview",
        "continue_on_result",
        "initial_output_preview",
        "stdout_preview",
        "truncated",
        "summary_text",
        "background",
        "sandbox_permissions",
    ],
)
def test_ac02_result_fields_rejected_without_spawn(rt: Runtime, workspace, field: str) -> None:
    marker = workspace / "spawned"
    r = rt.call("ExecCommand", {"cmd": f"touch {marker}", field: "x"})
    e = err(r, "invalid_tool_input")
    assert field in e["details"]["parse_error"]
    assert not marker.exists()


def test_ac02_result_field_hint_says_result_field(rt: Runtime) -> None:
    e = err(rt.call("ExecCommand", {"cmd": "echo ok", "status": "running"}), "invalid_tool_input")
    assert "result field" in e["recovery_hint"]


def test_ac03_batch_fields_invalid_for_single_command(rt: Runtime) -> None:
    err(rt.call("ExecCommand", {"cmd": "ls", "items": [{"cmd": "ls"}]}), "invalid_tool_input")
    err(rt.call("ExecCommand", {"cmd": "ls", "stop_on_error": True}), "invalid_tool_input")


def test_ac04_scalar_coercion(rt: Runtime) -> None:
    res = ok(rt.call("ExecCommand", {"cmd": "echo hi", "yield_time_ms": "5000", "login": "FALSE"}))
    assert res["disposition"] == "completed" and res["stdout_preview"] == "hi"


@pytest.mark.parametrize(
    "extra",
    [
        {"yield_time_ms": -1},
        {"yield_time_ms": 2.5},
        {"yield_time_ms": "1e3"},
        {"tty": "yes"},
        {"tty": 1},
        {"duplicate_policy": None},
        {"duplicate_policy": "always"},
        {"cmd": 42},
        {"login": "1"},
    ],
)
def test_ac05_strict_types(rt: Runtime, extra: dict) -> None:
    e = err(rt.call("ExecCommand", {"cmd": "true", **extra}), "invalid_tool_input")
    assert e["details"]["tool_name"] == "ExecCommand"


def test_ac05_unknown_variant_phrase(rt: Runtime) -> None:
    e = err(rt.call("ExecCommand", {"cmd": "true", "duplicate_policy": "always"}), "invalid_tool_input")
    assert "unknown variant" in e["details"]["parse_error"]


@pytest.mark.parametrize("cmd", ["true", "42", "1", "false"])
def test_ac06_string_fields_never_coerced(rt: Runtime, cmd: str) -> None:
    res = ok(rt.call("ExecCommand", {"cmd": cmd}))
    assert res["disposition"] == "completed"


def test_whole_argument_object_as_string(rt: Runtime) -> None:
    res = ok(rt.call("ExecCommand", json.dumps(json.dumps({"cmd": "echo nested"}))))
    assert res["stdout_preview"] == "nested"


def test_non_json_text_is_invalid_input(rt: Runtime) -> None:
    e = err(rt.call("ExecCommand", "echo not json"), "invalid_tool_input")
    # the stand-in field `_raw` is internal: the error says what is wrong with the caller's text
    assert "_raw" not in e["details"]["parse_error"]
    assert e["details"]["parse_error"].startswith("arguments are not valid JSON")
    assert "missing field `cmd`" in e["details"]["parse_error"]


def test_ac07_exposure_and_unknown_tool(rt: Runtime) -> None:
    class Ctx:
        call = CallContext(agent_id="default", exposed=frozenset({"ExecCommand"}))

    for name in ("RunShell", "TaskList"):
        env = anyio.run(dispatch, name, {}, Ctx())
        assert env["status"] == "error" and env["error"]["kind"] == "tool_not_exposed_for_round"
        assert env["error"]["retryable"] is False
    e = err(rt.call("RunShell", {}), "unknown_tool")
    assert e["details"]["tool_name"] == "RunShell"


def test_retired_names_are_unknown(rt: Runtime) -> None:
    for name in ("UseWorkspace", "SpawnAgent"):
        err(rt.call(name, {}), "unknown_tool")


def test_hidden_alias_dispatchable_directly(rt: Runtime) -> None:
    r = rt.call("TaskList", {})
    assert ok(r)["limit"] == 20
    assert r.envelope["tool_name"] == "TaskList"
    assert "TaskList" not in [s.name for s in REGISTRY.model_facing()]


def test_ac08_blank_task_id(rt: Runtime) -> None:
    r = rt.call("TaskStatus", {"task_id": "   "})
    e = err(r, "invalid_tool_input")
    receipt = json.loads(r.full_receipt)
    assert receipt["field"] == "task_id" and receipt["hint"]
    assert e["details"]["validation_error"] == "must not be empty"


def test_truncated_mutation_guard_before_registry() -> None:
    class Ctx:
        call = CallContext(agent_id="default", stop_reason="max_tokens", round=3)

    env = anyio.run(dispatch, "ApplyPatch", {"patch": "x"}, Ctx())
    assert env["error"]["kind"] == "truncated_mutation_tool_call"
    assert env["error"]["retryable"] is True
    assert env["error"]["details"] == {"tool_name": "ApplyPatch", "stop_reason": "max_tokens", "round": 3}


def test_error_receipt_details_budget() -> None:
    details = {"nearby_lines": ["x" * 600, "y" * 600], "field": "patch"}
    env = error_envelope("ApplyPatch", ToolError(kind="context_not_found", message="no match", details=details))
    receipt = json.loads(render_error_receipt(env))
    assert receipt["details"]["omitted"] is True
    assert len(receipt["details"]["sha256"]) == 64
    assert len(receipt["details"]["preview"]) <= 1000
    assert receipt["field"] == "patch"
    assert env["error"]["details"] == details  # canonical unchanged


class _BoomInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _X(ResultModel):
    """Boom's result (never made: it raises)."""


async def _boom(args, ctx):
    raise KeyError("boom")


def test_ac56_internal_error_never_escapes(tmp_path) -> None:
    spec = ToolSpec(
        name="Boom", family=Family.CORE_AGENT, input_model=_BoomInput, handler=_boom, result_name="X", output_model=_X
    )
    with Runtime(home=tmp_path / "h", workspace=tmp_path, registry=REGISTRY.with_specs(spec)) as rt:
        r = rt.call("Boom", {})
        e = err(r, "internal_error")
        assert e["retryable"] is False and e["details"]["exception_type"] == "KeyError"
        assert "Traceback" not in r.receipt


def test_ac57_secret_scrubbing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_TEST_TOKEN", "s3cr3t-token-value")
    monkeypatch.setenv("KEYTIMEOUT", "1")
    with Runtime(home=tmp_path / "h", workspace=tmp_path) as rt:
        r = rt.call("ExecCommand", {"cmd": "echo $HOLON_TEST_TOKEN"})
        assert "[redacted]" in r.receipt and "s3cr3t-token-value" not in r.receipt
        assert "s3cr3t-token-value" not in json.dumps(r.display_envelope)
        # D6 (revised): previews are cut from scrubbed text, even in the envelope returned to the caller;
        # only the inputs stay as given
        assert r.envelope["result"]["stdout_preview"] == "[redacted]"
        r2 = rt.call("ExecCommand", {"cmd": "echo s3cr3t-token-value >/dev/null"})
        assert r2.envelope["result"]["command_diagnostics"]["cmd_preview"] == "echo [redacted] >/dev/null"
        stored = rt.store.execution(r.execution_id)
        assert "s3cr3t-token-value" not in json.dumps(dict(stored))
        assert "s3cr3t-token-value" not in json.dumps(dict(rt.store.execution(r2.execution_id)))
        r1 = rt.call("ExecCommand", {"cmd": "echo 1"})
        assert r1.receipt.splitlines()[-1] == "1"


def test_stored_task_text_is_scrubbed(tmp_path, monkeypatch) -> None:
    """What is stored for display (summary, command, outputs, messages) never holds the secret, so a later
    process that no longer has the variable cannot show it (D6)."""
    monkeypatch.setenv("MY_API_KEY", "supersecretvalue123")
    with Runtime(home=tmp_path / "h", workspace=tmp_path) as rt:
        r = rt.call("ExecCommand", {"cmd": "echo supersecretvalue123; sleep 0.3", "yield_time_ms": 50})
        tid = ok(r)["task_handle"]["task_id"]
        ok(rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 5000}))
        monkeypatch.delenv("MY_API_KEY")
        # tasks and messages hold no secret; only tool_executions keeps the canonical envelope as given (D12)
        rows = rt.store.query("SELECT summary, detail FROM tasks") + rt.store.query("SELECT text FROM messages")
        assert all("supersecretvalue123" not in str(tuple(r)) for r in rows)
        receipts = rt.store.query("SELECT receipt FROM tool_executions")
        assert all("supersecretvalue123" not in r["receipt"] for r in receipts)
        rec = rt.store.task(tid)
        assert "[redacted]" in rec["summary"] and "[redacted]" in rec["detail"]["output_summary"]
        assert all("supersecretvalue123" not in m["text"] for m in rt.messages())
        # identity still works on the raw command: the same call is recognised while it runs
        r2 = rt.call("ExecCommand", {"cmd": "sleep 5 # supersecretvalue123", "yield_time_ms": 50})
        r3 = rt.call("ExecCommand", {"cmd": "sleep 5 # supersecretvalue123", "yield_time_ms": 50})
        assert ok(r3)["disposition"] == "already_running"
        assert ok(r3)["task_handle"]["task_id"] == ok(r2)["task_handle"]["task_id"]


def test_malformed_json_says_so(rt: Runtime) -> None:
    e = err(rt.call("ExecCommand", '{"cmd": "ls"'), "invalid_tool_input")
    assert e["details"]["parse_error"].startswith("arguments are not valid JSON (")
    assert e["recovery_hint"].startswith("Send the arguments as one JSON object.")


def test_uint64_upper_bound(rt: Runtime) -> None:
    err(rt.call("ExecCommand", {"cmd": "true", "yield_time_ms": 10**30}), "invalid_tool_input")


def test_programming_mistakes_raise_type_error(rt: Runtime) -> None:
    for kwargs in ({"name": None}, {"name": "ListTasks", "context": "hello"}, {"name": "ListTasks", "agent": 3}):
        with pytest.raises(TypeError):
            rt.call(args={}, **kwargs)
