"""Every ``output_ref`` of a truncated receipt resolves through MemoryGet (commands §3.4 rule 4, agents §6)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _support import err, ok

from holon_nb import Runtime, RuntimeSettings


@pytest.fixture
def tiny(tmp_path: Path, workspace: Path) -> Iterator[Runtime]:
    """A runtime whose tool-output budget (50 tokens ≈ 200 characters) truncates most receipts."""
    runtime = Runtime(
        home=tmp_path / "home", workspace=workspace, settings=RuntimeSettings(tool_output_budget_tokens=50)
    )
    try:
        yield runtime
    finally:
        runtime.close()


def _projected(result: Any) -> str:
    assert result.projected, result.receipt
    stand_in = json.loads(result.receipt)
    assert stand_in["provider_projection_truncated"] is True
    ref = stand_in["output_ref"]
    assert ref == f"tool_execution:{result.execution_id}:output"
    return ref


@contextmanager
def roomy(rt: Runtime) -> Iterator[None]:
    """Lift the tool-output budget for a while: MemoryGet fits its content to the budget
    (test_memory_get_budget.py), and these tests read whole documents."""
    before = rt.settings
    rt.settings = before.replace(tool_output_budget_tokens=1_000_000)
    try:
        yield
    finally:
        rt.settings = before


def _get(rt: Runtime, ref: str, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    with roomy(rt):
        mem = ok(rt.call("MemoryGet", {"source_ref": ref, **kw}))["memory"]
    return mem, json.loads(mem["content"])


def test_exec_command_output_ref(tiny: Runtime) -> None:
    r = tiny.call("ExecCommand", {"cmd": "echo first-line; seq 1 200; echo oops >&2"})
    ref = _projected(r)
    mem, doc = _get(tiny, ref)
    assert (mem["kind"], mem["scope_kind"], mem["agent_id"]) == ("tool_command_output", "agent", "default")
    assert doc["source_type"] == "tool_command_output" and doc["selector"] == "output"
    assert doc["tool_execution_id"] == r.execution_id and doc["tool_name"] == "ExecCommand"
    assert doc["disposition"] == "completed" and doc["output_available"] is True
    assert doc["content"] == r.envelope["result"]["stdout_preview"]
    assert doc["content"].startswith("first-line\n1\n2")
    # the streams and the command input have their own refs
    _, out = _get(tiny, f"tool_execution:{r.execution_id}:stderr")
    assert out["content"] == "oops" and out["selector"] == "stderr"
    with roomy(tiny):
        cmd = ok(tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:cmd"}))["memory"]
    assert cmd["kind"] == "tool_command_receipt"
    assert cmd["content"].endswith("cmd:\necho first-line; seq 1 200; echo oops >&2")
    # a batch-item ref does not name anything in a single command
    err(
        tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:batch_item:1:output"}),
        "memory_source_not_found",
    )


def test_truncated_stream_points_at_its_artifact(tiny: Runtime) -> None:
    r = tiny.call("ExecCommand", {"cmd": "seq 1 5000", "max_output_tokens": 100})
    assert r.envelope["result"]["truncated"] is True
    _, doc = _get(tiny, f"tool_execution:{r.execution_id}:stdout")
    assert doc["truncated"] is True
    assert doc["artifact"] == r.envelope["result"]["artifacts"][0]
    assert Path(doc["artifact"]["path"]).read_text().splitlines()[-1] == "5000"


def test_promoted_command_output_ref(tiny: Runtime) -> None:
    r = tiny.call("ExecCommand", {"cmd": "echo started-now; sleep 0.2", "yield_time_ms": 0})
    assert r.envelope["result"]["disposition"] == "promoted_to_task"
    _, doc = _get(tiny, f"tool_execution:{r.execution_id}:output")
    assert doc["disposition"] == "promoted_to_task"
    assert doc["task_id"] == r.envelope["result"]["task_handle"]["task_id"]
    tiny.wait_for_tasks(30)


def test_error_receipt_output_ref(tiny: Runtime) -> None:
    r = tiny.call("ExecCommand", {"cmd": "true", "workdir": "/nonexistent/" + "d" * 400})
    assert r.envelope["status"] == "error"
    ref = _projected(r)
    assert json.loads(r.receipt)["error"]["kind"] == "workdir_not_found"
    _, doc = _get(tiny, ref)
    assert doc["output_available"] is False and doc["availability"] == "output_unavailable"
    assert doc["error"]["kind"] == "workdir_not_found"


def test_other_tool_output_ref_is_the_stored_envelope(tiny: Runtime) -> None:
    r = tiny.call("GetAgent", {})
    ref = _projected(r)
    mem, doc = _get(tiny, ref)
    assert mem["kind"] == "tool_execution_output" and mem["title"] == "GetAgent tool output"
    assert doc["source_type"] == "tool_execution_output" and doc["selector"] == "output"
    assert doc["output"] == r.envelope and doc["summary"] == r.envelope["summary_text"]
    assert doc["status"] == "success"
    for sel in ("cmd", "stdout", "stderr"):
        err(tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:{sel}"}), "memory_source_not_found")


def test_exec_command_batch_output_ref(tiny: Runtime) -> None:
    r = tiny.call(
        "ExecCommandBatch", {"items": [{"cmd": "echo alpha-item; seq 1 60"}, {"cmd": "echo beta-item >&2; exit 4"}]}
    )
    ref = _projected(r)
    # fixed over upstream: the batch's own output_ref resolves to its stored envelope
    mem, doc = _get(tiny, ref)
    assert mem["kind"] == "tool_execution_output"
    assert [i["status"] for i in doc["output"]["result"]["items"]] == ["completed", "failed"]
    # each item has command refs
    _, first = _get(tiny, f"tool_execution:{r.execution_id}:batch_item:1:output")
    assert first["content"].startswith("alpha-item\n1\n2") and first["batch_item_index"] == 1
    assert first["item_status"] == "completed"
    _, second = _get(tiny, f"tool_execution:{r.execution_id}:batch_item:2:stderr")
    assert second["content"] == "beta-item" and second["item_status"] == "failed"
    with roomy(tiny):
        cmd = ok(tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:batch_item:2:cmd"}))["memory"]
    assert cmd["content"].endswith("cmd:\necho beta-item >&2; exit 4")
    err(
        tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:batch_item:3:output"}),
        "memory_source_not_found",
    )
    err(tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:stdout"}), "memory_source_not_found")


def test_max_chars_cuts_the_document(tiny: Runtime) -> None:
    r = tiny.call("ExecCommand", {"cmd": "seq 1 300"})
    with roomy(tiny):
        mem = ok(tiny.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:output", "max_chars": 40}))[
            "memory"
        ]
    assert len(mem["content"]) == 40 and mem["truncated"] is True


def test_foreign_execution_is_not_found(tiny: Runtime) -> None:
    tiny.store.ensure_agent("other", "public_named")
    r = tiny.call("ExecCommand", {"cmd": "seq 1 300"}, agent="other")
    ref = _projected(r)
    ok(tiny.call("MemoryGet", {"source_ref": ref}, agent="other"))
    e = err(tiny.call("MemoryGet", {"source_ref": ref}), "memory_source_not_found")
    assert e["details"]["source_ref"] == ref


def test_output_refs_survive_a_restart(tmp_path: Path, workspace: Path) -> None:
    settings = RuntimeSettings(tool_output_budget_tokens=50)
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as first:
        ref = _projected(first.call("ExecCommand", {"cmd": "echo kept-across-restart; seq 1 100"}))
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as second:
        _, doc = _get(second, ref)
        assert doc["content"].startswith("kept-across-restart")
