"""nbmake's own test notebooks (tests/notebooks/nbmake, see its SOURCES.md) get nbmake's verdicts.

nbmake only runs a notebook: its verdict is whether the run succeeds. Its tests state it per notebook
(``tests/test_nb_run.py``, ``tests/test_pytest_plugin.py``): files of its ``tests/resources/`` and
notebooks those tests write (``inline_*.ipynb`` here, the same cells and metadata). ``holon-nb test``
runs each with its defaults; saved without outputs, every cell is a cell saved without running, so
its verdict is its run's: nbclient's ``metadata.execution`` (``timeout``, ``allow_errors``) and
``skip-execution`` tag, and nbmake's cell metadata (``nbmake.mock``, ``nbmake.post_cell_execute``) are
read as nbmake reads them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from holon_nb.testing.check import CheckOptions, check_notebook

SAMPLES = Path(__file__).parent / "nbmake"
#: file -> (nbmake's verdict, modules it needs)
VERDICTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "empty.ipynb": ("pass", ()),
    "ignore_tag.ipynb": ("pass", ()),
    "import_errs.ipynb": ("fail", ()),
    "magic_error.ipynb": ("fail", ("matplotlib",)),
    "mock.ipynb": ("pass", ()),
    "post_cell_execute.ipynb": ("pass", ()),
    "post_cell_execute_error.ipynb": ("fail", ()),
    "post_cell_execute_masked_error.ipynb": ("fail", ()),
    "raises_tag.ipynb": ("pass", ()),
    "inline_passing.ipynb": ("pass", ()),
    "inline_failing.ipynb": ("fail", ()),
    "inline_allow_errors.ipynb": ("pass", ()),
    "inline_timeout.ipynb": ("fail", ()),
    "inline_explicit_timeout.ipynb": ("pass", ()),
    "inline_executed_then_stripped.ipynb": ("fail", ()),
}


pytestmark = pytest.mark.usefixtures("own_home")


def test_every_sample_has_a_verdict() -> None:
    assert sorted(p.name for p in SAMPLES.glob("*.ipynb")) == sorted(VERDICTS)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_holon_nb_test_gives_nbmakes_verdict(name: str, tmp_path: Path) -> None:
    verdict, modules = VERDICTS[name]
    for module in modules:
        pytest.importorskip(module)
    path = tmp_path / name
    shutil.copy(SAMPLES / name, path)
    check = check_notebook(path, CheckOptions(timeout=60))
    assert ("fail" if check.failed else "pass") == verdict, check.report()
    if name == "inline_timeout.ipynb":  # the notebook's own 1 s limit, not the 60 s configured
        assert "timeout of 1 s" in check.report() and "metadata.execution.timeout" in check.report()
    if name == "post_cell_execute_error.ipynb":
        assert "nbmake's post-cell code failed (boom!)" in check.report()
