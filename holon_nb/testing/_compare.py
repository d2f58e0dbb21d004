"""Comparing a notebook's saved outputs with a fresh run's (notebook-tests spec §3).

:func:`compare_notebooks` takes the saved notebook and the executed one (same
cells, same order) and returns one :class:`CellDiff` per differing code cell,
each with a readable ``message``: a unified diff of the normalised text, or for
a receipt the JSON pointer of every differing value with expected and actual.

What is compared, per code cell (after :func:`apply_display_updates`):

- streams: all ``stdout`` text of the cell as one text, all ``stderr`` as another,
  rendered as a terminal would (:func:`~holon_nb.testing.normalize.terminal_text`);
- each ``display_data``/``execute_result`` in order: the receipt when one is in the
  bundle (its ``text/plain``/``text/html`` siblings are derived from it and skipped);
  else ``text/plain``, and ``text/html`` (as :func:`~holon_nb.testing._markup.normalize_html` text) when
  ``text/plain`` is absent or a placeholder repr (``<IPython.core.display.HTML object>``); images by
  content (:class:`~holon_nb.testing._images.ImageValue`: size within a tolerance, then the
  pixels that differ beyond a threshold; an image saved and drawn by different software, as the images
  name it, is listed as not compared; a raster image beside ``text/latex`` is a rendering of the
  LaTeX, which is compared instead; SVG as normalised markup); widget views by their
  model's saved state (:class:`WidgetValue`: class, ``value``, ``description``), except a holon_nb view
  marked with ``application/vnd.holon.view+json`` (an ``%%agent`` turn): its ``text/plain`` is its
  final transcript and is compared; other types as masked text; a live view's standby fallback or
  spent marker (``application/vnd.holon.live-fallback+json``) is skipped;
- an error output: its exception name and message (the message through the same masks as user text).
  A fresh error outside a ``raises-exception`` cell fails the
  run before any comparison (also one raised after the cell body, e.g. by a ``_repr_html_``); a saved
  error where this run raised nothing is a difference.

Cells tagged ``holon-skip`` or ``holon-ignore-output`` are not compared, and the stdout or stderr of a
cell tagged ``holon-ignore-stdout`` or ``holon-ignore-stderr`` is not; in a
notebook tagged ``holon-lax`` only cells tagged ``holon-check-output`` are. The outputs the harness's
final wait appends to the last code cell (``metadata.holon_nb.trailing_outputs_from`` onwards: final
receipts of tasks that ended after the last cell) are compared even when that cell is tagged
``holon-ignore-output``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._images import ImageTolerance, ImageValue
from ._markup import is_placeholder, normalize_html, normalize_svg
from ._tags import has_tag
from .normalize import RESULT_MIMETYPE, Normalizer, json_differences, mask_json

__all__ = [
    "CellDiff",
    "CompareOptions",
    "Item",
    "WidgetValue",
    "apply_display_updates",
    "cell_items",
    "compare_cells",
    "compare_notebooks",
    "compared_cells",
    "first_line",
    "not_compared",
    "is_lax",
    "receipt_text_differs",
    "widget_states",
]

WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE_MIMETYPE = "application/vnd.jupyter.widget-state+json"
#: Set by holon_nb views whose text/plain is their readable final state (notebook/_agent_view.py).
VIEW_MIMETYPE = "application/vnd.holon.view+json"
#: Marks a live view's extra outputs, its standby fallback and spent markers (notebook/_liveness.py): skipped.
FALLBACK_MIMETYPE = "application/vnd.holon.live-fallback+json"
LAX_TAG = "holon-lax"
_HOLON_PREFIX = "application/vnd.holon."
_HOLON_CARD = re.compile(r"\s*<div class=['\"]holon-card\b")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
_MAX_POINTERS = 20


@dataclass(frozen=True)
class Item:
    """One normalised output: ``kind`` (``stdout``, ``stderr``, ``receipt``, ``text/plain``,
    ``image/png``, ``error``, …) and ``value`` (text, masked JSON, or an :class:`ImageValue`)."""

    kind: str
    value: Any


@dataclass(frozen=True, eq=False)
class WidgetValue:
    """A widget view as its model's state: ``{"class", "value", "description"}`` (those the model has).

    ``state`` is None when the notebook saved no state for the model; such a view equals any widget
    view (there is nothing to compare it with).
    """

    state: dict[str, Any] | None

    @classmethod
    def of(cls, model: Any, norm: Normalizer) -> WidgetValue:
        """The value of a saved model (``{"model_name": …, "state": {…}}``), strings through the user masks."""
        if not isinstance(model, Mapping):
            return cls(None)
        saved = model.get("state")
        state: Mapping[str, Any] = saved if isinstance(saved, Mapping) else {}
        picked = {"class": model.get("model_name") or state.get("_model_name")}
        picked.update({k: state[k] for k in ("value", "description") if k in state})
        return cls(mask_json(picked, norm.text))

    def differences(self, other: WidgetValue) -> list[tuple[str, Any, Any]]:
        """``[(json_pointer, saved, fresh)]`` over the keys both states have (a notebook saved by an older
        ipywidgets may leave defaults out); none when either has no state."""
        if self.state is None or other.state is None:
            return []
        common = [k for k in self.state if k in other.state]
        return json_differences({k: self.state[k] for k in common}, {k: other.state[k] for k in common})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WidgetValue) and not self.differences(other)

    def __hash__(self) -> int:
        return 0

    def __str__(self) -> str:
        return "widget (no saved state)" if self.state is None else json.dumps(self.state, sort_keys=True)


@dataclass(frozen=True)
class CompareOptions:
    """What the comparison looks at, beyond the defaults (issue 24).

    Attributes:
        mimetypes: Compare exactly these mimetypes of a display bundle (when present), e.g.
            ``("text/plain", "text/html")``; None: the default choice (``text/html`` only when
            ``text/plain`` is absent or a default-repr placeholder such as
            ``<IPython.core.display.HTML object>``).
        ignore_mimetypes: Never compare these mimetypes (``"image/*"`` matches every image type).
        image: Tolerances of raster image comparison (:class:`~holon_nb.testing._images.ImageTolerance`).
    """

    mimetypes: tuple[str, ...] | None = None
    ignore_mimetypes: tuple[str, ...] = ()
    image: ImageTolerance = ImageTolerance()

    def ignored(self, mime: str) -> bool:
        """True when ``mime`` is not compared under :attr:`ignore_mimetypes`."""
        return any(mime == m or (m.endswith("/*") and mime.startswith(m[:-1])) for m in self.ignore_mimetypes)


@dataclass
class CellDiff:
    """A code cell whose outputs differ.

    Attributes:
        index: The cell's index in the notebook.
        first_line: First non-empty line of its source (≤ 60 characters).
        message: Readable report: for the first differing output, a unified diff or JSON pointers.
        pointers: For a receipt, ``[(json_pointer, expected, actual)]`` of the first differing receipt.
    """

    index: int
    first_line: str
    message: str
    pointers: list[tuple[str, Any, Any]] = field(default_factory=list)


def first_line(source: str) -> str:
    """The first non-empty line of ``source``, at most 60 characters."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= 60 else line[:59] + "…"


