"""Notebooks as regression tests: acceptance cases NT-01…NT-09 of notebook-tests spec §8 (NT-10 is in
tests/unit/testing/test_harness.py, NT-11 in test_peer_notebooks.py), on notebooks these tests write,
run in real kernels by :func:`holon_nb.testing.check.check_notebook` and by ``pytest --holon-nb``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _support import write_nb

from holon_nb.testing._harness import run_notebook
from holon_nb.testing.check import CheckOptions, check_notebook
from holon_nb.testing.normalize import RESULT_MIMETYPE

CALL = "import holon_nb\nrt = holon_nb.get_runtime()\n"


pytestmark = pytest.mark.usefixtures("own_home")


def edit(path: Path, fn: Any) -> None:
    nb = nbformat.read(path, as_version=4)
    fn(nb)
    nbformat.write(nb, path)


def stream(text: str, name: str = "stdout") -> Any:
    return nbformat.v4.new_output("stream", name=name, text=text)


def receipts(cell: Any) -> list[dict[str, Any]]:
    return [o["data"][RESULT_MIMETYPE] for o in cell.outputs if RESULT_MIMETYPE in o.get("data", {})]


@pytest.fixture
def pytest_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run pytest in this process (pytester's in-process run: no interpreter start-up, no second import of
    the plugin) in ``cwd``; returns a ``CompletedProcess``-shaped result (``returncode``, ``stdout``,
    ``stderr``) so the assertions read the same as for :func:`pytest_subprocess`."""

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        for name in list(os.environ):  # the outer run's worker and options must not leak into the inner one
            if name.startswith(("HOLON_NB_", "PYTEST_XDIST", "PYTEST_ADDOPTS")):
                monkeypatch.delenv(name)
        monkeypatch.chdir(cwd)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
        return subprocess.CompletedProcess(
            list(args), int(result.ret), "\n".join(result.outlines), "\n".join(result.errlines)
        )

    return run


GENERATED_RECEIPT = f"""\
import random, secrets, tempfile
from IPython.display import display
scratch = tempfile.mkdtemp()
display({{{RESULT_MIMETYPE!r}: {{"tool_name": "ExecCommand", "status": "success", "result": {{
    "task_id": "task_" + secrets.token_hex(8)[:15], "duration_ms": random.randint(1, 999),
    "cwd": scratch + "/build", "exit_status": 0}}}}}}, raw=True)
"""


