"""The agents' notebook edits reach the run's notebook without a request of their own after each cell (issue 30).

The Notebook tools (issue 28) edit the headless copy in the kernel; the harness used to ask for the queued edits
with a silent request after every cell of every preloaded notebook. Each cell's own execute request now carries
that question as a user expression (:func:`holon_nb.testing._kernel_code.carry_drain`); after a cell that raised
(IPython evaluates no user expression then) the harness still asks, so an edit made there applies before the
next cell as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from holon_nb.testing import format_summary, run_notebook

pytestmark = pytest.mark.usefixtures("own_home")

EDIT = "from holon_nb.notebook._kernel._document import HEADLESS as D\n"


def _target(cell_id: str | None = None, index: int | None = None) -> str:
    return repr({"index": index, "cell_id": cell_id, "to_index": None})


def _notebook(path: Path, cells: list[tuple[str, str, list[str]]]) -> Path:
    """A notebook of code cells ``(id, source, tags)``."""
    nb = nbformat.v4.new_notebook()
    for cell_id, source, tags in cells:
        cell = nbformat.v4.new_code_cell(source, metadata={"tags": tags} if tags else {})
        cell["id"] = cell_id
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


def _stdout(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def test_edits_made_in_a_cell_apply_before_the_next_one_whether_it_raised_or_not(tmp_path: Path) -> None:
    src = _notebook(
        tmp_path / "edits.ipynb",
        [
            ("load", "%load_ext holon_nb", []),
            ("edit-ok", EDIT + f"D.edit('delete', {_target('gone-1')}, None, 'code')", []),
            ("gone-1", "gone_1 = True", []),
            (
                "edit-raises",
                f"D.edit('delete', {_target('gone-2')}, None, 'code')\nraise ValueError('x')",
                ["raises-exception"],
            ),
            ("gone-2", "gone_2 = True", []),
            ("insert", f"D.edit('insert', {_target(index=1)}, 'print(42)', 'code')", []),
            ("last", "print(sorted(n for n in ('gone_1', 'gone_2') if n in globals()))", []),
        ],
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    saved = nbformat.read(summary.output, as_version=4)
    ids = [c.id for c in saved.cells]
    # the deleted cells were gone before their turn came (neither ran), the inserted one is in place, not run
    assert ids == ["load", "agent-1", "edit-ok", "edit-raises", "insert", "last"], ids
    assert _stdout(saved.cells[-1]).splitlines()[0] == "[]"
    assert saved.cells[1].metadata["holon_nb"]["inserted_by"] == "agent" and saved.cells[1].outputs == []


def test_the_kernel_gets_one_request_per_cell(tmp_path: Path) -> None:
    """From the second cell to the last, the kernel receives exactly the cells' own execute requests."""
    count = (
        "k = get_ipython().kernel\n"
        "seen = []\n"
        "_inner = k.shell_handlers['execute_request']\n"
        "def _counting(stream, idents, msg):\n"
        "    seen.append(msg['content']['code'].splitlines()[0] if msg['content']['code'] else '<empty>')\n"
        "    return _inner(stream, idents, msg)\n"
        "k.shell_handlers['execute_request'] = _counting\n"
    )
    src = _notebook(
        tmp_path / "requests.ipynb",
        [
            ("load", "%load_ext holon_nb", []),
            ("count", count, []),
            ("a", "a = 1", []),
            ("b", "b = 2", []),
            ("c", "c = 3", []),
            ("last", "print(seen)", []),
        ],
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    saved = nbformat.read(summary.output, as_version=4)
    assert _stdout(saved.cells[-1]).splitlines()[0] == "['a = 1', 'b = 2', 'c = 3', 'print(seen)']"
