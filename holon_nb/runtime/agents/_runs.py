"""Background runs of invoked agents: the child/resident turn runner seam and result sanitising.

An InvokeAgent task (``child_agent_task`` or ``agent_invocation_task``, agents
agents spec §5.6) is carried by one background coroutine in the runtime's task group
(:meth:`~.agent_lifecycle.AgentLifecycle.start_run`). It runs the invoked
agent's turn through a swappable :data:`ChildTurnRunner` and reports a
:class:`ChildTurnOutcome`; the lifecycle then settles the task and enqueues its
``task_result`` to the caller.

The default runner drives the runtime's turn loop (``rt.turns.run``, reached through the
:class:`~.ports.TurnStarter` port the composition root fills) as the invoked agent, with the agent's own
model (or the runtime default).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ...providers._catalog import ProviderConfigError
from ...providers.cassettes._errors import CassetteError
from ...tools._errors import (
    AgentTurnFailed,
    RuntimeClosed,
    RuntimeDied,
    RuntimeStartupError,
    ToolCallError,
)

if TYPE_CHECKING:
    from ..core._store import Store
    from ._ports import TurnPlane

__all__ = [
    "ChildTurnOutcome",
    "ChildTurnRequest",
    "ChildTurnRunner",
    "EXPECTED_RUN_ERRORS",
    "agent_model",
    "default_turn_runner",
    "model_ref",
    "sanitize_final_text",
]

log = logging.getLogger("holon_nb.agents")

#: Failures of an invoked agent's turn that are conditions, not bugs (no model configured, a model ref that does
#: not resolve, a provider that cannot be built, a cassette that does not match, a closed runtime): the task fails
#: with the message, the log gets one warning line. Named one by one: every holon_nb exception is a
#: ``HolonNBError`` (``holon_nb.errors``), including control flow such as ``TurnCancelled``, which is not one.
EXPECTED_RUN_ERRORS: tuple[type[BaseException], ...] = (
    ProviderConfigError,
    CassetteError,
    RuntimeClosed,
    RuntimeStartupError,
    RuntimeDied,
    ToolCallError,
    AgentTurnFailed,
    ValueError,  # ModelRefError among them
    LookupError,
    OSError,
)


@dataclass(frozen=True)
class ChildTurnRequest:
    """What a runner needs to run one invoked agent's turn.

    Attributes:
        turns: Returns the turn plane (:class:`~.ports.TurnStarter`: the runtime's turn service, built on
            first use, so a runner that runs no turn builds none).
        agent_id: The agent whose turn runs (the private child, or the resident target).
        message: The queued input message (``{id, text, kind, metadata, source_refs, …}``).
        task: The supervising/invocation task record (``detail`` decoded).
        model_ref: The model ref the turn should use (``provider@endpoint/model``), or None for
            the runtime default (``HOLON_MODEL``).
    """

    turns: TurnPlane
    agent_id: str
    message: dict[str, Any]
    task: dict[str, Any]
    model_ref: str | None = None


@dataclass(frozen=True)
class ChildTurnOutcome:
    """How an invoked agent's turn ended.

    Attributes:
        terminal: The turn's terminal kind (``completed``, ``aborted``, ``provider_failed_needs_recovery``, …);
            only ``completed`` completes the task (agents spec §5.6 rule 2).
        final_text: The turn-final assistant text (sanitised before it is reported).
        error: A short description of why the turn did not complete, if known.
        details: Extra facts stored in the task detail (``turn_id``, usage, …).
    """

    terminal: str
    final_text: str | None = None
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def model_ref(model: dict[str, Any] | None) -> str | None:
    """The model ref of an agent's ``model`` object: ``provider/model`` (``provider@endpoint/model`` when the
    provider names its endpoint), or None (the runtime default)."""
    if not model:
        return None
    return f"{model['provider']}/{model['model']}"


def agent_model(store: Store, agent_id: str) -> dict[str, Any] | None:
    """The agent's own ``model`` object from its record, or None when it follows the runtime default."""
    rec = store.agent(agent_id)
    raw = rec.get("model") if rec else None
    return json.loads(raw) if isinstance(raw, str) and raw else None


#: ``async (request) -> outcome``; install another on ``rt.agents.lifecycle.turn_runner`` (tests, notebooks).
ChildTurnRunner = Callable[[ChildTurnRequest], Awaitable[ChildTurnOutcome]]

_THINK = re.compile(r"<(think|thinking|reasoning)\b[^>]*>.*?(</\1\s*>|\Z)", re.DOTALL | re.IGNORECASE)
_TOOL_XML = re.compile(
    r"<(tool_call|tool_use|function_call|function_calls|invoke|antml:invoke|antml:function_calls)\b[^>]*>"
    r".*?(</\1\s*>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_TOOL_SELF_CLOSING = re.compile(r"<(tool_call|function_call|invoke)\b[^>]*/>", re.IGNORECASE)
_SYSTEM_LINE = re.compile(r"^[ \t]*\[SYSTEM\].*(?:\n|\Z)", re.MULTILINE)


def sanitize_final_text(text: str) -> str:
    """Strip what must not rejoin the caller from a child's final text (agents spec §5.6 rule 3).

    Removes ``<think>``/``<thinking>``/``<reasoning>`` blocks (an unclosed one to the end),
    XML-like tool calls (``<tool_call>…</tool_call>``, ``<function_calls>…``, ``<invoke …>…``)
    and lines starting with ``[SYSTEM]``; collapses the blank lines left behind and trims.

    Returns:
        The cleaned text (possibly empty).
    """
    out = _THINK.sub("", text)
    out = _TOOL_XML.sub("", out)
    out = _TOOL_SELF_CLOSING.sub("", out)
    out = _SYSTEM_LINE.sub("", out)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip()


async def default_turn_runner(request: ChildTurnRequest) -> ChildTurnOutcome:
    """Run the invoked agent's turn through the runtime's turn loop (``rt.turns.run``).

    The queued input message is handed to the turn service, which admits it (``source_message_id``) and
    runs a turn with its text as the message. The turn waits for a turn the agent is already running
    (a notebook cell on a resident agent) to end first. The expected errors of the turn service
    (:data:`EXPECTED_RUN_ERRORS`: no model configured, …) report a failed outcome, logged as one
    warning line; other errors propagate and fail the task.
    """
    turns = request.turns()
    while turns.active(request.agent_id) is not None:
        await anyio.sleep(0.05)
    try:
        result = await turns.run(
            request.message.get("text") or "",
            agent=request.agent_id,
            model=request.model_ref,
            source_message_id=request.message.get("id") or None,
        )
    except EXPECTED_RUN_ERRORS as exc:
        error = f"{type(exc).__name__}: {exc}"[:512]
        log.warning("the turn of invoked agent %s could not run: %s", request.agent_id, error, exc_info=False)
        return ChildTurnOutcome("failed", error=error)
    details = {"turn_id": result.turn_id, "turn_reason": result.reason}
    return ChildTurnOutcome(
        result.terminal or "failed",
        result.final_text,
        error=result.error,
        details={k: v for k, v in details.items() if v},
    )