@pytest.mark.slow
def test_nt01_nt02_receipts_compare_structurally_with_volatile_values_masked(tmp_path: Path, pytest_run: Any) -> None:
    nb = write_nb(tmp_path / "receipts.ipynb", "%load_ext holon_nb", GENERATED_RECEIPT, "%exec echo hello")
    first = check_notebook(nb, CheckOptions(update=True, timeout=60))
    assert not first.failed, first.report()
    assert first.updated_cells == [0, 1, 2]  # cell 0 printed nothing: recorded as run (its execution count)

    def saved_values(book: Any) -> None:  # NT-01: the saved receipt has other ids, durations, temp paths
        receipt = book.cells[1].outputs[0].data[RESULT_MIMETYPE]
        receipt["result"].update(task_id="task_0123456789abcde", duration_ms=12, cwd="/tmp/tmpSAVED1x/build")

    edit(nb, saved_values)
    check = check_notebook(nb, CheckOptions(timeout=60))
    assert not check.failed, check.report()

    def exit_one(book: Any) -> None:  # NT-02
        (receipt,) = receipts(book.cells[2])
        assert receipt["result"]["exit_status"] == 0
        receipt["result"]["exit_status"] = 1

    edit(nb, exit_one)
    check = check_notebook(nb, CheckOptions(timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(2, "mismatch")]
    report = check.report()
    assert str(nb) in report and "cell 2 (%exec echo hello): mismatch" in report
    assert "/result/exit_status: saved 1, this run 0" in report

    # the same through pytest: the failure names the notebook, the cell and the pointer
    proc = pytest_run("--holon-nb", nb.name, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cell 2 (%exec echo hello): mismatch" in proc.stdout
    assert "/result/exit_status: saved 1, this run 0" in proc.stdout and "receipts.ipynb" in proc.stdout


def test_nt03_stream_with_carriage_returns_and_ansi_equals_its_final_state(tmp_path: Path) -> None:
    nb = write_nb(tmp_path / "progress.ipynb", "print('\\r10%\\r50%\\r\\x1b[1;32m100%\\x1b[0m')", "print('done')")

    def saved(book: Any) -> None:
        book.cells[0].outputs = [stream("100%\n")]
        book.cells[1].outputs = [stream("not done\n")]

    edit(nb, saved)
    check = check_notebook(nb, CheckOptions(timeout=60))
    assert [p.index for p in check.cells] == [1]  # cell 0 equal; cell 1 (a control) differs
    assert "-not done\n+done" in check.cells[0].message


def _error(ename: str) -> Any:
    return nbformat.v4.new_output("error", ename=ename, evalue="boom", traceback=[])


def test_nt04_an_error_is_expected_only_in_raises_exception_cells_with_the_same_name(tmp_path: Path) -> None:
    tagged = write_nb(
        tmp_path / "tagged.ipynb",
        ("raise ValueError('boom')", ["raises-exception"]),
        ("raise ValueError('boom')", ["raises-exception"]),
        "print('after')",
    )

    def saved(book: Any) -> None:
        book.cells[0].outputs = [_error("ValueError")]
        book.cells[1].outputs = [_error("TypeError")]
        book.cells[2].outputs = [stream("after\n")]

    edit(tagged, saved)
    check = check_notebook(tagged, CheckOptions(timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(1, "mismatch")]
    assert "TypeError" in check.cells[0].message and "ValueError" in check.cells[0].message

    untagged = write_nb(tmp_path / "untagged.ipynb", "raise ValueError('boom')")
    edit(untagged, lambda book: book.cells[0].outputs.append(_error("ValueError")))
    check = check_notebook(untagged, CheckOptions(timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(0, "error")]
    assert "raised ValueError" in check.report()


def test_nt05_late_task_output_lands_in_the_last_cell_and_the_test_passes(tmp_path: Path) -> None:
    nb = write_nb(
        tmp_path / "late.ipynb",
        "%load_ext holon_nb",
        CALL + "r = rt.call('ExecCommand', {'cmd': 'sleep 3; echo late-line', 'yield_time_ms': 0})\n"
        "print(r.result['disposition'])",
        "print('last cell')",
    )
    first = check_notebook(nb, CheckOptions(update=True, timeout=30))
    assert not first.failed, first.report()
    last = nbformat.read(nb, as_version=4).cells[-1]
    start = last.metadata["holon_nb"]["trailing_outputs_from"]
    assert last.outputs[0].text == "last cell\n"
    assert any("late-line" in json.dumps(r) for r in receipts(last)[0:]) and start == 1
    check = check_notebook(nb, CheckOptions(timeout=30))
    assert not check.failed, check.report()


def test_nt06_a_task_left_running_fails_unless_allowed_then_it_is_stopped(tmp_path: Path) -> None:
    cells = (
        "%load_ext holon_nb",
        CALL + "r = rt.call('ExecCommand', {'cmd': 'sleep 600.75', 'yield_time_ms': 0, 'login': False})",
    )
    nb = write_nb(tmp_path / "left.ipynb", *cells)
    check = check_notebook(nb, CheckOptions(update=True, timeout=2))
    assert check.failed and check.summary.tasks_left_running
    (task_id,) = check.summary.tasks_left_running
    assert f"tasks left running after the final wait (stopped): {task_id}" in check.report()

    allowed = write_nb(tmp_path / "allowed.ipynb", *cells, metadata={"holon_nb": {"allow_running_tasks": True}})
    check = check_notebook(allowed, CheckOptions(update=True, timeout=2))
    assert not check.failed, check.report()
    assert check.summary.tasks_left_running  # listed, stopped, allowed
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "sleep 600.75" not in ps


def test_nt07_update_rewrites_only_mismatching_cells_and_never_a_raising_one(tmp_path: Path, pytest_run: Any) -> None:
    nb = write_nb(tmp_path / "update.ipynb", "print('same')", "print('new')", "raise RuntimeError('late')")

    def saved(book: Any) -> None:
        book.cells[0].outputs, book.cells[0].execution_count = [stream("same\n")], 41
        book.cells[1].outputs, book.cells[1].execution_count = [stream("old\n")], 42
        book.cells[2].outputs, book.cells[2].execution_count = [stream("kept as it was\n")], 43

    edit(nb, saved)
    check = check_notebook(nb, CheckOptions(update=True, timeout=60))
    assert check.updated_cells == [1]
    assert [(p.index, p.kind) for p in check.cells] == [(2, "error")]  # the raising cell still fails the test
    book = nbformat.read(nb, as_version=4)
    assert [c.execution_count for c in book.cells] == [41, 2, 43]
    assert [c.outputs[0].text for c in book.cells] == ["same\n", "new\n", "kept as it was\n"]

    proc = pytest_run("--holon-nb", "--holon-nb-update", nb.name, cwd=tmp_path)  # the report lists the rewrites
    assert "update.ipynb: rewrote cells" not in proc.stdout  # nothing mismatches any more
    assert "no saved outputs changed" in proc.stdout and proc.returncode == 1


SCRIPT = """\
format: holon_nb.script/v1
steps:
  - text: the agent is idle and well
    usage: {input: 7, output: 3}
"""

AUDIT = """\
import socket, sys
connects = []
def _audit(event, args):
    if event == "socket.connect" and args[0].family in (socket.AF_INET, socket.AF_INET6):
        connects.append(args[1])
sys.addaudithook(_audit)
"""


@pytest.mark.slow
def test_nt08_replay_without_a_cassette_fails_first_with_the_record_command_and_replay_opens_no_socket(
    tmp_path: Path,
) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    nb = write_nb(
        tmp_path / "agent.ipynb",
        "%load_ext holon_nb",
        AUDIT,
        "%%agent --model scripted/script.yaml --wait\nHow is the agent?",
        "print(connects)",
    )
    # a model that is not a script, replayed without its cassette, fails first with the record command
    other = write_nb(tmp_path / "model.ipynb", "%load_ext holon_nb", "%%agent --model openai/gpt-5.4 --wait\nHi?")
    check = check_notebook(other, CheckOptions(update=True, timeout=60))  # replay is the default
    assert [(p.index, p.kind) for p in check.cells] == [(1, "error")]
    assert "raised UsageError" in check.report()
    assert f"record it with: holon-nb run {other} --cassettes record" in check.report()
    assert "agent-1.jsonl" in check.report()
    # a scripted model needs none: its script answers (issue 26 #9), and no cassette is written in replay
    check = check_notebook(nb, CheckOptions(update=True, timeout=60))
    assert not check.failed, check.report()
    assert not (tmp_path / "agent.holon").exists()

    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLON_NB_")}
    rec = subprocess.run(
        [
            sys.executable,
            "-m",
            "holon_nb.cli",
            "run",
            str(nb),
            "--cassettes",
            "record",
            "-o",
            str(tmp_path / "recorded.ipynb"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rec.returncode == 0, rec.stdout + rec.stderr
    assert (tmp_path / "agent.holon" / "cassettes" / "agent-1.jsonl").is_file()
    (tmp_path / "script.yaml").unlink()  # nothing could answer a live call now

    first = check_notebook(nb, CheckOptions(update=True, timeout=60))
    assert not first.failed, first.report()
    book = nbformat.read(nb, as_version=4)
    assert "the agent is idle and well" in json.dumps(book.cells[2].outputs)
    assert book.cells[3].outputs[0].text == "[]\n"  # no INET connect in the kernel during the replay
    again = check_notebook(nb, CheckOptions(timeout=60))
    assert not again.failed, again.report()


@pytest.mark.slow
@pytest.mark.timeout(900)  # two nested pytest runs with two workers and kernels each: minutes on a loaded 2-core box
def test_nt09_xdist_workers_each_have_their_own_kernel_and_holon_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROBE", str(tmp_path / "probe.jsonl"))
    probe = (
        "import os, json\n"
        "with open(os.environ['PROBE'], 'a') as f:\n"
        "    f.write(json.dumps([os.environ.get('PYTEST_XDIST_WORKER'), os.environ['HOLON_NB_HOME'],"
        " os.getpid()]) + '\\n')"
    )
    for name in ("a", "b", "c", "d"):
        nb = write_nb(
            tmp_path / f"{name}.ipynb", "%load_ext holon_nb", (probe, ["holon-ignore-output"]), "%exec echo same"
        )
        assert not check_notebook(nb, CheckOptions(update=True, timeout=60)).failed
    probe_file = tmp_path / "probe.jsonl"
    probe_file.unlink()
    env_probe = {"PROBE": str(probe_file)}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOLON_NB_"))} | env_probe
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--holon-nb", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=420,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout
    rows = [json.loads(line) for line in probe_file.read_text().splitlines()]
    assert len(rows) == 4
    assert {w for w, _, _ in rows} == {"gw0", "gw1"}
    assert len({h for _, h, _ in rows}) == 4 and len({p for _, _, p in rows}) == 4  # own home, own kernel

    probe_file.unlink()  # a fixed HOLON_NB_HOME: one folder in it per worker
    fixed = tmp_path / "fixed-home"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--holon-nb", "."],
        cwd=tmp_path,
        env=env | {"HOLON_NB_HOME": str(fixed)},
        capture_output=True,
        text=True,
        timeout=420,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in probe_file.read_text().splitlines()]
    assert {(w, h) for w, h, _ in rows} == {("gw0", str(fixed / "gw0")), ("gw1", str(fixed / "gw1"))}


def test_repeat_names_the_cell_and_the_value_that_changed_between_runs(tmp_path: Path) -> None:
    nb = write_nb(tmp_path / "random.ipynb", "print('stable')", "import random\nprint(random.random())")
    check = check_notebook(nb, CheckOptions(update=True, repeat=2, timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(1, "nondeterministic")]
    message = check.cells[0].message
    assert message.startswith("run 2 differs from run 1") and "--- run 1" in message and "+++ run 2" in message


@pytest.mark.slow
def test_per_cell_items_and_inert_without_the_option(tmp_path: Path, pytest_run: Any) -> None:
    nb = write_nb(tmp_path / "cells.ipynb", "print(1)", "print(2)", "print(3)")
    edit(nb, lambda book: [setattr(c, "outputs", [stream(f"{i + 1}\n")]) for i, c in enumerate(book.cells)])
    edit(nb, lambda book: setattr(book.cells[1], "outputs", [stream("two\n")]))
    proc = pytest_run("--holon-nb", "--holon-nb-per-cell", "-v", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cells.ipynb::cell_0 PASSED" in proc.stdout and "cells.ipynb::cell_2 PASSED" in proc.stdout
    assert "cells.ipynb::cell_1 FAILED" in proc.stdout and "cell 1 (print(2)): mismatch" in proc.stdout
    inert = pytest_run(".", cwd=tmp_path)
    assert inert.returncode == 5 and "no tests ran" in inert.stdout  # the plugin collects nothing unasked
    (tmp_path / "pytest.ini").write_text("[pytest]\nholon_nb_paths = cells.ipynb\n")
    configured = pytest_run(cwd=tmp_path)
    assert (
        configured.returncode == 1
        and "cells.ipynb::notebook" in configured.stdout + configured.stderr
        or "1 failed" in configured.stdout
    ), configured.stdout


@pytest.mark.slow
def test_user_normalisers_from_metadata_and_pytest_configuration(tmp_path: Path, pytest_run: Any) -> None:
    nb = write_nb(
        tmp_path / "norm.ipynb",
        "import os\nprint('pid', os.getpid())\nprint('port', 1000 + os.getpid())",
        metadata={"holon_nb": {"normalize": [{"regex": r"pid \d+", "replace": "pid N"}]}},
    )
    edit(nb, lambda book: setattr(book.cells[0], "outputs", [stream("pid 1\nport 7\n")]))
    check = check_notebook(nb, CheckOptions(timeout=60))
    message = check.cells[0].message
    assert "-port 7" in message and " pid N" in message and "-pid" not in message  # the metadata rule applied
    (tmp_path / "pytest.ini").write_text("[pytest]\nholon_nb_normalize =\n    port \\d+ => port N\n")
    proc = pytest_run("--holon-nb", "norm.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_holon_nb_run_keeps_ipython_history_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ipython_dir = tmp_path / "ipython"
    monkeypatch.setenv("IPYTHONDIR", str(ipython_dir))
    nb = write_nb(tmp_path / "hist.ipynb", "print(get_ipython().history_manager.hist_file)")
    summary = run_notebook(nb, output=tmp_path / "out.ipynb", timeout=60)
    assert summary.exit_code == 0
    assert nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs[0].text == ":memory:\n"
    assert not list(ipython_dir.rglob("history.sqlite"))


def test_the_store_is_closed_cleanly_when_a_plain_nbclient_kernel_exits(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell("%load_ext holon_nb"), nbformat.v4.new_code_cell("%exec echo hi")]
    NotebookClient(book, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute()
    names = sorted(p.name for p in (tmp_path / ".holon").iterdir())
    assert "holon.sqlite3" in names
    assert not [n for n in names if n.endswith(("-wal", "-shm"))], names


def test_holon_nb_run_closes_the_store_before_it_stops_the_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the harness unloads holon_nb after the final wait, then stops the kernel at once (no graceful wait):
    # the store in a fixed holon home must be whole, with no -wal/-shm left, and the task's process gone
    home = tmp_path / "home"
    monkeypatch.setenv("HOLON_NB_HOME", str(home))
    nb = write_nb(tmp_path / "store.ipynb", "%load_ext holon_nb", "%exec --yield-ms 0 sleep 0.4; echo done-713")
    summary = run_notebook(nb, output=tmp_path / "out.ipynb", timeout=60)
    assert summary.exit_code == 0 and summary.tasks_left_running == []
    names = sorted(p.name for p in home.iterdir())
    assert "holon.sqlite3" in names and not [n for n in names if n.endswith(("-wal", "-shm"))], names
    import sqlite3

    with sqlite3.connect(home / "holon.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert "done-713" in json.dumps(nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[1].outputs)


@pytest.mark.slow
def test_repeat_scales_pytest_timeout_for_the_notebook_items(tmp_path: Path, pytest_run: Any) -> None:
    # one item runs its notebook N times: pytest-timeout's limit (chosen for one run) is multiplied by N
    write_nb(tmp_path / "quick.ipynb", "print(1)")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 7\n")
    (tmp_path / "conftest.py").write_text(
        "def pytest_collection_finish(session):\n"
        "    for item in session.items:\n"
        "        marker = item.get_closest_marker('timeout')\n"
        "        print('LIMIT', item.name, marker.args if marker else None)\n"
    )
    repeated = pytest_run("--holon-nb", "--holon-nb-repeat", "3", "--collect-only", "-s", ".", cwd=tmp_path)
    assert "LIMIT notebook (21.0,)" in repeated.stdout, repeated.stdout + repeated.stderr
    option = pytest_run(
        "--holon-nb", "--holon-nb-repeat", "2", "--timeout", "5", "--collect-only", "-s", ".", cwd=tmp_path
    )
    assert "LIMIT notebook (10.0,)" in option.stdout, option.stdout + option.stderr
    once = pytest_run("--holon-nb", "--collect-only", "-s", ".", cwd=tmp_path)
    assert "LIMIT notebook None" in once.stdout, once.stdout + once.stderr


def test_an_error_output_in_an_ok_cell_fails_the_test_and_is_never_recorded(tmp_path: Path) -> None:
    # issue 24 B1: a _repr_html_ that raises leaves an error output in a cell whose reply is "ok"
    late = "class Bad:\n    def _repr_html_(self):\n        raise RuntimeError('repr failed')\ndisplay(Bad())"
    nb = write_nb(tmp_path / "late.ipynb", late, "print('after')")
    check = check_notebook(nb, CheckOptions(update=True, timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(0, "error")] and check.updated_cells == []
    assert "raised RuntimeError" in check.report() and "repr failed" in check.report()
    assert nbformat.read(nb, as_version=4).cells[0].outputs == []

    # a saved error where the run raises nothing is a difference, tagged or not
    fixed = write_nb(tmp_path / "fixed.ipynb", "print('fine')")
    edit(fixed, lambda book: book.cells[0].outputs.extend([stream("fine\n"), _error("RuntimeError")]))
    check = check_notebook(fixed, CheckOptions(timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(0, "mismatch")], check.report()
    assert "error only in saved" in check.report()


def test_cells_saved_without_running_are_skipped_and_listed_unless_strict(tmp_path: Path, pytest_run: Any) -> None:
    # issue 24 A1: nbval skips a cell saved with no outputs and no execution count; holon-nb compared it
    nb = write_nb(tmp_path / "unrun.ipynb", "print('ran')", "print('never ran when saved')")
    edit(nb, lambda book: setattr(book.cells[0], "outputs", [stream("ran\n")]))
    check = check_notebook(nb, CheckOptions(timeout=60))
    assert not check.failed, check.report()
    assert check.unrun == [1]
    strict = check_notebook(nb, CheckOptions(timeout=60, strict_unrun=True))
    assert [(p.index, p.kind) for p in strict.cells] == [(1, "mismatch")]
    proc = pytest_run("--holon-nb", nb.name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "unrun.ipynb: cells 1 saved without running, not compared" in proc.stdout
    proc = pytest_run("--holon-nb", "--holon-nb-strict-unrun", nb.name, cwd=tmp_path)
    assert proc.returncode == 1 and "cell 1 (print('never ran when saved')): mismatch" in proc.stdout


def test_nbval_legacy_marker_and_sanitize_file(tmp_path: Path, pytest_run: Any) -> None:
    # issue 24 A3: nbval's `# PYTEST_VALIDATE_IGNORE_OUTPUT` and `--nbval-sanitize-with` files
    cfg = Path(__file__).parent / "fidelity" / "nbval_sanitize_defaults.cfg"
    nb = write_nb(
        tmp_path / "legacy.ipynb",
        "# PYTEST_VALIDATE_IGNORE_OUTPUT\nimport random\nprint(random.random())",
        "import datetime\nprint('today is', datetime.date.today())",
    )

    def saved(book: Any) -> None:
        book.cells[0].outputs = [stream("0.5\n")]
        book.cells[1].outputs = [stream("today is 1999-01-01\n")]

    edit(nb, saved)
    proc = pytest_run("--holon-nb", nb.name, cwd=tmp_path)
    assert proc.returncode == 1 and "cell 1 (import datetime): mismatch" in proc.stdout
    assert "cell 0" not in proc.stdout  # the legacy marker ignores its output
    proc = pytest_run("--holon-nb", "--holon-nb-sanitize-with", str(cfg), nb.name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout


def test_update_records_a_silent_cell_as_run_so_it_is_compared_later(tmp_path: Path) -> None:
    # issue 24 A1: a cell saved without running is skipped; after --holon-nb-update it counts as run
    nb = write_nb(tmp_path / "silent.ipynb", "x = 1", "print(x)")
    check_notebook(nb, CheckOptions(update=True, timeout=60))
    book = nbformat.read(nb, as_version=4)
    assert book.cells[0].outputs == [] and book.cells[0].execution_count == 1
    edit(nb, lambda b: setattr(b.cells[0], "source", "x = 1\nprint('now it prints')"))
    check = check_notebook(nb, CheckOptions(timeout=60))
    assert [(p.index, p.kind) for p in check.cells] == [(0, "mismatch")], check.report()
