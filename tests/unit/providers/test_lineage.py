"""The lineage wrapper over real transports and a local server (turn-loop spec §2.3; cases 19, 20, 22–26)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from unit.providers.helpers import KEY, first_request, provider_for
from unit.providers.payloads import anthropic_text_stream, chat_text, responses_text
from unit.providers.servers import Reply, sse_event

from holon_nb.providers._factory import build_lineage
from holon_nb.providers._lineage import LineageCandidate, LineageFailed, LineageProvider, model_hint
from holon_nb.providers.base import (
    ContextBlock,
    PromptFrame,
    ProviderTransportError,
    TextBlock,
    TurnRequest,
    TurnResponse,
    UserText,
)

pytestmark = pytest.mark.anyio

OPENAI = "openai@default/gpt-5.4"
FALLBACK = "anthropic@default/claude-sonnet-4-6"


class Sleeps:
    """Injectable backoff sleep that records instead of waiting."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def lineage(provider, sleep, fallbacks=(), **kw):
    cands = [LineageCandidate(provider.route_ref, provider.provider_name, provider)]
    cands += [LineageCandidate(f, f.split("@")[0]) for f in fallbacks]
    return LineageProvider(cands, sleep=sleep, **kw)


def _openai(wire, made):
    return provider_for(wire, "openai/gpt-5.4", made, env={"OPENAI_API_KEY": KEY})


def _chat(wire, made):
    return provider_for(wire, "openrouter/m", made, env={"OPENROUTER_API_KEY": KEY})


async def test_case19_rate_limited_then_success(wire, made):
    wire.script(
        Reply(status=429, json={"error": {"message": "slow down"}}, headers={"retry-after": "7"}),
        Reply(json=responses_text("ok", usage=(5, 2))),
    )
    sleep = Sleeps()
    resp, timeline = await lineage(_openai(wire, made), sleep).complete_turn_with_diagnostics(first_request())
    assert resp.text == "ok" and len(wire.requests) == 2
    a1, a2 = timeline.attempts
    assert (a1.attempt, a1.outcome, a1.failure_kind, a1.disposition, a1.backoff_ms) == (
        1,
        "retrying",
        "rate_limited",
        "retryable",
        200,
    )
    assert (a2.attempt, a2.outcome, a2.failure_kind, a2.backoff_ms) == (2, "succeeded", None, None)
    assert a1.transport_diagnostics["status"] == 429 and a1.transport_diagnostics["url"].endswith("/v1/responses")
    assert timeline.winning_model_ref == OPENAI and timeline.active_model_ref == OPENAI
    assert timeline.requested_model_ref == OPENAI and timeline.pending_fallback_model_ref is None
    assert sleep.calls == [0.2]  # Retry-After ignored (parity)
    assert timeline.to_dict()["attempts"][0]["max_attempts"] == 3


async def test_honor_retry_after_is_opt_in(wire, made):
    wire.script(Reply(status=429, json={}, headers={"retry-after": "7"}), Reply(json=responses_text("ok")))
    sleep = Sleeps()
    _, timeline = await lineage(_openai(wire, made), sleep, honor_retry_after=True).complete_turn_with_diagnostics(
        first_request()
    )
    assert sleep.calls == [7.0] and timeline.attempts[0].backoff_ms == 7000


async def test_case20_server_errors_exhaust_and_fallback_is_pending_not_called(wire, made):
    wire.script(*[Reply(status=500, json={"error": {"message": "boom"}}) for _ in range(3)])
    sleep = Sleeps()
    lin = lineage(_openai(wire, made), sleep, fallbacks=(FALLBACK,))
    with pytest.raises(LineageFailed) as info:
        await lin.complete_turn_with_diagnostics(first_request())
    err = info.value
    assert len(wire.requests) == 3 and sleep.calls == [0.2, 0.4]
    outcomes = [(a.outcome, a.backoff_ms, a.advanced_to_fallback) for a in err.timeline.attempts]
    assert outcomes == [("retrying", 200, False), ("retrying", 400, False), ("retries_exhausted", None, True)]
    assert err.pending_fallback_model_ref == FALLBACK == err.timeline.pending_fallback_model_ref
    assert err.timeline.winning_model_ref is None
    assert "retries_exhausted after 3 attempts (server_error, status=500)" in str(err)
    assert str(err).startswith(f"all configured providers failed for this turn: {OPENAI}: ")
    assert (err.kind, err.status) == ("server_error", 500) and "boom" not in str(err)


