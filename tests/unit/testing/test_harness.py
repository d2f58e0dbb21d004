"""``run_notebook`` and ``holon-nb run`` on small notebooks built in tmp dirs (notebook-tests spec §1, §4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

import holon_nb
from holon_nb.runtime import RESULT_MIMETYPE
from holon_nb.testing import HarnessUsageError, RunSummary, format_summary, run_notebook
from holon_nb.testing._parameters import inject_parameters, python_literal

REPO = Path(holon_nb.__file__).resolve().parents[1]
CALL = "import holon_nb\nrt = holon_nb.get_runtime()\n"

LIVE_FALLBACK = "application/vnd.holon.live-fallback+json"


def write_nb(path: Path, *cells: str | tuple[str, list[str]]) -> Path:
    """Write a notebook whose code cells are ``source`` or ``(source, tags)``."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("# test notebook"))
    for cell in cells:
        source, tags = (cell, []) if isinstance(cell, str) else cell
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": tags} if tags else {}))
    nbformat.write(nb, path)
    return path


def text_of(cell: Any, start: int = 0) -> str:
    """Stream text and text/plain of a cell's outputs from index ``start``."""
    parts = []
    for out in cell.get("outputs", [])[start:]:
        parts.append(
            out.get("text", "") if out["output_type"] == "stream" else out.get("data", {}).get("text/plain", "")
        )
        if RESULT_MIMETYPE in out.get("data", {}):
            parts.append(json.dumps(out["data"][RESULT_MIMETYPE]))
    return "".join(parts)


