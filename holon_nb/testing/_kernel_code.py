"""Code the harness runs inside the kernel (as Python source strings), and when.

- :data:`PRELOAD` before the first cell, when the notebook may use holon_nb
  (:func:`needs_holon`): ``%load_ext holon_nb``, then the notebook's own first
  ``%load_ext holon_nb`` is silent, as in a fresh interactive kernel, instead of
  printing IPython's "already loaded"; ``%reload_ext`` keeps its usual meaning.
  A notebook that never names holon_nb runs in a kernel without it, as in a plain
  Jupyter kernel (and nbval's): nothing of holon_nb is imported there for it.
- :data:`TRAILING` after the last cell, as a synthetic trailing execution of
  it: ``holon_nb.notebook.wait_and_report(timeout)`` (notebook-tests spec §4),
  leaving the ids still running in ``_holon_nb_left``, then
  ``freeze_live_boards``: each ``%workitems`` board in the saved notebook
  says it stopped updating. Falls back to
  ``Runtime.wait_for_tasks`` when the notebook layer lacks ``wait_and_report``.
  In a kernel that never imported holon_nb it imports nothing and leaves ``[]``.
- :data:`FINISH`, silent, right after it (one request instead of three): the
  secret values the kernel knows (``_holon_nb_finish[0]``), the ids still
  running (``[1]``), and, when nothing runs, the extension unloaded so the
  runtime closes before the kernel is shut down (``[2]`` True).
- :data:`FINISH_PLAIN` instead, when holon_nb was not preloaded: the kernel's
  environment (the harness scrubs its secret-named values, as the runtime's
  scrubber would), or None when holon_nb came into the kernel after all, or its
  configuration may name more secrets (a ``HolonNB`` section in the IPython config,
  a ``HOLON…`` variable the harness did not set): then :data:`LOAD` and :data:`FINISH`,
  so the secrets are exactly those a preloaded runtime would scrub.
- :data:`STOP`: stop the tasks still running (their final receipts land in the
  cells that started them); then :data:`UNLOAD`, silent.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from ._tags import RESTART_TAG, nbmake_code

__all__ = [
    "FINISH",
    "FINISH_PLAIN",
    "FREEZE",
    "HARNESS_VARIABLES",
    "HOLON_MAGICS",
    "LOAD",
    "PRELOAD",
    "SECRETS",
    "STOP",
    "TEST_SETTINGS",
    "TRAILING",
    "UNLOAD",
    "needs_holon",
]

#: The magics ``%load_ext holon_nb`` registers, line and cell (a test compares them with a loaded kernel's).
HOLON_MAGICS = (
    *("agent", "agent_status", "agents", "exec", "holon", "image", "memory", "models", "patch", "task"),
    *("task_input", "task_output", "task_stop", "tasks", "timer", "timers", "tool", "trigger", "waitfor"),
    *("web", "workitem", "workitems", "workspace", "worktree", "xsearch"),
)
#: Keys of a notebook's ``metadata.holon_nb`` that only the harness and the comparison read (none is read
#: in the kernel); any other key, or holon_nb metadata on a cell, has holon_nb preloaded.
TEST_SETTINGS = frozenset(
    (
        "allow_running_tasks",
        "ignore_mimetypes",
        "lax",
        "masks",
        "mimetypes",
        "normalize",
        "recorded_roots",
        "shared_dir",
    )
)
#: What the harness sets in the kernel's environment itself (:func:`~holon_nb.testing._kernels.kernel_env`).
HARNESS_VARIABLES = ("HOLON_NB_HOME", "HOLON_NB_HEADLESS", "HOLON_NB_CASSETTE_MODE", "HOLON_NB_NOTEBOOK")
# holon named in any case (%load_ext holon_nb, import holon_nb, %config HolonNB, $HOLON_NB_…), one of its
# magics, or IPython's magics reached from Python (get_ipython().run_line_magic("exec", …))
_HOLON_MIMETYPE = "application/vnd.holon."
_MAY_USE_HOLON = re.compile(
    r"holon|get_?ipython|run_line_magic|run_cell_magic|alias_magic|%%?(?:" + "|".join(HOLON_MAGICS) + r")\b",
    re.IGNORECASE,
)


def needs_holon(nb: Mapping[str, Any]) -> bool:
    """True when the notebook may use holon_nb, so the kernel loads it before the first cell (:data:`PRELOAD`).

    That is when a code cell's source, or the code nbmake's metadata runs after it, names holon in any case,
    calls one of :data:`HOLON_MAGICS` or reaches IPython's magics from Python (``get_ipython()``); a saved
    output is holon_nb's (an ``application/vnd.holon.*`` mimetype); a cell has holon_nb metadata or the
    ``holon-restart-kernel`` tag; or ``metadata.holon_nb`` holds a key besides :data:`TEST_SETTINGS`. A
    notebook that uses ``%exec`` without ``%load_ext holon_nb`` still runs, as before.
    """
    meta = (nb.get("metadata") or {}).get("holon_nb")
    if isinstance(meta, Mapping) and set(meta) - TEST_SETTINGS:
        return True
    for cell in nb.get("cells") or []:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source") or ""
        source = "".join(source) if isinstance(source, list) else str(source)
        if _MAY_USE_HOLON.search(source) or _MAY_USE_HOLON.search(nbmake_code(cell)):
            return True
        cell_meta = cell.get("metadata") or {}
        if "holon_nb" in cell_meta or RESTART_TAG in (cell_meta.get("tags") or []):
            return True
        if any(str(m).startswith(_HOLON_MIMETYPE) for o in cell.get("outputs") or [] for m in o.get("data") or {}):
            return True
    return False


PRELOAD = """\
def _holon_nb_preload():
    ip = get_ipython()
    ip.run_line_magic("load_ext", "holon_nb")
    manager = ip.extension_manager
    original = manager.load_extension

    def load_extension(module_str):
        result = original(module_str)
        if module_str == "holon_nb" and result == "already loaded":
            manager.load_extension = original
            return None
        return result

    manager.load_extension = load_extension
