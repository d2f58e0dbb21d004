"""Result models of the agent plane's tools: Enqueue, SendAgentMessage, GetAgent (and AgentGet),
CreateAgent, InvokeAgent and Sleep (agents spec §5.2-§5.6, §5.17-§5.18)."""

from __future__ import annotations

from typing import Literal

from ._base import Record, ResultModel, TaskHandle

__all__ = [
    "EnqueueResult",
    "SendAgentMessageResult",
    "AgentGetResult",
    "CreateAgentResult",
    "InvokeAgentResult",
    "SleepResult",
]


class EnqueueResult(ResultModel):
    """A follow-up message queued to the calling agent itself."""

    enqueued: bool
    priority: str
    follow_up_text: str


class SendAgentMessageResult(ResultModel):
    """A message queued durably to another agent."""

    agent_id: str
    message_id: str
    priority: str
    enqueued: bool


class AgentGetResult(ResultModel):
    """GetAgent / AgentGet: the agent-plane summary (identity, state, posture, counts), passed through."""

    agent: Record


class CreateAgentResult(ResultModel):
    """A public named agent created or reused, and how its model was resolved."""

    agent_id: str
    created: bool
    bootstrap_message_id: str | None = None
    model_resolution: Record


class InvokeAgentResult(ResultModel):
    """An invocation queued to a resident agent (``mode: resident``), or a supervised private child started
    (``mode: private_child``, with its supervision record and model resolution); never waits for the answer."""

    agent_id: str
    mode: Literal["resident", "private_child"]
    task_handle: TaskHandle
    child_agent_id: str | None = None
    supervision_task_id: str | None = None
    child_supervision: Record | None = None
    model_resolution: Record | None = None


class SleepResult(ResultModel):
    """The rest requested: its reason and the optional delay to wake again."""

    reason: str
    duration_ms: int | None
