"""The headless runtime (no IPython import): ``Runtime`` and what it returns.

Layout, top to bottom (each layer imports only the layers below it; ``pyproject.toml``'s
import-linter contracts check it):

- :mod:`.facade`: ``Runtime``, whose composition root (``Runtime._compose``) builds every plane service
  and gives each one only the ports (protocols) its package's ``ports`` module declares;
- :mod:`.turns`: the turn loop;
- :mod:`.agents`: agents, invocations, conversations, approvals;
- :mod:`.work` (work items, waits, timers, queue), :mod:`.memory` and :mod:`.images` (ViewImage,
  GenerateImage);
- :mod:`.tasks` (commands and background tasks), :mod:`.models` and :mod:`.workspaces`;
- :mod:`.core`: loop thread, store, events, clock, settings, results.

:mod:`.current` holds the kernel's runtime for ``holon_nb.get_runtime()``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ._facade import DEFAULT_AGENT_ID, Runtime
    from .core._events import RuntimeEvent
    from .core._result import RESULT_MIMETYPE, ToolResult
    from .core._settings import RuntimeSettings

__all__ = ["Runtime", "RuntimeSettings", "ToolResult", "RuntimeEvent", "RESULT_MIMETYPE", "DEFAULT_AGENT_ID"]

# loaded on first use (PEP 562): ``holon_nb.runtime._current`` is reached without building the runtime
_WHERE = {
    "Runtime": "._facade",
    "DEFAULT_AGENT_ID": "._facade",
    "RuntimeEvent": ".core._events",
    "RESULT_MIMETYPE": ".core._result",
    "ToolResult": ".core._result",
    "RuntimeSettings": ".core._settings",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
