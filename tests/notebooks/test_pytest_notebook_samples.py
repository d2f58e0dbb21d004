"""pytest-notebook's own example and test notebooks (tests/notebooks/pytest_notebook, see its SOURCES.md)
get pytest-notebook's verdicts.

pytest-notebook states the verdict of each (its README, its documentation's tutorial, its tests; the
table in SOURCES.md says where). ``holon-nb test`` runs each with its defaults, in a copy of the folder
(the image files the notebooks display lie beside them, as in pytest-notebook's ``tests/raw_files``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from holon_nb.testing.check import CheckOptions, check_notebook

SAMPLES = Path(__file__).parent / "pytest_notebook"
#: file -> pytest-notebook's verdict ("pass" also for nb_with_skip_meta, which it skips: not a failure)
VERDICTS: dict[str, str] = {
    "success.ipynb": "pass",
    "fail.ipynb": "fail",
    "example1.ipynb": "fail",
    "example1_pass.ipynb": "pass",
    "different_outputs.ipynb": "pass",
    "different_outputs_altered.ipynb": "fail",
    "different_outputs_with_metadata.ipynb": "pass",
    "simple-diff-output.ipynb": "fail",
    "nb_with_skip_meta.ipynb": "pass",
    "images.ipynb": "pass",
    "images-rearranged.ipynb": "fail",
}
#: cells whose failure is the point of the notebook: images-rearranged swaps its images between cells
#: (pytest-notebook's 128x128_altered.* add a small red stroke), so cells 0 and 2 must fail on the pixels
MUST_FAIL = {"images-rearranged.ipynb": {0: "image/png differs", 2: "image/jpeg differs"}}


pytestmark = pytest.mark.usefixtures("own_home")


def test_every_sample_has_a_verdict() -> None:
    assert sorted(p.name for p in SAMPLES.glob("*.ipynb")) == sorted(VERDICTS)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_holon_nb_test_gives_pytest_notebooks_verdict(name: str, tmp_path: Path) -> None:
    folder = tmp_path / "book"
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("*.md"))
    check = check_notebook(folder / name, CheckOptions(timeout=60))
    assert ("fail" if check.failed else "pass") == VERDICTS[name], check.report()
    for index, text in MUST_FAIL.get(name, {}).items():
        assert any(text in p.message for p in check.for_cell(index)), check.report()
