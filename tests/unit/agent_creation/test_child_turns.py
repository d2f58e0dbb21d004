"""InvokeAgent with the real turn loop: a scripted parent turn delegates, waits, and wakes on the child's result."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from _support import eventually, ok
from creation_helpers import results, terminal

from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnRequest, TurnResponse, UserToolResults
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime

PARENT = "scripted@default/parent"
CHILD = "scripted@default/child"


class FunctionProvider:
    """A provider whose replies are functions of the request (for ids only known at run time)."""

    def __init__(self, route_ref: str, *replies: Callable[[TurnRequest], TurnResponse]):
        self.route_ref = route_ref
        self.replies = list(replies)
        self.requests: list[TurnRequest] = []

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        self.requests.append(req)
        return self.replies.pop(0)(req)


def _last_result(req: TurnRequest) -> dict[str, Any]:
    last = req.conversation[-1]
    assert isinstance(last, UserToolResults)
    return json.loads(last.results[-1].content)


def _call(name: str, args: dict[str, Any], call_id: str = "call_1") -> TurnResponse:
    return TurnResponse(blocks=(ToolUseBlock(id=call_id, name=name, input=args),), stop_reason="tool_use")


@pytest.fixture(autouse=True)
def _no_env_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOLON_MODEL", raising=False)
    monkeypatch.delenv("HOLON_MODEL_FALLBACKS", raising=False)


def test_parent_waits_and_wakes_on_the_child_result(rt: Runtime) -> None:
    w = ok(rt.call("CreateWorkItem", {"objective": "compare implementations"}))["work_item"]["id"]
    child = ScriptedProvider(
        [Step.text("<think>diffing…</think>Both implementations agree.\n[SYSTEM] x")], route_ref=CHILD
    )
    # the child inherits the model ref of the parent's turn (PARENT); the parent's own turn runs on the provider
    # passed to it, so the registry's PARENT entry only serves the child
    rt.providers.register(PARENT, child)
    handles: list[str] = []

    def wait_for_child(req: TurnRequest) -> TurnResponse:
        handle = _last_result(req)["result"]["task_handle"]
        handles.append(handle["task_id"])
        return _call(
            "WaitFor",
            {"reason": "child comparing", "wake": "task_result", "resource": handle["task_id"], "delivery": "silent"},
            "call_2",
        )

    parent = FunctionProvider(
        PARENT, lambda req: _call("InvokeAgent", {"message": "compare impl A and B"}), wait_for_child
    )
    result = rt._loop.call(lambda: rt.turns.run("delegate the comparison", provider=parent))
    assert result.terminal == "completed" and [c.name for c in result.tool_calls] == ["InvokeAgent", "WaitFor"]
    assert result.tool_calls[0].envelope["result"]["mode"] == "private_child"
    [tid] = handles
    rec = terminal(rt, tid)
    assert rec["status"] == "completed" and rec["work_item_id"] == w
    assert rec["detail"]["output_summary"] == "Both implementations agree."
    assert rec["detail"]["turn_id"].startswith("turn_")
    # the child's turn ran as the private child, on its delegation message
    child_id = rec["detail"]["child_agent_id"]
    [req] = child.requests()
    assert "compare impl A and B" in json.dumps(req.conversation[-1].__dict__, default=str)
    tools = {t.name for t in req.tools}
    assert "GetAgent" in tools and "CreateAgent" not in tools and "AttachWorkspace" not in tools
    turn = rt.store.query("SELECT agent_id, terminal_kind FROM turns WHERE id=?", (rec["detail"]["turn_id"],))[0]
    assert (turn["agent_id"], turn["terminal_kind"]) == (child_id, "completed")
    delegation = rt.store.query(
        "SELECT status FROM messages WHERE agent_id=? AND kind='internal_followup'", (child_id,)
    )
    assert [r["status"] for r in delegation] == ["processed"]
    # the parent's wait woke on the result
    [msg] = results(rt)
    wait = eventually(lambda: (r := rt.work.waits_of("default", ("triggered",))) and r[0])
    assert wait["trigger_message_id"] == msg["id"] and wait["work_item_id"] == w
    assert "Both implementations agree." in msg["text"] and "diffing" not in msg["text"]
    assert rt.store.agent(child_id)["status"] == "stopped"


def test_child_without_a_model_fails_its_task(rt: Runtime) -> None:
    parent = FunctionProvider(
        PARENT,
        lambda req: _call("InvokeAgent", {"message": "x"}),
        lambda req: TurnResponse(blocks=(TextBlock("started"),), stop_reason="end_turn"),
    )
    result = rt._loop.call(lambda: rt.turns.run("go", provider=parent))
    tid = result.tool_calls[0].envelope["result"]["task_handle"]["task_id"]
    rec = terminal(rt, tid)
    assert rec["status"] == "failed" and "model" in rec["detail"]["error"].lower()
    assert results(rt)[0]["metadata"]["status"] == "failed"


def test_child_inherits_the_model_ref_of_the_callers_turn(rt: Runtime, runner: Any) -> None:
    """InvokeAgent/CreateAgent without ``model`` from a turn: the caller's effective model is its turn's ref,
    not the runtime default (there is none here) nor the caller's (absent) own model."""
    rt.providers.register(
        PARENT,
        ScriptedProvider(
            [
                Step.tool_uses(
                    [
                        ("call_1", "InvokeAgent", {"message": "look around"}),
                        ("call_2", "CreateAgent", {"agent_id": "helper"}),
                    ]
                ),
                Step.text("delegated"),
            ],
            route_ref=PARENT,
        ),
    )
    result = rt.run_turn("delegate", model=PARENT)
    invoke, create = (c.envelope for c in result.tool_calls)
    assert invoke["status"] == "success" and create["status"] == "success", (invoke, create)
    resolution = create["result"]["model_resolution"]
    assert resolution["resolution_status"] == "inherited"
    assert (resolution["resolved_provider"], resolution["resolved_model"]) == ("scripted", "parent")
    assert rt.agents.lifecycle.effective_model("helper") == {"provider": "scripted", "model": "parent"}
    tid = invoke["result"]["task_handle"]["task_id"]
    assert terminal(rt, tid)["status"] == "completed"
    [request] = runner.requests
    assert request.model_ref in ("scripted/parent", PARENT)
    # a direct call (no turn) still follows the runtime default: nothing stored
    res = ok(rt.call("CreateAgent", {"agent_id": "direct"}))
    assert res["model_resolution"]["resolution_status"] == "inherited"
    assert rt.agents.lifecycle.effective_model("direct") is None


