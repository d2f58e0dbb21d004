"""Cases C01, C02 and C09 (shared/cases/README.md) as notebooks run by nbclient in real kernels."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
RESULT = "application/vnd.holon.tool-result+json"


TRAILING_WAIT = "import holon_nb.notebook as _holon_nb\n_ = _holon_nb.wait_and_report(30)"


@pytest.fixture
def execute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``execute(cells) -> notebook``: run code cells in a fresh python3 kernel, save, reopen.

    The kernel is this interpreter (jupyter_client maps the ``python3`` spec's
    ``python`` to ``sys.executable``), runs in ``tmp_path`` with its own holon
    home, and imports holon_nb from this checkout.
    """
    monkeypatch.setenv("HOLON_NB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))

    def run(cells: list[str], trailing_wait: bool = False) -> nbformat.NotebookNode:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        client = NotebookClient(
            nb,
            kernel_name="python3",
            store_widget_state=True,
            timeout=60,
            resources={"metadata": {"path": str(tmp_path)}},
        )
        if not trailing_wait:
            client.execute()
        else:  # what the harness does (notebook-tests spec §4): wait after the last cell, into it
            with client.setup_kernel():
                for index, cell in enumerate(nb.cells):
                    client.execute_cell(cell, index)
                trailing = nbformat.v4.new_code_cell(TRAILING_WAIT)
                nb.cells.append(trailing)
                client.execute_cell(trailing, len(nb.cells) - 1)
                nb.cells.pop()
                nb.cells[-1].outputs.extend(trailing.outputs)
                client.set_widgets_metadata()
        path = tmp_path / "executed.ipynb"
        nbformat.write(nb, path)
        return nbformat.read(path, as_version=4)

    return run


#: a live view's static fallback (shown only once its kernel is gone) or its spent, empty remains: not output
#: a reader sees in a live session, and skipped by notebook comparisons (holon_nb.notebook._liveness)
FALLBACK = "application/vnd.holon.live-fallback+json"


def _shown(cell: Any) -> list[Any]:
    """The cell's outputs less live-view fallbacks."""
    return [o for o in cell.outputs if FALLBACK not in o.get("data", {})]


def _texts(output: Any) -> str:
    """All text of one output, rich data included, as one string."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return "\n".join(v if isinstance(v, str) else json.dumps(v) for v in data.values())


def _receipts(cell: Any, tool: str) -> list[Any]:
    return [o for o in cell.outputs if RESULT in o.get("data", {}) and o["data"][RESULT]["tool_name"] == tool]


def _in_order(text: str, words: list[str]) -> bool:
    try:
        positions = [text.index(w) for w in words]
    except ValueError:
        return False
    return positions == sorted(positions)


def test_kernel_is_this_interpreter(execute: Any) -> None:
    nb = execute(["import sys; print(sys.executable)"])
    assert nb.cells[0].outputs[0]["text"].strip() == sys.executable


@pytest.mark.parametrize("ending", ["holon-wait-cell", "harness-trailing-wait"])
def test_c01_live_output_stays_in_its_own_cell(execute: Any, ending: str) -> None:
    ticks = [f"tick-{i}" for i in range(1, 7)]
    cells = [
        "%load_ext holon_nb",
        "%exec --yield-ms 500 for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.3; done",
        "print('other cell')",
    ]
    if ending == "holon-wait-cell":
        nb = execute([*cells, "%holon wait --timeout 30"])
    else:  # cell 3 is the last cell; the harness's wait must not put the task's output there
        nb = execute(cells, trailing_wait=True)
    cell2, later = nb.cells[1], nb.cells[2:]
    (promotion,) = _receipts(cell2, "ExecCommand")
    assert promotion["data"][RESULT]["result"]["disposition"] == "promoted_to_task"
    # the live view's display was replaced by the final receipt: no widget left in the saved cell
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell2.outputs)
    assert [o["data"][RESULT]["tool_name"] for o in _shown(cell2)] == ["ExecCommand", "TaskOutput"]
    (final,) = _receipts(cell2, "TaskOutput")
    task = final["data"][RESULT]["result"]["task"]
    assert task["exit_status"] == 0 and task["status"] == "completed"
    assert _in_order(final["data"]["text/plain"], ticks)
    # what the command printed before promotion is shown once, in the final receipt: the promotion
    # card points below instead of repeating it (issue 11, item 5); its JSON keeps initial_output_preview
    assert "tick-1" in promotion["data"][RESULT]["result"]["initial_output_preview"]
    assert sum(o["data"]["text/plain"].count("tick-1") for o in _shown(cell2)) == 1
    # the card's visible part (its folded "what the model sees" keeps the model's receipt as it was)
    assert "tick-1" not in promotion["data"]["text/html"].split("<details")[0]
    assert "in the task's view below" in promotion["data"]["text/plain"]
    assert [o["text"] for o in later[0].outputs] == ["other cell\n"]
    for cell in later:
        assert not any("tick-" in _texts(o) for o in cell.outputs)


def test_c02_receipt_survives_a_headless_run(execute: Any) -> None:
    marker = "receipt-marker-42"
    nb = execute(["%load_ext holon_nb", f"%exec echo {marker}", "pass"])
    holders = [(i, o) for i, c in enumerate(nb.cells) for o in c.outputs if marker in _texts(o)]
    assert [i for i, _ in holders] == [1]
    (_, output) = holders[0]
    assert output["output_type"] == "display_data"
    assert output["data"]["text/plain"].count(marker) == 1
    assert output["data"][RESULT]["result"]["stdout_preview"] == marker
    assert marker not in json.dumps(nb.metadata)


C09_CHECK = """
import json, threading, holon_nb
rt = holon_nb.get_runtime()
def state():
    tasks = [dict(r) for r in rt.store.query("SELECT * FROM tasks ORDER BY id")]
    return json.dumps([tasks, rt.messages()], sort_keys=True, default=str)
before = state()
(task_id,) = [t["id"] for t in json.loads(before)[0]]
ip = get_ipython()
ip.run_line_magic("holon", "status")
ip.run_line_magic("tasks", "")
ip.run_line_magic("task", task_id)
print("C09", json.dumps({
    "runtime_threads": sum(t.name == "holon-nb-runtime" for t in threading.enumerate()),
    "task_results": len(rt.messages(kind="TaskResult")),
    "unchanged": state() == before,
}))
"""


def test_c09_reload_never_doubles_the_runtime(execute: Any) -> None:
    nb = execute(
        [
            "%load_ext holon_nb",
            "%reload_ext holon_nb\n%holon status",
            "%exec --yield-ms 0 sleep 0.5; echo bg-done",
            "%holon wait --timeout 30\nimport time; time.sleep(0.5)",
            C09_CHECK,
        ]
    )
    (status,) = nb.cells[1].outputs
    assert "runtime_threads" in status["data"]["text/plain"]
    task_cell = nb.cells[2]
    assert len(_shown(task_cell)) == 2  # promotion receipt, live view replaced by the final receipt: nothing doubled
    (final,) = _receipts(task_cell, "TaskOutput")
    assert "bg-done" in final["data"]["text/plain"]
    (note,) = nb.cells[3].outputs  # only the wait's note: the final receipt is not shown twice
    assert RESULT not in note["data"] and note["data"]["text/plain"].startswith("%holon wait: ended: task_")
    (line,) = [o["text"] for o in nb.cells[4].outputs if o.get("output_type") == "stream"]
    report = json.loads(line.split("C09", 1)[1])
    assert report == {"runtime_threads": 1, "task_results": 1, "unchanged": True}


C09_TIMER_CHECK = """
import json, threading, holon_nb
rt = holon_nb.get_runtime()
TABLES = ("work_items", "waits", "timers", "tasks", "messages")
def state():
    return json.dumps({t: [dict(r) for r in rt.store.query(f"SELECT * FROM {t} ORDER BY rowid")] for t in TABLES},
                      sort_keys=True, default=str)
before = state()
ip = get_ipython()
for magic, line in (("holon", "status"), ("timers", ""), ("workitems", ""), ("agent_status", ""),
                    ("tasks", ""), ("memory", "search nightly")):
    ip.run_line_magic(magic, line)
(timer,) = rt.call("ListTimers").result["timers"]
print("C09", json.dumps({
    "runtime_threads": sum(t.name == "holon-nb-runtime" for t in threading.enumerate()),
    "fire_count": timer["fire_count"],
    "ticks": len(rt.messages(kind="timer_tick")),
    "unchanged": state() == before,
}))
"""


def test_c09_reload_and_a_real_timer_fires_exactly_once(execute: Any) -> None:
    nb = execute(
        [
            "%load_ext holon_nb",
            "%reload_ext holon_nb\n%holon status",
            "%timer create --in 1s --summary nightly",
            "import time; time.sleep(3)",
            C09_TIMER_CHECK,
        ]
    )
    (created,) = _receipts(nb.cells[2], "CreateTimer")
    assert created["data"][RESULT]["status"] == "success"
    (line,) = [o["text"] for o in nb.cells[4].outputs if o.get("output_type") == "stream"]
    report = json.loads(line.split("C09", 1)[1])
    assert report == {"runtime_threads": 1, "fire_count": 1, "ticks": 1, "unchanged": True}
