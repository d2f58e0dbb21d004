"""Papermill-style parameters for ``holon-nb run -p NAME=VALUE`` (notebook-tests spec §1.2).

The values go into a new code cell tagged ``injected-parameters``, placed
right after the first cell tagged ``parameters`` (at the top when there is
none), replacing an ``injected-parameters`` cell left by an earlier run.

Example::

    inject_parameters(nb, {"n": "3", "name": '"x"'})   # adds: n = 3 / name = "x"
"""

from __future__ import annotations

import json
import keyword
import math
from collections.abc import Mapping
from typing import Any

import nbformat
from nbformat import NotebookNode

__all__ = ["parse_value", "python_literal", "inject_parameters"]


def parse_value(text: str) -> Any:
    """Parse a ``-p`` value: JSON when it parses (``3``, ``"x"``, ``[1]``, ``true``), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def python_literal(value: Any) -> str:
    """Render a JSON value as Python source (strings with double quotes, as papermill does).

    Raises:
        TypeError: for a value JSON cannot produce.
    """
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as a parameter")


def inject_parameters(nb: NotebookNode, parameters: Mapping[str, str]) -> int | None:
    """Insert the ``injected-parameters`` cell into ``nb`` (in place).

    Args:
        nb: A version-4 notebook.
        parameters: ``{name: raw value text}`` as given on the command line.

    Returns:
        The index of the injected cell, or None when ``parameters`` is empty.

    Raises:
        ValueError: if a name is not a Python identifier (or is a keyword).
    """
    if not parameters:
        return None
    for name in parameters:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"parameter name {name!r} is not a Python identifier")
    lines = ["# Parameters injected by holon-nb run"]
    lines += [f"{name} = {python_literal(parse_value(raw))}" for name, raw in parameters.items()]
    cell = nbformat.v4.new_code_cell("\n".join(lines))
    cell.metadata["tags"] = ["injected-parameters"]

    cells = nb.cells
    old = [i for i, c in enumerate(cells) if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    for i in reversed(old):
        del cells[i]
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    index = tagged[0] + 1 if tagged else 0
    cells.insert(index, cell)
    return index