def cli_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("HOLON_NB_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "holon_nb.cli", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


pytestmark = pytest.mark.usefixtures("own_home")


def test_passing_notebook_is_saved_beside_the_input(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "ok.ipynb",
        "%load_ext holon_nb",
        CALL + "rt.call('ExecCommand', {'cmd': 'echo hi'})",
        "rt.call('ExecCommand', {'cmd': 'exit 3'})",
        "rt.call('NoSuchTool', {})",
        "print(rt.home)",
    )
    before = src.read_bytes()
    summary = run_notebook(src, timeout=30)
    assert isinstance(summary, RunSummary)
    assert summary.exit_code == 0, format_summary(summary)
    assert summary.output == tmp_path / "ok.executed.ipynb" and summary.output.exists()
    assert src.read_bytes() == before
    assert summary.cells_run == 5 and summary.cells_failed == 0
    assert summary.receipts_by_status == {"error": 1, "success": 2}
    assert summary.error_kinds == {"unknown_tool": 1}
    assert summary.tasks_left_running == []
    nb = nbformat.read(summary.output, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].outputs == []  # the preload makes the notebook's own %load_ext silent
    assert [c.execution_count for c in code] == [1, 2, 3, 4, 5]
    home = text_of(code[4]).strip()
    assert home == summary.holon_home and not Path(home).exists()  # a temporary home, removed afterwards
    text = format_summary(summary)
    assert "cells run:       5" in text and "success 2" in text and "unknown_tool 1" in text


def test_a_failing_cell_fails_the_run_but_the_notebook_is_saved(tmp_path: Path) -> None:
    src = write_nb(tmp_path / "bad.ipynb", "x = 1", "1/0", "print('after', x)")
    summary = run_notebook(src, output=tmp_path / "out" / "bad.out.ipynb", timeout=30)
    assert summary.exit_code == 1
    assert summary.failed_cells == [2] and summary.cells[1].ename == "ZeroDivisionError"
    nb = nbformat.read(tmp_path / "out" / "bad.out.ipynb", as_version=4)
    assert nb.cells[2].outputs[0]["output_type"] == "error"
    assert nb.cells[3].outputs == [] and summary.cells[2].status == "skipped"  # the run stopped at the failure
    assert summary.stopped_after == 2 and summary.cells_run == 2
    assert "stopped after cell #2 failed: later cells were not run" in format_summary(summary)


def test_the_summary_names_a_failing_cells_first_line_exception_and_message(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "bad.ipynb",
        "x = 1",
        "import importlib\nraise ModuleNotFoundError('this tutorial needs pytest: pip install pytest')",
    )
    summary = run_notebook(src, output=tmp_path / "bad.out.ipynb", timeout=30)
    text = format_summary(summary)
    assert "  cell #2 failed: import importlib" in text, text
    assert "    ModuleNotFoundError: this tutorial needs pytest: pip install pytest" in text, text


def test_a_directory_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    write_nb(tmp_path / "a.ipynb", "1")
    with pytest.raises(HarnessUsageError, match=r"is a directory: give one notebook file \(for example .*a\.ipynb\)"):
        run_notebook(tmp_path)
    proc = cli_run(".", cwd=tmp_path)
    assert proc.returncode == 2 and "is a directory" in proc.stderr and "no such notebook" not in proc.stderr


def test_a_rerun_of_an_executed_copy_shows_only_what_this_run_did(tmp_path: Path) -> None:
    src = write_nb(tmp_path / "bad.ipynb", "x = 1", "1/0", "print('after', x)")
    run_notebook(src, output=tmp_path / "full.ipynb", timeout=30, keep_going=True)
    assert text_of(nbformat.read(tmp_path / "full.ipynb", as_version=4).cells[3]) == "after 1\n"
    run_notebook(tmp_path / "full.ipynb", output=tmp_path / "again.ipynb", timeout=30)  # stops at the failure
    again = nbformat.read(tmp_path / "again.ipynb", as_version=4)
    assert again.cells[3].outputs == [] and again.cells[3].execution_count is None


def test_keep_going_runs_the_cells_after_a_failure(tmp_path: Path) -> None:
    src = write_nb(tmp_path / "bad.ipynb", "x = 1", "1/0", "print('after', x)", "undefined_name")
    summary = run_notebook(src, output=tmp_path / "bad.out.ipynb", timeout=30, keep_going=True)
    assert summary.exit_code == 1 and summary.failed_cells == [2, 4] and summary.stopped_after is None
    nb = nbformat.read(tmp_path / "bad.out.ipynb", as_version=4)
    assert text_of(nb.cells[3]) == "after 1\n"  # later cells still ran


def test_raises_exception_cell_does_not_fail_the_run(tmp_path: Path) -> None:
    src = write_nb(tmp_path / "raises.ipynb", ("raise ValueError('expected')", ["raises-exception"]), "print('ok')")
    summary = run_notebook(src, timeout=30)
    assert summary.exit_code == 0, format_summary(summary)
    assert summary.cells[0].status == "expected-error" and summary.cells[0].ename == "ValueError"


def test_parameters_are_injected_after_the_parameters_cell_via_the_cli(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "params.ipynb", ("n = 1\nname = 'a'\nword = 'w'", ["parameters"]), "print(n * 2, name, word)"
    )
    proc = cli_run(str(src), "-p", "n=3", "-p", 'name="x"', "-p", "word=plain text", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed" in proc.stdout and "cells run:       3" in proc.stdout
    assert proc.stderr == ""  # no progress lines when stderr is not a terminal
    nb = nbformat.read(tmp_path / "params.executed.ipynb", as_version=4)
    injected = nb.cells[2]
    assert injected.metadata["tags"] == ["injected-parameters"]
    assert 'n = 3\nname = "x"\nword = "plain text"' in injected.source
    assert text_of(nb.cells[3]) == "6 x plain text\n"


def test_inject_parameters_without_a_parameters_cell_goes_first_and_replaces_an_old_injection() -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1")])
    assert inject_parameters(nb, {"a": "2"}) == 0
    assert inject_parameters(nb, {"a": '[1, true, null, {"k": 1.5}]'}) == 0
    assert len(nb.cells) == 2 and nb.cells[0].source.endswith('a = [1, True, None, {"k": 1.5}]')
    assert python_literal(float("inf")) == "float('inf')"
    with pytest.raises(ValueError):
        inject_parameters(nb, {"class": "1"})


def test_late_task_output_lands_in_the_last_cells_trailing_output(tmp_path: Path) -> None:
    """NT-05-like: a task printing its last line ~2 s after the last cell ended."""
    src = write_nb(
        tmp_path / "late.ipynb",
        CALL + "rt.call('ExecCommand', {'cmd': 'sleep 2; echo late-line', 'yield_time_ms': 0})",
        "print('last cell')",
    )
    summary = run_notebook(src, timeout=30)
    assert summary.exit_code == 0, format_summary(summary)
    assert summary.tasks_left_running == []
    last = nbformat.read(summary.output, as_version=4).cells[-1]
    start = last.metadata["holon_nb"]["trailing_outputs_from"]
    assert start == 1 and text_of(last, 0).startswith("last cell\n")
    assert "late-line" in text_of(last, start)
    assert "late-line" not in text_of(last, 0)[: len("last cell\n")]


def test_tasks_still_running_are_stopped_and_listed(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "left.ipynb",
        CALL + "r = rt.call('ExecCommand', {'cmd': 'sleep 611.25', 'yield_time_ms': 0, 'login': False})\n"
        "print(r.result['task_handle']['task_id'])",
    )
    # the cells are quick, but a loaded machine may take seconds to load the extension; the task never ends by
    # itself, so the final wait is short: what is tested is what happens after it
    summary = run_notebook(src, timeout=30, final_wait=0.5)
    assert summary.exit_code == 0, format_summary(summary)
    nb = nbformat.read(summary.output, as_version=4)
    task_id = text_of(nb.cells[1]).splitlines()[0]
    assert summary.tasks_left_running == [task_id]
    assert task_id in format_summary(summary)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "sleep 611.25" not in ps  # a duration no other process on the machine uses
    # the stopped task's final receipt is saved too (in the trailing output of the last cell)
    from holon_nb.runtime import RESULT_MIMETYPE

    finals = [o["data"][RESULT_MIMETYPE] for o in nb.cells[-1].outputs if RESULT_MIMETYPE in o.get("data", {})]
    assert [(f["tool_name"], f["result"]["task"]["task_id"], f["result"]["task"]["status"]) for f in finals] == [
        ("TaskOutput", task_id, "cancelled")
    ]


def test_stopped_magic_task_updates_its_own_cell(tmp_path: Path) -> None:
    """A task started by %exec and stopped by the harness: its cell is saved with the cancelled receipt,
    never with a 'running' placeholder."""
    src = write_nb(
        tmp_path / "magic.ipynb", "%load_ext holon_nb", "%exec --yield-ms 200 --no-login sleep 612.5", "print('last')"
    )
    summary = run_notebook(src, timeout=30, final_wait=0.5)  # the task never ends by itself: a short final wait
    nb = nbformat.read(summary.output, as_version=4)
    from holon_nb.runtime import RESULT_MIMETYPE

    cell = nb.cells[2]  # (cell 0 is markdown)
    receipts = [o["data"][RESULT_MIMETYPE] for o in cell.outputs if RESULT_MIMETYPE in o.get("data", {})]
    assert receipts[-1]["tool_name"] == "TaskOutput" and receipts[-1]["result"]["task"]["status"] == "cancelled"
    assert not any("running; its final receipt" in o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def test_each_run_has_its_own_holon_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = write_nb(tmp_path / "home.ipynb", CALL + "print(rt.home)")
    homes = []
    for _ in range(2):
        summary = run_notebook(src, timeout=30)
        homes.append(text_of(nbformat.read(summary.output, as_version=4).cells[1]).strip())
    assert homes[0] != homes[1]
    fixed = tmp_path / "fixed-home"
    monkeypatch.setenv("HOLON_NB_HOME", str(fixed))
    summary = run_notebook(src, timeout=30)
    assert text_of(nbformat.read(summary.output, as_version=4).cells[1]).strip() == str(fixed)
    assert (fixed / "holon.sqlite3").exists()  # a given home is the user's: kept


def test_secrets_are_scrubbed_from_the_saved_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "hunter2-but-longer-0042"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    src = write_nb(
        tmp_path / "secret.ipynb",
        "import os; print(os.environ['MY_SERVICE_TOKEN'])",
        CALL + "rt.call('ExecCommand', {'cmd': 'echo $MY_SERVICE_TOKEN'})",
    )
    summary = run_notebook(src, timeout=30)
    assert summary.exit_code == 0, format_summary(summary)
    saved = summary.output.read_text(encoding="utf-8")
    assert secret not in saved and saved.count("[redacted]") >= 2
    assert "MY_SERVICE_TOKEN" in saved  # sources are kept as written


def test_secrets_set_inside_the_kernel_are_scrubbed_too(tmp_path: Path) -> None:
    secret = "kernel-only-secret-9f31"
    src = write_nb(
        tmp_path / "late.ipynb",
        f"import os; os.environ['LATE_API_TOKEN'] = '{secret[:6]}' + '{secret[6:]}'",
        "print(os.environ['LATE_API_TOKEN'])",
        ("import os; os.environ['EARLY_PASSWORD'] = 'before-' + 'restart-pw'\nprint(os.environ['EARLY_PASSWORD'])", []),
        ("print('restarted')", ["holon-restart-kernel"]),
    )
    summary = run_notebook(src, timeout=30)
    assert summary.exit_code == 0, format_summary(summary)
    saved = summary.output.read_text()
    assert secret not in saved and "before-restart-pw" not in saved
    assert saved.count("[redacted]") >= 2


def test_kernel_cwd_defaults_to_the_notebook_directory(tmp_path: Path) -> None:
    (tmp_path / "nbdir").mkdir()
    src = write_nb(tmp_path / "nbdir" / "cwd.ipynb", "import os; print(os.getcwd())")
    summary = run_notebook(src, timeout=30)
    assert text_of(nbformat.read(summary.output, as_version=4).cells[1]).strip() == str((tmp_path / "nbdir").resolve())
    summary = run_notebook(src, timeout=30, cwd=tmp_path, output=tmp_path / "o.ipynb")
    assert text_of(nbformat.read(tmp_path / "o.ipynb", as_version=4).cells[1]).strip() == str(tmp_path.resolve())


def test_cell_timeout_interrupts_the_cell_and_with_keep_going_the_run_goes_on(tmp_path: Path) -> None:
    # the sleep outlasts the whole run's limit (10 x 3 s) by far: the next cell ran, so the interrupt ended it
    src = write_nb(tmp_path / "slow.ipynb", "import time; time.sleep(600)", "print('after')")
    summary = run_notebook(src, timeout=3, keep_going=True)
    assert summary.exit_code == 1 and summary.cells[0].status == "timeout"
    assert summary.cells[1].status == "ok"
    # the saved cell says why it stopped (the interrupt's bare KeyboardInterrupt did not)
    saved = [c for c in nbformat.read(summary.output, as_version=4).cells if c.cell_type == "code"][0]
    (error,) = [o for o in saved.outputs if o.output_type == "error"]
    assert error.ename == "CellTimeoutError" and "timeout of 3 s" in error.evalue
    summary = run_notebook(src, timeout=3)
    assert summary.cells[0].status == "timeout" and summary.cells[1].status == "skipped"


def test_the_whole_run_stops_at_ten_times_the_cell_timeout(tmp_path: Path) -> None:
    # 120 cells of 0.1 s (each far within its 1 s): together past the 10 s limit, which stops the run
    src = write_nb(tmp_path / "many.ipynb", *["import time; time.sleep(0.1)"] * 120)
    summary = run_notebook(src, timeout=1)
    assert summary.timed_out and summary.exit_code == 1
    assert summary.cells[-1].status == "skipped"
    assert "overall time limit" in format_summary(summary)


def test_kernel_death_exits_3_and_saves(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "die.ipynb",
        CALL + "rt.call('ExecCommand', {'cmd': 'sleep 731', 'yield_time_ms': 0, 'login': False}); print('before')",
        "import os; os._exit(1)",
        "print('never')",
    )
    summary = run_notebook(src, timeout=30)
    assert summary.kernel_died and summary.exit_code == 3
    assert [c.status for c in summary.cells] == ["ok", "error", "skipped"]
    assert "KERNEL DIED" in format_summary(summary)
    assert "before\n" in text_of(nbformat.read(summary.output, as_version=4).cells[1])
    # the orphaned task's process group was killed (D7 reconciliation on the run's home)
    assert len(summary.tasks_left_running) == 1
    assert "sleep 731" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_progress_lines_go_to_stderr_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_nb(tmp_path / "p.ipynb", "x = 1", ("y = 2", ["holon-skip"]))
    summary = run_notebook(src, timeout=30, progress=True)
    err = capsys.readouterr().err
    assert "[  2/3] ok" in err and "x = 1" in err and "y = 2" not in err
    assert summary.cells[1].status == "skipped"


@pytest.mark.slow
def test_cli_exit_codes_for_failures_and_usage_errors(tmp_path: Path) -> None:
    write_nb(tmp_path / "bad.ipynb", "1/0")
    proc = cli_run("bad.ipynb", cwd=tmp_path)
    assert proc.returncode == 1 and "FAILED" in proc.stdout and "ZeroDivisionError" in proc.stdout
    assert (tmp_path / "bad.executed.ipynb").exists()
    assert cli_run("missing.ipynb", cwd=tmp_path).returncode == 2
    assert cli_run("bad.ipynb", "-o", "bad.ipynb", cwd=tmp_path).returncode == 2
    assert cli_run("bad.ipynb", "--kernel", "no-such-kernel", cwd=tmp_path).returncode == 2
    assert cli_run("bad.ipynb", "-p", "no_equals_sign", cwd=tmp_path).returncode == 2
    assert cli_run("bad.ipynb", "--cassettes", "sometimes", cwd=tmp_path).returncode == 2


def test_usage_errors_raise_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(HarnessUsageError):
        run_notebook(tmp_path / "nope.ipynb")
    (tmp_path / "junk.ipynb").write_text("not json")
    with pytest.raises(HarnessUsageError):
        run_notebook(tmp_path / "junk.ipynb")
    write_nb(tmp_path / "a.ipynb", "1")
    with pytest.raises(HarnessUsageError):
        run_notebook(tmp_path / "a.ipynb", timeout=0)
    with pytest.raises(HarnessUsageError, match="final_wait"):
        run_notebook(tmp_path / "a.ipynb", final_wait=-1)


def test_an_output_that_cannot_be_written_is_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cell = f"open({str(marker)!r}, 'w').close()"
    src = write_nb(tmp_path / "a.ipynb", cell)
    (tmp_path / "a-file").write_text("")
    for out, reason in (
        (tmp_path / "a-file" / "sub" / "out.ipynb", "a-file is a file, not a directory"),
        (tmp_path / ("y" * 300 + ".ipynb"), "File name too long"),
    ):
        with pytest.raises(HarnessUsageError, match=f"cannot save the executed notebook to .*{reason}"):
            run_notebook(src, output=out)
    long_stem = write_nb(tmp_path / ("z" * 245 + ".ipynb"), cell)  # its default <stem>.executed.ipynb is too long
    proc = cli_run(long_stem.name, cwd=tmp_path)
    assert proc.returncode == 2 and "File name too long" in proc.stderr and "Traceback" not in proc.stderr
    assert not marker.exists()  # nothing ran


def test_an_output_directory_gets_the_default_name_inside_it(tmp_path: Path) -> None:
    src = write_nb(tmp_path / "a.ipynb", "print('hi')")
    (tmp_path / "out").mkdir()
    summary = run_notebook(src, output=tmp_path / "out", timeout=60)
    assert summary.output == tmp_path / "out" / "a.executed.ipynb" and summary.output.is_file()


def test_a_save_that_fails_after_the_run_keeps_the_results_and_fails_the_run(tmp_path: Path) -> None:
    from holon_nb.testing._saved import save_executed

    nb = nbformat.v4.new_notebook()
    summary = RunSummary(notebook=tmp_path / "a.ipynb", output=None)
    saved = save_executed(nb, tmp_path / "gone" / "a.executed.ipynb", summary)  # its directory went away meanwhile
    assert saved.is_file() and nbformat.read(saved, as_version=4) == nb
    assert summary.problems and str(saved) in summary.problems[0] and summary.exit_code == 1


def test_a_task_running_at_a_restart_leaves_a_static_view_saying_so(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "restart-task.ipynb",
        "%exec --no-login --yield-ms 200 -- sleep 600",
        ("print('after')", ["holon-restart-kernel"]),
        CALL + "print([r['status'] for r in rt.store.query('SELECT status FROM tasks')])",
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    task_cell, _, tasks = [c for c in nbformat.read(summary.output, as_version=4).cells if c.cell_type == "code"]
    assert not [o for o in task_cell.outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    last = task_cell.outputs[-1]["data"]["text/plain"]  # was "[live view of task_…; its final receipt replaces it…]"
    assert "interrupted" in last and "the kernel restarted" in last, last
    assert text_of(tasks).strip() == "['interrupted']"  # as a restart leaves it (D7)


def test_restart_tag_restarts_the_kernel_and_state_in_the_store_survives(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "restart.ipynb",
        "import os\nbefore = os.getpid()\nprint('pid', before)\nprint('headless:', os.environ.get('HOLON_NB_HEADLESS'))",
        "%exec echo before-restart",
        "%workitems",
        (
            "import os\nprint('pid', os.getpid())\nprint('old variable kept:', 'before' in globals())\n"
            "print('headless:', os.environ.get('HOLON_NB_HEADLESS'))\n"
            + CALL
            + "print('earlier executions:', rt.store.query('SELECT COUNT(*) AS n FROM tool_executions')[0]['n'])",
            ["holon-restart-kernel"],
        ),
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    assert summary.restarts == 1 and "kernel restarts: 1" in format_summary(summary)
    nb = nbformat.read(summary.output, as_version=4)
    first, _, board, after = [c for c in nb.cells if c.cell_type == "code"]
    # the old kernel's live board was frozen before the restart: static in the saved notebook, no widget;
    # its beacon (notebook/_liveness.py) was spent with it
    (shown,) = [o for o in board.outputs if LIVE_FALLBACK not in o["data"]]
    assert [o["data"][LIVE_FALLBACK]["state"] for o in board.outputs if LIVE_FALLBACK in o["data"]] == ["spent"]
    assert "application/vnd.jupyter.widget-view+json" not in shown["data"]
    assert "the kernel restarted" in shown["data"]["text/plain"]
    pid_before = text_of(first).split()[1]
    lines = text_of(after).splitlines()
    assert lines[0].startswith("pid ") and lines[0].split()[1] != pid_before  # a new kernel process
    assert "old variable kept: False" in lines
    assert "earlier executions: 1" in lines  # the same holon home: the ExecCommand before the restart
    # the kernel knows no person is there (tutorial 03 makes its timer short): before and after the restart
    assert "headless: 1" in text_of(first) and "headless: 1" in text_of(after)


def test_saved_notebook_holds_no_widget_of_ended_work(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "views.ipynb",
        "%workitems",
        "%exec --yield-ms 0 -- sleep 0.3; echo finished-marker",
        "%workitem create Ship it",
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    nb = nbformat.read(summary.output, as_version=4)
    board, task, _ = [c for c in nb.cells if c.cell_type == "code"]
    widget = "application/vnd.jupyter.widget-view+json"
    # the live board froze at the end of the run: a static board (it saw the later work item), no widget;
    # its beacon and the task view's standby fallback (notebook/_liveness.py) are spent markers
    spent = [o for c in (board, task) for o in c.outputs if LIVE_FALLBACK in o["data"]]
    assert len(spent) == 2 and all(o["data"][LIVE_FALLBACK]["state"] == "spent" for o in spent)
    (shown,) = [o for o in board.outputs if LIVE_FALLBACK not in o["data"]]
    assert widget not in shown["data"] and "Ship it" in shown["data"]["text/plain"]
    assert "the headless run ended" in shown["data"]["text/plain"] and "holon-board-view" in shown["data"]["text/html"]
    # the promoted command: its receipt, then its live view replaced by the final receipt (output shown once)
    own = [o for o in task.outputs if LIVE_FALLBACK not in o["data"]]
    assert [o["data"][RESULT_MIMETYPE]["tool_name"] for o in own] == ["ExecCommand", "TaskOutput"]
    assert sum("finished-marker" in o["data"]["text/plain"] for o in task.outputs) == 1
    assert not any(widget in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    assert "widgets" not in nb.metadata  # no saved state of widgets no output shows


REPR_RAISES = """\
from IPython.display import display
class Bad:
    def _repr_html_(self):
        raise RuntimeError('repr failed')
display(Bad())
"""


def test_an_error_raised_after_the_cell_body_fails_the_run(tmp_path: Path) -> None:
    # issue 24 B1: IPython shows the repr's exception as an error output but replies "ok"
    src = write_nb(tmp_path / "late.ipynb", REPR_RAISES, "print('after')")
    summary = run_notebook(src, output=tmp_path / "out.ipynb", timeout=30)
    assert summary.exit_code == 1, format_summary(summary)
    assert summary.cells[0].status == "error" and summary.cells[0].ename == "RuntimeError"
    assert summary.cells[0].evalue == "repr failed"
    tagged = write_nb(tmp_path / "tagged.ipynb", (REPR_RAISES, ["raises-exception"]))
    summary = run_notebook(tagged, output=tmp_path / "out2.ipynb", timeout=30)
    assert summary.exit_code == 0 and summary.cells[0].status == "expected-error"


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def saved_models(nb: Any) -> dict[str, str]:
    """model id -> model name of the widget state a saved notebook holds."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return {k: v["model_name"] for k, v in state.items()}


def test_widget_state_keeps_a_slider_shown_inside_an_output_widget(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "output_widget.ipynb",
        "import ipywidgets as w\nout = w.Output()\ndisplay(out)",
        "slider = w.IntSlider(value=3)\nwith out:\n    display(slider)\nprint(slider.model_id, slider.layout.model_id)",
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    nb = nbformat.read(summary.output, as_version=4)
    slider_id, layout_id = "".join(o["text"] for o in nb.cells[2].outputs if o["output_type"] == "stream").split()
    models = saved_models(nb)
    assert models[slider_id] == "IntSliderModel" and layout_id in models
    assert "OutputModel" in models.values()


def test_widget_state_keeps_the_models_of_a_jslink(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "jslink.ipynb",
        "import ipywidgets as w\na, b = w.IntSlider(), w.IntSlider()\nlink = w.jslink((a, 'value'), (b, 'value'))\n"
        "display(a)\nprint(link.model_id, b.model_id)",
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    nb = nbformat.read(summary.output, as_version=4)
    link_id, b_id = "".join(o["text"] for o in nb.cells[1].outputs if o["output_type"] == "stream").split()
    models = saved_models(nb)
    assert models[link_id] == "LinkModel" and models[b_id] == "IntSliderModel"


def test_widget_state_leaves_an_empty_widgets_entry_as_nbclient_writes_it() -> None:
    from holon_nb.testing._widget_state import drop_unshown_widget_state

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("comm.send(...)"))
    entry = {WIDGET_STATE: {"state": {}, "version_major": 2, "version_minor": 0}}
    nb.metadata["widgets"] = json.loads(json.dumps(entry))
    drop_unshown_widget_state(nb)
    assert nb.metadata["widgets"] == entry


def test_a_notebook_saved_with_an_empty_widgets_entry_keeps_it(tmp_path: Path) -> None:
    # nbclient leaves the notebook's metadata.widgets alone when the run made no widget (peer notebook
    # "Skip Exceptions with Cell Tags" of nbclient is saved with such an entry)
    src = write_nb(tmp_path / "empty_widgets.ipynb", "print('ok')")
    nb = nbformat.read(src, as_version=4)
    entry = {WIDGET_STATE: {"state": {}, "version_major": 2, "version_minor": 0}}
    nb.metadata["widgets"] = entry
    nbformat.write(nb, src)
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    assert nbformat.read(summary.output, as_version=4).metadata["widgets"] == entry


def test_a_notebook_kernel_does_not_inherit_the_outer_pytest_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # a CI that sets PYTEST_ADDOPTS=--junitxml=… changed tutorial 04's own `%exec pytest` output
    from holon_nb.testing._kernels import kernel_env

    monkeypatch.setenv("PYTEST_ADDOPTS", "--junitxml=/tmp/outer.xml")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")  # where the notebook runs: kept (tests/notebooks probe it)
    monkeypatch.setenv("SOMETHING_ELSE", "kept")
    env = kernel_env("/tmp/home", None)
    assert "PYTEST_ADDOPTS" not in env and "PYTEST_CURRENT_TEST" not in env
    assert (
        env["PYTEST_XDIST_WORKER"] == "gw3" and env["SOMETHING_ELSE"] == "kept" and env["HOLON_NB_HOME"] == "/tmp/home"
    )
