"""Turn control and seams: events (§1.11), cancellation, injectable ids, fallback deferral, the prompt budget,
argument errors, approvals."""

from __future__ import annotations

import functools
import itertools

import anyio
import pytest
from turn_helpers import REF, hooked, receipt, script, turn

from holon_nb.providers._refs import ModelRefError
from holon_nb.providers.base import ProviderTransportError, TextBlock, TurnRequest, TurnResponse
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime, RuntimeSettings
from holon_nb.runtime.turns._records import TurnHooks


def test_events_follow_the_turn(rt: Runtime) -> None:
    events: list = []
    unsubscribe = rt.subscribe(lambda e: events.append(e) if e.data.get("turn_id") else None)
    try:
        r, _ = turn(rt, Step.tool_use("call_1", "GetAgent", {}).with_usage(10, 5), Step.text("done").with_usage(7, 3))
    finally:
        unsubscribe()
    kinds = [e.kind for e in events]
    assert kinds == [
        "turn_started",
        "lineage_selected",
        "round_started",
        "provider_attempt",
        "assistant_round",
        "tool_call",
        "tool_result",
        "round_started",
        "provider_attempt",
        "assistant_round",
        "turn_terminal",
    ]
    assert all(e.data["turn_id"] == r.turn_id for e in events)
    result = next(e for e in events if e.kind == "tool_result").data
    assert result["receipt"] == r.rounds[0].tool_calls[0].receipt and result["is_error"] is False
    end = events[-1].data
    assert end["terminal"] == "completed" and end["final_text"] == "done"
    assert end["usage_totals"]["total_model_rounds"] == 2
    assert next(e for e in events if e.kind == "lineage_selected").data["tools_fingerprint"].startswith("sha256:")


def test_cancel_stops_before_the_next_call_and_round(rt: Runtime) -> None:
    async def cancel(req: TurnRequest) -> None:
        assert rt.turns.cancel() is True

    hooked(
        rt,
        Step.tool_uses([("c1", "ExecCommand", {"cmd": "touch nope"}), ("c2", "GetAgent", {})]),
        Step.text("never"),
        before={1: cancel},
    )
    r = rt.run_turn("go", model=REF)
    assert r.terminal == "aborted" and r.reason == "cancelled"
    assert [c.status for c in r.rounds[0].tool_calls] == ["not_executed", "not_executed"]
    assert receipt(r.rounds[0].tool_calls[0])["kind"] == "turn_cancelled"
    assert not (rt.workspace / "nope").exists()
    assert rt.turns.cancel() is False  # nothing runs any more


def test_runtime_cancellation_settles_the_turn_aborted(rt: Runtime) -> None:
    holder: dict = {}

    class Blocking:
        route_ref = "blocking@default/m"

        async def complete_turn(self, req: TurnRequest) -> TurnResponse:
            holder["scope"].cancel()  # like Ctrl-C in the kernel: the call's cancel scope is cancelled
            await anyio.sleep(30)
            raise AssertionError("not reached")

    async def go() -> None:
        with anyio.CancelScope() as scope:
            holder["scope"] = scope
            await rt.turns.run("go", provider=Blocking())

    rt._loop.call(go)
    turns = rt.conversations.turns("default")
    assert (turns[-1]["terminal_kind"], turns[-1]["terminal_reason"]) == ("aborted", "cancelled")
    assert rt.turns.active() is None


def test_ids_come_from_the_injectable_generator(rt: Runtime) -> None:
    counter = itertools.count(1)
    hooks = TurnHooks(new_id=lambda prefix: f"{prefix}_{next(counter):015x}")
    script(rt, Step.tool_use("call_1", "GetAgent", {}), Step.text("done"))
    r = rt._loop.call(functools.partial(rt.turns.run, "go", model=REF, hooks=hooks))
    assert r.turn_id == "turn_000000000000001"
    assert r.rounds[0].tool_calls[0].execution_id.startswith("tool_00000000000000")
    assert rt.store.execution(r.rounds[0].tool_calls[0].execution_id) is not None


