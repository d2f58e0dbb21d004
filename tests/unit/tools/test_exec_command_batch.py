"""ExecCommandBatch acceptance cases AC-32…AC-39."""

from __future__ import annotations

from pathlib import Path

from _support import err, ok

from holon_nb.runtime import Runtime


def test_ac32_single_cmd_hint(rt: Runtime) -> None:
    e = err(rt.call("ExecCommandBatch", {"cmd": "git status"}), "invalid_tool_input")
    assert "ExecCommand" in e["recovery_hint"] and "one command" in e["recovery_hint"]


def test_ac33_item_count(rt: Runtime) -> None:
    e = err(rt.call("ExecCommandBatch", {"items": []}), "invalid_tool_input")
    assert e["details"]["validation_error"] == "must not be empty" and e["details"]["field"] == "items"
    e = err(rt.call("ExecCommandBatch", {"items": [{"cmd": "true"}] * 13}), "invalid_tool_input")
    d = e["details"]
    assert (d["validation_error"], d["max_items"], d["actual_items"]) == ("too_many_items", 12, 13)


def test_ac34_interactive_items_rejected(rt: Runtime) -> None:
    e = err(rt.call("ExecCommandBatch", {"items": [{"cmd": "python -i", "tty": True}]}), "invalid_tool_input")
    for word in ("tty", "accepts_input", "ExecCommand", "interactive"):
        assert word in e["recovery_hint"]


def test_ac35_failed_item_does_not_stop(rt: Runtime) -> None:
    r = rt.call("ExecCommandBatch", {"items": [{"cmd": "echo a"}, {"cmd": "exit 1"}, {"cmd": "echo c"}]})
    res = ok(r)
    assert (res["completed_count"], res["failed_count"], res["rejected_count"], res["skipped_count"]) == (2, 1, 0, 0)
    lines = r.receipt.splitlines()
    assert lines[0] == "ExecCommandBatch completed 2/3 items"
    i = lines.index("[2] exit 1")
    assert lines[i + 1] == "exit=1"
    item2 = res["items"][1]
    assert "result" in item2 and "error_kind" not in item2
    assert res["items"][0]["result"]["summary_text"] == "command exited with status 0"


def test_ac36_stop_on_error(rt: Runtime) -> None:
    r = rt.call(
        "ExecCommandBatch", {"stop_on_error": True, "items": [{"cmd": "echo a"}, {"cmd": "exit 1"}, {"cmd": "echo c"}]}
    )
    res = ok(r)
    assert (res["completed_count"], res["failed_count"], res["rejected_count"], res["skipped_count"]) == (1, 1, 0, 1)
    third = res["items"][2]
    assert third["status"] == "skipped" and third["error_kind"] == "skipped_after_previous_error"
    assert "duration_ms" not in third and "result" not in third
    assert "skipped=stop_on_error" in r.receipt


def test_ac37_item_timeout(rt: Runtime) -> None:
    # a 200 ms window on a command of 10 minutes: "timed out", never "completed", and the batch went on
    r = rt.call("ExecCommandBatch", {"items": [{"cmd": "sleep 600", "yield_time_ms": 200}]})
    item = ok(r)["items"][0]
    assert item["status"] == "failed" and item["error_kind"] == "command_timed_out" and "result" not in item
    assert "failed=no_result" in r.receipt and "error:" in r.receipt
    assert ok(rt.call("ListTasks", {}))["total_active"] == 0


def test_ac38_workdir_defaults(rt: Runtime, workspace: Path) -> None:
    res = ok(rt.call("ExecCommandBatch", {"workdir": "sub", "items": [{"cmd": "pwd"}, {"cmd": "pwd", "workdir": "."}]}))
    assert res["items"][0]["result"]["stdout_preview"] == str(workspace / "sub")
    assert res["items"][1]["result"]["stdout_preview"] == str(workspace)


def test_ac39_receipt_redacts_command(rt: Runtime) -> None:
    r = rt.call("ExecCommandBatch", {"items": [{"cmd": "API_TOKEN=abc123 echo ok"}]})
    assert "API_TOKEN=[redacted]" in r.receipt and "abc123" not in r.receipt
    assert r.envelope["result"]["items"][0]["cmd"] == "API_TOKEN=abc123 echo ok"


def test_batch_item_errors_are_item_failures(rt: Runtime) -> None:
    res = ok(
        rt.call("ExecCommandBatch", {"items": [{"cmd": "ls", "workdir": "nope"}, {"cmd": "ls", "shell": "/nope/sh"}]})
    )
    assert [i["error_kind"] for i in res["items"]] == ["workdir_not_found", "command_spawn_failed"]
    assert res["failed_count"] == 2
