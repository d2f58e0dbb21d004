"""D6 (revised by issue 9): scrub first, then cut; nothing persisted keeps a secret.

A secret that straddles a preview cut leaves no prefix behind (ExecCommand, TaskOutput,
ExecCommandBatch's ``cmd_preview``, task summaries); a secret written in two chunks is
caught in the task log; and a second process started without the variable finds the
value nowhere in the holon home and cannot show it through any tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _support import ok

from holon_nb import Runtime
from holon_nb.render._scrubbing import Scrubber, _apply

SECRET = "Zq9Xw7Vt3Ru5Sp1On8Ml6Kj"  # 23 characters, no piece of it occurs by chance
PREFIX = SECRET[:5]  # what a cut-then-scrub would leave behind


def _texts(result) -> str:
    """Everything a caller, the notebook or the store gets of a call."""
    stored = result and dict(result_store(result))
    return json.dumps(
        [result.receipt, result.full_receipt, result.envelope, result.display_envelope, stored], default=str
    )


def result_store(result):  # noqa: ANN001 - the ToolResult's runtime row
    return _RT[0].store.execution(result.execution_id) or {}


_RT: list[Runtime] = []


@pytest.fixture
def srt(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    rt = Runtime(home=tmp_path / "home", workspace=workspace)
    _RT[:] = [rt]
    yield rt
    rt.close()


def test_exec_command_preview_cut_inside_the_secret(srt: Runtime) -> None:
    # budget 400 chars: the head keeps 167, so the cut falls 7 characters into the secret
    r = srt.call("ExecCommand", {"cmd": f"printf '%0160d{SECRET}%01000d\\n' 0 0", "max_output_tokens": 100})
    res = ok(r)
    assert res["truncated"] is True
    assert PREFIX not in _texts(r)
    assert "[redac" in res["stdout_preview"]  # the cut falls in the replacement, not in the value


def test_task_output_and_summary_cut_inside_the_secret(srt: Runtime) -> None:
    r = srt.call(
        "ExecCommand",
        {"cmd": f"sleep 0.2; printf '%0160d{SECRET}%01000d\\n' 0 0", "max_output_tokens": 100, "yield_time_ms": 0},
    )
    task_id = ok(r)["task_handle"]["task_id"]
    out = srt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 20000})
    assert ok(out)["task"]["status"] == "completed"
    assert PREFIX not in _texts(out)
    rec = srt.store.task(task_id)
    assert PREFIX not in json.dumps(rec)  # output_summary, detail
    assert all(PREFIX not in m["text"] for m in srt.messages())


def test_batch_cmd_preview_cut_inside_the_secret(srt: Runtime) -> None:
    cmd = "true " + "#" * 230 + " " + SECRET  # character 240 falls inside the secret
    r = srt.call("ExecCommandBatch", {"items": [{"cmd": cmd}]})
    ok(r)
    echoed = r.envelope["result"]["items"][0].pop("cmd")  # the returned envelope keeps the input as given
    assert echoed == cmd
    assert PREFIX not in _texts(r)
    preview = r.envelope["result"]["items"][0]["result"]["command_diagnostics"]["cmd_preview"]
    assert preview.startswith("true ###") and "[red" in preview


def test_a_secret_split_across_two_writes_never_reaches_the_task_log(srt: Runtime) -> None:
    cmd = f"printf '{SECRET[:11]}'; sleep 0.3; printf '{SECRET[11:]} after\\n'"
    r = srt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 0})
    task_id = ok(r)["task_handle"]["task_id"]
    out = ok(srt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 20000}))
    log = Path(srt.store.task(task_id)["detail"]["output_path"])
    assert log.read_bytes() == b"[redacted] after\n"
    assert "[redacted] after" in out["task"]["output_preview"]


def test_a_large_output_artifact_is_scrubbed_when_written(srt: Runtime) -> None:
    r = srt.call(
        "ExecCommand",
        {
            "cmd": f"for i in $(seq 3000); do printf '{SECRET[:9]}'; printf '{SECRET[9:]}\\n'; done",
            "max_output_tokens": 100,
        },
    )
    res = ok(r)
    artifact = Path(res["artifacts"][res["stdout_artifact"]]["path"])
    data = artifact.read_bytes()
    assert SECRET.encode() not in data and data.count(b"[redacted]\n") == 3000


def test_stream_scrubber_matches_whole_text_scrubbing_for_any_split() -> None:
    scrubber = Scrubber({"A_TOKEN": SECRET, "B_KEY": SECRET[:12]})
    text = f"a{SECRET}b{SECRET[:12]}c{SECRET[:11]}d"
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            stream = scrubber.stream()
            got = stream.feed(text[:i]) + stream.feed(text[i:j]) + stream.feed(text[j:]) + stream.flush()
            assert got == scrubber.text(text), (i, j)
            assert "".join(scrubber.pieces([text[:i], text[i:j], text[j:]])) == scrubber.text(text)


LATER = r"""
import json, sys
from holon_nb import Runtime
home, workspace, task_id, execution_id, work_item_id = sys.argv[1:]
out = []
with Runtime(home=home, workspace=workspace) as rt:
    calls = [("TaskOutput", {"task_id": task_id, "block": False}), ("ListTasks", {}),
             ("ListWorkItems", {}), ("GetWorkItem", {"work_item_id": work_item_id}),
             ("PickWorkItem", {"work_item_id": work_item_id}),
             ("MemoryGet", {"source_ref": f"tool_execution:{execution_id}:output"}),
             ("MemoryGet", {"source_ref": f"task:{task_id}"}),
             ("MemorySearch", {"query": "marker-word"})]
    for name, args in calls:
        r = rt.call(name, args)
        out.append({"name": name, "status": r.envelope["status"], "envelope": r.envelope, "receipt": r.receipt})
    out.append({"messages": rt.messages()})
