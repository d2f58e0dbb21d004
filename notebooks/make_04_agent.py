"""Write notebooks/04-agent-turns.ipynb, and (``--record``) record its two cassettes.

    python notebooks/make_04_agent.py            # the notebook only
    python notebooks/make_04_agent.py --record   # also re-record the cassettes

The committed cassettes were recorded here with a *stand-in model*: a small
provider (below) that answers each request the way a model fixing this bug
would, reading the tool results it gets (the task id, the work item id). No
real model was reachable where they were made. To record them with a real
model instead, run the notebook's two ``%%agent`` cells with
``--model <provider@endpoint/model> --mode record`` and the provider's key
in the environment (``OPENAI_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, …).
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from _tutorial import ignore_output, tutorial_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "notebooks"
# the project the agent fixes is this copy of holon_nb/render/_ansi.py, refreshed only by --record
# --refresh-project: the recorded patch
# fits it, so reformatting or editing the package's module changes nothing the notebook is expected to show
FROZEN = HERE / "04-agent-turns.holon" / "ansi.py"
OUT = HERE / "04-agent-turns.ipynb"
CASSETTES = "04-agent-turns.holon/cassettes"
TURN1 = f"{CASSETTES}/fix-the-bug.jsonl"
TURN2 = f"{CASSETTES}/finish.jsonl"

MESSAGE1 = (
    "The tests of the project in the active workspace fail. Track the fix as a work item, find the bug, fix it "
    "with ApplyPatch, then run the tests in the background and wait for the result."
)
# the project's tests, as the notebook runs them: the whole output is short (no header, one line a test), and
# pytest's own exit status is the command's (no pipe through `tail`, whose status would hide a failure)
PYTEST = '"$TUTORIAL_PYTHON" -m pytest -p no:cacheprovider -v --no-header --tb=no -rN --color=no'
MESSAGE2 = "The test run has finished. Check the result and complete your work item with a short report."

TESTS = """from ansi import ansi_to_html, strip_ansi


def test_green_is_green():
    assert ansi_to_html("\\x1b[32mok\\x1b[0m") == "<span style='color:#1a7f37'>ok</span>"


def test_red_is_red():
    assert ansi_to_html("\\x1b[31mno\\x1b[0m") == "<span style='color:#cf222e'>no</span>"


def test_other_sequences_are_dropped():
    assert strip_ansi("\\x1b]0;title\\x07a\\x1b[2Kb") == "ab"
"""

SETUP = """import importlib.util, os, shutil, sys, tempfile
from pathlib import Path
import holon_nb

os.environ["TUTORIAL_PYTHON"] = sys.executable  # the project's tests run with this kernel's Python
if importlib.util.find_spec("pytest") is None:  # the project's tests run with pytest
    raise ModuleNotFoundError("this tutorial runs tests with pytest: pip install pytest, or pip install '.[test]'")
project = Path(tempfile.mkdtemp(prefix="holon-nb-04-")) / "colours"
project.mkdir()
# a real module of this package: the copy taken when the cassettes were recorded (their patch fits it), else
# the installed package's
source = Path("04-agent-turns.holon", "ansi.py")
if not source.is_file():
    source = Path(holon_nb.__file__).parent / "render" / "ansi.py"
