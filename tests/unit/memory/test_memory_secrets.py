"""D6 for memory: what MemorySearch and MemoryGet serve is scrubbed with the secrets of the process that made
the call, even when the index catches up later in a process that no longer knows the secret."""

from __future__ import annotations

import json
from pathlib import Path

from _support import ok

from holon_nb import Runtime

SECRET = "tok-abcdefghijkl"


def test_a_later_process_without_the_secret_does_not_serve_it(tmp_path: Path, workspace: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_TOKEN", SECRET)
    first = Runtime(home=tmp_path / "home", workspace=workspace)
    try:
        r = first.call("ExecCommand", {"cmd": "echo $MY_TOKEN"})
        assert r.ok and "[redacted]" in r.receipt and SECRET not in r.receipt
        assert SECRET not in json.dumps(r.envelope)  # D6 (revised): previews are cut from scrubbed output
        execution_id = r.execution_id
    finally:
        first.close()
    monkeypatch.delenv("MY_TOKEN")
    later = Runtime(home=tmp_path / "home", workspace=workspace)
    try:
        found = ok(later.call("MemorySearch", {"query": SECRET}))
        assert SECRET not in json.dumps(found["results"])  # (the result echoes the caller's own query)
        found = ok(later.call("MemorySearch", {"query": "echo MY_TOKEN"}))
        assert found["results"] and SECRET not in json.dumps(found["results"])
        got = later.call("MemoryGet", {"source_ref": f"tool_execution:{execution_id}:output"})
        mem = ok(got)["memory"]
        assert "[redacted]" in mem["content"] and SECRET not in json.dumps(mem)
        assert SECRET not in got.receipt
    finally:
        later.close()


def test_a_background_task_log_is_indexed_with_the_secrets_of_its_process(
    tmp_path: Path, workspace: Path, monkeypatch
) -> None:
    monkeypatch.setenv("MY_TOKEN", SECRET)
    first = Runtime(home=tmp_path / "home", workspace=workspace)
    try:
        r = first.call("ExecCommand", {"cmd": "echo $MY_TOKEN; echo marker-word", "yield_time_ms": 0})
        task_id = r.envelope["result"]["task_handle"]["task_id"]
        done = first.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 20000})
        assert done.ok and done.result["task"]["status"] == "completed", done.receipt
    finally:
        first.close()
    monkeypatch.delenv("MY_TOKEN")
    later = Runtime(home=tmp_path / "home", workspace=workspace)
    try:
        for query in (SECRET, "marker-word"):
            found = ok(later.call("MemorySearch", {"query": query}))
            assert SECRET not in json.dumps(found["results"]), query
        assert ok(later.call("MemorySearch", {"query": "marker-word"}))["results"]
    finally:
        later.close()
