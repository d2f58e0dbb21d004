"""notebooks/02-patches-and-worktrees.ipynb executed headless through nbclient; its receipts are checked.

The notebook clones this repository into a temporary folder, works in a
linked worktree, patches real files, runs a test there, and shows a failed
and an escaping patch changing nothing. If this test fails after an edit to
the end of holon_nb/tools/_text.py or the top of README.md, regenerate the
notebook: ``python notebooks/make_02_patches.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from _reader import assert_reads_as_text
from _support import check_tutorial, receipt_text_drift

from holon_nb.runtime import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "02-patches-and-worktrees.ipynb"

pytestmark = [
    pytest.mark.xdist_group("tutorial-02"),
    pytest.mark.skipif(
        shutil.which("git") is None or not (NOTEBOOK.parents[1] / ".git").exists(),
        reason="needs git and a git checkout of this repository",
    ),
]


def _outputs(cell: Any) -> list[dict]:
    return [o for o in cell.get("outputs", []) if o.get("output_type") in ("display_data", "execute_result")]


def _receipts(cell: Any) -> list[dict]:
    return [o["data"][RESULT_MIMETYPE] for o in _outputs(cell) if RESULT_MIMETYPE in o.get("data", {})]


def _text(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _cells(nb: Any, startswith: str) -> list[Any]:
    return [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(startswith)]


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def executed(check: Any) -> Any:
    summary = check.summary
    assert summary.exit_code == 0, summary
    assert summary.error_kinds == {"context_not_found": 1, "path_escape": 1}, summary.error_kinds
    return check.executed


def test_no_cell_raised(executed: Any) -> None:
    for cell in executed.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source


def test_worktree_is_created_active_and_commands_run_in_it(executed: Any) -> None:
    (created,) = _receipts(_cells(executed, "%worktree create")[0])
    r = created["result"]
    assert created["status"] == "success" and r["disposition"] == "created" and r["activated"] is True
    assert ".holon-worktrees-holon_nb" in r["worktree_path"]
    (where,) = _receipts(_cells(executed, "%exec git status")[0])
    out = where["result"]["stdout_preview"]
    assert "## tutorial-one-line" in out and r["worktree_path"] in out


def test_patch_receipt_and_diff_card(executed: Any) -> None:
    cell = _cells(executed, "%%patch\n--- a/holon_nb/tools/_text.py")[0]
    (env,) = _receipts(cell)
    assert env["status"] == "success"
    assert [(f["action"], f["path"]) for f in env["result"]["changed_files"]] == [
        ("modify", "holon_nb/tools/_text.py"),
        ("add", "tests/unit/tools/test_one_line.py"),
    ]
    (bundle,) = [o["data"] for o in _outputs(cell)]
    assert bundle["text/plain"].startswith("ApplyPatch · success · ")
    assert (
        "\n  Success. Updated the following files:\n  M holon_nb/tools/_text.py\n  A tests/unit/tools/test_one_line.py"
    ) in bundle["text/plain"]
    assert "holon-diff" in bundle["text/html"] and "+def one_line" in bundle["text/html"]


def test_tests_run_in_the_worktree_as_a_task(executed: Any) -> None:
    receipts = _receipts(_cells(executed, "%exec --yield-ms 0")[0])
    assert receipts[0]["result"]["disposition"] == "promoted_to_task"
    final = receipts[-1]
    assert final["tool_name"] == "TaskOutput"
    task = final["result"]["task"]
    assert task["status"] == "completed" and task["exit_status"] == 0, task
    assert "2 passed" in task["output_preview"]
    assert "\x1b[" not in task["output_preview"]  # the kernel's FORCE_COLOR is not passed on to commands


def test_failed_patch_changes_nothing(executed: Any) -> None:
    cell = _cells(executed, "%%patch\n--- a/holon_nb/tools/_text.py")[1]
    (env,) = _receipts(cell)
    assert env["error"]["kind"] == "context_not_found" and env["error"]["details"]["path"] == "pyproject.toml"
    (check,) = [c for c in executed.cells if c.cell_type == "code" and c.source.startswith('print("every file')]
    assert _text(check).strip() == "every file unchanged: True"


def test_escaping_patch_is_refused(executed: Any) -> None:
    (env,) = _receipts(_cells(executed, "%%patch\n--- a/README.md")[0])
    assert env["error"]["kind"] == "path_escape"
    assert env["error"]["details"]["requested_path"] == "../../outside.txt"
    (check,) = _cells(executed, 'print("outside.txt exists:"')
    assert _text(check).splitlines() == ["outside.txt exists: False", "every file unchanged: True"]


def test_dirty_worktree_is_retained_then_removed_after_commit(executed: Any) -> None:
    first, second = [_receipts(c)[0] for c in _cells(executed, "%worktree remove")]
    assert first["result"]["disposition"] == "retained_dirty" and first["result"]["removed"] is False
    assert first["result"]["changed_files"] == ["holon_nb/tools/_text.py", "tests/unit/tools/test_one_line.py"]
    assert second["result"]["disposition"] == "removed" and second["result"]["removed"] is True
    (branches,) = _receipts(_cells(executed, "%exec git branch --list")[0])
    out = branches["result"]["stdout_preview"]
    assert "tutorial-one-line" in out and ".holon-worktrees" not in out


def test_workspace_table_and_cleanup(executed: Any) -> None:
    (table,) = [
        o["data"]["text/plain"]
        for o in _outputs(
            _cells(executed, "%workspace\n")[0]
            if _cells(executed, "%workspace\n")
            else [c for c in executed.cells if c.source == "%workspace"][0]
        )
    ]
    # the receipt's first line, as every receipt starts, then the tables
    assert table.startswith("GetWorkspaceState · success") and "active projection of agent default" in table
    assert "canonical_root" in table
    (detached,) = _receipts(_cells(executed, "clone_id = ")[0])
    assert detached["tool_name"] == "DetachWorkspace" and detached["result"]["detached"] is True


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