def is_lax(nb: Mapping[str, Any]) -> bool:
    """True when the notebook is tagged ``holon-lax`` (``metadata.tags`` or ``metadata.holon_nb.lax``)."""
    meta = nb.get("metadata") or {}
    return LAX_TAG in (meta.get("tags") or []) or bool((meta.get("holon_nb") or {}).get("lax"))


def compared_cells(nb: Mapping[str, Any]) -> list[int]:
    """Indices of the code cells whose outputs are compared (notebook-tests spec §3.6; nbval's tags too, see
    :mod:`holon_nb.testing._tags`)."""
    lax = is_lax(nb)
    return [
        i
        for i, cell in enumerate(nb["cells"])
        if cell.get("cell_type") == "code"
        and not has_tag(cell, "skip")
        and not has_tag(cell, "ignore")
        and (not lax or has_tag(cell, "check"))
    ]


def _source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def apply_display_updates(outputs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Outputs as a reader finally sees them: ``update_display_data`` applied to the output with
    the same ``display_id`` (then dropped), and everything before a ``clear_output`` dropped.

    Saved notebooks and nbclient's executed copies already have both applied; a notebook
    written by other tools may still hold the raw messages.
    """
    shown: list[dict[str, Any]] = []
    for out in outputs:
        out = dict(out)
        kind = out.get("output_type")
        if kind == "clear_output":
            shown = []
            continue
        if kind == "update_display_data":
            did = (out.get("transient") or {}).get("display_id")
            for target in shown:
                if did and (target.get("transient") or {}).get("display_id") == did:
                    target["data"], target["metadata"] = out.get("data", {}), out.get("metadata", {})
            continue
        shown.append(out)
    return shown


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _is_runtime(data: Mapping[str, Any]) -> bool:
    """True for the runtime's own output (a board, a note, a table of holon_nb): an
    ``application/vnd.holon.*`` mimetype in the bundle, or HTML that is a holon_nb card
    (``<div class="holon-card …">``, render/_card.py). Its text gets every runtime mask (issue 24, B4)."""
    if any(m.startswith(_HOLON_PREFIX) for m in data):
        return True
    html = data.get("text/html")
    return isinstance(html, (str, list)) and bool(_HOLON_CARD.match(_joined(html)))


def _bundle_items(
    data: Mapping[str, Any],
    norm: Normalizer,
    options: CompareOptions,
    widgets: Mapping[str, Any] | None = None,
) -> list[Item]:
    plain = data.get("text/plain")
    if VIEW_MIMETYPE in data and plain:
        # a holon_nb view whose text/plain is its readable final state (an %%agent transcript), live (a
        # widget) or replaced by its static output once ended: that text is compared, nothing else
        return [Item("view text/plain", norm.runtime_text(_joined(plain)))]
    if WIDGET_MIMETYPE in data:  # any other widget view: by its model's state, when the notebook saved it (B7)
        view = data[WIDGET_MIMETYPE]
        model_id = view.get("model_id") if isinstance(view, Mapping) else None
        model = widgets.get(model_id) if widgets is not None and model_id else None
        return [Item("widget", WidgetValue.of(model, norm))]
    if RESULT_MIMETYPE in data:
        value = data[RESULT_MIMETYPE]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        return [Item("receipt", norm.json(value))]
    items: list[Item] = []
    runtime = _is_runtime(data)
    if options.mimetypes is not None:
        chosen = [m for m in options.mimetypes if m in data]
    else:
        html_counts = "text/html" in data and is_placeholder(_joined(plain) if plain is not None else None)
        chosen = [m for m in data if not (m == "text/html" and not html_counts)]
        if html_counts and plain is not None:  # the placeholder says nothing the markup does not
            chosen.remove("text/plain")
    # a raster image beside LaTeX (sympy's pretty printing) is a rendering of that LaTeX, which is compared:
    # its pixels would add only the renderer's (an older sympy or matplotlib draws other pixels)
    rendered_latex = "text/latex" in chosen and not options.ignored("text/latex") and not options.image.strict
    for mime in sorted(chosen):
        if options.ignored(mime) or (rendered_latex and mime in _IMAGE_TYPES):
            continue
        value = data[mime]
        if mime in _IMAGE_TYPES:
            items.append(Item(mime, ImageValue.from_base64(mime, value, options.image)))
        elif mime == "image/svg+xml":
            items.append(Item(mime, normalize_svg(norm.text(_joined(value)))))
        elif mime == "text/html":
            items.append(Item(mime, normalize_html(norm.text(_joined(value)))))
        elif isinstance(value, (dict, list)) and mime.endswith("json"):
            items.append(Item(mime, norm.json(value) if runtime else mask_json(value, norm.text)))
        else:
            items.append(Item(mime, norm.runtime_text(_joined(value)) if runtime else norm.text(_joined(value))))
    return items


def widget_states(nb: Mapping[str, Any]) -> dict[str, Any]:
    """``{model_id: model}`` of a notebook's saved widget state (``metadata.widgets``), ``{}`` when none."""
    state = (((nb.get("metadata") or {}).get("widgets") or {}).get(WIDGET_STATE_MIMETYPE) or {}).get("state")
    return dict(state) if isinstance(state, Mapping) else {}


def cell_items(
    cell: Mapping[str, Any],
    norm: Normalizer,
    options: CompareOptions | None = None,
    widgets: Mapping[str, Any] | None = None,
) -> list[Item]:
    """The normalised outputs of one code cell, in comparison order (see the module docstring).

    ``widgets`` is the notebook's saved widget state (:func:`widget_states`); without it widget views
    compare equal to any widget view.
    """
    options = options or CompareOptions()
    items: list[Item] = []
    streams: dict[str, str] = {}
    error: Item | None = None
    for out in apply_display_updates(cell.get("outputs") or []):
        kind = out.get("output_type")
        if kind == "stream":
            name = out.get("name", "stdout")
            streams[name] = streams.get(name, "") + _joined(out.get("text", ""))
        elif kind in ("display_data", "execute_result"):
            if FALLBACK_MIMETYPE in (out.get("data") or {}):
                continue  # a live view's standby fallback or a spent marker: never part of what a cell shows
            items.extend(_bundle_items(out.get("data") or {}, norm, options, widgets))
        elif kind == "error":
            error = Item("error", f"{out.get('ename')}: {norm.text(str(out.get('evalue', '')))}")
    for name in ("stdout", "stderr"):
        if name in streams and not has_tag(cell, f"ignore-{name}"):
            text = norm.stream(streams[name])
            if text:
                items.append(Item(name, text))
    if error is not None:  # elsewhere than a raises-exception cell, a saved error is a difference too (B1)
        items.append(error)
    return items


def _as_text(item: Item) -> str:
    if isinstance(item.value, str):
        return item.value
    if isinstance(item.value, (ImageValue, WidgetValue)):
        return str(item.value)
    return json.dumps(item.value, indent=1, sort_keys=True, ensure_ascii=False)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 200 else text[:199] + "…"


def _describe(
    position: int, expected: Item | None, actual: Item | None, labels: tuple[str, str]
) -> tuple[str, list[tuple[str, Any, Any]]]:
    if expected is None or actual is None:
        present = expected or actual
        assert present is not None
        side = labels[0] if actual is None else labels[1]
        text = _as_text(present)
        shown = text if len(text) <= 600 else text[:599] + "…"
        return f"output {position}: {present.kind} only in {side}:\n{shown}", []
    if expected.kind != actual.kind:
        return (
            f"output {position}: {labels[0]} has {expected.kind}, {labels[1]} has {actual.kind}\n"
            + _unified(_as_text(expected), _as_text(actual), labels)
        ), []
    if isinstance(expected.value, WidgetValue) and isinstance(actual.value, WidgetValue):
        pointers = expected.value.differences(actual.value)
        lines = [f"output {position}: widget differs at {len(pointers)} place(s):"]
        lines += [f"  {ptr}: {labels[0]} {_short(e)}, {labels[1]} {_short(a)}" for ptr, e, a in pointers]
        return "\n".join(lines), pointers
    if isinstance(expected.value, ImageValue) and isinstance(actual.value, ImageValue):
        return f"output {position}: {expected.kind} differs: {expected.value.difference(actual.value)}", []
    if expected.kind == "receipt" or (
        isinstance(expected.value, (dict, list)) and isinstance(actual.value, (dict, list))
    ):
        pointers = json_differences(expected.value, actual.value)
        lines = [f"output {position}: {expected.kind} differs at {len(pointers)} place(s):"]
        for ptr, e, a in pointers[:_MAX_POINTERS]:
            lines.append(f"  {ptr}: {labels[0]} {_short(e)}, {labels[1]} {_short(a)}")
        if len(pointers) > _MAX_POINTERS:
            lines.append(f"  … and {len(pointers) - _MAX_POINTERS} more")
        return "\n".join(lines), pointers
    return f"output {position}: {expected.kind} differs:\n" + _unified(_as_text(expected), _as_text(actual), labels), []


def _unified(expected: str, actual: str, labels: tuple[str, str]) -> str:
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), labels[0], labels[1], lineterm="", n=2)
    lines = list(diff)
    if len(lines) > 60:
        lines = lines[:60] + [f"… ({len(lines) - 60} more diff lines)"]
    return "\n".join(lines) if lines else f"(differs only in whitespace) {expected!r} != {actual!r}"


