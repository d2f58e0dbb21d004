"""Write notebooks/03-work-items-waits-timers.ipynb (run: ``python notebooks/make_03_work.py``)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from _tutorial import ignore_output, tutorial_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

OUT = Path(__file__).resolve().parent / "03-work-items-waits-timers.ipynb"


def build() -> nbformat.NotebookNode:
    restart = new_code_cell(
        'if "tid_a" in globals():  # this kernel ran the cells above: it was not restarted\n'
        "    from IPython.core.error import UsageError\n"
        '    raise UsageError("restart the kernel first (Kernel > Restart Kernel), then select this cell and run it "\n'
        '                     "and all below (Run > Run Selected Cell and All Below)")\n'
        "%load_ext holon_nb\n"
        "import holon_nb, time\n"
        "rt = holon_nb.get_runtime()\n"
        "from datetime import datetime, timezone\n"
        'restarted_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")\n'
        'print("a new kernel:", "tid_a" not in globals())'
    )
    restart.metadata["tags"] = ["holon-restart-kernel"]
    cells = [
        new_markdown_cell(
            "# Work items, waits and timers survive a kernel restart\n\n"
            "An agent works on an *objective* (a work item with a plan and todos), starts background jobs, waits\n"
            "for one of them, sets a timer, and picks up again later, perhaps after the kernel was restarted.\n"
            "All of that state lives in the SQLite store under the holon home, so a restart loses none of it.\n\n"
            "Everything here is a tool call a model could make: `%workitem` (CreateWorkItem, UpdateWorkItem,\n"
            "PickWorkItem, CompleteWorkItem, GetWorkItem), `%waitfor` (WaitFor), `%timer` / `%timers`\n"
            "(CreateTimer, CancelTimer, GetTimer, ListTimers), `%agent_status` (GetAgent), `%memory`\n"
            "(MemorySearch, MemoryGet)."
        ),
        new_code_cell(
            "import holon_nb, time\nholon_nb.clear_home()  # this notebook's own holon home starts empty: each run shows only its own state\n%load_ext holon_nb\nrt = holon_nb.get_runtime()"
        ),
        new_markdown_cell(
            "## Plan an objective\n\n"
            "A work item has an objective, a todo list (`[ ]` pending, `[>]` in progress, `[x]` completed) and a\n"
            "plan in `plan.md` under the agent home. The first one becomes the agent's focus."
        ),
        new_code_cell(
            "%workitem create Make the nightly report reproducible --plan-status ready "
            '--todo "[>] collect the inputs" --todo "run the two jobs" --todo "compare the outputs"'
        ),
        new_markdown_cell(
            "The board below is live: it redraws itself whenever a work item, wait or timer changes (a timer\n"
            "firing, a task result arriving) without re-running the cell, so it shows the latest state, not the\n"
            "state at this point of the story. `%workitems --static` prints a snapshot that never changes."
        ),
        new_code_cell("%workitems"),
        new_code_cell('wid = rt.call("ListWorkItems").result["work_items"][0]["id"]\nwid'),
        new_markdown_cell(
            "## Start two background jobs under it\n\n"
            "`--yield-ms 0` makes each command a background task at once. A task records the focused work item when\n"
            "it is created; changing the focus later never moves it. Job A finishes in a few seconds; job B would\n"
            "run for a minute."
        ),
        ignore_output(
            new_code_cell("%exec --yield-ms 0 -- sleep 3; echo job-a: 42 rows"),
            "shows a 'running' placeholder or the final receipt, depending on timing",
        ),
        new_code_cell(
            'tid_a = rt.call("ListTasks").result["tasks"][0]["id"]\n'
            'job_b = rt.call("ExecCommand", {"cmd": "sleep 60; echo job-b done", "yield_time_ms": 0})\n'
            'tid_b = job_b.result["task_handle"]["task_id"]\n'
            "job_b"
        ),
        new_markdown_cell(
            "## Wait for job A\n\n"
            "`WaitFor` parks the work item until job A's result arrives (`wake=task_result`). `--brief` is the\n"
            "operator-facing note published with the wait (`delivery=final`). The item is now blocked."
        ),
        new_code_cell('%waitfor task_result job A must finish --resource {tid_a} --brief "Waiting for job A."'),
        new_code_cell("%task_output {tid_a}"),
        new_markdown_cell(
            "Job A's result triggered the wait: the snapshot shows it `triggered`. A wait *resolves* when an agent\n"
            "turn processes the message that woke it: a `%%agent` turn with a model\n"
            "(the last section of this tutorial runs one) or an invoked agent."
        ),
        new_code_cell("%workitems --static"),
        new_markdown_cell(
            "And a timer: it fires on the runtime's own thread, also while the kernel is idle, and queues a\n"
            "`timer_tick` message for the agent. It is due in two minutes, time enough to restart the kernel by hand\n"
            "before it fires. A headless run (`holon-nb run`, the notebook tests) sets `HOLON_NB_HEADLESS` and\n"
            "restarts the kernel itself, at once: there the timer is due in 10 seconds."
        ),
        new_code_cell(
            "import os\n"
            'due_ms = 10_000 if os.environ.get("HOLON_NB_HEADLESS") else 120_000\n'
            'rt.call("CreateTimer", {"duration_ms": due_ms, "summary": "check the jobs again"})'
        ),
        new_markdown_cell(
            "## Restart the kernel\n\n"
            "**Restart the kernel now**: *Kernel ▸ Restart Kernel*, then select the next cell and\n"
            "*Run ▸ Run Selected Cell and All Below*. With *Run All* the next cell stops the run until the kernel was\n"
            "restarted (it finds the old kernel's variables still there). Run headless with `holon-nb run`, the next\n"
            "cell is tagged `holon-restart-kernel`, so the harness restarts the kernel for real before it.\n"
            "Job B dies with the old kernel; everything else is in the store."
        ),
        restart,
        new_markdown_cell(
            "## Everything is still there\n\n"
            "The work item with its todos, the triggered wait, the timer, the messages and the task results: read\n"
            "back by the new kernel's runtime from the same holon home."
        ),
        ignore_output(
            new_code_cell("%workitems --static"),
            "on a loaded machine the timer may fire before the restart: no active timer is left",
        ),
        new_code_cell('wid = rt.call("ListWorkItems").result["work_items"][0]["id"]\n%workitem show {wid}'),
        new_markdown_cell("The timer was re-armed by the new kernel's runtime and fires once, on time:"),
        ignore_output(
            new_code_cell(
                "deadline = time.time() + 150  # the timer is due at most two minutes after it was created\n"
                'while rt.call("ListTimers", {"filter": "active"}).result["timers"] and time.time() < deadline:\n'
                "    time.sleep(0.2)\n"
                '(timer,) = rt.call("ListTimers").result["timers"]\n'
                'print("fired", timer["fire_count"], "time(s); after the restart:", timer["last_fired_at"] > restarted_at)'
            ),
            "the timer fires after the restart unless a loaded machine reached the restart late",
        ),
        new_code_cell("for m in rt.messages():\n    print(f\"{m['kind']:<12} {m['text'].splitlines()[0][:90]}\")"),
        new_code_cell(
            'tasks = rt.store.query("SELECT id, status FROM tasks ORDER BY created_at")\n'
            "for t in tasks:\n"
            '    print(t["id"], t["status"])'
        ),
        new_code_cell("%agent_status"),
        new_markdown_cell(
            "## Finish the objective\n\n"
            "Clear the blocker by hand (what a turn would do after reading job A's result), tick the todos and\n"
            "complete the work item with a report. In a model turn the report is the text the model writes before\n"
            "calling `CompleteWorkItem`; from a notebook it is `--report`."
        ),
        new_code_cell('%workitem pick {wid} --clear-blocker --reason "job A\'s result is in"'),
        new_code_cell(
            '%workitem update {wid} --todo "[x] collect the inputs" --todo "[x] run the two jobs" '
            '--todo "[x] compare the outputs"'
        ),
        new_code_cell(
            '%workitem complete {wid} --report "Job A produced 42 rows; job B was lost with the kernel and is '
            're-queued for tonight."'
        ),
        new_code_cell("%workitems --static"),
        new_markdown_cell("The completed objective and its report are searchable memory:"),
        ignore_output(
            new_code_cell("%memory search nightly report"),
            "the index cursor counts events, some of them timing-dependent",
        ),
        new_markdown_cell(
            "## An agent that follows its waits\n\n"
            "A model turn ends when the agent waits. `%%agent --follow` keeps it going: when one of its waits is\n"
            "woken (its background task ends, its timer fires, or the operator answers), the next turn runs in the\n"
            "same view with the waking message as input. Here a *scripted* model (steps in a YAML file, no key, no\n"
            "network) asks the operator a question with `WaitFor(operator_input)`; `%holon say` answers it."
        ),
        new_code_cell(
            "import tempfile, pathlib\n"
            'script = pathlib.Path(tempfile.mkdtemp()) / "asks-first.yaml"\n'
            'script.write_text("""format: holon_nb.script/v1\n'
            "steps:\n"
            "  - response:\n"
            "      stop_reason: tool_use\n"
            "      blocks:\n"
            "        - {type: text, text: 'Before I rerun the jobs: which format should the report use?'}\n"
            "        - {type: tool_use, id: w1, name: WaitFor,\n"
            "           input: {reason: report format, wake: operator_input, delivery: silent}}\n"
            "  - text: CSV it is. I will write the nightly report as CSV from now on.\n"
            '""")\n'
            'model = f"scripted/{script}"'
        ),
        new_code_cell(
            "%%agent --model $model --follow 2\nRerun the nightly report jobs; ask me first if anything is unclear."
        ),
        new_code_cell(
            "deadline = time.time() + 30  # until the agent asked: its turn ended waiting for operator input\n"
            'while (rt.turns.active("default") is not None or not rt.work.agent_summary("default")["active_wait_count"])'
            " and time.time() < deadline:\n"
            "    time.sleep(0.1)\n"
            '%holon say "CSV, please"'
        ),
        new_code_cell("%holon wait --timeout 30"),
        new_code_cell(
            "for turn in holon_nb.agent_turns():\n    print(turn.terminal, turn.reason, repr(turn.final_text))"
        ),
    ]
    return tutorial_notebook(cells)


if __name__ == "__main__":
    nbformat.write(build(), OUT)
    print("wrote", OUT)
