"""Tool input as a person reads it, and a one-line glance at a human receipt (pure text; no Jupyter import).

Used where a tool call is shown beside its receipt (the agent view's expanded tool calls): the
input is not one line of JSON with escaped ``\\n`` but one ``key: value`` line per field, a
multi-line string (a patch, a script, a message) as an indented block, anything else as
indented JSON; a long input is cut at a line end with a visible ``[… N more characters]`` line.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["INPUT_CHARS", "glance", "pretty_input"]

#: Most characters of a tool input shown before it is cut (with a marker).
INPUT_CHARS = 6000


def _block(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.rstrip("\n").split("\n")
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str).split("\n")


def pretty_input(value: Any, limit: int = INPUT_CHARS) -> str:
    """A tool call's input as readable text.

    Args:
        value: The input (usually a dict of the tool's fields, in the model's order).
        limit: Most characters shown; more is cut at a line end (or mid-line in one very long
            line) and a ``[… N more characters not shown]`` line says how much.

    Returns:
        ``key: value`` lines; a string with line breaks or a nested value as an indented block.
    """
    if not isinstance(value, dict):
        lines = _block(value)
    else:
        lines = []
        for key, item in value.items():
            if isinstance(item, str) and "\n" not in item:
                lines.append(f"{key}: {item}")
            elif isinstance(item, (int, float, bool)) or item is None:
                lines.append(f"{key}: {json.dumps(item)}")
            else:
                lines.append(f"{key}:")
                lines += ["    " + line if line else "" for line in _block(item)]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    return text[:cut] + f"\n[… {len(text) - cut} more characters not shown]"


def glance(human: str, width: int = 120) -> str:
    """The first two field lines of a human receipt, on one line: what a collapsed tool call shows
    when its result has no summary text (e.g. ``id work_… · objective Write the report``)."""
    picked = []
    for line in human.splitlines()[1:]:
        words = " ".join(line.split())
        if not words or words.endswith(":"):
            continue  # a section title: its fields follow
        picked.append(words)
        if len(picked) == 2:
            break
    text = " · ".join(picked)
    return text if len(text) <= width else text[: width - 1] + "…"
