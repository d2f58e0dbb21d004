"""Durable conversations (issue 5 item 7, D7): turns, transcripts and totals survive a restart."""

from __future__ import annotations

from pathlib import Path

from turn_helpers import REF, turn

from holon_nb.providers.base import AssistantBlocks, ToolUseBlock, UserText, UserToolResults
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.core._store import now_rfc3339


def test_a_restarted_runtime_continues_the_agents_conversation(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as rt:
        first, _ = turn(
            rt,
            Step.tool_use("call_1", "GetAgent", {}).with_usage(10, 5),
            Step.text("The code word is heron.").with_usage(7, 3),
            message="remember: heron",
        )
        assert first.terminal == "completed" and first.turn_index == 1
    with Runtime(home=home, workspace=workspace) as rt:
        p = ScriptedProvider([Step.text("heron").with_usage(20, 1)])
        rt.providers.register(REF, p)
        second = rt.run_turn("what was the code word?", model=REF)
        conv = p.requests()[0].conversation
        assert isinstance(conv[0], UserText) and conv[0].text == "remember: heron"
        assert isinstance(conv[1], AssistantBlocks) and conv[1].blocks[0].name == "GetAgent"
        assert isinstance(conv[2], UserToolResults) and conv[2].results[0].tool_use_id == "call_1"
        assert isinstance(conv[3], AssistantBlocks) and conv[3].blocks[0].text == "The code word is heron."
        assert conv[-1] == UserText("what was the code word?") and len(conv) == 5
        assert second.turn_index == 2
        assert second.totals == {
            "total_input_tokens": 37,
            "total_output_tokens": 9,
            "total_model_rounds": 3,
            "turns": 2,
        }
        turns = rt.conversations.turns("default")
        assert [(t["turn_index"], t["terminal_kind"]) for t in turns] == [(1, "completed"), (2, "completed")]


def test_agents_have_separate_conversations(rt: Runtime) -> None:
    turn(rt, Step.text("hi default"))
    p = ScriptedProvider([Step.text("hi other")])
    rt.providers.register(REF, p)
    rt.run_turn("hello", agent="other", model=REF)
    assert p.requests()[0].conversation == (UserText("hello"),)
    assert rt.store.agent("other")["profile"] == "public_named"


def test_a_turn_left_running_by_a_dead_kernel_is_settled_aborted(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as rt:
        conversations = rt.conversations
        with rt.store.tx() as db:
            conversations.begin(
                db,
                turn_id="turn_000000000000001",
                agent_id="default",
                model_ref=REF,
                source_message_id=None,
                now=now_rfc3339(),
            )
            conversations.append(
                db,
                agent_id="default",
                turn_id="turn_000000000000001",
                round=1,
                messages=[(UserText("go"), None), (AssistantBlocks((ToolUseBlock("c9", "GetAgent", {}),)), None)],
                now=now_rfc3339(),
            )
    with Runtime(home=home, workspace=workspace) as rt:
        row = rt.conversations.turn("turn_000000000000001")
        assert (row["status"], row["terminal_kind"], row["terminal_reason"]) == (
            "settled",
            "aborted",
            "runtime_restarted",
        )
        # the unanswered call of the dead turn is answered when the history is replayed
        history = rt.conversations.history("default")
        assert isinstance(history[-1], UserToolResults) and history[-1].results[0].tool_use_id == "c9"
        assert history[-1].results[0].is_error is True
        r, p = turn(rt, Step.text("fine"))
        assert r.turn_index == 2 and len(p.requests()[0].conversation) == 4


def test_transcripts_are_scrubbed_of_secrets(rt: Runtime, monkeypatch) -> None:
    monkeypatch.setenv("DEMO_API_KEY", "sk-test-0123456789")
    r, p = turn(rt, Step.tool_use("c1", "ExecCommand", {"cmd": "echo $DEMO_API_KEY"}), Step.text("printed"))
    call = r.rounds[0].tool_calls[0]
    assert "sk-test-0123456789" not in call.receipt and "[redacted]" in call.receipt
    assert p.requests()[1].conversation[-1].results[0].content == call.receipt
    rows = rt.conversations.transcript("default", r.turn_id)
    assert "sk-test-0123456789" not in str(rows)
    # the canonical envelope keeps the input as given (D6)
    assert call.input == {"cmd": "echo $DEMO_API_KEY"}


def test_final_text_is_stored_scrubbed(rt: Runtime, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MY_TOKEN", "tok-abcdefghijkl")
    rt.providers.register(REF, ScriptedProvider([Step.text("the token is tok-abcdefghijkl")]))
    r = rt.run_turn("what is the token?", model=REF)
    assert r.terminal == "completed"
    row = rt.conversations.turn(r.turn_id)
    assert row["final_text"] == "the token is [redacted]"
    raw = rt.store.query("SELECT COUNT(*) FROM turns WHERE final_text LIKE '%tok-abcdefghijkl%'")[0][0]
    assert raw == 0


def test_totals_count_turns_and_get_agent_reports_them(rt: Runtime) -> None:
    assert rt.conversations.totals("default")["turns"] == 0
    rt.providers.register(
        REF,
        ScriptedProvider(
            [
                Step.text("one").with_usage(10, 2),
                Step.tool_use("c1", "GetAgent", {}).with_usage(5, 1),
                Step.text("two").with_usage(4, 4),
            ]
        ),
    )
    rt.run_turn("first", model=REF)
    second = rt.run_turn("second", model=REF)
    seen = second.tool_calls[0].envelope["result"]["agent"]  # GetAgent inside the second turn
    assert seen["agent"]["turn_index"] == 2
    assert seen["token_usage"] == {"input_tokens": 15, "output_tokens": 3, "total_tokens": 18}
    assert rt.conversations.totals("default") == {
        "total_input_tokens": 19,
        "total_output_tokens": 7,
        "total_model_rounds": 3,
        "turns": 2,
    }
    agent = rt.call("GetAgent", {}).result["agent"]
    assert agent["agent"]["turn_index"] == 2
    assert agent["token_usage"] == {"input_tokens": 19, "output_tokens": 7, "total_tokens": 26}
