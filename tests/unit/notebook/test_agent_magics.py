"""%%agent with a scripted provider in IPython's in-process shell: live view, transcript, Stop, approvals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support import eventually
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from holon_nb.tools._errors import AgentTurnFailed

FALLBACK = "application/vnd.holon.live-fallback+json"

SCRIPT = """\
format: holon_nb.script/v1
steps:
  - tool_use: {id: call_1, name: GetAgent, input: {}}
    usage: {input: 10, output: 5}
  - text: the agent is idle and well
    usage: {input: 7, output: 3}
"""


def _session() -> Any:
    from holon_nb.notebook import current_session

    _session = current_session()

    return _session


def _run_agent(ip: Any, line: str, cell: str) -> tuple[Any, list[Any]]:
    with capture_output() as cap:
        ip.run_cell_magic("agent", line, cell)
    return _session().turns._all[-1], cap.outputs


def test_agent_cell_runs_a_scripted_turn_with_a_live_view_and_transcript(ip: Any, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    run, outputs = _run_agent(ip, "--model scripted/script.yaml --wait", "How is the agent?")
    assert run.done.is_set() and run.result is not None
    assert run.result.terminal == "completed" and run.result.final_text == "the agent is idle and well"
    trace = run.trace
    assert trace.status == "completed" and trace.usage == {"input_tokens": 17, "output_tokens": 8}
    (tool,) = [i for i in trace.items if i["kind"] == "tool"]
    assert tool["name"] == "GetAgent" and tool["is_error"] is False and '"tool_name":"GetAgent"' in tool["receipt"]
    text = run.view.static_bundle()["text/plain"]
    assert "> How is the agent?" in text and "GetAgent (success)" in text
    assert "turn completed" in text and "the agent is idle and well" in text
    assert "<details" in run.view._body.value
    # the cell's output was updated with the transcript at the end (saved notebooks keep it)
    assert any(getattr(o, "update", False) and "turn completed" in o.data.get("text/plain", "") for o in outputs)
    # ...replacing the live view: the cell's last state is static (no widget to break after a restart)
    standby, view = outputs[0], outputs[1]
    assert FALLBACK not in view.data and "application/vnd.jupyter.widget-view+json" in view.data
    view_id = view.transient["display_id"]
    last = [o for o in outputs if o.transient.get("display_id") == view_id][-1]
    assert last.update and "application/vnd.jupyter.widget-view+json" not in last.data
    assert "holon-turn-static" in last.data["text/html"] and "holon-transcript" in last.data["text/html"]
    assert last.data["application/vnd.holon.view+json"] == {"view": "agent-turn"}
    assert run.view.comm is None and run.view._body.comm is None  # closed, children too
    # right before the view, its standby owner (shown only once the view is dead, liveness.py); spent at the end
    assert standby.data[FALLBACK]["state"] == "standby" and not standby.update
    assert "turn interrupted (by a kernel restart" in standby.data["text/plain"]
    standbys = [o for o in outputs if o.transient.get("display_id") == standby.transient["display_id"]]
    assert all(FALLBACK in o.data for o in standbys) and standbys[-1].data[FALLBACK]["state"] == "spent"


def test_rerunning_a_used_up_script_says_how_to_start_it_over(ip: Any, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    first, _ = _run_agent(ip, "--model scripted/script.yaml --wait", "How is the agent?")
    assert not first.error
    with capture_output(), pytest.raises(AgentTurnFailed) as info:
        ip.run_cell_magic("agent", "--model scripted/script.yaml --wait", "How is the agent?")
    assert "scripted agent provider exhausted after" in str(info.value)  # upstream's text, kept
    assert "%reload_ext holon_nb" in str(info.value)
    with capture_output():
        ip.run_line_magic("reload_ext", "holon_nb")
    again, _ = _run_agent(ip, "--model scripted/script.yaml --wait", "How is the agent?")  # as the hint says
    assert not again.error and again.result.final_text == "the agent is idle and well"


def test_agent_needs_a_message_and_a_model(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError):
        ip.run_cell_magic("agent", "", "   ")
    with pytest.raises(UsageError, match="--max-rounds must be 1 or more, got 0"):
        ip.run_cell_magic("agent", "--max-rounds 0 --wait", "hello")
    monkeypatch.delenv("HOLON_MODEL", raising=False)
    with pytest.raises(AgentTurnFailed, match="failed"):
        _run_agent(ip, "--wait", "hello")
    run = _session().turns._all[-1]
    assert run.result is None and run.trace.status == "aborted" and run.error  # no model configured: said in the view
    assert "HOLON_MODEL" in run.error or "model" in run.error.lower()
    assert "error: " in run.view.static_bundle()["text/plain"]


def test_approval_question_in_the_view_approve_for_session(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic("config", "HolonNB.approval = 'always'")
    (tmp_path / "script.yaml").write_text(
        SCRIPT.replace("  - text:", "  - tool_use: {id: call_2, name: GetAgent, input: {}}\n  - text:")
    )
    run, _ = _run_agent(ip, "--model scripted/script.yaml", "check twice")
    eventually(lambda: run.view._questions.children, timeout=60)
    (question,) = run.view._questions.children
    approve_session = question.children[1].children[1]
    assert "approval asked for GetAgent" in run.view.static_bundle()["text/plain"]
    assert approve_session.description == "Approve for this session"
    approve_session.click()
    assert run.done.wait(10)
    assert run.result.terminal == "completed"
    # the second GetAgent was not asked again: still one question
    assert len(run.view._questions.children) == 1
    assert all(i["is_error"] is False for i in run.trace.items if i["kind"] == "tool")


def test_a_waiting_turn_keeps_its_standby_current_and_spends_it_at_the_end(ip: Any, tmp_path: Path) -> None:
    """A turn waiting on a question sends no event: its standby owner still catches up (at most a second
    late) with what the view shows, so a restart now reads as this state; the turn's end spends it."""
    ip.run_line_magic("config", "HolonNB.approval = 'always'")
    (tmp_path / "script.yaml").write_text(SCRIPT)
    with capture_output() as cap:
        ip.run_cell_magic("agent", "--model scripted/script.yaml", "check")
        run = _session().turns._all[-1]
        standby_id = cap.outputs[0].transient["display_id"]

        def standbys() -> list[Any]:
            return [o for o in cap.outputs if o.transient.get("display_id") == standby_id]

        # the question reaches the standby by the trailing update, without another event: wait for it
        eventually(
            lambda: any("approval asked for GetAgent" in o.data.get("text/plain", "") for o in standbys()), timeout=60
        )
        waiting = standbys()[-1].data
        assert waiting[FALLBACK]["state"] == "standby" and "GetAgent (interrupted)" in waiting["text/plain"]
        run.view._questions.children[0].children[1].children[0].click()  # Approve once
        assert run.done.wait(10)
        _session().turns.report()  # what %holon wait sends from its own cell: the spent marker again
    last = standbys()[-1]
    assert last.update and last.data[FALLBACK] == {"of": "default", "state": "spent"}
    assert last.data["text/plain"] == ""
    assert run.result.terminal == "completed"


