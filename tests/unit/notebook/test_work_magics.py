"""The work-plane magics and the live board, in IPython's in-process shell."""

from __future__ import annotations

import time
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import holon_nb
from holon_nb.notebook._work_magics import parse_duration_ms, parse_todo

RESULT = "application/vnd.holon.tool-result+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
FALLBACK = "application/vnd.holon.live-fallback+json"


def _env(bundles: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    (env,) = [b[RESULT] for b in bundles if RESULT in b and b[RESULT]["tool_name"] == tool]
    return env


def test_duration_and_todo_parsing() -> None:
    assert [parse_duration_ms(t) for t in ("250", "250ms", "2s", "1.5m", "1h")] == [250, 250, 2000, 90000, 3600000]
    with pytest.raises(UsageError):
        parse_duration_ms("soon")
    assert parse_todo("write tests") == {"text": "write tests", "state": "pending"}
    assert parse_todo("[x] reproduce") == {"text": "reproduce", "state": "completed"}
    assert parse_todo("[>] fix") == {"text": "fix", "state": "in_progress"}
    with pytest.raises(UsageError):
        parse_todo("[?] what")


def test_workitem_lifecycle_through_magics(run: Any) -> None:
    created = _env(run("workitem", 'create Make CI green --todo "reproduce" --todo "[>] fix"'), "CreateWorkItem")
    item = created["result"]["work_item"]
    assert item["objective"] == "Make CI green" and item["is_current"] is True
    assert [t["state"] for t in item["todo_list"]] == ["pending", "in_progress"]
    wid = item["id"]
    updated = _env(run("workitem", f'update {wid} --todo "[x] reproduce" --todo "[x] fix"'), "UpdateWorkItem")
    assert [t["state"] for t in updated["result"]["work_item"]["todo_list"]] == ["completed", "completed"]
    shown = _env(run("workitem", f"show {wid}"), "GetWorkItem")
    assert shown["result"]["work_item"]["id"] == wid
    with pytest.raises(UsageError, match="--report"):  # said in the magic's words, before any call
        run("workitem", f"complete {wid}")
    missing = holon_nb.get_runtime().call("CompleteWorkItem", {"work_item_id": wid})
    assert missing.envelope["error"]["kind"] == "missing_completion_report"
    done = _env(run("workitem", f'complete {wid} --report "Fixed; tests green."'), "CompleteWorkItem")
    assert done["result"]["completed_transition"] is True
    assert done["result"]["work_item"]["state"] == "completed"
    with pytest.raises(UsageError):
        run("workitem", "create")


def test_waitfor_final_needs_a_brief_and_takes_it_from_the_option(run: Any) -> None:
    _env(run("workitem", "create Ship it"), "CreateWorkItem")
    silent = _env(run("waitfor", "operator_input need a decision"), "WaitFor")
    assert silent["status"] == "success" and silent["result"]["delivery"] == "silent"
    final = _env(run("waitfor", 'external CI is running --brief "Waiting for CI."'), "WaitFor")
    assert final["status"] == "success" and final["result"]["delivery"] == "final"
    assert final["result"].get("final_brief_id")
    refused = _env(run("waitfor", "external CI --delivery final"), "WaitFor")
    assert refused["error"]["kind"] == "empty_final_brief"


def test_timer_magics_and_agent_status(run: Any) -> None:
    created = _env(run("timer", 'create --in 5m --summary "check the build"'), "CreateTimer")
    timer = created["result"]["timer"]
    assert timer["status"] == "active" and timer["duration_ms"] == 300000
    listed = _env(run("timers", "--filter active"), "ListTimers")
    assert [t["id"] for t in listed["result"]["timers"]] == [timer["id"]]
    cancelled = _env(run("timer", f"cancel {timer['id']}"), "CancelTimer")
    assert cancelled["result"]["cancelled_transition"] is True
    status = _env(run("agent_status"), "GetAgent")
    assert status["result"]["agent"]["identity"]["agent_id"] == "default"
    with pytest.raises(UsageError):
        run("timer", "create --in 1s --at 2030-01-01T00:00:00Z")
    # the summary may also follow the options as plain words
    worded = _env(run("timer", 'create --in 5m check "CI" again'), "CreateTimer")
    assert worded["result"]["timer"]["summary"] == "check CI again"
    with pytest.raises(UsageError, match="as words or as --summary"):
        run("timer", 'create --in 5m twice --summary "once"')
    with pytest.raises(UsageError, match="needs one timer id"):
        run("timer", "cancel")
    # "1ms" for "1m": refused before anything is created (it would tick a thousand times a second)
    active = _env(run("timers", "--filter active"), "ListTimers")["result"]["timers"]
    with pytest.raises(UsageError, match=r"--every 1ms: .* at most once a second .* the least is 1s"):
        run("timer", "create --in 1s --every 1ms")
    assert _env(run("timers", "--filter active"), "ListTimers")["result"]["timers"] == active
    every = _env(run("timer", "create --in 5m --every 1s"), "CreateTimer")
    assert every["result"]["timer"]["interval_ms"] == 1000


def test_memory_magics(run: Any) -> None:
    _env(run("workitem", "create Investigate the zebra-striped flake"), "CreateWorkItem")
    found = _env(run("memory", "search zebra"), "MemorySearch")
    refs = [r["source_ref"] for r in found["result"]["results"]]
    assert refs, found
    got = _env(run("memory", f"get {refs[0]}"), "MemoryGet")
    assert got["status"] == "success"


def test_board_updates_itself_when_a_timer_fires(ip: Any) -> None:
    rt = holon_nb.get_runtime()
    with capture_output() as cap:
        ip.run_line_magic("workitem", "create Wait for the nightly build")
        tid = rt.call("CreateTimer", {"duration_ms": 300, "summary": "nightly"}).result["timer"]["id"]
        ip.user_ns["timer_id"] = tid
        ip.run_line_magic("waitfor", "timer nightly build --resource {timer_id}")
        ip.run_line_magic("workitems", "")
        from holon_nb.notebook import current_session

        _session = current_session()

        (board,) = _session.boards._boards
        assert "waits for timer" in board.text and "(active)" in board.text
        deadline = time.monotonic() + 10
        while "(triggered)" not in board.text and time.monotonic() < deadline:
            time.sleep(0.05)
    # the timer fired on the runtime thread (its tick triggered the wait) and the board re-rendered
    # without re-running its cell; the wait resolves when an agent turn processes the tick
    assert "(triggered)" in board.text, board.text
    assert "Wait for the nightly build" in board.value and "triggered" in board.value
    updates = [o for o in cap.outputs if getattr(o, "update", False)]
    assert updates and updates[-1].data["text/plain"] == board.text


def test_free_text_is_verbatim_but_ids_expand(ip: Any, run: Any) -> None:
    ip.user_ns["config"] = {"a": 1}
    created = _env(run("workitem", "create Report saved {config} and $cost"), "CreateWorkItem")
    wid = created["result"]["work_item"]["id"]
    assert created["result"]["work_item"]["objective"] == "Report saved {config} and $cost"
    ip.user_ns["wid"] = wid
    shown = _env(run("workitem", "show {wid}"), "GetWorkItem")
    assert shown["result"]["work_item"]["id"] == wid
    done = _env(run("workitem", 'complete $wid --report "cost was {cost}"'), "CompleteWorkItem")
    assert done["result"]["work_item"]["completion_report"]["text"] == "cost was {cost}"
    with pytest.raises(UsageError):
        run("memory", 'search "unterminated')


def test_static_snapshot_limit_and_board_lifetimes(ip: Any, run: Any) -> None:
    from holon_nb.notebook import current_session

    _session = current_session()
    from holon_nb.notebook._board import MAX_LIVE_BOARDS

    for i in range(4):
        run("workitem", f"create objective number {i}")
    (snap,) = run("workitems", "--static --limit 2")
    assert snap["text/plain"].startswith("work items of agent default: 4 (the first 2 shown; --limit N for more)")
    assert "application/vnd.jupyter.widget-view+json" not in snap
    assert _session.boards._boards == []  # a snapshot is not kept live
    with capture_output() as cap:
        for _ in range(MAX_LIVE_BOARDS + 1):
            ip.run_line_magic("workitems", "")
    boards = list(_session.boards._boards)
    assert len(boards) == MAX_LIVE_BOARDS
    # a live board is display output (text and HTML), never a widget: a kernel restart in JupyterLab drops
    # the old kernel's comms before the kernel hears of it, and a widget would be left a broken-link icon.
    # Right after it, a hidden beacon widget (marked as a live view's extra output), whose death shows the
    # board's "no longer updated since" note by CSS alone (notebook/_liveness.py)
    extra = [o for o in cap.outputs if FALLBACK in o.data]
    assert extra and all(o.data[FALLBACK]["of"] in ("beacon", "board") for o in extra)
    shown = [o for o in cap.outputs if not o.update and FALLBACK not in o.data]
    assert all(WIDGET not in o.data and "holon-board-view" in o.data["text/html"] for o in shown)
    assert all(
        "holon-when-dead" in o.data["text/html"] and "no longer updated since" in o.data["text/html"] for o in shown
    )
    assert all("no longer updated since" not in o.data["text/plain"] for o in shown)
    # the oldest board froze: drawn a last time, with a note saying why
    shown_ids = [o.transient["display_id"] for o in shown]
    first_id, live_ids = shown_ids[0], set(shown_ids[1:])
    (frozen,) = [o for o in cap.outputs if o.update and o.transient.get("display_id") == first_id]
    assert WIDGET not in frozen.data and "newer board was displayed" in frozen.data["text/plain"]
    assert "holon-board-view" in frozen.data["text/html"]
    with capture_output() as cap:
        ip.run_line_magic("unload_ext", "holon_nb")
    try:
        assert all("no longer updated" in b.text for b in boards)
        # unloading (as at kernel exit) replaces every live board by its static board
        replaced = {
            o.transient.get("display_id")
            for o in cap.outputs
            if o.update and WIDGET not in o.data and FALLBACK not in o.data
        }
        spent = [o for o in cap.outputs if FALLBACK in o.data]  # each live board's beacon goes
        assert len(spent) == MAX_LIVE_BOARDS and all(o.data[FALLBACK]["state"] == "spent" for o in spent)
        assert replaced == live_ids and all(b.handle is None for b in boards)
    finally:
        ip.run_line_magic("load_ext", "holon_nb")
