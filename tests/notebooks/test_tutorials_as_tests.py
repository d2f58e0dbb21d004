"""The tutorials are regression tests of themselves: each passes against its committed outputs with
model calls replayed from its cassettes (what ``holon-nb test notebooks/`` does per notebook).

After a change that alters what a tutorial shows, regenerate the committed outputs with
``python notebooks/make_all.py`` (docs/notebook-tests.md). Determinism across 20 runs is checked by
``benchmarks/bench_notebook_tests.py --repeat 20``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from holon_nb.testing.check import CheckOptions, check_notebook
from holon_nb.testing.compare import compared_cells

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TUTORIALS = sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb"))


def test_every_tutorial_has_committed_outputs() -> None:
    assert len(TUTORIALS) >= 4
    for name in TUTORIALS:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        empty = [i for i in compared_cells(nb) if not nb.cells[i].outputs and nb.cells[i].source.strip()
                 and not nb.cells[i].source.lstrip().startswith(("%load_ext", "import"))]
        assert len(empty) < len(compared_cells(nb)) // 2, (name, empty)


@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_passes_against_its_committed_outputs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOLON_NB_HOME", raising=False)
    check = check_notebook(NOTEBOOKS / name, CheckOptions(timeout=120))  # cassettes: replay
    assert not check.failed, check.report()