def test_deny_gives_approval_denied_and_the_turn_goes_on(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic("config", "HolonNB.approval = 'always'")
    (tmp_path / "script.yaml").write_text(SCRIPT)
    run, _ = _run_agent(ip, "--model scripted/script.yaml", "check")
    eventually(lambda: run.view._questions.children, timeout=60)
    run.view._questions.children[0].children[1].children[2].click()  # Deny
    assert run.done.wait(10)
    (tool,) = [i for i in run.trace.items if i["kind"] == "tool"]
    assert tool["is_error"] is True and "approval_denied" in tool["receipt"]
    assert run.result.terminal == "completed"


def test_stop_cancels_a_running_turn(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic("config", "HolonNB.approval = 'always'")  # the turn waits on the question: stop it there
    (tmp_path / "script.yaml").write_text(SCRIPT)
    run, _ = _run_agent(ip, "--model scripted/script.yaml", "check")
    eventually(lambda: run.view._questions.children, timeout=60)
    run.view._stop.click()
    assert run.view.note == "stop requested"
    run.view._questions.children[0].children[1].children[0].click()  # answer so the call returns
    assert run.done.wait(10)
    assert run.result.terminal == "aborted"


def test_a_scripted_turn_needs_no_cassette_under_holon_nb_test(
    ip: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what holon-nb test sets (replay mode, the notebook's path): the README's scripted example, with
    # and without --follow, runs its script; no "no cassette … mode replay" error
    monkeypatch.setenv("HOLON_NB_NOTEBOOK", str(tmp_path / "readme.ipynb"))
    monkeypatch.setenv("HOLON_NB_CASSETTE_MODE", "replay")
    (tmp_path / "script.yaml").write_text(SCRIPT)
    run, _ = _run_agent(ip, "--model scripted/script.yaml --wait", "How is the agent?")
    assert not run.error and run.result is not None and run.result.terminal == "completed"
    assert not (tmp_path / "readme.holon").exists()  # no cassette was written or looked for


def test_agent_cell_records_then_replays_a_cassette_offline(
    ip: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    recorded, _ = _run_agent(
        ip, "--model scripted/script.yaml --cassette turns/check.jsonl --mode record --wait", "How is the agent?"
    )
    assert recorded.result.terminal == "completed" and not recorded.error
    assert (tmp_path / "turns" / "check.jsonl").exists()
    # a fresh kernel and holon home (history would otherwise differ), no model configured, no script file
    (tmp_path / "script.yaml").unlink()
    monkeypatch.delenv("HOLON_MODEL", raising=False)
    monkeypatch.setenv("HOLON_NB_HOME", str(tmp_path / "home2"))
    ip.run_line_magic("reload_ext", "holon_nb")
    replayed, _ = _run_agent(ip, "--cassette turns/check.jsonl --mode replay --wait", "How is the agent?")
    assert not replayed.error, replayed.error
    assert replayed.result.terminal == "completed"
    assert replayed.result.final_text == recorded.result.final_text
    rec_tools = [i["receipt"] for i in recorded.trace.items if i["kind"] == "tool"]
    rep_tools = [i["receipt"] for i in replayed.trace.items if i["kind"] == "tool"]
    assert rep_tools == rec_tools and len(rep_tools) == 1
    # re-running the replay cell in the same kernel and home replays again (ids and history do not collide)
    again, _ = _run_agent(ip, "--cassette turns/check.jsonl --mode replay --wait", "How is the agent?")
    assert not again.error and again.result.final_text == recorded.result.final_text
    # a changed prompt is drift, said in the view (never a traceback)
    monkeypatch.setenv("HOLON_NB_HOME", str(tmp_path / "home3"))
    ip.run_line_magic("reload_ext", "holon_nb")
    with pytest.raises(AgentTurnFailed, match="CassetteDrift"):
        _run_agent(ip, "--cassette turns/check.jsonl --mode replay --wait", "Something else?")
    drifted = _session().turns._all[-1]
    assert "CassetteDrift" in drifted.error and drifted.trace.status == "aborted"
    assert "CassetteDrift" in drifted.view.static_bundle()["text/plain"]


def test_unanswered_approval_is_withdrawn_and_denied_after_the_timeout(ip: Any, tmp_path: Path) -> None:
    ip.run_line_magic("config", "HolonNB.approval = 'always'")
    ip.run_line_magic("config", "HolonNB.approval_timeout_s = 0.5")
    (tmp_path / "script.yaml").write_text(SCRIPT)
    run, _ = _run_agent(ip, "--model scripted/script.yaml --wait", "check")
    (tool,) = [i for i in run.trace.items if i["kind"] == "tool"]
    assert tool["is_error"] is True and "approval_denied" in tool["receipt"] and "0.5" in tool["receipt"]
    (question,) = run.view._questions.children
    assert "withdrawn" in question.children[0].value
    assert all(b.disabled for b in question.children[1].children)
    assert run.result.terminal == "completed"


def test_config_providers_reaches_agent_turns_and_refuses_secrets(ip: Any, caplog: pytest.LogCaptureFixture) -> None:
    from unit.providers.payloads import chat_text
    from unit.providers.servers import Reply, WireServer

    with WireServer() as wire:
        wire.script(Reply(json=chat_text("served by the lab box")))
        ip.run_line_magic(
            "config",
            "HolonNB.providers = {'lab': {'transport': 'openai_chat_completions', "
            f"'base_url': '{wire.base_url}/v1', 'auth': {{'source': 'none'}}}}}}",
        )
        assert _session().rt.settings.providers["lab"]["base_url"] == wire.base_url + "/v1"
        run, _ = _run_agent(ip, "--model lab/qwen3 --wait", "hello lab")
        assert run.result.terminal == "completed" and run.result.final_text == "served by the lab box"
        assert wire.requests[0].json["model"] == "qwen3"
    # a key in config is refused with a clear message and the earlier value stays
    ip.run_line_magic("config", "HolonNB.providers = {'lab': {'api_key': 'sk-live-0123456789'}}")
    assert "secrets never live in config" in caplog.text  # %config logs the TraitError; the value is not taken
    assert "api_key" not in _session().rt.settings.providers["lab"]


def test_holon_say_reaches_a_turn_running_in_the_background(ip: Any) -> None:
    import threading

    import anyio

    from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnResponse, UserText

    started, said = threading.Event(), threading.Event()

    class Waiting:
        route_ref = "scripted@default/waits"

        def __init__(self) -> None:
            self.requests: list[Any] = []

        async def complete_turn(self, req: Any) -> TurnResponse:
            self.requests.append(req)
            if len(self.requests) == 1:
                started.set()
                while not said.is_set():  # the operator types %holon say while this round is out
                    await anyio.sleep(0.01)
                return TurnResponse(blocks=(ToolUseBlock("c1", "GetAgent", {}),), stop_reason="tool_use")
            heard = [m.text for m in req.conversation if isinstance(m, UserText) and "Operator message" in m.text]
            last = heard[-1].splitlines()[-1] if heard else ""
            return TurnResponse(blocks=(TextBlock(f"heard {len(heard)}: {last}"),))

    provider = Waiting()
    _session().rt.providers.register(Waiting.route_ref, provider)
    run, _ = _run_agent(ip, f"--model {Waiting.route_ref}", "start working")
    assert started.wait(10)
    with capture_output() as cap:
        ip.run_line_magic("holon", 'say "also run the slow tests"')
    said.set()
    assert run.done.wait(10)
    shown = "".join(o.data.get("text/plain", "") for o in cap.outputs)
    assert "queued for agent default: the running turn reads it at its next step" in shown
    assert run.result.final_text == "heard 1: also run the slow tests"
    assert "interjection: also run the slow tests" in run.view.static_bundle()["text/plain"]
    with pytest.raises(UsageError, match="no agent 'ghost'"):
        ip.run_line_magic("holon", "say --agent ghost hello")
    with pytest.raises(UsageError, match="needs a message"):
        ip.run_line_magic("holon", "say   ")


FOLLOW_SCRIPT = """\
format: holon_nb.script/v1
steps:
  - tool_use: {id: w1, name: WaitFor, input: {reason: "need the go-ahead", wake: operator_input, delivery: silent}}
  - text: going ahead now
"""


def _following(ip: Any, tmp_path: Path, follow: str) -> Any:
    """Start a scripted ``%%agent --follow`` turn that asks the operator; return its run once it waits."""
    (tmp_path / "follow.yaml").write_text(FOLLOW_SCRIPT)
    run, _ = _run_agent(ip, f"--model scripted/follow.yaml {follow}", "ask me first")
    eventually(lambda: run.trace.status == "waiting", timeout=60)
    assert run.trace.status == "waiting" and not run.done.is_set()
    return run


def test_follow_runs_the_turn_a_wake_starts_in_the_same_view(ip: Any, tmp_path: Path) -> None:
    import holon_nb

    run = _following(ip, tmp_path, "--follow 2")
    assert run.view._stop.layout.display != "none"  # Stop stays offered while it waits for a wake
    with capture_output() as cap:
        ip.run_line_magic("holon", 'say "go ahead"')
    said = "".join(o.data.get("text/plain", "") for o in cap.outputs)
    assert "it woke the agent's wait for operator input; the %%agent --follow view runs its next turn" in said
    assert run.done.wait(10)
    assert [r.reason for r in run.results] == ["wait_for_silent", "end_turn"]
    text = run.view.static_bundle()["text/plain"]
    assert "following: waiting for one of 1 open wait(s) to be woken" in text
    assert "woken by operator_prompt" in text and "going ahead now" in text
    assert "followed 1 wake(s); stopped following: the agent has nothing left to wait for" in text
    assert "last of 2 turns: completed (end_turn) after 1 round(s); all turns" in text
    assert [r.final_text for r in holon_nb.agent_turns()[-2:]] == ["", "going ahead now"]


def test_stop_ends_a_follow_that_waits_and_follow_refuses_a_cassette(ip: Any, tmp_path: Path) -> None:
    run = _following(ip, tmp_path, "--follow")
    assert run.view._stop.description and _session().turns.stop(run.trace.agent_id) == "stopped waiting for a wake"
    assert run.done.wait(10) and run.follower.ended_because == "stopped" and len(run.results) == 1
    with pytest.raises(UsageError, match="cannot be used with a cassette"):
        ip.run_cell_magic("agent", "--follow --cassette c.jsonl --mode record --model scripted/follow.yaml", "x")
    with pytest.raises(UsageError, match="--follow must be 0 or more"):
        ip.run_cell_magic("agent", "--follow -1", "x")


def test_models_of_a_provider_that_lists_none_says_why(ip: Any) -> None:
    ip.run_line_magic(
        "config",
        "HolonNB.providers = {'lab': {'transport': 'openai_chat_completions', "
        "'base_url': 'http://127.0.0.1:9/v1', 'auth': {'source': 'none'}}}",
    )
    with capture_output() as cap:
        ip.run_line_magic("models", "lab")
    shown = "".join(o.data.get("text/plain", "") for o in cap.outputs)
    assert "0 models of lab" in shown or '"models":[]' in shown
    assert "holon_nb does not ask a server for its models" in shown and "--model lab/<model>" in shown


def test_unloading_ends_a_follow_that_waits(ip: Any, tmp_path: Path) -> None:
    run = _following(ip, tmp_path, "--follow")
    _session().turns.close()
    assert run.done.wait(10) and run.follower.ended_because == "stopped"


def test_follow_view_facts_after_two_turns(ip: Any, tmp_path: Path) -> None:
    (tmp_path / "follow.yaml").write_text(FOLLOW_SCRIPT)
    run, _ = _run_agent(ip, f"--model scripted/{tmp_path}/follow.yaml --follow 2", "ask me first")
    eventually(lambda: run.trace.status == "waiting", timeout=60)
    header, body = run.view.children[0], run.view.children[1]
    eventually(lambda: "(Stop ends this)" in body.value, timeout=60)  # the live hub's next cycle draws it
    assert run.view._stop.layout.display != "none"
    with capture_output():
        ip.run_line_magic("holon", 'say "go ahead"')
    assert run.done.wait(10)
    run.view.refresh()
    text = run.view.static_bundle()["text/plain"]
    assert run.view._stop.layout.display == "none"
    # the hint went with the Stop button; the note itself stays
    assert "following: waiting for one of 1 open wait(s) to be woken" in text
    assert "(Stop ends this)" not in text and "(Stop ends this)" not in body.value
    # the model by its script's file name, never the temporary path; the round of the second turn
    for shown in (header.value, body.value, text):
        assert "scripted//" not in shown and str(tmp_path) not in shown
    assert "scripted/follow.yaml" in header.value and "scripted/follow.yaml" in text
    assert "turn 2 · round 1 ·" in header.value


def test_expanded_tool_calls_show_pretty_input_and_the_direct_call_receipt(ip: Any, tmp_path: Path) -> None:
    import json

    import holon_nb

    wid = holon_nb.get_runtime().call("CreateWorkItem", {"objective": "Write the report"}).result["work_item"]["id"]
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+first line\n+second line\n*** End Patch"
    (tmp_path / "script.yaml").write_text(
        "format: holon_nb.script/v1\nsteps:\n"
        f"  - tool_use: {{id: call_1, name: ApplyPatch, input: {{patch: {json.dumps(patch)}}}}}\n"
        f"  - tool_use: {{id: call_2, name: GetWorkItem, input: {{work_item_id: {wid}}}}}\n"
        "  - text: done\n"
    )
    run, _ = _run_agent(ip, "--model scripted/script.yaml --wait", "add hello.txt")
    assert (tmp_path / "hello.txt").read_text() == "first line\nsecond line\n"
    html = run.view.static_bundle()["text/html"]
    calls = html.split("<details class='holon-tool-call'")[1:]
    assert len(calls) == 2
    apply_patch, get_item = calls
    # input as a person reads it: the patch as lines, not one JSON line with escaped \n
    assert "patch:\n    *** Begin Patch\n    *** Add File: hello.txt\n    +first line" in apply_patch
    assert "\\n" not in apply_patch.split("</pre>")[0]
    # the same card as a direct %%patch: the diff table, not the model's minified JSON only
    assert "holon-diff" in apply_patch and "holon-receipt" in apply_patch and "+second line" in apply_patch
    # a result without summary text still says something before it is expanded
    summary = get_item.split("</summary>")[0]
    assert wid in summary and "Write the report" in summary


def test_pretty_input_cuts_long_input_with_a_marker() -> None:
    from holon_nb.render.human import pretty_input

    assert pretty_input({"cmd": "echo hi", "yield_time_ms": 0, "items": [1]}) == (
        "cmd: echo hi\nyield_time_ms: 0\nitems:\n    [\n      1\n    ]"
    )
    text = pretty_input({"script": "\n".join(f"line {i}" for i in range(2000))}, limit=500)
    head, marker = text.rsplit("\n", 1)
    assert len(head) <= 500 and head.endswith(tuple("0123456789"))  # cut at a line end
    assert marker.startswith("[… ") and marker.endswith(" more characters not shown]")
