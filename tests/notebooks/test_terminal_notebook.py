"""Command output from real programs in a saved notebook: what a terminal shows, colour only in the card.

A notebook runs git with colour forced, a git clone that draws progress with
``\\r``, pytest with ``--color=yes`` and a promoted task that redraws a coloured
percentage; the saved ``text/plain`` (and the model's receipt) has no escape
code and only each progress line's last frame; the HTML card renders colours.
Also: ``%exec?`` is kept, ``%holon wait`` says what it waited for.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import nbformat
import pytest
from _reader import assert_reads_as_text, plain_texts

from holon_nb.runtime import RESULT_MIMETYPE
from holon_nb.testing import run_notebook

PROGRESS = (
    "import sys, time\nfor p in range(0, 101, 25):\n"
    "    sys.stdout.write(f'\\r\\x1b[32m{p:3d}%\\x1b[0m'); sys.stdout.flush(); time.sleep(0.05)\nprint()\n"
)


@pytest.fixture(scope="module")
def executed(tmp_path_factory: Any) -> Any:
    work = tmp_path_factory.mktemp("term")
    repo = work / "repo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["commit", "-q", "--allow-empty", "-m", "first"],
        ["commit", "-q", "--allow-empty", "-m", "second"],
    ):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True)
    (work / "progress.py").write_text(PROGRESS)
    (work / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    cells = [
        "%load_ext holon_nb",
        "%exec git -C repo -c color.ui=always log --oneline",
        "%exec git clone --progress --no-local repo clone",
        f"%exec {sys.executable} -m pytest -p no:cacheprovider --color=yes test_ok.py",
        f"%exec --yield-ms 0 {sys.executable} progress.py",
        "%holon wait --timeout 60",
        "%holon wait",
        "%exec?",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    src = work / "terminal.ipynb"
    nbformat.write(nb, src)
    summary = run_notebook(src, output=work / "terminal.executed.ipynb", timeout=120)
    assert summary.exit_code == 0, summary
    return nbformat.read(work / "terminal.executed.ipynb", as_version=4)


def _cell(nb: Any, start: str) -> Any:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(start)]
    return cell


def _text(cell: Any) -> str:
    return "\n".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs if o.get("data"))


def test_colour_is_removed_from_text_and_kept_in_the_card(executed: Any) -> None:
    cell = _cell(executed, "%exec git -C repo")
    out = cell.outputs[0]
    assert "\x1b" not in out["data"]["text/plain"] and " second" in out["data"]["text/plain"]
    assert "<span style='color:" in out["data"]["text/html"]
    assert "\x1b[" in out["data"][RESULT_MIMETYPE]["result"]["stdout_preview"]  # the card's source
    pytest_cell = _text(_cell(executed, f"%exec {sys.executable} -m pytest"))
    assert "1 passed" in pytest_cell and "\x1b" not in pytest_cell


def test_progress_lines_show_their_last_frame(executed: Any) -> None:
    text = _text(_cell(executed, "%exec git clone"))
    assert "Counting objects: 100%" in text and "Counting objects:  50%" not in text
    assert "\r" not in text
    promoted = _text(_cell(executed, "%exec --yield-ms 0"))
    final = promoted.split("TaskOutput · completed", 1)[1]  # the final receipt names the task's status
    assert "100%" in final and " 25%" not in final and "\r" not in final


def test_wait_notes_and_help_are_saved(executed: Any) -> None:
    first, second = (_text(c) for c in executed.cells if c.source.startswith("%holon wait"))
    assert first.startswith("%holon wait: ended: task_") and first.endswith("(completed)")  # named once
    assert second == "%holon wait: nothing was running (no task or agent turn of this kernel is unfinished)"
    help_text = _text(_cell(executed, "%exec?"))
    assert "Run a shell command (ExecCommand)" in help_text and "\x1b" not in help_text


def test_saved_copy_reads_as_text(executed: Any) -> None:
    assert_reads_as_text(executed)
    assert all(
        len(line) <= 160 for t in plain_texts(executed) for line in t.splitlines() if not line.startswith("    ")
    ), "a receipt line (not command output) is over 160 characters"
