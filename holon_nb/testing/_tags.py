"""Cell tags the harness and the comparison read (notebook-tests spec §3.4, §3.6), with nbval's spellings
(and nbclient's ``skip-execution``, which nbmake documents).

=====================  ======================================  ===========================
meaning                holon_nb tag                            also accepted (nbval)
=====================  ======================================  ===========================
``skip``               ``holon-skip`` (not run, not compared)  ``nbval-skip``, ``# NBVAL_SKIP``,
                                                               ``skip-execution`` (nbclient's)
``ignore``             ``holon-ignore-output``                 ``nbval-ignore-output``, ``# NBVAL_IGNORE_OUTPUT``,
                                                               ``# PYTEST_VALIDATE_IGNORE_OUTPUT`` (legacy)
``check``              ``holon-check-output`` (in lax books)   ``nbval-check-output``, ``# NBVAL_CHECK_OUTPUT``
``raises``             ``raises-exception`` (nbclient's)       ``nbval-raises-exception``, ``# NBVAL_RAISES_EXCEPTION``
``ignore-stdout``      ``holon-ignore-stdout`` (run; its
                       stdout not compared)
``ignore-stderr``      ``holon-ignore-stderr`` (run; its
                       stderr not compared)
=====================  ======================================  ===========================

A ``# NBVAL_…`` marker counts when it is a comment line of the cell's source, as nbval reads it.

Also here, the other notebook settings the harness reads as nbclient and nbmake mean them: the notebook's
``metadata.execution`` (:func:`execution_settings`) and a cell's ``metadata.nbmake`` (:func:`nbmake_code`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RESTART_TAG", "TAGS", "execution_settings", "has_tag", "nbmake_code"]

#: Cell tag: restart the kernel (as JupyterLab's Restart Kernel does) before running this cell.
RESTART_TAG = "holon-restart-kernel"

TAGS: dict[str, tuple[str, ...]] = {
    "skip": ("holon-skip", "nbval-skip", "skip-execution"),
    "ignore": ("holon-ignore-output", "nbval-ignore-output"),
    "check": ("holon-check-output", "nbval-check-output"),
    "raises": ("raises-exception", "nbval-raises-exception"),
    "ignore-stdout": ("holon-ignore-stdout",),
    "ignore-stderr": ("holon-ignore-stderr",),
}
_MARKERS: dict[str, tuple[str, ...]] = {
    "skip": ("NBVAL_SKIP",),
    "ignore": ("NBVAL_IGNORE_OUTPUT", "PYTEST_VALIDATE_IGNORE_OUTPUT"),  # the second: nbval's legacy spelling
    "check": ("NBVAL_CHECK_OUTPUT",),
    "raises": ("NBVAL_RAISES_EXCEPTION",),
}


def has_tag(cell: Mapping[str, Any], meaning: str) -> bool:
    """True when ``cell`` carries a tag (or nbval comment marker) of ``meaning`` (a :data:`TAGS` key)."""
    tags = (cell.get("metadata") or {}).get("tags") or []
    if any(t in tags for t in TAGS[meaning]):
        return True
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    markers = _MARKERS.get(meaning, ())
    return any(
        line.strip().lstrip("#").strip() in markers for line in source.splitlines() if line.strip().startswith("#")
    )


def execution_settings(nb: Mapping[str, Any]) -> dict[str, Any]:
    """The notebook's ``metadata.execution`` settings nbclient and nbmake read: ``timeout`` (a positive
    number of seconds per cell) and ``allow_errors`` (a bool); others, and values of another type, are
    left out."""
    meta = (nb.get("metadata") or {}).get("execution")
    if not isinstance(meta, Mapping):
        return {}
    found: dict[str, Any] = {}
    timeout = meta.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        found["timeout"] = float(timeout)
    if isinstance(meta.get("allow_errors"), bool):
        found["allow_errors"] = meta["allow_errors"]
    return found


def nbmake_code(cell: Mapping[str, Any]) -> str:
    """The code nbmake runs after ``cell``: an assignment per ``metadata.nbmake.mock`` entry, then the
    lines of ``metadata.nbmake.post_cell_execute`` ("" when it has neither)."""
    meta = (cell.get("metadata") or {}).get("nbmake")
    if not isinstance(meta, Mapping):
        return ""
    mock = meta.get("mock")
    lines = (
        [f"{name} = {value!r}" for name, value in mock.items() if str(name).isidentifier()]
        if isinstance(mock, Mapping)
        else []
    )
    post = meta.get("post_cell_execute")
    if isinstance(post, list):
        lines += [str(line) for line in post]
    return "\n".join(lines)
