"""The headless runtime (no IPython import): ``Runtime`` and what it returns."""

from .core import DEFAULT_AGENT_ID, Runtime
from .events import RuntimeEvent
from .result import RESULT_MIMETYPE, ToolResult
from .settings import RuntimeSettings

__all__ = ["Runtime", "RuntimeSettings", "ToolResult", "RuntimeEvent", "RESULT_MIMETYPE", "DEFAULT_AGENT_ID"]
