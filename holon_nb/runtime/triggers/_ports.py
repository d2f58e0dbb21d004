"""What the trigger plane consumes: the ports :class:`~.service.TriggerService` is built with.

The runtime's composition root (``Runtime._compose``) passes the work plane as :class:`TriggerWork` (the one
path that queues a message and wakes a wait) and the settings as :class:`TriggerSettings`.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["TriggerSettings", "TriggerWork"]


class TriggerSettings(Protocol):
    """The runtime options the trigger plane reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def callback_base_url(self) -> str:
        """The public base of the callback URL (behind a proxy); empty: the local server's own address."""
        ...

    @property
    def callback_port(self) -> int:
        """The local callback server's port (0: any free port)."""
        ...


class TriggerWork(Protocol):
    """The work plane as a delivery sees it: queue a message (waking the wait it matches), read waits and queue."""

    def enqueue(self, agent_id: str, kind: str, text: str, **fields: Any) -> dict[str, Any]:
        """Queue one message in its own transaction; return the message (``triggered_wait_id`` when it woke one)."""
        ...

    def waits_of(self, agent_id: str, statuses: tuple[str, ...] = ("active", "triggered")) -> list[dict[str, Any]]:
        """The agent's waits with the given statuses, oldest first."""
        ...

    def queued(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's queued messages in service order."""
        ...
