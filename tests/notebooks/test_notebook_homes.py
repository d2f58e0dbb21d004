"""Tutorials in one folder, run as JupyterLab runs them (issue 26 item 2): each kernel knows its notebook
(``JPY_SESSION_NAME``) and opens the notebook's own home ``.holon/notebooks/<stem>/`` in the folder, kept
between runs. Tutorial 03 runs twice there, after another notebook of the folder, with real kernels."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _support import TUTORIALS_DIR, write_nb

from holon_nb.testing._harness import run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.slow, pytest.mark.xdist_group("notebook-homes")]

TUTORIAL = "03-work-items-waits-timers.ipynb"


def _stdout(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _cell(nb: Any, start: str) -> Any:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(start)]
    return cell


def test_tutorial_03_reruns_in_one_folder_and_shows_only_its_own_state(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copy(TUTORIALS_DIR / TUTORIAL, folder / TUTORIAL)
    other = write_nb(
        folder / "other.ipynb",
        "%load_ext holon_nb\n%exec --yield-ms 0 -- echo other-notebook-was-here",
        "%holon wait --timeout 60",
    )
    first = run_notebook(other, output=tmp_path / "other.out.ipynb", notebook_home=True, timeout=120)
    assert first.exit_code == 0, first
    assert (folder / ".holon" / "notebooks" / "other" / "holon.sqlite3").is_file()

    messages = []
    for n in (1, 2):
        out = tmp_path / f"03.run{n}.ipynb"
        summary = run_notebook(folder / TUTORIAL, output=out, notebook_home=True, timeout=120)
        assert summary.exit_code == 0, (n, summary.problems, [(c.index, c.ename) for c in summary.cells if c.ename])
        assert summary.holon_home == str((folder / ".holon" / "notebooks" / TUTORIAL[:-6]).resolve())
        nb = nbformat.read(out, as_version=4)
        listed = _stdout(_cell(nb, "for m in rt.messages():"))
        assert "other-notebook-was-here" not in listed, listed
        tasks = _stdout(_cell(nb, "tasks = rt.store.query("))
        assert len(tasks.splitlines()) == 2, tasks  # job A and job B of this run, none of the first run's
        messages.append(listed.splitlines())
    assert len(messages[0]) == len(messages[1]) and messages[0], messages
