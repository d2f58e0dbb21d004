"""Result models of the task tools: ListTasks (and TaskList), TaskStatus, TaskOutput, TaskInput, TaskStop
(commands spec §7-§9). ``task`` is the runtime's task snapshot, passed through."""

from __future__ import annotations

from typing import Literal

from ._base import Record, Records, ResultModel

__all__ = ["ListTasksResult", "TaskStatusResult", "TaskOutputResult", "TaskInputResult", "TaskStopResult"]


class ListTasksResult(ResultModel):
    """The calling agent's active tasks (queued, running, cancelling), at most ``limit`` of them."""

    total_active: int
    returned: int
    limit: int
    tasks: Records


class TaskStatusResult(ResultModel):
    """One task's lifecycle snapshot."""

    task: Record


class TaskOutputResult(ResultModel):
    """A task's bounded output; ``retrieval_status`` says whether it was ready (``success``), or the
    wait ended first (``timeout`` when blocking, ``not_ready`` when not)."""

    retrieval_status: Literal["success", "timeout", "not_ready"]
    task: Record


class TaskInputResult(ResultModel):
    """Input delivered to an interactive task, or refused (``accepted_input`` false)."""

    task: Record
    accepted_input: bool
    input_target: str | None = None
    bytes_written: int | None = None


class TaskStopResult(ResultModel):
    """A stop (or force stop) requested, or nothing to stop (both flags false)."""

    task: Record
    stop_requested: bool
    force_stop_requested: bool