async def test_case21_schema_rejection_fails_fast_in_one_attempt(wire, made):
    wire.script(Reply(status=400, json={"error": {"message": "Invalid schema for function 'WaitFor': bad"}}))
    lin = lineage(_openai(wire, made), Sleeps())
    with pytest.raises(LineageFailed) as info:
        await lin.complete_turn(first_request(("GetAgent", "WaitFor")))
    err = info.value
    assert len(err.timeline.attempts) == 1 and err.timeline.attempts[0].outcome == "fail_fast_aborted"
    assert "fail_fast (contract_error, status=400)" in str(err)
    assert err.tool_name == "WaitFor" and "Invalid schema" not in str(err)


async def test_case22_empty_response_usage_is_aggregated(wire, made):
    wire.script(
        Reply(
            json={"id": "r0", "status": "completed", "output": [], "usage": {"input_tokens": 4, "output_tokens": 893}}
        ),
        Reply(json=responses_text("text", usage=(2, 1))),
    )
    resp, timeline = await lineage(_openai(wire, made), Sleeps()).complete_turn_with_diagnostics(first_request())
    a1, a2 = timeline.attempts
    assert (a1.failure_kind, a1.disposition, a1.outcome) == ("empty_response", "retryable", "retrying")
    assert a1.token_usage.to_dict() == {"input_tokens": 4, "output_tokens": 893, "total_tokens": 897}
    assert timeline.aggregated_token_usage.to_dict() == {"input_tokens": 6, "output_tokens": 894, "total_tokens": 900}
    # agent totals add only the winning attempt: the response's own usage
    assert (resp.input_tokens, resp.output_tokens) == (2, 1) and a2.token_usage.total_tokens == 3


@pytest.mark.parametrize(
    "status, body",
    [
        (401, {"error": {"message": "bad key"}}),
        (429, {"error": {"message": "quota", "code": "insufficient_quota"}}),
    ],
)
async def test_case23_auth_errors_fail_fast(wire, made, status, body):
    wire.script(Reply(status=status, json=body))
    with pytest.raises(LineageFailed) as info:
        await lineage(_chat(wire, made), Sleeps(), fallbacks=(FALLBACK,)).complete_turn(first_request())
    attempts = info.value.timeline.attempts
    assert [(a.failure_kind, a.outcome) for a in attempts] == [("auth_error", "fail_fast_aborted")]
    assert len(wire.requests) == 1 and attempts[0].advanced_to_fallback is True


async def test_case24_chat_503_busy_is_retried(wire, made):
    wire.script(Reply(status=503, json={"error": {"message": "busy"}}), Reply(json=chat_text("ok")))
    resp, timeline = await lineage(_chat(wire, made), Sleeps()).complete_turn_with_diagnostics(first_request())
    assert resp.text == "ok"
    assert [(a.failure_kind, a.outcome) for a in timeline.attempts] == [
        ("server_error", "retrying"),
        (None, "succeeded"),
    ]


async def test_case25_anthropic_missing_stop_once_error_event_retried(wire, made):
    anth = provider_for(
        wire, "anthropic/claude-sonnet-4-6", made, env={"ANTHROPIC_AUTH_TOKEN": "t-0123456789"}, base_path=""
    )
    wire.script(Reply(sse=anthropic_text_stream("cut", stop=False)))
    with pytest.raises(LineageFailed) as info:
        await lineage(anth, Sleeps()).complete_turn(first_request())
    assert [(a.failure_kind, a.outcome) for a in info.value.timeline.attempts] == [
        ("invalid_response", "fail_fast_aborted")
    ]
    error_stream = anthropic_text_stream("x")[:1] + [
        sse_event({"type": "error", "error": {"type": "overloaded_error"}}, "error")
    ]
    wire.script(Reply(sse=error_stream), Reply(sse=anthropic_text_stream("fine")))
    resp, timeline = await lineage(anth, Sleeps()).complete_turn_with_diagnostics(first_request())
    assert resp.text == "fine"
    assert [(a.failure_kind, a.outcome) for a in timeline.attempts] == [
        ("server_error", "retrying"),
        (None, "succeeded"),
    ]


async def test_case26_context_length_no_retry_no_fallback(wire, made):
    wire.script(Reply(status=400, json={"error": {"message": "too long", "code": "context_length_exceeded"}}))
    with pytest.raises(LineageFailed) as info:
        await lineage(_chat(wire, made), Sleeps(), fallbacks=(FALLBACK,)).complete_turn(first_request())
    err = info.value
    assert err.code == "context_length_exceeded" and len(err.timeline.attempts) == 1
    assert err.pending_fallback_model_ref is None and not err.timeline.attempts[0].advanced_to_fallback


