"""Agent homes: ``<holon home>/agents/<agent_id>/`` with its ``tool-artifacts`` and ``task-output``.

One :class:`AgentHomes` per runtime, built by the composition root before the planes that write into the
homes (tasks, work, workspaces, agents) and given to each of them.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["AgentHomes"]


class AgentHomes:
    """The agent homes under one holon home, each made on first use (and made again if it vanished).

    Args:
        home: The holon home (absolute).
    """

    def __init__(self, home: Path):
        self.home = home
        self._made: dict[str, Path] = {}  # agent id -> its home, made

    def __call__(self, agent_id: str) -> Path:
        """``<home>/agents/<agent_id>/``, created with its ``tool-artifacts`` and ``task-output``."""
        path = self._made.get(agent_id)
        if path is None or not os.path.isdir(path):  # made once; made again if it vanished
            path = self.home / "agents" / agent_id
            for sub in ("tool-artifacts", "task-output"):
                (path / sub).mkdir(parents=True, exist_ok=True)
            self._made[agent_id] = path
        return path