def not_compared(want: list[Item], got: list[Item]) -> list[str]:
    """The images of two item lists (saved, fresh) left uncompared because each names other software as its
    writer (:meth:`~holon_nb.testing._images.ImageValue.other_renderer`), as ``output N: image/png saved by
    …; this run by …``."""
    found = []
    for position, (e, a) in enumerate(zip(want, got, strict=False)):  # a longer side is a difference anyway
        if isinstance(e.value, ImageValue) and isinstance(a.value, ImageValue) and not e.value.tolerance.strict:
            reason = e.value.other_renderer(a.value)
            if reason:
                found.append(f"output {position}: {e.kind} {reason}")
    return found


def compare_cells(
    index: int,
    expected: Mapping[str, Any],
    actual: Mapping[str, Any],
    norm: Normalizer,
    labels: tuple[str, str] = ("saved", "this run"),
    options: CompareOptions | None = None,
    widgets: tuple[Mapping[str, Any] | None, Mapping[str, Any] | None] = (None, None),
    notes: list[str] | None = None,
) -> CellDiff | None:
    """Compare one cell of two notebooks; None when equal after normalisation. ``widgets``: each
    notebook's saved widget state (:func:`widget_states`). ``notes`` gets a line per output left
    uncompared (:func:`not_compared`: ``cell N (first line): output 0: image/png saved by …``)."""
    want, got = cell_items(expected, norm, options, widgets[0]), cell_items(actual, norm, options, widgets[1])
    if notes is not None:
        notes += [f"cell {index} ({first_line(_source(actual))}): {n}" for n in not_compared(want, got)]
    if want == got:
        return None
    for position in range(max(len(want), len(got))):
        e = want[position] if position < len(want) else None
        a = got[position] if position < len(got) else None
        if e != a:
            message, pointers = _describe(position, e, a, labels)
            return CellDiff(index, first_line(_source(actual)), message, pointers)
    raise AssertionError("unreachable: lists differ but no item does")  # pragma: no cover


