"""The determinism set of issue 24: notebooks whose output changes from run to run by nature pass.

Each notebook of tests/notebooks/determinism/ (written by its make_determinism.py, recorded with
``holon-nb test --holon-nb-update``) holds one kind of noise a real notebook has: seeded and unseeded
random data, timestamps and durations, a ``\\r`` progress bar on stderr, warnings (which name
ipykernel's per-pid folder), a pandas DataFrame and Styler (random HTML ids),
a matplotlib PNG and SVG (a date and hashed ids in the SVG; skipped without matplotlib). A fresh run must pass
against the saved outputs: a failure here is a false failure. The suite runs each notebook once;
``holon-nb test tests/notebooks/determinism --holon-nb-repeat 20`` is the longer check by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from holon_nb.testing.check import CheckOptions, check_notebook

SET = Path(__file__).parent / "determinism"
BOOKS = sorted(p.name for p in SET.glob("*.ipynb"))
#: notebooks that need an optional package (skipped where it is not installed)
NEEDS = {
    "d1-random.ipynb": ["numpy"],
    "d4-warnings.ipynb": ["numpy"],
    "d5-pandas.ipynb": ["numpy", "pandas"],
    "d6-matplotlib.ipynb": ["numpy", "matplotlib"],
}


pytestmark = pytest.mark.usefixtures("own_home")


def test_the_set_is_recorded() -> None:
    assert BOOKS == [
        "d1-random.ipynb",
        "d2-timestamps.ipynb",
        "d3-progress.ipynb",
        "d4-warnings.ipynb",
        "d5-pandas.ipynb",
        "d6-matplotlib.ipynb",
    ]
    for name in BOOKS:
        nb = nbformat.read(SET / name, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.execution_count is not None for c in code), name  # every cell compared
        assert sum(len(c.outputs) for c in code) >= len(code) - 1, name  # a setup cell may show nothing


@pytest.mark.parametrize("name", BOOKS)
def test_a_fresh_run_passes_against_the_saved_outputs(name: str, tmp_path: Path) -> None:
    for module in NEEDS.get(name, []):
        pytest.importorskip(module)
    path = tmp_path / name
    shutil.copy(SET / name, path)
    check = check_notebook(path, CheckOptions(timeout=60))
    assert not check.failed, check.report()
