"""Write notebooks/07-notebook-tools.ipynb and the scripted model beside it (issue 28).

    python notebooks/make_07_notebook.py            # the notebook and its script
    python notebooks/make_07_notebook.py --record   # also re-record the turn's cassette (holon-nb run --cassettes record)

A small pandas analysis with a bug (units read as text, so ``groupby().sum()`` joins the strings); an agent with
the opt-in Notebook tools lists the kernel's variables, inspects the frame, inserts a corrected cell below its own
and runs it. Its model is a scripted file (``07-notebook-tools.holon/fix-the-totals.yaml``), and the turn was
recorded once into ``07-notebook-tools.holon/cassettes/agent-1.jsonl``: ``holon-nb test`` replays the model's
answers from it and runs the Notebook tools live (they act on the kernel), checking each receipt against the
recording byte for byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _tutorial import tutorial_notebook
from nbformat import write
from nbformat.v4 import new_code_cell, new_markdown_cell

HERE = Path(__file__).resolve().parent
OUT = HERE / "07-notebook-tools.ipynb"
SCRIPT = "07-notebook-tools.holon/fix-the-totals.yaml"

FIX = 'sales["units"] = sales["units"].astype(int)  # units were read as text\ntotals = sales.groupby("region")["units"].sum()\ntotals'

# the %%agent cell is cell 7 of the notebook (build() below): the agent inserts its cell right after it
AGENT_CELL = 7

SCRIPT_TEXT = f"""\
# The scripted model of notebooks/07-notebook-tools.ipynb (written by notebooks/make_07_notebook.py).
format: holon_nb.script/v1
route_ref: scripted@default/scripted
steps:
  - tool_use: {{id: call_1, name: ListVariables, input: {{}}}}
    usage: {{input: 900, output: 20}}
  - tool_use: {{id: call_2, name: InspectVariable, input: {{name: sales}}}}
    usage: {{input: 1200, output: 20}}
    expect: {{last_message: {{tool_results: [{{tool_use_id: call_1, is_error: false}}]}}}}
  - tool_use: {{id: call_3, name: EditNotebook, input: {{op: insert, index: {AGENT_CELL + 1}, source: {json.dumps(FIX)}}}}}
    usage: {{input: 1500, output: 60}}
    expect: {{last_message: {{tool_results: [{{tool_use_id: call_2, is_error: false}}]}}}}
  - tool_use: {{id: call_4, name: ExecuteCell, input: {{cell_id: agent-1}}}}
    usage: {{input: 1600, output: 20}}
    expect: {{last_message: {{tool_results: [{{tool_use_id: call_3, is_error: false}}]}}}}
  - text: "`units` holds text (dtype str), so `sum()` joined the strings: north's '12' and '30' became '1230'.
      I inserted a cell below that converts `units` to integers and recomputes the totals, and ran it:
      north 42, south 25, east 14."
    usage: {{input: 1800, output: 70}}
    expect: {{last_message: {{tool_results: [{{tool_use_id: call_4, is_error: false}}]}}}}
"""

DATA = """import pandas as pd

# units per sale, as a CSV export gave them: the numbers arrived as text
sales = pd.DataFrame({
    "region": ["north", "south", "north", "east", "south", "east"],
    "units": ["12", "7", "30", "5", "18", "9"],
    "price": [2.5, 3.0, 2.5, 4.0, 3.0, 4.0],
})
sales"""


def build() -> object:
    cells = [
        new_markdown_cell(
            "# The agent sees the notebook it lives in\n\n"
            "With `%config HolonNB.notebook_tools = True` an agent gets the **Notebook tools** (beyond the tool\n"
            "contract, off by default): it can list the kernel's variables, inspect a DataFrame, read the\n"
            "notebook's cells, insert or change a cell and run code here. Reading is free; running code and\n"
            "editing the notebook ask for an approval in the cell, unless the session is trusted with\n"
            "`%%agent --approve-all`.\n\n"
            "Here the model is a script (`07-notebook-tools.holon/fix-the-totals.yaml`), recorded once into a\n"
            "cassette beside this notebook: the notebook tests replay the model's answers and run the Notebook\n"
            "tools for real, so the inserted cell below is made again on every run."
        ),
        new_code_cell("%load_ext holon_nb\n%config HolonNB.notebook_tools = True"),
        new_markdown_cell("## A small analysis with a bug"),
        new_code_cell(DATA),
        new_code_cell('totals = sales.groupby("region")["units"].sum()\ntotals'),
        new_markdown_cell(
            "North sold 12 and 30 units, yet its total reads 1230. The agent looks at the kernel's variables,\n"
            "finds why, and inserts a corrected cell right below its own (`--wait` keeps this cell until the\n"
            "turn ends, so the notebook goes on with the fix in place)."
        ),
        new_markdown_cell("## The agent's turn"),
        new_code_cell(
            f"%%agent --model scripted/{SCRIPT} --approve-all --wait\n"
            "The totals per region look wrong: north shows 1230. Find out why and fix it in a new cell below."
        ),
        new_markdown_cell(
            "The cell above this text was inserted and run by the agent (its metadata says\n"
            '`"inserted_by": "agent"`). The analysis goes on with the corrected frame:'
        ),
        new_code_cell('print(sales.dtypes["units"], totals.to_dict())\nassert totals["north"] == 42'),
    ]
    assert cells[AGENT_CELL].source.startswith("%%agent")
    return tutorial_notebook(cells)


def main() -> int:
    (HERE / SCRIPT).parent.mkdir(parents=True, exist_ok=True)
    (HERE / SCRIPT).write_text(SCRIPT_TEXT)
    write(build(), OUT)
    if "--record" in sys.argv[1:]:
        cassette = HERE / "07-notebook-tools.holon" / "cassettes" / "agent-1.jsonl"
        cassette.unlink(missing_ok=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "holon_nb.cli",
                "run",
                str(OUT),
                "--cassettes",
                "record",
                "--output",
                str(Path(tempfile.mkdtemp()) / "07.ipynb"),
            ],
            cwd=HERE,
        )
        return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
