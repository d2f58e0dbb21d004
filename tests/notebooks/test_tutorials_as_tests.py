"""The tutorials are regression tests of themselves: ``holon_nb_paths = ["notebooks"]`` in pyproject.toml
makes every plain ``python -m pytest`` run (CI's) test them with the plugin, against their committed
outputs, model calls replayed from their cassettes. This file checks that those outputs are committed, and
that the configuration still collects them.

After a change that alters what a tutorial shows, regenerate the committed outputs with
``python notebooks/make_all.py`` (docs/notebook-tests.md). Determinism across 20 runs is checked by
``benchmarks/bench_notebook_tests.py --repeat 20``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from _support import tutorial_names

from holon_nb.testing.compare import compared_cells

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


def test_the_pytest_configuration_collects_the_tutorials() -> None:
    import subprocess
    import sys

    root = NOTEBOOKS.parent
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "--ignore=tests"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    collected = [line for line in proc.stdout.splitlines() if line.startswith("notebooks/")]
    assert collected == [f"notebooks/{name}::notebook" for name in TUTORIALS], proc.stdout
