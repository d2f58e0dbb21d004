"""Read-only views for ``%holon status``, ``%holon tools`` and ``%holon config``.

Nothing here changes runtime state: status reads ``Runtime.status()``, the
tool table is derived from the registry (never written twice), the config
table reads traits and settings.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Any

from ..runtime import Runtime, RuntimeSettings
from ..runtime.core._loop import THREAD_NAME
from ..tools._registry import Registry
from ..tools._spec import Family
from ._config import HolonNB
from ._display import Table

__all__ = ["config_table", "status_table", "tools_table"]


def status_table(rt: Runtime, tracked: list[str]) -> Table:
    """A key/value table of the runtime's state (changes nothing).

    Args:
        rt: The runtime.
        tracked: Ids of tasks promoted in this kernel since the extension loaded.
    """
    st = dict(rt.status())
    st["runtime_threads"] = sum(1 for t in threading.enumerate() if t.name == THREAD_NAME)
    st["tasks_started_here"] = len(tracked)
    tasks = st.get("tasks") or {}
    rows: list[list[Any]] = [
        [k, ", ".join(f"{a}={b}" for a, b in v.items()) if isinstance(v, dict) else v]
        for k, v in st.items()
        if k != "tasks"
    ]
    rows.append(["tasks", ", ".join(f"{k}={v}" for k, v in sorted(tasks.items())) or "none"])
    return Table("holon_nb runtime", ["key", "value"], rows, data=st)


def _facing(model_facing: bool, alias_of: str | None) -> str:
    if model_facing:
        return "yes"
    return f"no (alias of {alias_of})" if alias_of else "no"


def tools_table(registry: Registry, notebook_tools: bool = False) -> Table:
    """Every registered tool with its family, stability and whether models see it; the opt-in Notebook family
    (issue 28) only while ``notebook_tools`` is on (its code runs and edits say they ask first)."""
    specs = [s for s in registry if notebook_tools or s.family is not Family.NOTEBOOK]
    rows = [
        [s.name, s.family.value, s.stability.value, _facing(s.model_facing, s.alias_of) + _asks(s.asks_approval)]
        for s in specs
    ]
    data = [
        {"name": s.name, "family": s.family.value, "stability": s.stability.value, "model_facing": s.model_facing}
        for s in specs
    ]
    return Table(f"{len(rows)} tools", ["tool", "family", "stability", "model-facing"], rows, data=data)


def _asks(asks: bool) -> str:
    return " (asks first)" if asks else ""


def config_table(config: HolonNB, settings: RuntimeSettings) -> Table:
    """The ``HolonNB`` options (value and help) followed by the runtime settings in effect."""
    rows: list[list[Any]] = []
    for name, trait in sorted(config.traits(config=True).items()):
        help_text = re.split(r"\.\s+(?=[A-Z$`(])", trait.help or "")[0]  # its first sentence ("e.g. x" stays)
        rows.append([f"HolonNB.{name}", getattr(config, name), help_text])
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if f.name == "extra_secrets":
            value = f"{len(value)} value(s)"
        rows.append([f"settings.{f.name}", value, "in effect in the runtime"])
    return Table("holon_nb configuration (%config HolonNB.<name> = value)", ["option", "value", "meaning"], rows)
