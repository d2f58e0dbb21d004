"""The base of every tool result model (:class:`ResultModel`) and the field types they share."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ResultModel", "Record", "Records", "TaskHandle"]

#: A nested record passed through as the runtime builds it (a task snapshot, a work item, a timer...).
Record = dict[str, Any]
#: A list of nested records or values.
Records = list[Any]


class ResultModel(BaseModel):
    """A tool's success ``result`` (the envelope's ``result`` object, ``summary_text`` lifted out).

    Strict (``extra="forbid"``, ``strict=True``): a key the model does not declare, a missing required key
    or a value of another JSON type is a programming error of the handler, which dispatch turns into an
    ``internal_error`` envelope (:func:`holon_nb.tools._dispatch.typed_payload`). Optional fields default to
    None and stay absent from the JSON form when the handler did not set them
    (``model_dump(mode="json", exclude_unset=True)``), so the envelope is byte-identical to the payload.
    Numbers that may be integers are never typed ``float`` alone (``float`` turns ``2`` into ``2.0``).
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class TaskHandle(ResultModel):
    """A task a call started or found (commands spec §4.6, agents spec §5.6): ``task_kind`` is
    ``command_task``, ``agent_invocation_task`` or ``child_agent_task``; ``status`` the task's at that time."""

    task_id: str
    task_kind: str
    status: str