_holon_nb_preload()
del _holon_nb_preload
"""

TRAILING = """\
def _holon_nb_final_wait(timeout):
    import sys
    holon_nb = sys.modules.get("holon_nb")
    if holon_nb is None:  # never imported in this kernel: nothing of it runs
        return []
    try:
        holon_nb.get_runtime()  # not loaded (or closed): nothing to wait for
    except RuntimeError:
        return []
    from holon_nb.notebook import wait_and_report
    left = list(wait_and_report(timeout) or [])
    try:
        from holon_nb.notebook import freeze_live_boards
    except ImportError:  # an older holon_nb in the kernel: its boards stay widgets
        return left
    freeze_live_boards("no longer updated: the headless run ended; re-run this cell to refresh")
    return left
_holon_nb_left = _holon_nb_final_wait({timeout!r})
del _holon_nb_final_wait
"""

STOP = """\
def _holon_nb_stop(ids):
    import holon_nb
    try:
        runtime = holon_nb.get_runtime()
    except RuntimeError:
        return
    for task_id in ids:
        runtime.call("TaskStop", {"task_id": task_id})
    runtime.wait_for_tasks(5)
    from holon_nb.notebook import wait_and_report
    wait_and_report(5)  # the stopped tasks' final receipts, into the cells that started them
_holon_nb_stop(_holon_nb_left)
del _holon_nb_stop
"""

FREEZE = """\
def _holon_nb_freeze():
    try:
        from holon_nb.notebook import freeze_live_boards, unload
    except ImportError:  # not loaded, or an older holon_nb: nothing to freeze
        return
    freeze_live_boards("no longer updated: the kernel restarted; re-run this cell to refresh")
    try:  # as the restart would at exit, while this kernel's output still reaches the notebook
        unload(get_ipython(), note="the kernel restarted")
    except TypeError:  # an older holon_nb: its runtime closes at exit
        pass
_holon_nb_freeze()
del _holon_nb_freeze
"""
"""Run before a ``holon-restart-kernel`` restart: the old kernel's live ``%workitems`` boards become static
boards in the saved notebook (their widgets die with the kernel), and its runtime closes, as the restart
would close it at exit: its running tasks end ``interrupted`` and their live views become static views
saying so, instead of widgets waiting for a final receipt that never comes."""

UNLOAD = """\
get_ipython().run_line_magic("unload_ext", "holon_nb")  # close the runtime before the kernel stops
"""

SECRETS = """\
def _holon_nb_secrets():
    from holon_nb.render._scrubbing import Scrubber
    try:
        import holon_nb
        return list(holon_nb.get_runtime().scrubber().values)
    except Exception:
        return list(Scrubber().values)
