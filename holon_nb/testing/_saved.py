"""What ``--holon-nb-update`` saves: outputs without the paths of the machine that ran them (issue 26 item 12).

A saved notebook is read on GitHub, nbviewer and other checkouts. :func:`mask_saved_paths` replaces every
absolute path under the run's roots (holon home, workspace and its git checkout, site-packages, the
harness's folders, and with the ``tmp`` mask any temporary folder) by the placeholder the comparison
uses (``<HOME>``, ``<WS>``, ``<REPO>``, ``<site-packages>``, ``<TMP>/<tmp>``), in the same way the
comparison masks a fresh run, so a saved notebook still compares equal and names no maintainer's folder.
The runtime's own output (receipts, views, cards, widget state) gets every temporary path masked; user
output only what :meth:`~holon_nb.testing.normalize.Normalizer.text` masks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbformat import NotebookNode

from .normalize import Normalizer

__all__ = ["mask_saved_paths"]

_HOLON_PREFIX = "application/vnd.holon."


def _each_string(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_each_string(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _each_string(v, fn) for k, v in value.items()}
    return value


def _bundle(data: dict[str, Any], runtime: Callable[[str], str], user: Callable[[str], str]) -> dict[str, Any]:
    from ._compare import _is_runtime

    own = _is_runtime(data)
    out = {}
    for mime, value in data.items():
        if mime.startswith("image/") and mime != "image/svg+xml":
            out[mime] = value  # base64 pixels
        elif mime.startswith(_HOLON_PREFIX) or mime.endswith("+json") or own:
            out[mime] = _each_string(value, runtime)
        else:
            out[mime] = _each_string(value, user)
    return out


def mask_saved_paths(nb: NotebookNode, norm: Normalizer) -> bool:
    """Replace the run's absolute paths in every output and in the saved widget state of ``nb``, in place.

    Args:
        nb: The notebook about to be saved.
        norm: The comparison's normaliser (its roots and masks decide what is a path of this run).

    Returns:
        True when anything changed.
    """

    def runtime(text: str) -> str:
        return norm.paths(text)

    def user(text: str) -> str:
        return norm.paths(text, all_tmp="tmp" in norm.masks)

    changed = False
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            before = dict(out)
            kind = out.get("output_type")
            if kind == "stream":
                out["text"] = _each_string(out.get("text", ""), user)
            elif kind in ("display_data", "execute_result", "update_display_data"):
                out["data"] = _bundle(dict(out.get("data") or {}), runtime, user)
            elif kind == "error":
                out["evalue"] = user(out.get("evalue", ""))
                out["traceback"] = _each_string(out.get("traceback", []), user)
            changed = changed or dict(out) != before
    widgets = nb.metadata.get("widgets")
    if widgets is not None:
        masked = _each_string(widgets, runtime)
        if masked != widgets:
            nb.metadata["widgets"] = masked
            changed = True
    return changed