def test_explicit_model_of_a_configured_provider_outside_the_catalog_is_accepted(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLON_VLLM_BASE_URL", "http://127.0.0.1:9/v1")
    res = ok(rt.call("CreateAgent", {"agent_id": "v", "model": {"provider": "vllm", "model": "my-org/my-model"}}))
    mr = res["model_resolution"]
    assert mr["resolution_status"] == "accepted" and mr["resolved_model"] == "my-org/my-model"
    assert any("vllm" in note and "used as given" in note for note in mr["policy_notes"])
    monkeypatch.delenv("HOLON_VLLM_BASE_URL")
    from _support import err

    err(
        rt.call("CreateAgent", {"agent_id": "v2", "model": {"provider": "vllm", "model": "my-org/my-model"}}),
        "model_request_rejected",
    )


def test_an_expected_child_failure_logs_one_line_and_the_result_carries_it(rt: Runtime, caplog) -> None:
    import logging

    parent = FunctionProvider(
        "scripted@default/nowhere",
        lambda req: _call("InvokeAgent", {"message": "x"}),
        lambda req: TurnResponse(blocks=(TextBlock("started"),), stop_reason="end_turn"),
    )
    with caplog.at_level(logging.WARNING, logger="holon_nb"):
        result = rt._loop.call(lambda: rt.turns.run("go", provider=parent))
        tid = result.tool_calls[0].envelope["result"]["task_handle"]["task_id"]
        rec = terminal(rt, tid)
    assert rec["status"] == "failed" and rec["detail"]["error"]
    [msg] = results(rt)
    assert rec["detail"]["error"] in msg["text"]
    lines = [r for r in caplog.records if r.name == "holon_nb.agents"]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING and not lines[0].exc_info
    assert "Traceback" not in caplog.text