"""
"""Defines ``_holon_nb_secrets()``: the secret values the kernel knows (its environment as it is now,
including variables set in cells, and the runtime's configured secrets), so the saved notebook is
scrubbed of them too (D12)."""

FINISH = (
    SECRETS
    + """\
def _holon_nb_finish_run():
    secrets, left, unloaded = _holon_nb_secrets(), list(globals().get("_holon_nb_left") or []), False
    if not left:
        try:
            get_ipython().run_line_magic("unload_ext", "holon_nb")
            unloaded = True
        except Exception:
            pass
    return [secrets, left, unloaded]
_holon_nb_finish = _holon_nb_finish_run()
del _holon_nb_finish_run
"""
)
"""Secrets, the tasks left running, and (when none) the extension unloaded, in one silent request; the
harness reads ``_holon_nb_finish``."""

FINISH_PLAIN = """\
def _holon_nb_finish_plain():
    import os, sys
    if "holon_nb" in sys.modules or "HolonNB" in get_ipython().config:
        return None
    if any(name.startswith("HOLON") and name not in HARNESS_VARIABLES for name in os.environ):
        return None
    return dict(os.environ)
_holon_nb_finish = _holon_nb_finish_plain()
del _holon_nb_finish_plain
""".replace("HARNESS_VARIABLES", repr(HARNESS_VARIABLES))
"""Run silently instead of :data:`FINISH` when holon_nb was not preloaded; the harness reads ``_holon_nb_finish``:
the kernel's environment, or None (holon_nb was imported after all, or may be configured to name secrets)."""

LOAD = """\
get_ipython().extension_manager.load_extension("holon_nb")  # loaded already (a profile's extensions): nothing
"""
"""Loads holon_nb at the end of a run that did not preload it, when :data:`FINISH_PLAIN` answered None, so
:data:`FINISH` gathers the secrets its runtime knows."""

# ---------------------------------------------------------------- the notebook document (issue 28)
DOCUMENT_DRAIN = "__import__('holon_nb.notebook._kernel._document', fromlist=['drain']).drain()"
"""The edits agents made to the headless document since it was last asked, as JSON text (the queue is emptied)."""
#: The name of :data:`DOCUMENT_DRAIN` among a request's ``user_expressions`` (:func:`carry_drain`).
DRAIN_KEY = "holon_nb_document_ops"


def carry_drain(kc: Any) -> None:
    """Make every execute request of the kernel client ``kc`` that names no ``user_expressions`` carry
    :data:`DOCUMENT_DRAIN` as the user expression :data:`DRAIN_KEY` (issue 30: the harness read the edits after
    each cell with a request of its own). The kernel evaluates it after the request's code, in the same request,
    so the reply brings the edits (:func:`drained_ops`); IPython evaluates user expressions only when the code
    raised nothing, so a reply with status ``error`` brings none and the edits stay queued in the kernel.
    Requests that name their own expressions (the harness's silent ones) are left as they are."""
    execute = kc.execute

    def execute_with_drain(code: str, *args: Any, **kwargs: Any) -> Any:
        if not args and kwargs.get("user_expressions") is None:
            kwargs["user_expressions"] = {DRAIN_KEY: DOCUMENT_DRAIN}
        return execute(code, *args, **kwargs)

    kc.execute = execute_with_drain


def drained_ops(content: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The document edits an execute reply's ``content`` brought (:func:`carry_drain`), oldest first; None when it
    brought none (the code raised, or the request did not carry the expression): they are still in the kernel."""
    value = (content.get("user_expressions") or {}).get(DRAIN_KEY) or {}
    if value.get("status") != "ok":
        return None
    try:
        ops = json.loads(ast.literal_eval(value["data"]["text/plain"]))
    except (KeyError, TypeError, ValueError, SyntaxError):
        return None
    return ops if isinstance(ops, list) else None


def document_load(nb: Any, path: str | None) -> str:
    """Code that hands the kernel the notebook it runs, for the Notebook tools (ReadNotebook, EditNotebook):
    ``{"path", "cells": [{id, cell_type, source, outputs}]}`` loaded into
    :data:`holon_nb.notebook._kernel._document.HEADLESS`."""
    cells = [
        {
            "id": cell.get("id") or f"cell-{i}",
            "cell_type": cell.cell_type,
            "source": cell.source,
            "outputs": list(cell.get("outputs") or []),
        }
        for i, cell in enumerate(nb.cells)
    ]
    doc = json.dumps({"path": path, "cells": cells})
    return f"__import__('holon_nb.notebook._kernel._document', fromlist=['HEADLESS']).HEADLESS.load({doc!r})"


def agent_inserted(cell: Any) -> bool:
    """True for a cell an agent inserted in an earlier run (dropped before a run re-creates it)."""
    return bool(((cell.get("metadata") or {}).get("holon_nb") or {}).get("inserted_by") == "agent")


def _find(nb: Any, op: dict[str, Any]) -> int | None:
    for i, cell in enumerate(nb.cells):
        if (cell.get("id") or f"cell-{i}") == op.get("cell_id"):
            return i
    return None


def apply_document_ops(nb: Any, ops: list[dict[str, Any]]) -> None:
    """Apply the kernel's queued document edits (:func:`holon_nb.notebook._kernel._document.drain`) to ``nb``:
    ``insert`` (a new cell with its id and metadata), ``replace``, ``delete``, ``move`` and ``outputs`` (the
    outputs ExecuteCell recorded). An edit of a cell that is not there any more is skipped."""
    import nbformat

    for op in ops:
        kind = op.get("op")
        if kind == "insert":
            spec = op["cell"]
            make = nbformat.v4.new_markdown_cell if spec.get("cell_type") == "markdown" else nbformat.v4.new_code_cell
            cell = make(spec.get("source", ""), metadata=spec.get("metadata") or {})
            cell["id"] = spec["id"]
            nb.cells.insert(min(int(op["index"]), len(nb.cells)), cell)
            continue
        index = _find(nb, op)
        if index is None:
            continue
        if kind == "replace":
            nb.cells[index].source = op.get("source", "")
        elif kind == "delete":
            nb.cells.pop(index)
        elif kind == "move":
            nb.cells.insert(int(op["to_index"]), nb.cells.pop(index))
        elif kind == "outputs" and nb.cells[index].cell_type == "code":
            nb.cells[index].outputs = [nbformat.from_dict(o) for o in op.get("outputs") or []]
