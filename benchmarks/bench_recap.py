"""Cost of the turn-local recap: building each request of a long turn, with and without a prompt budget.

A turn of ROUNDS scripted ``GetAgent`` rounds (each receipt ≈ 1.5 KB) runs twice: without a budget
(every round exact) and with a budget that holds about 20 rounds (older ones recapped, spec §1.10).
We time ``RequestBuilder.build`` (runtime/turns/_requests.py) for every round and report the median over the last 20 rounds
(where the recap covers most of the turn), and the size of the last request in estimated tokens.

Run: ``python benchmarks/bench_recap.py [ROUNDS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

from _common import save

from holon_nb import Runtime
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime.turns._requests import RequestBuilder
from holon_nb.runtime.turns._requests import estimate as _estimate
from holon_nb.tools._spec import Profile

REF = "scripted@default/scripted"


def turn(budget_rounds: int | None, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as home, Runtime(home=home, workspace=home) as rt:
        tools = _estimate(list(rt.turns.advertised_tools(Profile.PUBLIC_NAMED)))
        rt.turns.prompt_budget_tokens = None if budget_rounds is None else tools + 1_000 + 450 * budget_rounds
        steps = [Step.tool_use(f"c{i}", "GetAgent", {}) for i in range(rounds)] + [Step.text("done")]
        provider = ScriptedProvider(steps)
        rt.providers.register(REF, provider)
        build, times = RequestBuilder.build, []

        def timed(self):
            t0 = time.perf_counter()
            request = build(self)
            times.append((time.perf_counter() - t0) * 1000)
            return request

        RequestBuilder.build = timed
        try:
            result = rt.run_turn("go", model=REF)
        finally:
            RequestBuilder.build = build
        assert result.terminal == "completed", (result.terminal, result.error)
        last = provider.requests()[-1]
        return {
            "median_build_ms_last_20_rounds": round(statistics.median(times[-20:]), 3),
            "last_request_estimated_tokens": _estimate(list(last.conversation)) + tools,
            "budget": rt.turns.prompt_budget_tokens,
        }


def main(rounds: int = 120) -> None:
    save("recap", {"rounds": rounds, "no_budget": turn(None, rounds), "budget_of_about_20_rounds": turn(20, rounds)})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 120)
