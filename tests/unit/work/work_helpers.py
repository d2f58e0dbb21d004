"""Helpers of the work-plane tests (imported by name: conftest puts this directory on sys.path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon_nb.runtime import Runtime
from holon_nb.runtime.core._clock import Clock
from holon_nb.runtime.core._settings import RuntimeSettings
from holon_nb.tools._context import CallContext
from holon_nb.tools._registry import REGISTRY
from holon_nb.tools.builtin._messages import MESSAGE_SPECS

#: The built-in registry plus Enqueue/SendAgentMessage until the lead registers MESSAGE_SPECS.
WORK_REGISTRY = REGISTRY if "Enqueue" in REGISTRY else REGISTRY.with_specs(*MESSAGE_SPECS)


def open_runtime(home: Path, workspace: Path, clock: Clock | None = None) -> Runtime:
    """A runtime on ``home`` whose registry includes the message tools (scheduled by ``clock``, if given)."""
    settings = RuntimeSettings(clock=clock) if clock is not None else None
    return Runtime(home=home, workspace=workspace, settings=settings, registry=WORK_REGISTRY)


def view(rt: Runtime, agent: str = "default", **execution: Any) -> Any:
    """The work plane as a direct call of ``agent`` sees it (for two-phase service tests)."""
    return rt.work.bind(CallContext(agent_id=agent, execution=execution))


def count(rt: Runtime, sql: str, params: tuple = ()) -> int:
    """``SELECT COUNT(*) …`` on the runtime's store."""
    return int(rt.store.query(sql, params)[0][0])
