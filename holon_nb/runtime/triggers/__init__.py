"""The external-trigger plane: capability URLs that wake an agent (workspace spec §14)."""

from .records import TriggerRecords
from .server import CallbackServer
from .service import TriggerService

__all__ = ["CallbackServer", "TriggerRecords", "TriggerService"]
