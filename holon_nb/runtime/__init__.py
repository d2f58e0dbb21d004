"""The headless runtime (no IPython import): ``Runtime`` and what it returns.

Layout, top to bottom (each layer imports only the layers below it; ``pyproject.toml``'s
import-linter contracts check it):

- :mod:`.facade`: ``Runtime``, which builds every plane service and gives each one itself, seen
  through :class:`~.core.host.RuntimeHost`;
- :mod:`.turns`: the turn loop;
- :mod:`.agents`: agents, invocations, conversations, approvals;
- :mod:`.work` (work items, waits, timers, queue), :mod:`.memory` and :mod:`.images` (ViewImage,
  GenerateImage);
- :mod:`.tasks` (commands and background tasks), :mod:`.models` and :mod:`.workspaces`;
- :mod:`.core`: loop thread, store, events, clock, settings, results.

:mod:`.current` holds the kernel's runtime for ``holon_nb.get_runtime()``.
"""

from .facade import DEFAULT_AGENT_ID, Runtime
from .core.events import RuntimeEvent
from .core.result import RESULT_MIMETYPE, ToolResult
from .core.settings import RuntimeSettings

__all__ = ["Runtime", "RuntimeSettings", "ToolResult", "RuntimeEvent", "RESULT_MIMETYPE", "DEFAULT_AGENT_ID"]
