"""Turn-loop acceptance cases 1-8, 15-18 and 34 (turn-loop spec §5) with the ScriptedProvider."""

from __future__ import annotations

import json
from pathlib import Path

from turn_helpers import REF, count, execution_status, receipt, turn

from holon_nb.providers.base import (
    AssistantBlocks,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserText,
    UserToolResults,
)
from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime
from holon_nb.tools._registry import REGISTRY
from holon_nb.tools._spec import Family, ToolSpec
from holon_nb.tools.builtin._work_inputs import Strict
from holon_nb.tools.builtin.results._base import ResultModel


def test_case1_text_only_turn_completes(rt: Runtime) -> None:
    r, p = turn(rt, Step.text("done"))
    assert p.request_count() == 1
    assert (r.terminal, r.final_text, r.reason) == ("completed", "done", "end_turn")
    assert r.totals["total_model_rounds"] == 1
    assert rt.conversations.turn(r.turn_id)["terminal_kind"] == "completed"


def test_case2_tool_result_goes_back_and_usage_adds_up(rt: Runtime) -> None:
    r, p = turn(rt, Step.tool_use("call_1", "GetAgent", {}).with_usage(10, 5), Step.text("all good").with_usage(7, 3))
    assert p.request_count() == 2
    last = p.requests()[1].conversation[-1]
    assert isinstance(last, UserToolResults) and len(last.results) == 1
    block = last.results[0]
    assert block.tool_use_id == "call_1" and block.is_error is False
    assert json.loads(block.content)["tool_name"] == "GetAgent"
    # the model got exactly the receipt Runtime._finish_call rendered
    call = r.rounds[0].tool_calls[0]
    assert block.content == call.receipt and call.envelope["status"] == "success"
    assert r.totals == {"total_input_tokens": 17, "total_output_tokens": 8, "total_model_rounds": 2, "turns": 1}
    assert (r.usage.input_tokens, r.usage.output_tokens, len(r.rounds)) == (17, 8, 2)
    # the request carried the assistant round it answers, and every advertised tool
    assert isinstance(p.requests()[1].conversation[-2], AssistantBlocks)
    names = {t.name for t in p.requests()[0].tools}
    assert {"GetAgent", "ExecCommand", "WaitFor"} <= names and "AgentGet" not in names and "TaskList" not in names


def test_case3_invalid_input_is_an_error_result_and_the_loop_goes_on(rt: Runtime) -> None:
    args = {"reason": "x", "wake": "operator_input", "delivery": "silent", "colour": "red"}
    r, p = turn(rt, Step.tool_use("call_1", "WaitFor", args), Step.text("sorry"))
    call = r.rounds[0].tool_calls[0]
    assert call.is_error is True
    rec = receipt(call)
    assert sorted(rec) == ["details", "hint", "kind", "message", "ok", "retryable", "tool_name"]
    assert rec["kind"] == "invalid_tool_input" and rec["ok"] is False
    assert "colour" in rec["details"]["parse_error"]
    assert count(rt, "SELECT COUNT(*) FROM waits") == 0
    assert p.request_count() == 2 and r.terminal == "completed"
    assert p.requests()[1].conversation[-1].results[0].is_error is True


def test_case4_unadvertised_tools_are_refused_for_the_round(rt: Runtime) -> None:
    r, p = turn(
        rt,
        Step.tool_use("c1", "DeleteEverything", {}),
        Step.tool_use("c2", "CreateExternalTrigger", {}),
        Step.tool_use("c3", "AgentGet", {}),
        Step.text("ok"),
    )
    assert p.request_count() == 4 and r.terminal == "completed"
    for rnd, name in zip(r.rounds, ("DeleteEverything", "CreateExternalTrigger", "AgentGet"), strict=False):
        call = rnd.tool_calls[0]
        rec = receipt(call)
        assert rec["kind"] == "tool_not_exposed_for_round" and rec["retryable"] is False
        assert rec["details"]["tool_name"] == name
        assert execution_status(rt, call.execution_id) == "error"  # a failed execution record is written


def test_case5_case6_malformed_arguments_reach_the_model_as_invalid_input(rt: Runtime) -> None:
    # the transports wrap unparseable arguments as {"_raw": …} (§1.6); the loop must answer and go on
    raw = {"_raw": '{"cmd": '}
    r, p = turn(rt, Step.tool_use("call_1", "ExecCommand", raw), Step.text("retrying"))
    rec = receipt(r.rounds[0].tool_calls[0])
    assert rec["kind"] == "invalid_tool_input" and "_raw" in rec["details"]["parse_error"]
    assert p.request_count() == 2 and r.terminal == "completed"
    resent = p.requests()[1].conversation[-2]
    assert isinstance(resent, AssistantBlocks) and resent.blocks[0].input == raw  # normalized input re-sent


def test_case7_calls_of_one_response_run_in_order_one_at_a_time(rt: Runtime, workspace: Path) -> None:
    calls = [
        (f"c{i}", "ExecCommand", {"cmd": f"echo s{i} >> order.log; sleep 0.2; echo e{i} >> order.log"})
        for i in (1, 2, 3)
    ]
    r, p = turn(rt, Step.tool_uses(calls), Step.text("done"))
    assert (workspace / "order.log").read_text().split() == ["s1", "e1", "s2", "e2", "s3", "e3"]
    results = p.requests()[1].conversation[-1]
    assert isinstance(results, UserToolResults)
    assert [b.tool_use_id for b in results.results] == ["c1", "c2", "c3"]
    assert all(not b.is_error for b in results.results)


