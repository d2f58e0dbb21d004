"""``metadata.holon_nb.shared_dir`` (notebook-tests spec §2) in real kernels: by default each run of a
tested notebook works in a private copy of its folder; opted in, notebooks run in the folder itself
and the runs of one folder never overlap, even on two pytest-xdist workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from _support import write_nb

from holon_nb.testing.check import CheckOptions, check_notebook

COUNT = (
    "with open('state.txt', 'a') as f:\n    f.write('run\\n')\n"
    "print('runs seen here:', len(open('state.txt').read().split()))"
)


pytestmark = pytest.mark.usefixtures("own_home")


def _stdout(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def test_each_run_works_in_a_private_copy_of_the_folder_unless_the_notebook_shares_it(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "fixture.txt").write_text("rows: 42\n")
    nb = write_nb(
        folder / "count.ipynb",
        "print(open('fixture.txt').read(), end='')",
        COUNT,
        "import os\nprint(os.getcwd())",
        "%exec cat fixture.txt",
    )

    first = check_notebook(nb, CheckOptions(update=True, timeout=60))
    assert not first.failed, first.report()
    saved = nbformat.read(nb, as_version=4)
    assert _stdout(saved.cells[0]) == "rows: 42\n"  # the copy holds the folder's fixtures
    assert _stdout(saved.cells[1]) == "runs seen here: 1\n"
    assert "holon-nb-copy-" in _stdout(first.executed.cells[2])  # the kernel ran in the copy...
    assert _stdout(saved.cells[2]) == "<WS>\n"  # (saved as the comparison reads it: no path of this machine)
    assert not (folder / "state.txt").exists()  # ...and nothing it wrote reached the folder

    repeated = check_notebook(nb, CheckOptions(repeat=2, timeout=60))  # every run starts from a fresh copy
    assert not repeated.failed, repeated.report()  # and the copy's path reads <WS>, as the saved one did

    book = nbformat.read(nb, as_version=4)
    book.metadata.setdefault("holon_nb", {})["shared_dir"] = True  # (an update keeps no recorded_roots there)
    nbformat.write(book, nb)
    shared = check_notebook(nb, CheckOptions(timeout=60))
    assert (folder / "state.txt").read_text() == "run\n"  # in the folder itself now
    assert not shared.failed, shared.report()  # the folder's path reads <WS> as the copy's did
    again = check_notebook(nb, CheckOptions(timeout=60))  # the folder keeps what the last run wrote
    assert [(p.index, p.kind) for p in again.cells] == [(1, "mismatch")], again.report()
    assert "+runs seen here: 2" in again.cells[0].message


SPAN = (  # appends (O_APPEND) where it starts and where it ends: the file's order is the runs' order
    "import json, os, time\n"
    "def mark(what):\n"
    "    with open('spans.jsonl', 'a') as f:\n"
    "        f.write(json.dumps([os.environ.get('PYTEST_XDIST_WORKER'), what]) + '\\n')\n"
    "mark('start'); time.sleep(1.5); mark('end')"
)


@pytest.mark.slow
def test_shared_dir_runs_of_one_folder_never_overlap_on_two_xdist_workers(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write_nb(
            tmp_path / f"{name}.ipynb", (SPAN, ["holon-ignore-output"]), metadata={"holon_nb": {"shared_dir": True}}
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOLON_NB_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--holon-nb", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    marks = [tuple(m) for m in map(json.loads, (tmp_path / "spans.jsonl").read_text().splitlines())]
    assert {w for w, _ in marks} == {"gw0", "gw1"}  # on two workers at once…
    assert [what for _, what in marks] == ["start", "end", "start", "end"]  # …yet one after the other
    assert marks[0][0] == marks[1][0] and marks[2][0] == marks[3][0]