def compare_notebooks(
    expected: Mapping[str, Any],
    actual: Mapping[str, Any],
    norm: Normalizer,
    labels: tuple[str, str] = ("saved", "this run"),
    cells: Iterable[int] | None = None,
    options: CompareOptions | None = None,
    notes: list[str] | None = None,
) -> list[CellDiff]:
    """Compare every compared cell (default :func:`compared_cells` of ``expected``) under ``options``;
    ``notes`` gets a line per output left uncompared (see :func:`compare_cells`).

    Raises:
        ValueError: when the two notebooks do not have the same cells (count and types).
    """
    a_cells, b_cells = expected["cells"], actual["cells"]
    if [c.get("cell_type") for c in a_cells] != [c.get("cell_type") for c in b_cells]:
        raise ValueError("the notebooks do not have the same cells")
    diffs = []
    states = (widget_states(expected), widget_states(actual))
    chosen = compared_cells(expected) if cells is None else list(cells)
    for i in chosen:
        diff = compare_cells(i, a_cells[i], b_cells[i], norm, labels, options, states, notes)
        if diff is not None:
            diffs.append(diff)
    last = next((i for i in reversed(range(len(a_cells))) if a_cells[i].get("cell_type") == "code"), None)
    if last is not None and last not in chosen and _trailing_compared(a_cells[last], b_cells[last], expected):
        # the final wait's outputs (late receipts of tasks other cells started) are compared even when the
        # last cell's own outputs are not: a task that failed after the last cell must not pass unseen
        diff = compare_cells(
            last, _trailing(a_cells[last]), _trailing(b_cells[last]), norm, labels, options, states, notes
        )
        if diff is not None:
            diffs.append(dataclasses.replace(diff, message="after the last cell (final wait): " + diff.message))
    return diffs


