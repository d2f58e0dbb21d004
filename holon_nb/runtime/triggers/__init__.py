"""The external-trigger plane: capability URLs that wake an agent (workspace spec §14).

Consumes the ports of :mod:`.ports` (the work plane's message queue, the settings), given by the runtime's
composition root.
"""

from .records import TriggerRecords
from .server import CallbackServer
from .service import TriggerService

__all__ = ["CallbackServer", "TriggerRecords", "TriggerService"]