def test_case8_string_scalars_coerce_and_result_fields_are_refused(rt: Runtime) -> None:
    r, _ = turn(
        rt,
        Step.tool_use("c1", "ExecCommand", {"cmd": "ls", "yield_time_ms": "500"}),
        Step.tool_use("c2", "ExecCommand", {"cmd": "ls", "status": "running"}),
        Step.text("ok"),
    )
    first, second = r.rounds[0].tool_calls[0], r.rounds[1].tool_calls[0]
    assert first.envelope["status"] == "success", first.envelope
    assert receipt(second)["kind"] == "invalid_tool_input"
    assert "status" in receipt(second)["details"]["parse_error"]


def test_case15_max_rounds_caps_the_turn(rt: Runtime) -> None:
    steps = [Step.tool_use(f"c{i}", "GetAgent", {}) for i in range(5)]
    r, p = turn(rt, *steps, max_rounds=2)
    assert p.request_count() == 2
    assert r.terminal == "aborted" and r.reason == "max_tool_rounds"
    assert r.final_text == "Stopped after reaching the maximum tool loop depth (2)."


def test_case16_output_limit_recovery_twice_then_completed(rt: Runtime) -> None:
    r, p = turn(rt, Step.text("A", "max_tokens"), Step.text("B", "max_tokens"), Step.text("C", "max_tokens"))
    assert p.request_count() == 3
    assert r.terminal == "completed" and r.final_text == "A\n\nB\n\nC"
    prompt = p.requests()[1].conversation[-1]
    assert isinstance(prompt, UserText) and "output limit" in prompt.text
    assert rt.conversations.transcript("default", r.turn_id)[2]["reason"] == "max_output_tokens"


def test_case17_truncated_mutation_is_not_executed(rt: Runtime, workspace: Path) -> None:
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    step = Step.response([ToolUseBlock("c1", "ApplyPatch", {"patch": patch})], stop_reason="max_tokens")
    r, p = turn(rt, step, Step.text("resending later"))
    rec = receipt(r.rounds[0].tool_calls[0])
    assert rec["kind"] == "truncated_mutation_tool_call" and rec["retryable"] is True
    assert rec["details"] == {"tool_name": "ApplyPatch", "stop_reason": "max_tokens", "round": 1}
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert p.request_count() == 2 and r.terminal == "completed"


class _BigInput(Strict):
    pass


class BigOutputResult(ResultModel):
    """BigOutput's result: one long text."""

    text: str


async def _big(args: _BigInput, ctx: object) -> dict:
    return {"text": "x" * 40_000, "summary_text": "s" * 1000}


def test_case18_oversized_receipt_becomes_the_truncation_receipt(tmp_path: Path, workspace: Path) -> None:
    big = ToolSpec(
        name="BigOutput",
        family=Family.CORE_AGENT,
        input_model=_BigInput,
        handler=_big,
        result_name="BigOutputResult",
        output_model=BigOutputResult,
        description_name="GetAgent",
    )
    with Runtime(home=tmp_path / "home", workspace=workspace, registry=REGISTRY.with_specs(big)) as rt:
        rt.turns.tool_output_budget_tokens = 8000
        r, p = turn(rt, Step.tool_use("c1", "BigOutput", {}), Step.text("ok"))
        call = r.rounds[0].tool_calls[0]
        rec = receipt(call)
        assert rec["provider_projection_truncated"] is True
        assert rec["output_ref"] == f"tool_execution:{call.execution_id}:output"
        assert len(rec["summary_text"]) <= 512 and rec["summary_text"].endswith("…")
        assert p.requests()[1].conversation[-1].results[0].content == call.receipt


def test_case34_exhausted_script_aborts_the_turn(rt: Runtime) -> None:
    r, p = turn(rt, Step.tool_use("c1", "GetAgent", {}))
    assert p.request_count() == 2
    assert r.terminal == "aborted" and r.reason == "provider_error"
    assert "scripted agent provider exhausted after 2 request(s)" in r.error
    assert rt.conversations.turn(r.turn_id)["terminal_kind"] == "aborted"


def test_every_call_of_a_round_is_answered_once_in_call_order(rt: Runtime) -> None:
    step = Step.response(
        [
            TextBlock("checking"),
            ToolUseBlock("a", "GetAgent", {}),
            ToolUseBlock("b", "Nope", {}),
            ToolUseBlock("c", "ListWorkItems", {}),
        ]
    )
    r, p = turn(rt, step, Step.text("done"))
    results = p.requests()[1].conversation[-1].results
    assert [(x.tool_use_id, x.is_error) for x in results] == [("a", False), ("b", True), ("c", False)]
    assert all(isinstance(x, ToolResultBlock) for x in results)
    assert r.final_text == "done"  # narration of tool rounds is not the final text
    assert REF == r.model_ref


def test_agents_case31_private_child_is_not_offered_authority_expanding_tools(rt: Runtime, tmp_path: Path) -> None:
    """Agents spec §7 case 31, in a model round: not advertised, not executed, no binding added."""
    rt.store.ensure_agent("child_31", "private_child", parent_id="default")
    other = tmp_path / "elsewhere"
    other.mkdir()
    before = rt.call("GetWorkspaceState", {}, agent="child_31").result["attached_workspace_ids"]
    r, p = turn(rt, Step.tool_use("c1", "AttachWorkspace", {"path": str(other)}), Step.text("ok"), agent="child_31")
    offered = {t.name for t in p.requests()[0].tools}
    assert "AttachWorkspace" not in offered and "ExecCommand" in offered
    rec = receipt(r.rounds[0].tool_calls[0])
    assert rec["kind"] == "tool_not_exposed_for_round" and rec["details"]["tool_name"] == "AttachWorkspace"
    assert rt.call("GetWorkspaceState", {}, agent="child_31").result["attached_workspace_ids"] == before
    assert r.terminal == "completed"
