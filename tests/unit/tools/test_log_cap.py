"""D13: task logs and spools are capped; the result and receipt say how many bytes were not kept."""

from __future__ import annotations

from pathlib import Path

from _support import ok

from holon_nb import Runtime, RuntimeSettings


def test_task_log_cap(tmp_path: Path) -> None:
    settings = RuntimeSettings(max_task_log_bytes=10_000)
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as rt:
        r = rt.call("ExecCommand", {"cmd": "sleep 0.2; seq 1 20000; echo last-line", "yield_time_ms": 0})
        tid = r.result["task_handle"]["task_id"]
        out = rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 10000})
        task = ok(out)["task"]
        log = Path(task["artifacts"][0]["path"])
        assert log.stat().st_size <= 10_000
        full = len("".join(f"{i}\n" for i in range(1, 20001))) + len("last-line\n")
        assert task["output_bytes_dropped"] == full - log.stat().st_size
        assert task["output_capped_by"] == "max_task_log_bytes"
        assert (
            f"[output log capped: {task['output_bytes_dropped']} bytes were not kept "
            "(the log reached max_task_log_bytes)]" in out.receipt
        )
        # the in-memory tail keeps following the stream past the cap
        assert "last-line" in task["result_summary"]
