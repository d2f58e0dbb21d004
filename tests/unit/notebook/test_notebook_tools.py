"""The opt-in Notebook tool family (issue 28) in a real in-process IPython shell: gating, namespace, code, document.

Every call goes through ``rt.call`` (the one dispatch path: strict input, one envelope, receipts); hostile
objects are real objects in the shell's namespace; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from holon_nb.notebook._kernel._document import HEADLESS
from holon_nb.tools import CallContext, Profile, dispatch
from holon_nb.tools.builtin.notebook._tools import NOTEBOOK_TOOLS


@pytest.fixture
def nb(ip: Any) -> Iterator[Any]:
    """The shell with the Notebook tools on; the user namespace names cleaned up after."""
    ip.run_line_magic("config", "HolonNB.notebook_tools = True")
    before = set(ip.user_ns)
    try:
        yield ip
    finally:
        for name in set(ip.user_ns) - before:
            ip.user_ns.pop(name, None)
        HEADLESS.cells = None


def rt(ip: Any) -> Any:
    from holon_nb.notebook._session import current_session

    session = current_session()
    assert session is not None
    return session.rt


def call(ip: Any, name: str, args: dict[str, Any] | None = None, agent: str | None = None) -> dict[str, Any]:
    result = rt(ip).call(name, args or {}, agent=agent)
    env: dict[str, Any] = result.envelope
    return env


# ------------------------------------------------------------------ gating
def test_off_by_default_neither_advertised_nor_callable(ip: Any) -> None:
    runtime = rt(ip)
    advertised = {t.name for t in runtime.turns.advertised_tools(Profile.PUBLIC_NAMED, "default")}
    assert not advertised & set(NOTEBOOK_TOOLS)
    env = call(ip, "ListVariables")
    assert env["status"] == "error" and env["error"]["kind"] == "notebook_tools_disabled"
    assert "HolonNB.notebook_tools" in env["error"]["recovery_hint"]


def test_config_turns_it_on_and_the_contract_tools_are_unchanged(ip: Any) -> None:
    runtime = rt(ip)
    before = [t.name for t in runtime.turns.advertised_tools(Profile.PUBLIC_NAMED, "default")]
    ip.run_line_magic("config", "HolonNB.notebook_tools = True")
    after = [t.name for t in runtime.turns.advertised_tools(Profile.PUBLIC_NAMED, "default")]
    assert after == before + list(NOTEBOOK_TOOLS)
    # a private child never gets the family, on or off
    child = {t.name for t in runtime.turns.advertised_tools(Profile.PRIVATE_CHILD, "default")}
    assert not child & set(NOTEBOOK_TOOLS)


def test_per_agent_opt_in(ip: Any) -> None:
    ip.run_line_magic("config", "HolonNB.notebook_tools_agents = ['analyst']")
    runtime = rt(ip)
    assert "RunCode" in {t.name for t in runtime.turns.advertised_tools(Profile.PUBLIC_NAMED, "analyst")}
    assert "RunCode" not in {t.name for t in runtime.turns.advertised_tools(Profile.PUBLIC_NAMED, "default")}
    assert call(ip, "ListVariables", agent="analyst")["status"] == "success"
    assert call(ip, "ListVariables")["error"]["kind"] == "notebook_tools_disabled"


def test_private_child_is_refused_by_the_profile_gate(nb: Any) -> None:
    runtime = rt(nb)
    ctx = runtime.tool_context(CallContext(agent_id="default", profile=Profile.PRIVATE_CHILD))
    env = anyio.run(dispatch, "RunCode", {"code": "1"}, ctx)
    assert env["error"]["kind"] == "unsupported_agent_profile_capability"


def test_unknown_fields_are_denied(nb: Any) -> None:
    env = call(nb, "RunCode", {"code": "1", "cwd": "/"})
    assert env["error"]["kind"] == "invalid_tool_input" and "cwd" in json.dumps(env["error"]["details"])


def test_code_and_edits_are_asked_unless_the_session_is_trusted(nb: Any) -> None:
    runtime = rt(nb)
    assert runtime.settings.approval == "never"
    asked: list[str] = []
    runtime.approvals.asker = lambda request: asked.append(request.tool_name) or "deny"
    ctx = CallContext(agent_id="default", exposed=frozenset(NOTEBOOK_TOOLS))

    def check(name: str, args: dict[str, Any]) -> Any:
        return runtime._loop.call(runtime.approvals.check, name, args, ctx)

    assert check("ListVariables", {}) is None  # reading is not asked
    denied = check("RunCode", {"code": "x = 1"})
    assert denied["error"]["kind"] == "approval_denied" and asked == ["RunCode"]
    assert check("EditNotebook", {"op": "delete", "index": 0})["error"]["kind"] == "approval_denied"
    nb.run_line_magic("config", "HolonNB.notebook_approve_all = True")
    assert check("RunCode", {"code": "x = 1"}) is None
    assert check("ExecuteCell", {"index": 0}) is None
    assert asked == ["RunCode", "EditNotebook"]


# ------------------------------------------------------------------ the namespace
def test_list_variables_summarises_each_kind(nb: Any) -> None:
    nb.run_cell(
        "import pandas as pd, numpy as np\n"
        "frame = pd.DataFrame({'city': ['a', 'b', 'c'], 'temp': [1.5, 2.5, None]})\n"
        "grid = np.zeros((3, 4), dtype='float32')\n"
        "names = ['x'] * 10\n"
        "count = 7\n"
        "_private = 1\n"
    )
    env = call(nb, "ListVariables")
    assert env["status"] == "success", env
    rows = {v["name"]: v for v in env["result"]["variables"]}
    assert "pd" not in rows and "np" not in rows and "_private" not in rows and "In" not in rows
    assert rows["frame"]["shape"] == [3, 2] and rows["frame"]["type"] == "pandas.DataFrame"
    assert "temp: float64" in rows["frame"]["repr"] and rows["frame"]["size_bytes"] > 0
    assert rows["grid"]["shape"] == [3, 4] and rows["grid"]["dtype"] == "float32" and rows["grid"]["size_bytes"] == 48
    assert rows["names"]["len"] == 10 and rows["count"]["repr"] == "7"
    only = call(nb, "ListVariables", {"pattern": "fr*"})["result"]
    assert [v["name"] for v in only["variables"]] == ["frame"] and only["total"] == 1


def test_inspect_dataframe_shows_dtypes_nulls_and_head(nb: Any) -> None:
    nb.run_cell("import pandas as pd\nframe = pd.DataFrame({'temp': [1.5, None, 3.0], 'n': [1, 2, 3]})")
    result = call(nb, "InspectVariable", {"name": "frame"})["result"]
    assert "shape: (3, 2)" in result["text"] and "temp: float64" in result["text"]
    assert "nulls: temp=1, n=0" in result["text"] and "head:" in result["text"]


def test_inspect_unknown_variable(nb: Any) -> None:
    env = call(nb, "InspectVariable", {"name": "nope"})
    assert env["error"]["kind"] == "variable_not_found"


HOSTILE = """
import time
class Raises:
    def __repr__(self):
        raise ValueError("no repr for you")
