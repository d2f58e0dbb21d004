"""Agent ids every plane uses: the default agent and the id grammar."""

from __future__ import annotations

import re

__all__ = ["DEFAULT_AGENT_ID", "AGENT_ID"]

#: Id of the default public named agent the notebook user acts through.
DEFAULT_AGENT_ID = "default"

#: Agent ids a caller may name (they become directory names under ``<home>/agents/``).
AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
