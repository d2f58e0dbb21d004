"""nbval's own test notebooks (tests/notebooks/nbval, see its SOURCES.md) get nbval's verdicts.

nbval states the verdict of each of these notebooks (in the file name, or its Makefile). ``holon-nb
test`` runs with its defaults, which compare images where nbval never does: the PNGs these notebooks
saved were drawn by an older sympy / matplotlib, and agree all the same because a PNG beside
``text/latex`` is a rendering of the LaTeX (compared instead), and a figure whose saved PNG names another
matplotlib version is listed as not compared (docs/notebook-tests.md, "Images" and "The peers' own
notebooks"). With ``--holon-nb-strict-images`` the three notebooks nbval passes fail on those images.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from holon_nb.testing.check import CheckOptions, check_notebook
from holon_nb.testing.normalize import read_sanitize_file

HERE = Path(__file__).parent
SAMPLES = HERE / "nbval"
SANITIZE = HERE / "fidelity" / "nbval_sanitize_defaults.cfg"
#: file -> (nbval's verdict, modules it imports, nbval sanitize file or None)
VERDICTS: dict[str, tuple[str, tuple[str, ...], Path | None]] = {
    "test-exceptions-fail-storedmismatch.ipynb": ("fail", (), None),
    "test-latex-fail-randomoutput.ipynb": ("fail", ("sympy",), None),
    "test-latex-pass-correctouput.ipynb": ("pass", ("sympy",), None),
    "test-latex-pass-failsbutignoreoutput.ipynb": ("pass", ("sympy",), None),
    "test-stream-fail-missingoutput.ipynb": ("fail", (), None),
    "test-stream-pass-missing-unexecuted-output.ipynb": ("pass", (), None),
    "latex-example.ipynb": ("pass", ("sympy",), None),
    "sample_notebook.ipynb": ("pass", ("matplotlib", "numpy"), SANITIZE),
}


pytestmark = pytest.mark.usefixtures("own_home")


def test_every_sample_has_a_verdict() -> None:
    assert sorted(p.name for p in SAMPLES.glob("*.ipynb")) == sorted(VERDICTS)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_holon_nb_test_gives_nbvals_verdict(name: str, tmp_path: Path) -> None:
    verdict, modules, sanitize = VERDICTS[name]
    for module in modules:
        pytest.importorskip(module)
    path = tmp_path / name
    shutil.copy(SAMPLES / name, path)
    options = CheckOptions(timeout=60, rules=read_sanitize_file(sanitize) if sanitize else ())
    check = check_notebook(path, options)
    assert ("fail" if check.failed else "pass") == verdict, check.report()
    if name == "sample_notebook.ipynb":  # its figure is listed as not compared, not silently passed
        assert [n for n in check.not_compared if "saved by matplotlib version 2.2.2" in n], check.not_compared
