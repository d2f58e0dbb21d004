"""What a saved notebook may hold: no secret value (D6, D12; :func:`scrub_secrets`, every run's executed copy) and,
for ``--holon-nb-update``, no path of the machine that ran it (issue 26 item 12; :func:`mask_saved_paths`).

A saved notebook is read on GitHub, nbviewer and other checkouts. :func:`mask_saved_paths` replaces every
absolute path under the run's roots (holon home, workspace and its git checkout, site-packages, the
harness's folders, and with the ``tmp`` mask any temporary folder) by the placeholder the comparison
uses (``<HOME>``, ``<WS>``, ``<REPO>``, ``<site-packages>``, ``<TMP>/<tmp>``), in the same way the
comparison masks a fresh run, so a saved notebook still compares equal and names no maintainer's folder.
The runtime's own output (receipts, views, cards, widget state) gets every temporary path masked; user
output only what :meth:`~holon_nb.testing.normalize.Normalizer.text` masks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
from nbformat import NotebookNode

from ..render._scrubbing import Scrubber

if TYPE_CHECKING:
    from ._summary import RunSummary
    from .normalize import Normalizer

__all__ = ["mask_saved_paths", "save_executed", "scrub_secrets"]

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


def scrub_secrets(nb: NotebookNode, environ: Mapping[str, str], extra: Iterable[str] = ()) -> None:
    """D12: secret values never reach the saved file (cell outputs and widget state; sources untouched).

    ``environ`` is the kernel's starting environment; ``extra`` the values the kernel reported
    (variables set in cells, configured secrets).
    """
    scrubber = Scrubber(environ, extra=extra)
    for cell in nb.cells:
        if cell.get("outputs"):
            _scrub_streams(cell.outputs, scrubber)
            cell.outputs = [nbformat.from_dict(scrubber.value(dict(out))) for out in cell.outputs]
    if "widgets" in nb.metadata:
        nb.metadata["widgets"] = nbformat.from_dict(scrubber.value(nb.metadata["widgets"]))


def _scrub_streams(outputs: list[Any], scrubber: Scrubber) -> None:
    """D12: scrub each run of adjacent stream outputs as one text (a secret printed in two writes arrives
    as two outputs, and a front end shows a cell's stdout and stderr outputs one after the other, so a
    secret printed half to each reads whole); each output keeps its place, the redaction goes where the
    secret starts."""
    i = 0
    while i < len(outputs):
        out = outputs[i]
        if out.get("output_type") != "stream":
            i += 1
            continue
        j = i
        while j + 1 < len(outputs) and outputs[j + 1].get("output_type") == "stream":
            j += 1
        if j > i:
            texts = [
                "".join(o.get("text", "")) if isinstance(o.get("text"), list) else o.get("text", "")
                for o in outputs[i : j + 1]
            ]
            for o, text in zip(outputs[i : j + 1], scrubber.pieces(texts), strict=False):
                o["text"] = text
        i = j + 1


def save_executed(nb: NotebookNode, out: Path, summary: RunSummary) -> Path:
    """Write ``nb`` to ``out``; when that fails after all (a full disk), to a new temporary directory,
    with a problem saying where (so the run fails and its results are not lost). Returns the path."""
    try:
        nbformat.write(nb, out)
        return out
    except OSError as exc:
        fallback = Path(tempfile.mkdtemp(prefix="holon-nb-run-")) / "executed.ipynb"
        nbformat.write(nb, fallback)
        summary.problems.append(f"could not save the executed notebook to {out} ({exc}); saved it to {fallback}")
        return fallback