def test_tool_runner_can_be_wrapped(rt: Runtime) -> None:
    seen: list = []

    def wrap(run):  # what a cassette does: see each call, answer with the (envelope, receipt, is_error) triple
        async def execute(call):
            seen.append((call.id, call.name, call.round, call.stop_reason))
            outcome = await run(call)
            envelope, receipt_text, is_error = outcome
            return envelope, receipt_text, is_error

        return execute

    script(rt, Step.tool_use("call_1", "GetAgent", {}), Step.text("done"))
    r = rt._loop.call(functools.partial(rt.turns.run, "go", model=REF, hooks=TurnHooks(wrap_tool_executor=wrap)))
    assert seen == [("call_1", "GetAgent", 1, "tool_use")]
    assert r.terminal == "completed" and r.rounds[0].tool_calls[0].envelope["tool_name"] == "GetAgent"


class _Failing:
    def __init__(self, ref: str):
        self.route_ref = ref
        self.calls = 0

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        self.calls += 1
        raise ProviderTransportError("server_error", "upstream busy", status=500)


class _Answering:
    def __init__(self, ref: str):
        self.route_ref = ref
        self.requests: list[TurnRequest] = []

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        self.requests.append(req)
        return TurnResponse(blocks=(TextBlock("fallback here"),), stop_reason="end_turn")


