"""The planted-change suite of issue 24: every real change in a cell's output fails ``holon-nb test``.

Each notebook of tests/notebooks/fidelity/ (written by its make_fidelity.py) holds cells saved with the
outputs of one version and edited to a second version whose output differs: HTML behind a placeholder
repr, image content, user data that looks like runtime noise, an exception's message, ANSI colours,
widget state, errors raised after the cell body. Every planted cell must be reported, with a diff that
names the cell and what changed (``metadata.holon_nb_fidelity.expect``). Then the same notebook,
re-recorded, must pass: the stricter comparison does not fail a notebook against its own outputs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from holon_nb.testing.check import CheckOptions, check_notebook

SUITE = Path(__file__).parent / "fidelity"
BOOKS = sorted(p.name for p in SUITE.glob("*.ipynb"))
#: B6: colours are stripped by default; the suite checks the option that compares them
OPTIONS = {"b6-ansi.ipynb": {"compare_ansi": True}}


pytestmark = pytest.mark.usefixtures("own_home")


def planted(nb: nbformat.NotebookNode) -> dict[int, str]:
    """``{cell index: text the report must contain}`` of a fidelity notebook."""
    return {
        i: c.metadata["holon_nb_fidelity"]["expect"]
        for i, c in enumerate(nb.cells)
        if "holon_nb_fidelity" in c.get("metadata", {})
    }


def test_the_suite_has_one_notebook_per_class_and_every_cell_was_saved_by_a_run() -> None:
    assert BOOKS == [
        "b1-errors.ipynb",
        "b2-html.ipynb",
        "b3-images.ipynb",
        "b4-user-data.ipynb",
        "b5-exception-message.ipynb",
        "b6-ansi.ipynb",
        "b7-widgets.ipynb",
    ]
    total = 0
    for name in BOOKS:
        nb = nbformat.read(SUITE / name, as_version=4)
        total += len(planted(nb))
        assert all(c.execution_count is not None for c in nb.cells if c.cell_type == "code"), name
    assert total == 19


@pytest.mark.parametrize("name", BOOKS)
def test_every_planted_change_is_caught_with_a_diff_naming_the_cell(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    shutil.copy(SUITE / name, path)
    nb = nbformat.read(path, as_version=4)
    expected = planted(nb)
    check = check_notebook(path, CheckOptions(timeout=60, **OPTIONS.get(name, {})))
    report = check.report()
    caught = {p.index for p in check.cells}
    print(f"{name}: caught {len(caught & set(expected))}/{len(expected)}")
    assert caught == set(expected), report
    for problem in check.cells:
        assert expected[problem.index] in problem.message, f"cell {problem.index}: {problem.message}"
        assert f"cell {problem.index} ({problem.first_line}): {problem.kind}" in report
    assert not check.problems, report


@pytest.mark.parametrize("name", [b for b in BOOKS if b != "b1-errors.ipynb"])  # B1's version 2 raises
def test_the_edited_notebook_passes_against_its_own_recorded_outputs(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    shutil.copy(SUITE / name, path)
    options = dict(OPTIONS.get(name, {}))
    check_notebook(path, CheckOptions(timeout=60, update=True, **options))
    again = check_notebook(path, CheckOptions(timeout=60, **options))
    assert not again.failed, again.report()
