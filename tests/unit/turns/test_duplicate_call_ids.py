"""A response that repeats a tool-call id (some OpenAI-compatible servers send ``call_0`` for every call): each call
is executed once and answered once, under an id of its own, and the next request is one a provider accepts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from turn_helpers import turn
from unit.providers.payloads import chat_calls, chat_text
from unit.providers.servers import Reply, WireServer

from holon_nb.providers.base import TextBlock, ToolUseBlock
from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.turns._calls import unique_call_ids


def test_repeated_ids_get_their_own_and_nothing_else_changes() -> None:
    blocks = (
        TextBlock("two calls"),
        ToolUseBlock("c", "A", {}),
        ToolUseBlock("c", "B", {}),
        ToolUseBlock("c_2", "C", {}),
        ToolUseBlock("c", "D", {}),
    )
    out, renamed = unique_call_ids(blocks)
    assert [b.id for b in out if isinstance(b, ToolUseBlock)] == ["c", "c_3", "c_2", "c_4"]
    assert [b.name for b in out if isinstance(b, ToolUseBlock)] == ["A", "B", "C", "D"]
    assert renamed == [("c", "c_3"), ("c", "c_4")] and out[0] == blocks[0]
    same = (ToolUseBlock("a", "A", {}), ToolUseBlock("b", "B", {}))
    assert unique_call_ids(same) == (same, [])


def test_a_scripted_round_with_one_id_twice_runs_both_calls_once(rt: Runtime) -> None:
    r, provider = turn(
        rt,
        Step.tool_uses(
            [("call_0", "ExecCommand", {"cmd": "echo first"}), ("call_0", "ExecCommand", {"cmd": "echo second"})]
        ),
        Step.text("both ran"),
    )
    assert r.terminal == "completed" and r.final_text == "both ran"
    calls = r.rounds[0].tool_calls
    assert [c.tool_use_id for c in calls] == ["call_0", "call_0_2"]
    assert "first" in calls[0].receipt and "second" in calls[1].receipt
    assert rt.store.query("SELECT COUNT(*) FROM tool_executions WHERE tool_name = 'ExecCommand'")[0][0] == 2
    # the second request answers each id exactly once, after an assistant message that names the same ids
    history = provider.requests()[1].conversation
    used = [b.id for m in history for b in getattr(m, "blocks", ()) if isinstance(b, ToolUseBlock)]
    answered = [res.tool_use_id for m in history for res in getattr(m, "results", ())]
    assert used == ["call_0", "call_0_2"] and answered == ["call_0", "call_0_2"]


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer() as srv:
        yield srv


def test_a_chat_server_repeating_an_id_gets_unique_tool_messages_back(
    rt: Runtime, wire: WireServer, monkeypatch
) -> None:
    monkeypatch.setenv("HOLON_VLLM_BASE_URL", wire.base_url + "/v1")
    wire.script(
        Reply(
            json=chat_calls(
                [
                    {"id": "call_0", "name": "ExecCommand", "arguments": '{"cmd": "echo a"}'},
                    {"id": "call_0", "name": "ExecCommand", "arguments": '{"cmd": "echo b"}'},
                ]
            )
        ),
        Reply(json=chat_text("done")),
    )
    r = rt.run_turn("go", model="vllm/some-model")
    assert r.terminal == "completed" and r.final_text == "done"
    messages = wire.requests[1].json["messages"]
    (assistant,) = [m for m in messages if m["role"] == "assistant"]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_0", "call_0_2"]
    tool_messages = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_0_2"]
    assert "stdout:\nb" in tool_messages[1]["content"] and "stdout:\na" in tool_messages[0]["content"]
