"""notebooks/01-quickstart.ipynb executed headless through nbclient; its receipts are checked.

The checks read the receipt JSON (``application/vnd.holon.tool-result+json``)
of each cell: tool, status and the key fields the tutorial is about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _reader import assert_reads_as_text
from _support import check_tutorial, receipt_text_drift

from holon_nb.runtime import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "01-quickstart.ipynb"
# one run of the tutorial serves every test here (check_tutorial): they run on one xdist worker
pytestmark = pytest.mark.xdist_group("tutorial-01")


def _receipts(cell: Any) -> list[dict]:
    return [
        o["data"][RESULT_MIMETYPE]
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result") and RESULT_MIMETYPE in o.get("data", {})
    ]


def _cell(nb: Any, startswith: str) -> Any:
    matches = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(startswith)]
    assert len(matches) == 1, startswith
    return matches[0]


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name, timeout=60)


@pytest.fixture(scope="module")
def executed(check: Any) -> Any:
    assert check.summary.exit_code == 0, check.summary
    return check.executed


def test_every_code_cell_ran_without_error(executed: Any) -> None:
    for cell in executed.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source


def test_command_on_the_repository(executed: Any) -> None:
    (r,) = _receipts(_cell(executed, "%exec git log"))
    assert r["tool_name"] == "ExecCommand" and r["status"] == "success"
    assert r["result"]["disposition"] == "completed" and r["result"]["exit_status"] == 0
    assert r["result"]["stdout_preview"].strip()


def test_promoted_task_with_live_view_and_final_receipt(executed: Any) -> None:
    cell = _cell(executed, "%exec --yield-ms 500 sleep 1; for i")
    receipts = _receipts(cell)
    assert receipts[0]["result"]["disposition"] == "promoted_to_task"
    tid = receipts[0]["result"]["task_handle"]["task_id"]
    final = receipts[-1]
    assert final["tool_name"] == "TaskOutput" and final["result"]["task"]["task_id"] == tid
    assert final["result"]["task"]["status"] == "completed" and final["result"]["task"]["exit_status"] == 0
    text = final["result"]["task"]["output_preview"]
    assert [line for line in text.splitlines() if line.startswith("tick-")] == [f"tick-{i}" for i in range(1, 7)]
    # the live view was replaced by the final receipt: two receipts, no widget left in the saved cell
    shown = [o for o in cell.outputs if "application/vnd.holon.live-fallback+json" not in o.get("data", {})]
    assert len(receipts) == 2 and len(shown) == 2  # (a live view's spent fallback is not output a reader sees)
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell.outputs)
    blocked = [
        r for c in executed.cells if c.cell_type == "code" and c.source == "%task_output {tid}" for r in _receipts(c)
    ][0]
    assert blocked["result"]["retrieval_status"] == "success" and blocked["result"]["task"]["task_id"] == tid


def test_interactive_program(executed: Any) -> None:
    (sent,) = _receipts(_cell(executed, 'tid = rt.call("ListTasks").result["tasks"][0]["id"]\nrt.call("TaskInput"'))
    assert sent["result"]["accepted_input"] is True and sent["result"]["bytes_written"] == 4
    outs = [
        r for c in executed.cells if c.cell_type == "code" and c.source == "%task_output {tid}" for r in _receipts(c)
    ]
    assert "hello, Ada" in outs[1]["result"]["task"]["output_preview"]


def test_stop_process_tree(executed: Any) -> None:
    (stop,) = _receipts(_cell(executed, 'import time\n\ntid = rt.call("ListTasks")'))
    assert stop["tool_name"] == "TaskStop" and stop["result"]["stop_requested"] is True
    outs = [
        r for c in executed.cells if c.cell_type == "code" and c.source == "%task_output {tid}" for r in _receipts(c)
    ]
    assert outs[2]["result"]["task"]["status"] == "cancelled"
    (check,) = _receipts(_cell(executed, "%exec pgrep"))
    assert check["result"]["stdout_preview"] == "none-left"


def test_batch(executed: Any) -> None:
    (r,) = _receipts(_cell(executed, "%%exec"))
    assert r["tool_name"] == "ExecCommandBatch"
    assert r["result"]["item_count"] == r["result"]["completed_count"] == 4


@pytest.mark.parametrize(
    "source,kind",
    [
        ('%tool ExecCommand {"command": "ls"}', "invalid_tool_input"),
        ('%tool ExecCommand {"cmd": "ls", "status": "running"}', "invalid_tool_input"),
        ('%tool TaskStop {"task_id": "task_000000000000000"}', "task_not_found"),
    ],
)
def test_hostile_inputs_are_error_receipts(executed: Any, source: str, kind: str) -> None:
    cell = _cell(executed, source)
    (r,) = _receipts(cell)
    assert r["status"] == "error" and r["error"]["kind"] == kind
    text = [o["data"]["text/plain"] for o in cell.outputs if RESULT_MIMETYPE in o.get("data", {})][0]
    assert text.startswith(f"{r['tool_name']} · error · ") and "Traceback" not in text
    assert "\n  kind " in text and text.split("\n  kind ", 1)[1].lstrip().startswith(kind)


def test_saved_copy_reads_as_text(executed: Any) -> None:
    """Every text output is a readable receipt or note: no JSON envelope, placeholder, escape code or temp path."""
    assert_reads_as_text(executed)


def test_matches_its_committed_outputs(check: Any) -> None:
    """What ``holon-nb test`` checks: the run's outputs equal the committed ones, after normalisation."""
    assert not check.failed, check.report()


def test_saved_receipt_text_is_the_current_renderers(check: Any) -> None:
    """Issue 26 item 12: each saved receipt's text/plain is what the current renderer writes for it
    (regenerate with ``python notebooks/make_all.py`` when it is not)."""
    assert not receipt_text_drift(check), "\n\n".join(receipt_text_drift(check))