print(json.dumps(out, default=str))
"""


def test_a_later_process_without_the_variable_finds_the_secret_nowhere(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as rt:
        r = rt.call("ExecCommand", {"cmd": f"echo marker-word {SECRET}; sleep 0.3; echo {SECRET}", "yield_time_ms": 0})
        task_id = ok(r)["task_handle"]["task_id"]
        ok(rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 20000}))
        fg = rt.call("ExecCommand", {"cmd": f"echo {SECRET} marker-word"})
        item = ok(
            rt.call("CreateWorkItem", {"objective": f"rotate the key {SECRET} marker-word", "plan": f"use {SECRET}"})
        )
        work_item_id = item["work_item"]["id"]
        ok(rt.call("Enqueue", {"text": f"remember {SECRET}"}))
        ok(rt.call("MemorySearch", {"query": "marker-word"}))  # the index catches up in this process
        execution_id = fg.execution_id
    # nothing written to the home holds the value, in any file (SQLite database and WAL included)
    for path in home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    env = {k: v for k, v in os.environ.items() if k != "MY_SERVICE_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-c", LATER, str(home), str(workspace), task_id, execution_id, work_item_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    shown = json.loads(done.stdout)
    assert [c["status"] for c in shown[:-1]] == ["success"] * (len(shown) - 1), shown
    assert SECRET not in done.stdout
    assert "[redacted]" in done.stdout


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ok",
        "ExecCommand",
        SECRET[:-1],  # one short of the value: nothing to replace
        SECRET,
        f"x{SECRET}y",
        f"{SECRET[:6]}\r{SECRET}",  # drawn over with \r: the terminal shows the value
        f"{SECRET[:4]}\x1b[1m{SECRET[4:]}",  # an escape inside the value: shorter ones are shown whole too
        f"ab\b{SECRET[:9]}",
        "cb_" + "0" * 63,  # one short of a trigger token
        "cb_" + "0" * 64,
    ],
)
def test_short_texts_skip_the_search_and_scrub_the_same(text: str) -> None:
    """issue 27 item 7: a text shorter than any value or token, without drawing, is returned at once; every
    text scrubs as the spans found in it say (the fast path changes no result)."""
    scrubber = Scrubber({"API_KEY": SECRET, "OTHER_TOKEN": "short-secret-1"})
    assert scrubber.text(text) == _apply(text, scrubber._spans(text))
    assert (SECRET not in scrubber.text(text)) and not scrubber.text(text).endswith("0" * 64)