good = source.read_text()
bad = good.replace('32: "#1a7f37"', '32: "#cf222e"')               # the bug: green drawn red
assert bad != good
(project / "ansi.py").write_text(bad)
(project / "test_ansi.py").write_text(TESTS)
print("scratch project:", project.name)"""


def build() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# An agent fixes a failing test, replayed from a cassette\n\n"
            "`%%agent` runs one agent turn with the cell as the operator's message: the model's text, each tool call\n"
            "with its receipt (click to expand) and the turn's end appear live in the cell. Here the turns are\n"
            "**replayed** from cassettes committed beside this notebook (`04-agent-turns.holon/cassettes/`), so it\n"
            "runs offline, with no API key, the same every time.\n\n"
            "In a replay the model's answers come from the cassette and so do the tool results: the tools are not\n"
            "run again. The end of the notebook applies the agent's patch for real and runs the tests.\n\n"
            "**Re-record with a real model**: change `--mode replay` to `--mode record` and add\n"
            "`--model openai@default/<model>` (or `anthropic/<model>`, `ollama/<model>`, any OpenAI-compatible server\n"
            "through `HOLON_<ID>_BASE_URL`), with the provider's key in the environment (`OPENAI_API_KEY`,\n"
            "`ANTHROPIC_AUTH_TOKEN`). The committed cassettes were recorded by `notebooks/make_04_agent.py --record`\n"
            "with a scripted stand-in model, since no real model was reachable where they were made."
        ),
        new_markdown_cell(
            "## A small real project with a bug\n\n"
            "The project is a copy of `holon_nb/render/_ansi.py` (it turns terminal colours into HTML; the copy in\n"
            "`04-agent-turns.holon/ansi.py`, taken when the cassettes were recorded, since their patch fits it)\n"
            "and three tests; the notebook breaks one colour.\n\n"
            "`--yield-ms 100000` keeps each test run in the foreground for up to 100 s instead of the default 10 s,\n"
            "so on a slow or busy machine the cell still waits for the result rather than turning the run into a\n"
            "background task."
        ),
        new_code_cell(f"TESTS = {TESTS!r}\n\n" + SETUP),
        new_code_cell(
            "holon_nb.clear_home()  # this notebook's own holon home starts empty: each run shows only its own state\n%load_ext holon_nb\nrt = holon_nb.get_runtime()"
        ),
        new_code_cell("%workspace attach $project"),
        new_code_cell("%workspace switch $project"),
        new_code_cell(f"%exec --yield-ms 100000 {PYTEST}"),
        new_markdown_cell(
            "## The agent's turn\n\n"
            "The turn creates a work item, reproduces the failure, reads the code, patches it, starts the tests as a\n"
            "background task and ends with `WaitFor` on that task (`delivery=silent`: no brief, the turn just\n"
            "stops). `--wait` keeps this cell busy until the turn ends (without it the cell returns at once and the\n"
            "turn goes on in the background)."
        ),
        new_code_cell(f"%%agent --cassette {TURN1} --mode replay --wait\n{MESSAGE1}"),
        new_markdown_cell(
            "## The next turn\n\nThe operator tells the agent the test run is done; the agent reads the "
            "task's output and completes its work item. The report is the text it wrote before "
            "`CompleteWorkItem`."
        ),
        new_code_cell(f"%%agent --cassette {TURN2} --mode replay --wait\n{MESSAGE2}"),
        new_markdown_cell(
            "## What the turns did\n\n`holon_nb.agent_turns()` returns each turn's result: its end, "
            "its rounds with every tool call's input and envelope, and its token usage."
        ),
        new_code_cell(
            "for turn in holon_nb.agent_turns():\n"
            "    calls = [c.name for r in turn.rounds for c in r.tool_calls]\n"
            '    print(turn.terminal, turn.reason, f"{len(turn.rounds)} rounds", turn.usage.to_dict(), calls)\n'
            "print()\n"
            "print(holon_nb.agent_turns()[-1].final_text)"
        ),
        new_markdown_cell(
            "## Apply the agent's patch for real\n\nThe replay did not run the tools, so the project "
            "still has its bug. Apply the patch the agent wrote (taken from its turn) and run the tests (`--raise`:\n"
            "the cell fails if they do):"
        ),
        new_code_cell(
            'patch = next(c.input["patch"] for c in (c for r in holon_nb.agent_turns()[0].rounds for c in r.tool_calls)\n'
            '             if c.name == "ApplyPatch")\n'
            'rt.call("ApplyPatch", {"patch": patch})'
        ),
        new_code_cell(f"%exec --raise --yield-ms 100000 {PYTEST}"),
        ignore_output(
            new_code_cell(
                "# remove the project only once nothing runs in it any more\n"
                'assert not rt.wait_for_tasks(120), "a task still runs in the project"\n'
                "%workspace switch {os.getcwd()}\n"
                "shutil.rmtree(project.parent)"
            ),
            "its projection differs when this checkout is a linked git worktree rather than a clone",
        ),
    ]
    return tutorial_notebook(cells, shared_dir=True)  # its workspace is this checkout


# ---------------------------------------------------------------- recording with a stand-in model


def _stand_in():
    """A provider answering like a model that fixes the colour bug (reads ids from tool results)."""
    from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnResponse, UserToolResults

    source = FROZEN.read_text()
    bad = source.replace('32: "#1a7f37"', '32: "#cf222e"')
    fix = "".join(difflib.unified_diff(bad.splitlines(True), source.splitlines(True), "a/ansi.py", "b/ansi.py"))
    state: dict[str, str] = {}

    def results(req):
        last = req.conversation[-1]
        return {r.tool_use_id: r.content for r in last.results} if isinstance(last, UserToolResults) else {}

    def step(n, blocks):
        return TurnResponse(
            tuple(blocks),
            "tool_use" if any(isinstance(b, ToolUseBlock) for b in blocks) else "end_turn",
            900 + 40 * n,
            60 + 5 * n,
        )

    def s1(req):
        return step(
            1,
            [
                TextBlock("I'll track this as a work item, then reproduce the failure."),
                ToolUseBlock(
                    "call_1",
                    "CreateWorkItem",
                    {
                        "objective": "Fix the failing colour test",
                        "todo_list": [
                            {"text": "reproduce the failure", "state": "in_progress"},
                            {"text": "fix ansi.py", "state": "pending"},
                            {"text": "run the tests", "state": "pending"},
                        ],
                    },
                ),
            ],
        )

    def s2(req):
        state["work_item_id"] = json.loads(results(req)["call_1"])["result"]["work_item"]["id"]
        return step(
            2,
            [
                ToolUseBlock(
                    "call_2",
                    "ExecCommand",
                    {"cmd": '"$TUTORIAL_PYTHON" -m pytest -q -p no:cacheprovider 2>&1 | tail -n 12'},
                )
            ],
        )

    def s3(req):
        return step(
            3,
            [
                TextBlock("test_green_is_green expects #1a7f37 for code 32. Let me look at the colour table."),
                ToolUseBlock("call_3", "ExecCommand", {"cmd": "grep -n '32:' ansi.py"}),
            ],
        )

    def s4(req):
        return step(
            4,
            [
                TextBlock("Code 32 (green) is mapped to the red #cf222e. Fixing the table."),
                ToolUseBlock("call_4", "ApplyPatch", {"patch": fix}),
            ],
        )

    def s5(req):
        return step(
            5,
            [
                ToolUseBlock(
                    "call_5",
                    "ExecCommand",
                    {"cmd": '"$TUTORIAL_PYTHON" -m pytest -q -p no:cacheprovider', "yield_time_ms": 0},
                )
            ],
        )

    def s6(req):
        receipt = results(req)["call_5"]
        state["task_id"] = next(line.split()[-1] for line in receipt.splitlines() if line.startswith("Task:"))
        return step(
            6,
            [
                TextBlock("The tests are running in the background; I'll wait for them."),
                ToolUseBlock(
                    "call_6",
                    "WaitFor",
                    {
                        "reason": "the test run",
                        "wake": "task_result",
                        "resource": state["task_id"],
                        "delivery": "silent",
                    },
                ),
            ],
        )

    def s7(req):
        return step(7, [ToolUseBlock("call_7", "TaskOutput", {"task_id": state["task_id"]})])

    def s8(req):
        return step(
            8,
            [
                ToolUseBlock(
                    "call_8",
                    "UpdateWorkItem",
                    {
                        "work_item_id": state["work_item_id"],
                        "todo_list": [
                            {"text": t, "state": "completed"}
                            for t in ("reproduce the failure", "fix ansi.py", "run the tests")
                        ],
                    },
                )
            ],
        )

    def s9(req):
        return step(
            9,
            [
                TextBlock(
                    "Fixed: ANSI code 32 (green) was drawn with the red #cf222e; ansi.py maps it to "
                    "#1a7f37 again and all 3 tests pass."
                ),
                ToolUseBlock("call_9", "CompleteWorkItem", {"work_item_id": state["work_item_id"]}),
            ],
        )

    class StandIn:
        route_ref = "standin@default/colour-fixer"
        transport = "scripted"

        def __init__(self):
            self.steps = [s1, s2, s3, s4, s5, s6, s7, s8, s9]

        async def complete_turn(self, req):
            return self.steps.pop(0)(req)

    return StandIn()


def record() -> None:
    """Record both cassettes the way the notebook replays them (same agent, messages, workspace moves)."""
    from holon_nb import Runtime
    from holon_nb.providers.cassettes._cassette import CassetteProvider
    from holon_nb.runtime.turns._records import TurnHooks

    os.environ["TUTORIAL_PYTHON"] = sys.executable
    os.environ["SHELL"] = "/bin/sh"
    scratch = Path(tempfile.mkdtemp(prefix="holon-nb-04-"))
    project = scratch / "colours"
    project.mkdir()
    good = FROZEN.read_text()
    (project / "ansi.py").write_text(good.replace('32: "#1a7f37"', '32: "#cf222e"'))
    (project / "test_ansi.py").write_text(TESTS)
    model = _stand_in()
    old = os.getcwd()
    os.chdir(HERE)
    try:
        with Runtime(home=scratch / "home", workspace=HERE) as rt:
            rt.call("AttachWorkspace", {"path": str(project)}, raise_on_error=True)
            rt.call("SwitchWorkspace", {"path": str(project)}, raise_on_error=True)
            for message, rel in ((MESSAGE1, TURN1), (MESSAGE2, TURN2)):
                path = HERE / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                cas = CassetteProvider(model, path, "record", workspace=rt.workspace, holon_home=rt.home)
                hooks = cas.turn_hooks()
                hooks.pop("wrap_provider")
                result = rt.turns.run_sync(message, provider=cas, hooks=TurnHooks(**hooks))
                cas.close(terminal=result.terminal)
                print(rel, result.terminal, result.reason, len(result.rounds), "rounds")
                if message is MESSAGE1:
                    rt.wait_for_tasks(60)
    finally:
        os.chdir(old)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    nbformat.write(build(), OUT)
    print("wrote", OUT)
    if "--record" in sys.argv:
        if "--refresh-project" in sys.argv:  # take a new copy of the package's module (the patch must still fit)
            FROZEN.write_text((ROOT / "holon_nb" / "render" / "ansi.py").read_text())
        record()
