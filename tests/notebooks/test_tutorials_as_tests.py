"""The tutorials are regression tests of themselves: each tutorial's test module
(``tests/notebooks/test_*_notebook.py``) runs it once through ``check_notebook``, what ``holon-nb test`` runs, and
compares its outputs with the committed ones (``test_matches_its_committed_outputs``). This file checks that
those outputs are committed, that every tutorial has such a module, and that ``holon-nb test notebooks/`` collects
them.

After a change that alters what a tutorial shows, regenerate the committed outputs with
``python notebooks/make_all.py`` (docs/notebook-tests.md). Determinism across 20 runs is checked by
``benchmarks/bench_notebook_tests.py --repeat 20``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from _support import tutorial_names

from holon_nb.testing._compare import compared_cells

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TUTORIALS = tutorial_names(NOTEBOOKS)


def test_every_tutorial_has_committed_outputs() -> None:
    assert len(TUTORIALS) >= 4
    for name in TUTORIALS:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        empty = [
            i
            for i in compared_cells(nb)
            if not nb.cells[i].outputs
            and nb.cells[i].source.strip()
            and not nb.cells[i].source.lstrip().startswith(("%load_ext", "import"))
        ]
        assert len(empty) < len(compared_cells(nb)) // 2, (name, empty)


def test_holon_nb_test_collects_the_tutorials() -> None:
    import subprocess
    import sys

    root = NOTEBOOKS.parent
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "--holon-nb", "notebooks"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    collected = [line for line in proc.stdout.splitlines() if line.startswith("notebooks/")]
    assert collected == [f"notebooks/{name}::notebook" for name in TUTORIALS], proc.stdout


def test_every_tutorial_is_compared_by_its_test_module() -> None:
    modules = {p.name: p.read_text() for p in Path(__file__).parent.glob("test_*.py")}
    for name in TUTORIALS:
        owners = [m for m, text in modules.items() if f'"notebooks" / "{name}"' in text]
        assert owners, f"{name}: no test module runs it"
        for module in owners:
            assert "check_tutorial(" in modules[module] and "test_matches_its_committed_outputs" in modules[module]
