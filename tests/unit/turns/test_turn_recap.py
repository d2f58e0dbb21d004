"""Turn-local recap (turn-loop spec §1.10, holon-run/holon RFC turn-local-context-compaction): a long turn over the
prompt budget keeps its newest rounds exact and sends older ones as one deterministic runtime-authored recap."""

from __future__ import annotations

from turn_helpers import turn

from holon_nb.providers.base import AssistantBlocks, ToolUseBlock, UserText, UserToolResults
from holon_nb.providers.scripted import Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.turns._recap import RECAP_HEADER
from holon_nb.runtime.turns._requests import estimate as _estimate
from holon_nb.tools._spec import Profile

ROUNDS = 12


def _noisy_steps() -> list[Step]:
    """Twelve rounds, each printing ~6,000 characters, one failing on purpose, then a final answer."""
    steps = [
        Step.tool_use(f"c{i}", "ExecCommand", {"cmd": f"printf 'round-{i} %.0s' $(seq 1 700)"})
        for i in range(1, ROUNDS + 1)
    ]
    steps[4] = Step.tool_use("c5", "ExecCommand", {"cmd": "true", "workdir": "/definitely/not/here"})
    return [*steps, Step.text("all rounds done")]


def _base(rt: Runtime) -> int:
    return _estimate(list(rt.turns.advertised_tools(Profile.PUBLIC_NAMED))) + 1_000


def test_a_long_turn_over_budget_is_recapped_and_completes(rt: Runtime) -> None:
    events: list = []
    unsubscribe = rt.subscribe(lambda e: events.append(e.data) if e.kind == "turn_local_recap" else None)
    rt.turns.prompt_budget_tokens = _base(rt) + 8_000  # about four noisy rounds
    try:
        r, provider = turn(rt, *_noisy_steps(), message="make noise")
    finally:
        unsubscribe()
    assert r.terminal == "completed" and r.final_text == "all rounds done" and len(r.rounds) == ROUNDS + 1
    requests = provider.requests()
    budget = rt.turns.prompt_budget_tokens
    for req in requests:  # every request sent fits the budget
        assert _estimate(list(req.conversation)) + _estimate(list(req.tools)) <= budget
    last = requests[-1].conversation
    assert isinstance(last[0], UserText) and last[0].text == "make noise"
    recap = last[1]
    assert isinstance(recap, UserText) and recap.text.startswith(RECAP_HEADER)
    exact = [m for m in last[2:] if isinstance(m, AssistantBlocks)]
    assert len(exact) >= 2
    # tool_use / tool_result pairs stay whole: every call id sent is answered in the next message
    sent = [b.id for m in last if isinstance(m, AssistantBlocks) for b in m.blocks if isinstance(b, ToolUseBlock)]
    answered = [res.tool_use_id for m in last if isinstance(m, UserToolResults) for res in m.results]
    assert sent == answered and "c1" not in sent and sent[-1] == f"c{ROUNDS}"
    # the recap keeps what later rounds may need, without the old output bodies
    assert (
        "- Round 1: ExecCommand(printf 'round-1 %.0s' $(seq 1 700)) success; command exited with status 0" in recap.text
    )
    assert (
        "- Round 5: ExecCommand(true) error; error workdir_not_found: workdir /definitely/not/here does not exist; "
        "hint: Pass an existing directory as `workdir`"
    ) in recap.text
    assert "round-1 round-1" not in recap.text
    assert events and events[-1]["budget"] == budget and events[-1]["estimated_tokens"] <= budget
    rounds_recapped = [e["rounds"] for e in events]
    assert rounds_recapped == sorted(rounds_recapped) and all(e["exact_rounds"] >= 2 for e in events)


def test_the_recap_prefix_is_stable_between_compactions(rt: Runtime) -> None:
    rt.turns.prompt_budget_tokens = _base(rt) + 8_000
    _, provider = turn(rt, *_noisy_steps())
    recaps = [
        next((m.text for m in req.conversation if isinstance(m, UserText) and m.text.startswith(RECAP_HEADER)), None)
        for req in provider.requests()
    ]
    first = next(i for i, text in enumerate(recaps) if text)
    assert all(text is None for text in recaps[:first])  # nothing recapped while the turn fit
    changes = sum(1 for a, b in zip(recaps[first:], recaps[first + 1 :], strict=False) if a != b)
    assert changes < len(recaps) - first - 1  # compaction goes below a target, so some requests reuse the recap


def test_interjections_of_recapped_rounds_survive_in_the_recap(rt: Runtime) -> None:
    from turn_helpers import hooked

    async def say(_req) -> None:
        rt.turns.interject("remember to keep the changelog")

    rt.turns.prompt_budget_tokens = _base(rt) + 8_000
    provider = hooked(rt, *_noisy_steps(), before={2: say})
    r = rt.run_turn("go", model="scripted@default/scripted")
    assert r.terminal == "completed"
    recap = next(
        m.text
        for m in provider.requests()[-1].conversation
        if isinstance(m, UserText) and m.text.startswith(RECAP_HEADER)
    )
    assert "operator said: [Operator message received" in recap and "remember to keep the changelog" in recap


def test_no_room_for_the_newest_exact_rounds_is_baseline_over_budget(rt: Runtime) -> None:
    rt.turns.prompt_budget_tokens = _base(rt) + 2_500  # less than two noisy rounds
    r, provider = turn(rt, *_noisy_steps())
    assert r.terminal == "baseline_over_budget" and r.reason == "prompt_budget_exceeded"
    assert 1 <= provider.request_count() < ROUNDS
    assert r.error.startswith("the request needs about ") and f"the prompt budget is {_base(rt) + 2_500}" in r.error
    assert "tools " in r.error and "newest 2 round(s)" in r.error


def test_unlimited_budget_sends_every_round_exact(rt: Runtime) -> None:
    rt.turns.prompt_budget_tokens = None
    assert rt.settings.prompt_budget_tokens == 0
    _, provider = turn(rt, *_noisy_steps())
    last = provider.requests()[-1].conversation
    assert not any(isinstance(m, UserText) and m.text.startswith(RECAP_HEADER) for m in last)
    assert sum(isinstance(m, AssistantBlocks) for m in last) == ROUNDS


def test_the_budget_comes_from_settings_when_the_service_sets_none(rt: Runtime) -> None:
    rt.turns.prompt_budget_tokens = None
    rt.settings = rt.settings.replace(prompt_budget_tokens=_base(rt) + 8_000)
    events: list = []
    unsubscribe = rt.subscribe(lambda e: events.append(e.data) if e.kind == "turn_local_recap" else None)
    try:
        r, _ = turn(rt, *_noisy_steps())
    finally:
        unsubscribe()
    assert r.terminal == "completed" and events and events[0]["budget"] == rt.settings.prompt_budget_tokens


def test_the_live_view_says_when_rounds_are_recapped() -> None:
    from holon_nb.notebook._agent_view import TurnTrace, render_transcript

    trace = TurnTrace(agent_id="default", model_ref="m", message="go")
    trace.apply("turn_local_recap", {"rounds": 9, "exact_rounds": 3, "estimated_tokens": 7_900, "budget": 10_000})
    assert (
        "rounds 1-9 now go to the model as a recap, the newest 3 exact (about 7900 of 10000 tokens"
        in render_transcript(trace)
    )
