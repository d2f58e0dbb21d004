"""The turn loop's own cost per round, against one bare ``dispatch()`` of GetAgent.

A turn of 50 rounds, each a scripted ``GetAgent`` call (the 51st response is text), runs
through ``Runtime.run_turn``. Per round we take the wall time from one ``round_started``
event to the next and subtract the time spent inside the provider's ``complete_turn``
(the "model time", here the scripted provider's own work): what is left is the loop's
overhead — request assembly, usage and transcript writes, events, the exposure check,
dispatch, receipt rendering/scrubbing/projection, the execution record.

Reference: the median of one bare ``await dispatch("GetAgent", {}, ctx)`` on the runtime
thread (no receipt, no execution record), and one ``Runtime.call("GetAgent")``.

Run: ``python benchmarks/bench_turn_loop.py [ROUNDS] [TURNS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

from _common import median_ms, save

from holon_nb import Runtime
from holon_nb.providers.base import TurnRequest, TurnResponse
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.tools._context import CallContext
from holon_nb.tools._dispatch import dispatch

REF = "scripted@default/scripted"


class _Timed:
    """Wraps the scripted provider and records the time spent in each ``complete_turn``."""

    def __init__(self, inner: ScriptedProvider):
        self.inner = inner
        self.route_ref = inner.route_ref
        self.model_s: list[float] = []

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        t0 = time.perf_counter()
        try:
            return await self.inner.complete_turn(req)
        finally:
            self.model_s.append(time.perf_counter() - t0)


def _one_turn(rt: Runtime, rounds: int) -> list[float]:
    steps = [Step.tool_use(f"call_{i}", "GetAgent", {}).with_usage(10, 5) for i in range(rounds)]
    timed = _Timed(ScriptedProvider([*steps, Step.text("done")]))
    rt.providers.register(REF, timed)
    starts: list[float] = []

    def on_event(e) -> None:
        if e.kind in ("round_started", "turn_terminal"):
            starts.append(time.perf_counter())

    unsubscribe = rt.subscribe(on_event)
    try:
        result = rt.run_turn("call GetAgent fifty times", model=REF)
    finally:
        unsubscribe()
    assert result.terminal == "completed" and len(result.rounds) == rounds + 1, result
    # overhead of round i = (start of round i+1) - (start of round i) - model time of round i
    return [(starts[i + 1] - starts[i] - timed.model_s[i]) * 1000 for i in range(rounds)]


def _bare_dispatch_ms(rt: Runtime, runs: int) -> float:
    async def sample() -> list[float]:
        ctx = rt.tool_context(CallContext(agent_id="default"))
        out = []
        for _ in range(runs + 5):
            t0 = time.perf_counter()
            env = await dispatch("GetAgent", {}, ctx, registry=rt.registry)
            out.append((time.perf_counter() - t0) * 1000)
            assert env["status"] == "success"
        return out[5:]

    return statistics.median(rt._loop.call(sample))


def main(rounds: int = 50, turns: int = 3) -> dict:
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        _one_turn(rt, 5)  # warm-up (imports, caches, the tool list)
        overheads: list[float] = []
        for _ in range(turns):
            per_round = _one_turn(rt, rounds)
            overheads += per_round[1:]  # round 1 also carries the turn's start
        bare = _bare_dispatch_ms(rt, 200)
        call = median_ms(lambda: rt.call("GetAgent", {}), 100)
        median = statistics.median(overheads)
        return {
            "rounds_per_turn": rounds,
            "turns": turns,
            "samples": len(overheads),
            "round_overhead_median_ms": round(median, 3),
            "round_overhead_p90_ms": round(statistics.quantiles(overheads, n=10)[-1], 3),
            "bare_dispatch_getagent_median_ms": round(bare, 3),
            "runtime_call_getagent_median_ms": round(call, 3),
            "ratio_round_to_bare_dispatch": round(median / bare, 2),
        }


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    save("bench_turn_loop", main(*args))
