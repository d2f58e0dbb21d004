"""notebooks/03-work-items-waits-timers.ipynb executed by nbclient, including a real kernel restart.

Before the restart the notebook plans a work item, starts two background
jobs, waits for one (WaitFor task_result) and sets a timer; after it, the
new kernel's runtime must find the work item, the triggered wait, the fired
timer, the messages and both task results in the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from _reader import assert_reads_as_text
from _support import check_tutorial, receipt_text_drift

from holon_nb.runtime import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03-work-items-waits-timers.ipynb"
# one run of the tutorial serves every test here (check_tutorial): they run on one xdist worker
pytestmark = pytest.mark.xdist_group("tutorial-03")


def _receipts(cell: Any) -> list[dict]:
    return [
        o["data"][RESULT_MIMETYPE]
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result") and RESULT_MIMETYPE in o.get("data", {})
    ]


def _text(cell: Any) -> str:
    return "".join(
        o.get("text", "") if o["output_type"] == "stream" else o.get("data", {}).get("text/plain", "")
        for o in cell.get("outputs", [])
    )


def _code(nb: Any) -> list[Any]:
    return [c for c in nb.cells if c.cell_type == "code"]


def _one(nb: Any, startswith: str) -> Any:
    (cell,) = [c for c in _code(nb) if c.source.startswith(startswith)]
    return cell


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def run(check: Any) -> tuple[Any, Any]:
    return check.summary, check.executed


def test_run_passes_with_one_real_restart(run: tuple[Any, Any]) -> None:
    summary, nb = run
    assert summary.exit_code == 0, summary
    assert summary.restarts == 1 and summary.error_kinds == {}
    for cell in _code(nb):
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
    restarted = [c for c in _code(nb) if "holon-restart-kernel" in c.metadata.get("tags", [])]
    assert len(restarted) == 1 and _text(restarted[0]).strip() == "a new kernel: True"


def test_before_the_restart(run: tuple[Any, Any]) -> None:
    _, nb = run
    (created,) = _receipts(_one(nb, "%workitem create"))
    item = created["result"]["work_item"]
    assert item["is_current"] and [t["state"] for t in item["todo_list"]] == ["in_progress", "pending", "pending"]
    (wait,) = _receipts(_one(nb, "%waitfor task_result"))
    assert wait["status"] == "success" and wait["result"]["scope"] == "work_item"
    assert wait["result"]["wait_condition"]["status"] == "active" and wait["result"]["final_brief_id"]
    before, after, final = [_text(c) for c in _code(nb) if c.source == "%workitems --static"]
    assert "blocked by: job A must finish" in before
    assert "job A must finish (triggered)" in before  # job A's result arrived
    assert "active timers" not in before


def test_state_after_the_restart(run: tuple[Any, Any]) -> None:
    _, nb = run
    (shown,) = _receipts(_one(nb, 'wid = rt.call("ListWorkItems").result["work_items"][0]["id"]\n%workitem show'))
    item = shown["result"]["work_item"]
    assert item["state"] == "open" and item["blocked_by"] == "job A must finish"
    assert [w["status"] for w in item["active_wait_conditions"]] == ["triggered"]
    assert [t["text"] for t in item["todo_list"]] == ["collect the inputs", "run the two jobs", "compare the outputs"]
    before, after, final = [_text(c) for c in _code(nb) if c.source == "%workitems --static"]
    assert "(triggered)" in after and "active timers: 1" in after and "fired 0x" in after
    # the timer was due after the restart: the new kernel's runtime re-armed it and fired it once
    assert _text(_one(nb, "deadline = time.time() + 150")).strip() == "fired 1 time(s); after the restart: True"
    messages = _text(_one(nb, "for m in rt.messages()")).splitlines()
    assert sum(line.startswith("timer_tick") for line in messages) == 1
    assert any(line.startswith("TaskResult") and "job-a" in line for line in messages)
    assert any(line.startswith("TaskResult") and "interrupted" in line for line in messages)
    statuses = [line.split()[1] for line in _text(_one(nb, "tasks = rt.store.query")).splitlines()]
    assert statuses == ["completed", "interrupted"]  # job B died with the old kernel, never "running"


def test_objective_completed_with_report_and_searchable(run: tuple[Any, Any]) -> None:
    _, nb = run
    (done,) = _receipts(_one(nb, "%workitem complete"))
    assert done["result"]["completed_transition"] is True
    assert done["result"]["work_item"]["completion_report"]["text"].startswith("Job A produced 42 rows")
    (picked,) = _receipts(_one(nb, "%workitem pick"))
    assert picked["result"]["transition"]["blocker_cleared"] is True
    final = [_text(c) for c in _code(nb) if c.source == "%workitems --static"][-1]
    assert "[completed/completed]" in final and "blocked by" not in final
    (found,) = _receipts(_one(nb, "%memory search"))
    assert any(r["kind"] == "work_item" for r in found["result"]["results"])


def test_an_agent_asks_the_operator_and_follow_runs_the_answer(run: tuple[Any, Any]) -> None:
    _, nb = run
    view = _text(_one(nb, "%%agent --model $model --follow 2"))
    assert "WaitFor (success)" in view and "waiting at agent scope: report format" in view
    assert "following: waiting for one of 1 open wait(s) to be woken" in view
    assert "woken by operator_prompt" in view and "CSV, please" in view
    assert "followed 1 wake(s); stopped following: the agent has nothing left to wait for" in view
    said = _text(_one(nb, "deadline = time.time() + 30"))
    assert "it woke the agent's wait for operator input; the %%agent --follow view runs its next turn" in said
    turns = _text(_one(nb, "for turn in holon_nb.agent_turns()")).splitlines()
    assert turns == [
        "completed wait_for_silent ''",
        "completed end_turn 'CSV it is. I will write the nightly report as CSV from now on.'",
    ]


def test_saved_copy_reads_as_text(run: tuple[Any, Any]) -> None:
    """Every text output is a readable receipt or note: no JSON envelope, placeholder, escape code or temp path."""
    assert_reads_as_text(run[1])


def test_run_all_by_a_person_stops_before_the_restart_with_what_to_do(tmp_path: Path) -> None:
    """JupyterLab's Run All honours no holon-restart-kernel tag: the cell after the restart point stops it."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from holon_nb.testing._kernels import HEADLESS_ENV, INTERPRETER_KERNEL, InterpreterKernelSpecManager, kernel_env

    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in _code(nb):
        cell.outputs = []
    env = kernel_env(str(tmp_path / "home"), None)
    env.pop(HEADLESS_ENV)  # a person's kernel
    km = KernelManager(kernel_name=INTERPRETER_KERNEL, kernel_spec_manager=InterpreterKernelSpecManager())
    client = NotebookClient(nb, timeout=120, km=km, resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError) as stopped:
        # nbclient shuts down only a kernel it created: this one (and the notebook's background jobs, which
        # its runtime stops as it closes) ran on after the test until pytest exited. cleanup_kc: shut it down
        # (gracefully) even though the stopped cell raised.
        client.execute(env=env, cwd=str(tmp_path), cleanup_kc=True)
    assert stopped.value.ename == "UsageError" and "restart the kernel first" in stopped.value.evalue
    code = _code(nb)
    guard = next(i for i, c in enumerate(code) if "holon-restart-kernel" in c.metadata.get("tags", []))
    assert all(not c.outputs for c in code[guard + 1 :])  # nothing after it ran
    (timer,) = [r for c in code[:guard] for r in _receipts(c) if r["tool_name"] == "CreateTimer"]
    assert timer["result"]["timer"]["duration_ms"] == 120_000  # time enough to restart by hand


def test_matches_its_committed_outputs(check: Any) -> None:
    """What ``holon-nb test`` checks: the run's outputs equal the committed ones, after normalisation."""
    assert not check.failed, check.report()


def test_saved_receipt_text_is_the_current_renderers(check: Any) -> None:
    """Issue 26 item 12: each saved receipt's text/plain is what the current renderer writes for it
    (regenerate with ``python notebooks/make_all.py`` when it is not)."""
    assert not receipt_text_drift(check), "\n\n".join(receipt_text_drift(check))
