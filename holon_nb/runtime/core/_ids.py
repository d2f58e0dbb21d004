"""Agent ids every plane uses: the default agent and the id grammar."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DEFAULT_AGENT_ID", "AGENT_ID", "check_call_types"]

#: Id of the default public named agent the notebook user acts through.
DEFAULT_AGENT_ID = "default"

#: Agent ids a caller may name (they become directory names under ``<home>/agents/``).
AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_call_types(name: Any, agent: Any, context: Any) -> None:
    """Check the arguments of ``Runtime.call``/``async_call`` (a programming mistake, not a tool input).

    Raises:
        TypeError: ``name`` not a str, ``agent`` not a str or None, ``context`` not a dict or None.
        ValueError: ``agent`` not an agent id (:data:`AGENT_ID`, no ``..``).
    """
    if not isinstance(name, str):
        raise TypeError(f"tool name must be a str such as 'ExecCommand', got {type(name).__name__}")
    if agent is not None and not isinstance(agent, str):
        raise TypeError(f"agent must be an agent id (str) or None, got {type(agent).__name__}")
    if agent is not None and (not AGENT_ID.fullmatch(agent) or ".." in agent):
        raise ValueError(
            f"not an agent id: {agent[:80]!r} (letters, digits, '_', '-', '.'; 1-64 characters; "
            "it names a directory under the holon home)"
        )
    if context is not None and not isinstance(context, dict):
        raise TypeError(f"context must be a dict such as {{'brief': '...'}} or None, got {type(context).__name__}")
