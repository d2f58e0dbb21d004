"""Code the harness runs inside the kernel (as Python source strings).

- :data:`PRELOAD` before the first cell: ``%load_ext holon_nb``, then the
  notebook's own first ``%load_ext holon_nb`` is silent, as in a fresh
  interactive kernel, instead of printing IPython's "already loaded";
  ``%reload_ext`` keeps its usual meaning.
- :data:`TRAILING` after the last cell, as a synthetic trailing execution of
  it: ``holon_nb.notebook.wait_and_report(timeout)`` (notebook-tests spec §4),
  leaving the ids still running in ``_holon_nb_left``, then
  ``freeze_live_boards``: each ``%workitems`` board in the saved notebook
  says it stopped updating. Falls back to
  ``Runtime.wait_for_tasks`` when the notebook layer lacks ``wait_and_report``.
- :data:`FINISH`, silent, right after it (one request instead of three): the
  secret values the kernel knows (``_holon_nb_finish[0]``), the ids still
  running (``[1]``), and, when nothing runs, the extension unloaded so the
  runtime closes before the kernel is shut down (``[2]`` True).
- :data:`STOP`: stop the tasks still running (their final receipts land in the
  cells that started them); then :data:`UNLOAD`, silent.
"""

from __future__ import annotations

__all__ = ["FINISH", "FREEZE", "PRELOAD", "SECRETS", "STOP", "TRAILING", "UNLOAD"]

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
    import holon_nb
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
    from holon_nb.tools.receipts import Scrubber
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