async def test_model_hint_reaches_the_wire(wire, made):
    wire.script(Reply(json=responses_text("a")), Reply(json=responses_text("b")))
    p = _openai(wire, made)
    await lineage(p, Sleeps()).complete_turn(first_request())
    assert wire.requests[0].json["instructions"] == "You are Holon.\n\nRuntime: active_model=openai/gpt-5.4"
    recovery = LineageProvider(
        [LineageCandidate(p.route_ref, "openai", p)], requested_model_ref=FALLBACK, sleep=Sleeps()
    )
    await recovery.complete_turn(TurnRequest(conversation=(UserText("x"),)))
    assert wire.requests[1].json["instructions"] == (
        "Runtime: active_model=openai/gpt-5.4 requested_model=anthropic/claude-sonnet-4-6"
    )


class Fake:
    """A minimal in-process provider (the lineage's own rules, no transport)."""

    route_ref = "scripted@default/scripted"
    provider_name = "scripted"

    def __init__(self, outcomes):
        self.outcomes = list(outcomes)
        self.requests: list[TurnRequest] = []

    async def complete_turn(self, req):
        self.requests.append(req)
        out = self.outcomes.pop(0)
        if isinstance(out, BaseException):
            raise out
        return out


async def test_untyped_failure_is_unknown_fail_fast_and_hint_block_added():
    frame = PromptFrame("sys", system_blocks=(ContextBlock("sys", "stable"),))
    fake = Fake([RuntimeError("scripted agent provider exhausted after 2 request(s)")])
    lin = LineageProvider([LineageCandidate("scripted@default/scripted", "scripted", fake)], sleep=Sleeps())
    with pytest.raises(LineageFailed) as info:
        await lin.complete_turn(TurnRequest(conversation=(UserText("x"),), prompt_frame=frame))
    assert (info.value.kind, info.value.timeline.attempts[0].outcome) == ("unknown", "fail_fast_aborted")
    assert "fail_fast (unknown): scripted agent provider exhausted after 2 request(s)" in str(info.value)
    sent = fake.requests[0].prompt_frame
    assert sent.system_prompt == "sys\n\nRuntime: active_model=scripted/scripted"
    assert sent.system_blocks[-1] == ContextBlock("Runtime: active_model=scripted/scripted", "turn_scoped", True)


async def test_injected_clocks_shape_the_timeline():
    t0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    ticks = iter([t0, t0 + timedelta(seconds=1), t0 + timedelta(seconds=2), t0 + timedelta(seconds=3)])
    mono = iter([10.0, 10.25, 20.0, 20.5])
    fake = Fake([ProviderTransportError("timeout", "slow"), TurnResponse((TextBlock("ok"),), "stop", 1, 1)])
    lin = LineageProvider(
        [LineageCandidate("x@default/y", "x", fake)],
        sleep=Sleeps(),
        now=lambda: next(ticks),
        monotonic=lambda: next(mono),
    )
    _, timeline = await lin.complete_turn_with_diagnostics(TurnRequest(conversation=()))
    d = timeline.to_dict()
    assert [(a["started_at"], a["completed_at"], a["duration_ms"]) for a in d["attempts"]] == [
        ("2026-01-02T03:04:05.000Z", "2026-01-02T03:04:06.000Z", 250),
        ("2026-01-02T03:04:07.000Z", "2026-01-02T03:04:08.000Z", 500),
    ]
    assert d["aggregated_token_usage"]["total_tokens"] == 2


def test_model_hint_text():
    assert model_hint(OPENAI, OPENAI) == "Runtime: active_model=openai/gpt-5.4"
    assert (
        model_hint("byteplus@coding/seed-1", OPENAI)
        == "Runtime: active_model=byteplus@coding/seed-1 requested_model=openai/gpt-5.4"
    )


async def test_build_lineage_from_env(wire, made):
    env = {
        "HOLON_MODEL": "openai/gpt-5.4",
        "OPENAI_API_KEY": KEY,
        "HOLON_OPENAI_BASE_URL": wire.base_url + "/v1",
        "HOLON_MODEL_FALLBACKS": "anthropic/claude-sonnet-4-6, openai/gpt-5.4",
    }
    lin = build_lineage(environ=env, sleep=Sleeps())
    made.append(lin)
    assert [c.model_ref for c in lin.candidates] == [OPENAI, FALLBACK]
    assert lin.candidates[1].provider is None  # fallbacks are never built for this turn
    wire.script(Reply(json=responses_text("hi")))
    assert (await lin.complete_turn(first_request())).text == "hi"
    assert lin.last_timeline.winning_model_ref == OPENAI
    solo = build_lineage(environ={**env, "HOLON_DISABLE_PROVIDER_FALLBACK": "1"})
    made.append(solo)
    assert solo.pending_fallback_model_ref is None
