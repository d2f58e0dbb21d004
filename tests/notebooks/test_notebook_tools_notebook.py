"""notebooks/07-notebook-tools.ipynb executed as ``holon-nb test`` runs it (issue 28): a scripted agent, replayed
from its cassette, lists the kernel's variables, inspects a DataFrame, inserts a corrected cell below its own and
runs it; the Notebook tools run live on replay and their receipts must equal the recording's.

Regenerate: ``python notebooks/make_07_notebook.py --record`` then ``python notebooks/make_all.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support import check_tutorial, receipt_text_drift

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "07-notebook-tools.ipynb"
pytestmark = pytest.mark.xdist_group("tutorial-07")


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def executed(check: Any) -> Any:
    assert check.summary.exit_code == 0, check.summary
    return check.executed


def test_matches_its_committed_outputs(check: Any) -> None:
    """What ``holon-nb test`` checks: the run's outputs equal the committed ones, after normalisation."""
    assert not check.failed, check.report()


def test_saved_receipt_text_is_the_current_renderers(check: Any) -> None:
    assert not receipt_text_drift(check), "\n\n".join(receipt_text_drift(check))


def test_the_agent_inserted_and_ran_one_cell(executed: Any) -> None:
    inserted = [c for c in executed.cells if (c.metadata.get("holon_nb") or {}).get("inserted_by") == "agent"]
    assert len(inserted) == 1 and inserted[0].id == "agent-1"
    agent_cell = next(i for i, c in enumerate(executed.cells) if c.source.startswith("%%agent"))
    assert executed.cells[agent_cell + 1] is inserted[0]
    assert "astype(int)" in inserted[0].source
    assert "north    42" in inserted[0].outputs[0]["data"]["text/plain"]
    # the notebook's own next cell ran on the corrected frame
    last = executed.cells[-1]
    assert last.outputs[0]["text"].startswith("int64 {'east': 14, 'north': 42, 'south': 25}")