class Hangs:
    def __repr__(self):
        while True:
            time.sleep(0.01)
class Huge:
    def __repr__(self):
        return "x" * 100_000_000
class HostileLen(list):
    def __len__(self):
        raise RuntimeError("len")
    def __repr__(self):
        raise RuntimeError("repr")
raises, hangs, huge, weird = Raises(), Hangs(), Huge(), HostileLen()
cycle = [1, 2]
cycle.append(cycle)
node = {"name": "n"}
node["self"] = node
"""


def test_hostile_reprs_are_bounded(nb: Any) -> None:
    nb.run_cell(HOSTILE)
    env = call(nb, "ListVariables")
    assert env["status"] == "success", env
    rows = {v["name"]: v for v in env["result"]["variables"]}
    assert "repr ValueError: no repr for you" in rows["raises"]["repr"]
    assert "timed out" in rows["hangs"]["repr"]
    assert len(rows["huge"]["repr"]) <= 120
    assert "repr RuntimeError" in rows["weird"]["repr"]
    # a cycle is cut by depth (reprlib's levels), not followed
    assert rows["cycle"]["repr"].startswith("[1, 2, [1, 2, [") and rows["cycle"]["len"] == 3
    assert "..." in rows["node"]["repr"]
    for name in ("raises", "hangs", "huge", "weird", "cycle", "node"):
        text = call(nb, "InspectVariable", {"name": name, "max_chars": 500})["result"]["text"]
        assert len(text) <= 500, name
    assert nb.run_cell("1 + 1").result == 2  # the kernel is still fine


# ------------------------------------------------------------------ running code
def test_run_code_in_the_user_namespace_with_captured_output(nb: Any) -> None:
    env = call(
        nb,
        "RunCode",
        {
            "code": "import sys\nfrom IPython.display import display, HTML\n"
            "agent_made = 41 + 1\nprint('out')\nprint('err', file=sys.stderr)\ndisplay(HTML('<b>hi</b>'))\nagent_made"
        },
    )
    result = env["result"]
    assert result["status"] == "ok", result
    assert result["stdout"] == "out\n" and result["stderr"] == "err\n"
    assert [o["kind"] for o in result["outputs"]] == ["display", "result"]
    assert result["outputs"][1]["text"] == "42"
    assert nb.user_ns["agent_made"] == 42


def test_run_code_images_are_shown_as_thumbnails_not_sent(nb: Any) -> None:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (3, 2), "red").save(buf, format="PNG")
    nb.user_ns["png"] = buf.getvalue()
    code = "from IPython.display import Image, display\ndisplay(Image(data=png))\n'done'"
    result = rt(nb).call("RunCode", {"code": code})
    payload = result.envelope["result"]
    assert payload["status"] == "ok"
    shown = payload["outputs"][0]
    assert shown["mime"] == "image/png" and shown["text"].startswith("[image/png image")  # described to the model
    assert "iVBOR" not in result.receipt  # the data itself is never sent
    [thumb] = result.previews  # shown in the cell beside the receipt
    assert thumb["mime"] == "image/png" and (thumb["width"], thumb["height"]) == (3, 2)
    assert thumb["label"].startswith("RunCode display")
    assert "image/png" in result._repr_mimebundle_()  # the cell shows the thumbnail with the receipt


def test_run_code_errors_are_results(nb: Any) -> None:
    result = call(nb, "RunCode", {"code": "1 / 0"})["result"]
    assert result["status"] == "error" and result["error"]["ename"] == "ZeroDivisionError"
    assert any("<agent code>" in line for line in result["error"]["traceback"])
    syntax = call(nb, "RunCode", {"code": "def ("})["result"]
    assert syntax["status"] == "error" and syntax["error"]["ename"] == "SyntaxError"


def test_exit_calls_are_refused_and_the_kernel_lives(nb: Any) -> None:
    for code in ("import sys\nsys.exit(3)", "import os\nos._exit(1)", "raise SystemExit"):
        result = call(nb, "RunCode", {"code": code})["result"]
        assert result["status"] == "refused", (code, result)
        assert "may not exit the kernel" in result["error"]["evalue"]
    assert os._exit.__module__ == "posix"  # the guard is gone once no run is active
    assert call(nb, "RunCode", {"code": "'alive'"})["result"]["outputs"][0]["text"] == "'alive'"


def test_input_fails_at_once_with_a_clear_error(nb: Any) -> None:
    result = call(nb, "RunCode", {"code": "name = input('your name? ')"})["result"]
    assert result["status"] == "error" and result["error"]["ename"] == "EOFError"
    assert "input() is not available" in result["error"]["evalue"]


def test_a_run_past_its_timeout_is_interrupted(nb: Any) -> None:
    result = call(nb, "RunCode", {"code": "n = 0\nwhile True:\n    n += 1", "timeout_s": 1})["result"]
    assert result["status"] == "timed_out" and result["error"]["ename"] == "KeyboardInterrupt"
    assert nb.user_ns["n"] > 0
    assert call(nb, "RunCode", {"code": "raise KeyboardInterrupt"})["result"]["status"] == "interrupted"


def test_stopping_a_turn_interrupts_its_running_code(nb: Any) -> None:
    from _support import eventually

    from holon_nb.notebook._session import current_session

    started = threading.Event()
    nb.user_ns["started"] = started
    box: dict[str, Any] = {}
    code = "started.set()\nn = 0\nwhile True:\n    n += 1"
    worker = threading.Thread(target=lambda: box.update(call(nb, "RunCode", {"code": code, "timeout_s": 600})))
    worker.start()
    assert started.wait(60)
    session = current_session()
    assert session is not None and session.turns is not None
    session.turns.stop("default")  # the Stop button / Ctrl-C of a %%agent cell: no turn, but the code stops
    eventually(lambda: not worker.is_alive(), timeout=60)
    result = box["result"]
    assert result["status"] == "interrupted" and result["error"]["ename"] == "KeyboardInterrupt"
    assert nb.user_ns["n"] > 0


def test_user_output_is_not_captured_by_a_concurrent_run(nb: Any) -> None:
    started = threading.Event()
    nb.user_ns["started"] = started
    import io
    import sys

    mine = io.StringIO()
    real = sys.stdout
    sys.stdout = mine
    try:
        holder: dict[str, Any] = {}
        worker = threading.Thread(
            target=lambda: holder.update(
                env=call(nb, "RunCode", {"code": "import time\nstarted.set()\ntime.sleep(0.3)\nprint('agent')"})
            )
        )
        worker.start()
        assert started.wait(10)
        print("user")
        worker.join(10)
    finally:
        sys.stdout = real
    assert "user" in mine.getvalue() and "agent" not in mine.getvalue()
    assert holder["env"]["result"]["stdout"] == "agent\n"


def test_history_has_recent_cells_with_results_and_errors(nb: Any) -> None:
    nb.run_cell("alpha = 3", store_history=True)
    nb.run_cell("alpha * 2", store_history=True)
    nb.run_cell("1 / 0", store_history=True)
    cells = call(nb, "KernelHistory", {"last": 3})["result"]["cells"]
    assert [c["source"] for c in cells] == ["alpha = 3", "alpha * 2", "1 / 0"]
    assert cells[1]["outputs"] == [{"kind": "result", "mime": "text/plain", "text": "6"}]
    assert cells[2]["outputs"][0]["kind"] == "error" and "ZeroDivisionError" in cells[2]["outputs"][0]["text"]


# ------------------------------------------------------------------ the document
def _load(cells: list[tuple[str, str]]) -> None:
    doc = {"path": "x.ipynb", "cells": [{"id": i, "cell_type": "code", "source": s, "outputs": []} for i, s in cells]}
    HEADLESS.load(json.dumps(doc))


def test_headless_edits_apply_and_queue_for_the_harness(nb: Any) -> None:
    _load([("c1", "a = 1"), ("c2", "b = a + 1")])
    read = call(nb, "ReadNotebook")["result"]
    assert read["backend"] == "headless" and read["cell_count"] == 2
    assert [c["source"] for c in read["cells"]] == ["a = 1", "b = a + 1"]
    ins = call(nb, "EditNotebook", {"op": "insert", "index": 1, "source": "print(a)"})["result"]
    assert ins["applied"] and ins["cell_id"] == "agent-1" and ins["index"] == 1 and ins["cell_count"] == 3
    call(nb, "EditNotebook", {"op": "replace", "cell_id": "c2", "source": "b = a + 2"})
    call(nb, "EditNotebook", {"op": "move", "index": 2, "to_index": 0})
    call(nb, "EditNotebook", {"op": "delete", "cell_id": "c1"})
    assert [c["id"] for c in call(nb, "ReadNotebook")["result"]["cells"]] == ["c2", "agent-1"]
    ops = HEADLESS.drain()
    assert [o["op"] for o in ops] == ["insert", "replace", "move", "delete"]
    assert ops[0]["cell"]["metadata"] == {"holon_nb": {"inserted_by": "agent"}}
    assert HEADLESS.drain() == []


def test_execute_cell_records_outputs(nb: Any) -> None:
    _load([("c1", "value = 5\nprint('five')\nvalue * 2")])
    result = call(nb, "ExecuteCell", {"cell_id": "c1"})["result"]
    assert result["status"] == "ok" and result["index"] == 0 and result["stdout"] == "five\n"
    (op,) = HEADLESS.drain()
    assert op["op"] == "outputs" and op["cell_id"] == "c1"
    assert [o["output_type"] for o in op["outputs"]] == ["stream", "execute_result"]
    assert op["outputs"][1]["data"]["text/plain"] == "10"
    assert call(nb, "ReadNotebook", {"cell_id": "c1"})["result"]["cells"][0]["outputs"][0] == {
        "kind": "stdout",
        "text": "five\n",
    }


def test_an_index_that_no_longer_exists_is_a_clear_error(nb: Any) -> None:
    _load([("c1", "a = 1"), ("c2", "b = 2")])
    call(nb, "EditNotebook", {"op": "delete", "index": 1})
    env = call(nb, "EditNotebook", {"op": "replace", "index": 1, "source": "x"})
    assert env["error"]["kind"] == "cell_not_found" and env["error"]["details"]["cell_count"] == 1
    assert "Read the notebook again" in env["error"]["recovery_hint"]
    assert call(nb, "ExecuteCell", {"index": 5})["error"]["kind"] == "cell_not_found"
    assert call(nb, "ReadNotebook", {"cell_id": "gone"})["error"]["kind"] == "cell_not_found"
    missing = call(nb, "EditNotebook", {"op": "insert", "index": 0})
    assert missing["error"]["kind"] == "invalid_tool_input" and missing["error"]["details"]["field"] == "source"


def test_user_and_agent_edits_interleave_without_loss(nb: Any) -> None:
    """The harness applies the user's (here: another thread's) and the agent's edits to one document; every
    edit lands, none overwrites another, and the ids stay unique."""
    _load([(f"u{i}", f"x{i} = {i}") for i in range(3)])

    def user() -> None:
        for i in range(20):
            HEADLESS.edit("insert", {"index": 0, "cell_id": None, "to_index": None}, f"user{i}", "code")

    worker = threading.Thread(target=user)
    worker.start()
    for i in range(20):
        assert call(nb, "EditNotebook", {"op": "insert", "source": f"agent{i}"})["status"] == "success"
    worker.join()
    cells = call(nb, "ReadNotebook")["result"]["cells"]
    sources = [c["source"] for c in cells]
    assert len(cells) == 43 and len({c["id"] for c in cells}) == 43
    assert {f"user{i}" for i in range(20)} | {f"agent{i}" for i in range(20)} <= set(sources)
    assert [s for s in sources if s.startswith("agent")] == [f"agent{i}" for i in range(20)]


def test_live_without_collaboration_offers_one_cell_and_never_writes(
    nb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "open.ipynb"
    doc = {
        "cells": [
            {"id": "k1", "cell_type": "code", "source": "1 + 1", "metadata": {}, "outputs": [], "execution_count": None}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(doc))
    before = path.read_bytes()
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    read = call(nb, "ReadNotebook")["result"]
    assert read["backend"] == "file" and read["cells"][0]["source"] == "1 + 1" and "last saved" in read["note"]
    nb.payload_manager.clear_payload()
    offered = call(nb, "EditNotebook", {"op": "insert", "source": "print('fixed')"})["result"]
    assert offered["applied"] is False and "set_next_input" in offered["note"]
    # ipykernel's shell sends it as the set_next_input payload of the reply; IPython's terminal shell (this test's)
    # pre-fills its next prompt
    payload = nb.payload_manager.read_payload()
    offered_text = payload[-1]["text"] if payload else getattr(nb, "rl_next_input", None)
    assert offered_text == "# offered by an agent (agent-1; holon_nb EditNotebook)\nprint('fixed')"
    nb.payload_manager.clear_payload()
    nb.rl_next_input = None
    ran = call(nb, "ExecuteCell", {"cell_id": offered["cell_id"]})["result"]
    assert ran["status"] == "ok" and ran["stdout"] == "fixed\n" and "index" not in ran and "receipt" in ran["note"]
    refused = call(nb, "EditNotebook", {"op": "replace", "index": 0, "source": "2"})
    assert (
        refused["error"]["kind"] == "notebook_edit_unsupported"
        and "jupyter-collaboration" in refused["error"]["message"]
    )
    assert path.read_bytes() == before


# ------------------------------------------------------------------ agent turns, cassettes
AGENT_SCRIPT = """\
format: holon_nb.script/v1
steps:
  - tool_use: {id: call_1, name: InspectVariable, input: {name: data}}
    usage: {input: 10, output: 5}
  - tool_use: {id: call_2, name: RunCode, input: {code: "made_by_agent = sum(data)\\nprint(made_by_agent)"}}
    usage: {input: 10, output: 5}
  - text: done
    usage: {input: 7, output: 3}