def test_failed_lineage_defers_to_the_fallback_and_the_next_turn_starts_there(rt: Runtime, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_MODEL_FALLBACKS", "acme@default/m2")
    head, fallback = _Failing("acme@default/m1"), _Answering("acme@default/m2")
    rt.providers.register("acme@default/m1", head)
    rt.providers.register("acme@default/m2", fallback)

    async def no_sleep(seconds: float) -> None:
        pass

    rt.turns.hooks.sleep = no_sleep
    r = rt.run_turn("go", model="acme@default/m1")
    assert head.calls == 3 and fallback.requests == []  # the fallback is never called in the same turn
    assert r.terminal == "deferred_to_fallback"
    assert "retries_exhausted after 3 attempts (server_error, status=500)" in r.error
    recovery = [
        m for m in rt.work.queued("default") if (m["origin"] or {}).get("subsystem") == "model_lineage_recovery"
    ]
    assert len(recovery) == 1
    assert recovery[0]["metadata"]["provider_recovery"]["fallback_model_ref"] == "acme@default/m2"
    again = rt.run_turn("go on", model="acme@default/m1")
    assert again.terminal == "completed" and again.final_text == "fallback here"
    assert "requested_model=acme/m1" in fallback.requests[0].prompt_frame.system_prompt
    assert rt.work.queued("default") == []


def test_context_length_exceeded_aborts_with_the_notice(rt: Runtime) -> None:
    class TooLong:
        route_ref = "acme@default/small"

        async def complete_turn(self, req: TurnRequest) -> TurnResponse:
            raise ProviderTransportError("contract_error", "too long", status=400, code="context_length_exceeded")

    r = rt._loop.call(functools.partial(rt.turns.run, "go", provider=TooLong()))
    assert r.terminal == "aborted" and r.reason == "context_length_exceeded"
    assert "context_length_exceeded" in r.final_text


def test_prompt_budget_drops_old_turns_then_reports_baseline_over_budget(rt: Runtime) -> None:
    from holon_nb.runtime.turns._requests import estimate as _estimate
    from holon_nb.tools._spec import Profile

    turn(rt, Step.text("old answer " * 400), message="old question " * 400)  # ≈ 2,300 estimated tokens
    base = _estimate(list(rt.turns.advertised_tools(Profile.PUBLIC_NAMED))) + 200
    rt.turns.prompt_budget_tokens = base + 5_000
    r, p = turn(rt, Step.text("ok"), message="new question")
    assert r.terminal == "completed" and len(p.requests()[0].conversation) == 3  # the old turn still fits
    rt.turns.prompt_budget_tokens = base + 500
    r, p = turn(rt, Step.text("ok"), message="newer question")
    assert [m.type for m in p.requests()[0].conversation] == ["user_text", "assistant_blocks", "user_text"]
    assert p.requests()[0].conversation[0].text == "new question"  # only the newest whole turn kept
    rt.turns.prompt_budget_tokens = 1_000  # not even this turn's own messages and tools fit
    r, p = turn(rt, Step.text("never"))
    assert r.terminal == "baseline_over_budget" and p.request_count() == 0


def test_run_turn_argument_errors(rt: Runtime, monkeypatch) -> None:
    monkeypatch.delenv("HOLON_MODEL", raising=False)
    with pytest.raises(ModelRefError):
        rt.run_turn("go")
    script(rt, Step.text("x"))
    with pytest.raises(ValueError):
        rt.run_turn("go", model=REF, max_rounds=0)
    with pytest.raises(ValueError):
        rt.run_turn("go", agent="../evil", model=REF)
    with pytest.raises(TypeError):
        rt.run_turn(42, model=REF)  # type: ignore[arg-type]
    assert rt.conversations.turns("default") == []


def test_a_second_turn_of_the_same_agent_is_refused_while_one_runs(rt: Runtime) -> None:
    errors: list = []

    async def nested(req: TurnRequest) -> None:
        try:
            await rt.turns.run("again", model=REF)
        except RuntimeError as exc:
            errors.append(str(exc))

    hooked(rt, Step.text("done"), before={1: nested})
    r = rt.run_turn("go", model=REF)
    assert r.terminal == "completed" and "already running" in errors[0]


def test_default_provider_and_holon_model(rt: Runtime, monkeypatch) -> None:
    monkeypatch.delenv("HOLON_MODEL", raising=False)
    p = ScriptedProvider([Step.text("via default"), Step.text("via env")])
    rt.providers.register("mine@default/m", p, default=True)
    assert rt.run_turn("a").final_text == "via default"
    monkeypatch.setenv("HOLON_MODEL", "mine@default/m")
    assert rt.run_turn("b").model_ref == "mine@default/m"


def test_approval_denial_is_a_result_and_unadvertised_calls_are_not_asked(tmp_path, workspace) -> None:
    with Runtime(home=tmp_path / "h", workspace=workspace, settings=RuntimeSettings(approval="always")) as rt:
        asked: list = []
        rt.approvals.asker = lambda req: asked.append(req.tool_name) or "deny"
        r, p = turn(rt, Step.tool_uses([("c1", "GetAgent", {}), ("c2", "CreateExternalTrigger", {})]), Step.text("ok"))
        assert asked == ["GetAgent"]
        assert receipt(r.rounds[0].tool_calls[0])["kind"] == "approval_denied"
        assert receipt(r.rounds[0].tool_calls[1])["kind"] == "tool_not_exposed_for_round"
        assert r.terminal == "completed"


def _has_reminder(req: TurnRequest) -> bool:
    return any(getattr(m, "text", "").startswith("[Runtime reminder]") for m in req.conversation)


def test_stale_work_item_reminder_after_ten_rounds_then_cooldown(rt: Runtime) -> None:
    w = rt.call("CreateWorkItem", {"objective": "long job"}).result["work_item"]["id"]
    steps = [Step.tool_use(f"c{i}", "GetAgent", {}) for i in range(11)]
    r, p = turn(rt, *steps, Step.text("done"))
    assert [i for i, req in enumerate(p.requests(), 1) if _has_reminder(req)] == [11]  # then the cooldown
    assert w in p.requests()[10].conversation[1].text  # right after the operator message (§1.4)
    r, p = turn(
        rt,
        Step.tool_use("u0", "UpdateWorkItem", {"work_item_id": w, "plan_status": "ready"}),
        *[Step.tool_use(f"g{i}", "GetAgent", {}) for i in range(9)],
        Step.text("done"),
    )
    assert r.rounds[0].tool_calls[0].envelope["status"] == "success"
    assert p.request_count() == 11 and not any(_has_reminder(req) for req in p.requests())  # the update reset it


def test_a_queued_message_can_be_handed_over_as_the_turns_input(rt: Runtime) -> None:
    msg = rt.work.enqueue(
        "default", "internal_followup", "check the build", origin={"kind": "system"}, authority="runtime_instruction"
    )
    p = script(rt, Step.tool_use("e1", "Enqueue", {"text": "later"}), Step.text("done"))
    r = rt._loop.call(functools.partial(rt.turns.run, "check the build", model=REF, source_message_id=msg["id"]))
    assert r.terminal == "completed" and p.request_count() == 2
    assert rt.conversations.turn(r.turn_id)["source_message_id"] == msg["id"]
    assert all(m["id"] != msg["id"] for m in rt.work.queued("default"))  # admitted (processed)
    followup = next(m for m in rt.work.queued("default") if m["text"] == "later")
    assert followup["authority"] == "runtime_instruction"  # the turn acts with its input's authority
    assert len(rt.messages(kind="operator_prompt")) == 0  # nothing new was queued for the input
    with pytest.raises(ValueError):
        rt._loop.call(functools.partial(rt.turns.run, "x", model=REF, source_message_id="msg_000000000000000"))
