"""Result models of ExecCommand and ExecCommandBatch (commands spec §4.6, §5.6; contract "结果信封")."""

from __future__ import annotations

from typing import Literal

from ._base import Record, Records, ResultModel, TaskHandle

__all__ = ["ExecCommandResult", "ExecCommandBatchResult"]


class ExecCommandResult(ResultModel):
    """One ExecCommand call: ``completed`` (the process exited within the yield window),
    ``promoted_to_task`` (it runs on as a command task) or ``already_running`` (an identical active task
    was reused). Per stream (``stdout``, ``stderr``) a completed result carries its preview and, when the
    stream was not blank, its size; a truncated stream names its artifact (an index into ``artifacts``)."""

    disposition: Literal["completed", "promoted_to_task", "already_running"]
    command_diagnostics: Record
    # completed
    exit_status: int | None = None
    stdout_preview: str | None = None
    stderr_preview: str | None = None
    truncated: bool | None = None
    stdout_chars: int | None = None
    stderr_chars: int | None = None
    stdout_lossy: bool | None = None
    stderr_lossy: bool | None = None
    stdout_kept_chars: int | None = None
    stderr_kept_chars: int | None = None
    stdout_artifact: int | None = None
    stderr_artifact: int | None = None
    stdout_artifact_bytes_dropped: int | None = None
    stderr_artifact_bytes_dropped: int | None = None
    stdout_artifact_capped_by: str | None = None
    stderr_artifact_capped_by: str | None = None
    artifacts: Records | None = None
    process_group_alive: bool | None = None
    process_group_members: int | None = None
    # promoted_to_task and already_running
    task_handle: TaskHandle | None = None
    initial_output_truncated: bool | None = None
    initial_output_preview: str | None = None
    command: Record | None = None
    summary: str | None = None
    instructions: str | None = None
    # an identical running task that was not reused (files changed since it started)
    not_reused_task: Record | None = None


class ExecCommandBatchResult(ResultModel):
    """A bounded sequential batch: counts per item status and one entry per item (``index``, ``cmd``,
    ``status`` and that item's result or error)."""

    item_count: int
    completed_count: int
    failed_count: int
    rejected_count: int
    skipped_count: int
    stop_on_error: bool
    items: Records