"""


def _agent(ip: Any, line: str) -> Any:
    from IPython.utils.capture import capture_output

    from holon_nb.notebook import current_session

    with capture_output():
        ip.run_cell_magic("agent", line, "Sum the data.")
    session = current_session()
    assert session is not None
    return session.turns._all[-1]


def test_an_agent_turn_records_and_replays_with_the_tools_run_live(nb: Any, tmp_path: Path) -> None:
    """A replay answers the model from the cassette but runs the Notebook tools again (their effect on the
    kernel is the point), and a receipt that differs from the recording is drift."""
    from holon_nb.tools._errors import AgentTurnFailed

    (tmp_path / "script.yaml").write_text(AGENT_SCRIPT)
    nb.user_ns["data"] = [1, 2, 3]
    run = _agent(nb, "--model scripted/script.yaml --cassette c.jsonl --mode record --approve-all --wait")
    assert run.result.terminal == "completed", run.error
    assert nb.user_ns.pop("made_by_agent") == 6
    replay = _agent(nb, "--model scripted/script.yaml --cassette c.jsonl --mode replay --wait")
    assert replay.result.terminal == "completed", replay.error
    assert nb.user_ns["made_by_agent"] == 6  # the RunCode ran again
    nb.user_ns["data"] = [1, 2, 4]
    with pytest.raises(AgentTurnFailed, match="differs from the recording"):
        _agent(nb, "--model scripted/script.yaml --cassette c.jsonl --mode replay --wait")


def test_without_approve_all_a_headless_turn_is_denied_run_code(nb: Any, tmp_path: Path) -> None:
    """No click can come: the question is asked in the live view and times out, the call is denied."""
    nb.run_line_magic("config", "HolonNB.approval_timeout_s = 0.2")
    (tmp_path / "script.yaml").write_text(AGENT_SCRIPT)
    nb.user_ns["data"] = [1, 2, 3]
    run = _agent(nb, "--model scripted/script.yaml --wait")
    assert run.result.terminal == "completed"
    assert "made_by_agent" not in nb.user_ns
    asked = "\n".join(str(i.get("text", "")) for i in run.trace.items)
    assert "approval asked for RunCode" in asked and "--approve-all" in asked
    last = rt(nb).approvals.history[-1]
    assert (last.request.tool_name, last.decision, last.source) == ("RunCode", "deny", "timeout")


def test_apply_document_ops_to_the_harness_notebook() -> None:
    import nbformat

    from holon_nb.testing._kernel_code import agent_inserted, apply_document_ops

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_code_cell("b = 2")])
    nb.cells[0].id, nb.cells[1].id = "c1", "c2"
    cell = {"id": "agent-1", "cell_type": "code", "source": "c = 3", "metadata": {"holon_nb": {"inserted_by": "agent"}}}
    apply_document_ops(
        nb,
        [
            {"op": "insert", "index": 1, "cell": cell},
            {
                "op": "outputs",
                "cell_id": "agent-1",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}],
            },
            {"op": "replace", "cell_id": "c2", "source": "b = 20"},
            {"op": "move", "cell_id": "c1", "to_index": 2},
            {"op": "delete", "cell_id": "gone"},  # a cell that is not there: skipped
        ],
    )
    assert [c.id for c in nb.cells] == ["agent-1", "c2", "c1"]
    assert agent_inserted(nb.cells[0]) and nb.cells[0].outputs[0]["text"] == "x" and nb.cells[1].source == "b = 20"
    nbformat.validate(nb)


def test_replay_runs_exactly_the_notebook_family_live() -> None:
    from holon_nb.providers.cassettes._tools import LIVE_ON_REPLAY

    assert set(NOTEBOOK_TOOLS) == LIVE_ON_REPLAY


def test_history_is_kept_only_while_the_tools_are_on_and_images_are_described(ip: Any) -> None:
    ip.run_cell("secret_work = 1", store_history=True)  # the family is off: nothing is kept
    ip.run_line_magic("config", "HolonNB.notebook_tools = True")
    ip.run_cell(
        "class Plot:\n    def _repr_png_(self):\n        return b'png'\n    def __repr__(self):\n        return 'Plot()'",
        store_history=True,
    )
    ip.run_cell("Plot()", store_history=True)
    cells = call(ip, "KernelHistory", {"last": 10})["result"]["cells"]
    assert [c["source"] for c in cells][-1] == "Plot()" and not any("secret_work" in c["source"] for c in cells)
    (out,) = cells[-1]["outputs"]
    assert out["mime"] == "image/png" and out["text"].startswith("[image/png image") and "Plot()" in out["text"]
    ip.user_ns.pop("Plot", None)
    ip.user_ns.pop("secret_work", None)


def test_many_slow_reprs_share_one_budget(nb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from holon_nb.notebook._kernel import _port

    monkeypatch.setattr(_port, "LIST_BUDGET_S", 1.5)
    nb.run_cell(HOSTILE)
    nb.run_cell("hang2, hang3, hang4 = Hangs(), Hangs(), Hangs()")
    rows = {v["name"]: v for v in call(nb, "ListVariables", {"pattern": "hang*"})["result"]["variables"]}
    assert sorted(rows) == ["hang2", "hang3", "hang4", "hangs"]
    spent = [n for n, row in rows.items() if "budget was spent" in row["repr"]]
    assert spent and all(rows[n]["type"] == "Hangs" for n in spent)