def _trailing(cell: Mapping[str, Any]) -> dict[str, Any]:
    """``cell`` with only the outputs the harness's final wait appended (``trailing_outputs_from``)."""
    outputs = list(cell.get("outputs") or [])
    start = ((cell.get("metadata") or {}).get("holon_nb") or {}).get("trailing_outputs_from", len(outputs))
    return {**cell, "outputs": outputs[start:] if isinstance(start, int) else []}


def _trailing_compared(expected: Mapping[str, Any], actual: Mapping[str, Any], nb: Mapping[str, Any]) -> bool:
    """True when the last cell is left out only by ``holon-ignore-output`` (not skipped, not lax) and ran
    without an error: then its trailing outputs are compared on their own."""
    if not has_tag(expected, "ignore") or has_tag(expected, "skip") or is_lax(nb):
        return False
    return not any(o.get("output_type") == "error" for o in actual.get("outputs") or [])


def receipt_text_differs(expected: Mapping[str, Any], actual: Mapping[str, Any], norm: Normalizer) -> bool:
    """True when a receipt whose JSON compares equal in the two cells has another ``text/plain`` (after the
    runtime's masks): the saved text is an older renderer's. The comparison reads a receipt's JSON only, so
    ``--holon-nb-update`` rewrites such a cell too (issue 26 item 12)."""

    def receipts(cell: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return [o["data"] for o in cell.get("outputs") or [] if RESULT_MIMETYPE in (o.get("data") or {})]

    for old, new in zip(receipts(expected), receipts(actual), strict=False):
        if norm.json(old[RESULT_MIMETYPE]) == norm.json(new[RESULT_MIMETYPE]):
            texts = (norm.runtime_text(_joined(d.get("text/plain", ""))) for d in (old, new))
            if len(set(texts)) > 1:
                return True
    return False
