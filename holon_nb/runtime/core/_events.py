"""The runtime's event bus: task output, status changes and ends.

Subscribers are called on the runtime thread with one :class:`RuntimeEvent`
and must return quickly (a widget sets traits; nothing blocks). A failing
subscriber is logged and never breaks the runtime.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RuntimeEvent", "EventBus"]

log = logging.getLogger("holon_nb.events")


@dataclass(frozen=True)
class RuntimeEvent:
    """One runtime event.

    Attributes:
        kind: ``task_promoted`` (data: agent_id, summary, cmd), ``task_output``
            (data: stream, text), ``task_status`` (data: status, exit_status) or
            ``task_ended`` (data: status, exit_status). The work plane
            (published after each committed transition, ``task_id`` None):
            ``work_item_changed`` (agent_id, work_item_id, revision, state),
            ``focus_changed`` (agent_id, current_work_item_id?, current_turn_work_item_id?),
            ``wait_changed`` (agent_id, wait_id, status, work_item_id),
            ``timer_changed`` (agent_id, timer_id, status), ``timer_fired`` (agent_id,
            timer_id, message_id, fire_count, status, due_at, fired_at, coalesced: the tick joined
            its timer's still-queued previous tick, ``message_id``, instead of queuing one),
            ``message_enqueued`` (agent_id, message_id, message_kind, priority,
            triggered_wait_id), ``message_processed`` (agent_id, message_id,
            consumed_wait_id), ``brief_published`` (agent_id, brief_id, work_item_id).
        task_id: The task concerned, if any.
        data: Kind-specific fields.
    """

    kind: str
    task_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


class EventBus:
    """Fan-out of :class:`RuntimeEvent` to subscribers."""

    def __init__(self) -> None:
        self._subs: list[Callable[[RuntimeEvent], None]] = []
        self._lock = threading.Lock()

    def subscribe(self, fn: Callable[[RuntimeEvent], None]) -> Callable[[], None]:
        """Add a subscriber; return a function that removes it (idempotent)."""
        with self._lock:
            self._subs.append(fn)

        def unsubscribe() -> None:
            with self._lock:
                if fn in self._subs:
                    self._subs.remove(fn)

        return unsubscribe

    def publish(self, kind: str, task_id: str | None = None, **data: Any) -> None:
        """Deliver an event to every subscriber."""
        if not self._subs:
            return
        event = RuntimeEvent(kind, task_id, data)
        with self._lock:
            subs = list(self._subs)
        for fn in subs:
            try:
                fn(event)
            except Exception:  # a broken subscriber must not break the runtime
                log.exception("event subscriber failed")
