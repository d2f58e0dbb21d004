"""notebooks/04-agent-turns.ipynb executed by nbclient: two %%agent turns replayed from committed cassettes.

If this fails with CassetteDrift after a change to a tool's description or schema, the system prompt or the
turn loop's requests, re-record the cassettes: ``python notebooks/make_04_agent.py --record``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _reader import assert_reads_as_text
from _support import check_tutorial, receipt_text_drift

from holon_nb.testing.normalize import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04-agent-turns.ipynb"
# one run of the tutorial serves every test here (check_tutorial): they run on one xdist worker
pytestmark = pytest.mark.xdist_group("tutorial-04")


def _text(cell: Any) -> str:
    return "".join(
        o.get("text", "") if o["output_type"] == "stream" else o.get("data", {}).get("text/plain", "")
        for o in cell.get("outputs", [])
    )


def _one(nb: Any, startswith: str) -> Any:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(startswith)]
    return cell


def _tests_cells(nb: Any) -> list[Any]:
    """The two cells that run the scratch project's tests: before the agent, and after its patch."""
    cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%exec") and "-m pytest" in c.source]
    assert len(cells) == 2
    return cells


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def executed(check: Any) -> Any:
    assert check.summary.exit_code == 0, check.summary
    return check.executed


def test_the_failure_is_real_before_the_agent(executed: Any) -> None:
    before = _text(_tests_cells(executed)[0])
    assert "1 failed, 2 passed" in before and "test_green_is_green FAILED" in before


def test_first_turn_replayed_fixes_and_waits(executed: Any) -> None:
    text = _text(_one(executed, "%%agent --cassette 04-agent-turns.holon/cassettes/fix-the-bug.jsonl"))
    assert "model standin@default/colour-fixer" in text
    for tool in ("CreateWorkItem (success)", "ExecCommand (success)", "ApplyPatch (success)", "WaitFor (success)"):
        assert tool in text, tool
    assert "M ansi.py" in text and "promoted" in text.lower()
    assert "turn completed (wait_for_silent) after 6 round(s)" in text
    assert "error:" not in text


def test_second_turn_completes_the_work_item_with_a_report(executed: Any) -> None:
    text = _text(_one(executed, "%%agent --cassette 04-agent-turns.holon/cassettes/finish.jsonl"))
    assert "TaskOutput (success)" in text and "3 passed" in text
    assert "CompleteWorkItem (success)" in text
    assert "turn completed (work_item_completed) after 3 round(s)" in text
    assert "final text:\nFixed: ANSI code 32 (green) was drawn with the red #cf222e" in text


def test_turn_results_and_the_patch_applied_for_real(executed: Any) -> None:
    summary = _text(_one(executed, "for turn in holon_nb.agent_turns()")).splitlines()
    assert summary[0].startswith("completed wait_for_silent 6 rounds")
    assert summary[1].startswith("completed work_item_completed 3 rounds")
    assert summary[-1].startswith("Fixed: ANSI code 32")
    assert "M ansi.py" in _text(_one(executed, "patch = next("))
    after = _text(_tests_cells(executed)[1])
    assert "3 passed" in after and "failed" not in after.lower()


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


def _receipts(cell: Any) -> list[dict[str, Any]]:
    return [o["data"][RESULT_MIMETYPE] for o in cell.get("outputs", []) if RESULT_MIMETYPE in o.get("data", {})]


def test_each_test_run_completes_in_its_own_cell(executed: Any) -> None:
    """Issue 26 item 1: both runs end inside their cell with pytest's own exit status (no promotion to a
    background task on a slow machine, no ``already_running`` answer from the run before the fix), and
    nothing runs when the last cell removes the project."""
    before, after = (_receipts(c) for c in _tests_cells(executed))
    assert [(r["result"]["disposition"], r["result"]["exit_status"]) for r in before] == [("completed", 1)]
    assert [(r["result"]["disposition"], r["result"]["exit_status"]) for r in after] == [("completed", 0)]
    last = [c for c in executed.cells if c.cell_type == "code"][-1]
    assert "trailing_outputs_from" not in last.metadata.get("holon_nb", {}), last.outputs
