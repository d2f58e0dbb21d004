"""``holon_nb.render._card.render_card``: readable, escaped HTML cards."""

from __future__ import annotations

from holon_nb.render._card import render_card


def _exec(**result: object) -> dict:
    base = {
        "disposition": "completed",
        "exit_status": 0,
        "stdout_preview": None,
        "stderr_preview": None,
        "truncated": False,
    }
    return {
        "tool_name": "ExecCommand",
        "status": "success",
        "summary_text": "command exited with status 0",
        "result": {**base, **result},
    }


def test_everything_is_escaped() -> None:
    env = _exec(stdout_preview="<script>alert(1)</script>", stderr_preview="a & b")
    env["summary_text"] = "<img src=x onerror=1>"
    card = render_card(env, "<receipt>", 12)
    assert "<script>" not in card and "<img" not in card and "<receipt>" not in card
    assert "&lt;script&gt;" in card and "a &amp; b" in card and "12 ms" in card


def test_completed_command_shows_exit_status_and_streams() -> None:
    card = render_card(_exec(stdout_preview="out-text", stderr_preview="err-text", exit_status=3), "r")
    assert "exit status:</span> 3" in card
    assert "out-text" in card and "err-text" in card and "stdout" in card and "stderr" in card


def test_truncation_and_lossy_notices() -> None:
    env = _exec(
        stdout_preview="head…tail",
        truncated=True,
        stdout_chars=1000,
        stdout_kept_chars=100,
        stdout_artifact=0,
        artifacts=[{"path": "/h/tool-artifacts/x-stdout.log"}],
        stdout_lossy=True,
    )
    card = render_card(env, "r")
    assert "900 of 1000 characters not shown" in card and "/h/tool-artifacts/x-stdout.log" in card
    assert "decoded lossily" in card


def test_promoted_command_shows_task_and_initial_output() -> None:
    env = {
        "tool_name": "ExecCommand",
        "status": "success",
        "summary_text": "promoted",
        "result": {
            "disposition": "promoted_to_task",
            "initial_output_preview": "tick-1",
            "initial_output_truncated": True,
            "task_handle": {"task_id": "task_0123456789abcde", "task_kind": "command_task", "status": "queued"},
        },
    }
    card = render_card(env, "r")
    assert "task_0123456789abcde" in card and "promoted_to_task" in card
    assert "tick-1" in card and "initial output truncated" in card
    # the handle's status at promotion would stay in the cell beside the task's real end: not shown
    assert "task status" not in card and ">queued<" not in card


def test_promoted_command_human_receipt_has_no_stale_status() -> None:
    from holon_nb.render.human import exec_human

    lines = exec_human(
        {
            "disposition": "promoted_to_task",
            "initial_output_preview": "tick-1\n",
            "task_handle": {"task_id": "task_0123456789abcde", "status": "running"},
        }
    )
    assert lines[0].split() == ["task", "task_0123456789abcde", "(a", "background", "task", "now)"]
    assert "running" not in "\n".join(lines)


def test_task_output_card() -> None:
    env = {
        "tool_name": "TaskOutput",
        "status": "success",
        "result": {
            "retrieval_status": "success",
            "task": {
                "task_id": "task_0123456789abcde",
                "status": "failed",
                "exit_status": 2,
                "output_preview": "boom\n",
                "output_truncated": True,
                "output_total_chars": 50,
                "output_kept_chars": 20,
                "output_lossy": True,
                "output_bytes_dropped": 7,
                "artifacts": [{"path": "/h/task.log"}],
            },
        },
    }
    card = render_card(env, "r")
    for text in (
        "retrieval:</span> success",
        "failed",
        "exit status:</span> 2",
        "boom",
        "30 of 50 characters not shown; full output: /h/task.log",
        "decoded lossily",
        "7 bytes",
    ):
        assert text in card


def test_batch_counts_and_items() -> None:
    env = {
        "tool_name": "ExecCommandBatch",
        "status": "success",
        "summary_text": "1/3",
        "result": {
            "item_count": 3,
            "completed_count": 1,
            "failed_count": 1,
            "rejected_count": 0,
            "skipped_count": 1,
            "items": [
                {"index": 1, "cmd": "echo a", "status": "completed", "result": _exec(stdout_preview="a")["result"]},
                {"index": 2, "cmd": "false", "status": "failed", "result": _exec(exit_status=1)["result"]},
                {
                    "index": 3,
                    "cmd": "echo <x>",
                    "status": "skipped",
                    "error_kind": "skipped_after_previous_error",
                    "error_message": "skipped",
                },
            ],
        },
    }
    card = render_card(env, "r")
    assert "1/3 completed, 1 failed, 1 skipped" in card
    assert "skipped_after_previous_error" in card and "echo &lt;x&gt;" in card


def test_error_card_shows_kind_message_field_and_hint() -> None:
    env = {
        "tool_name": "TaskOutput",
        "status": "error",
        "summary_text": "bad",
        "error": {
            "kind": "invalid_tool_input",
            "message": "input does not match",
            "retryable": False,
            "details": {"field": "timeout_ms", "parse_error": "invalid type"},
            "recovery_hint": "Pass an integer <ms>.",
        },
    }
    card = render_card(env, "receipt-text")
    for text in (
        "invalid_tool_input",
        "input does not match",
        "timeout_ms",
        "Pass an integer &lt;ms&gt;.",
        "retryable: no",
        "parse error:",
        "receipt-text",
        "#cf222e",
    ):
        assert text in card


def test_list_tasks_card() -> None:
    env = {
        "tool_name": "ListTasks",
        "status": "success",
        "result": {
            "total_active": 1,
            "returned": 1,
            "limit": 20,
            "tasks": [{"id": "task_0123456789abcde", "status": "running", "summary": "Run command: sleep 9"}],
        },
    }
    card = render_card(env, "r")
    assert "1 shown of 1" in card and "task_0123456789abcde" in card and "sleep 9" in card
