"""The external-trigger plane: capability URLs that wake an agent (workspace spec §14).

Consumes the ports of :mod:`.ports` (the work plane's message queue, the settings), given by the runtime's
composition root.
"""

from ._records import TriggerRecords
from ._server import CallbackServer
from ._service import TriggerService

__all__ = ["CallbackServer", "TriggerRecords", "TriggerService"]
