"""Wake latency of a followed agent: from the waking message to the woken turn's first model request.

An agent's turn ends with ``WaitFor(operator_input)``; :class:`~holon_nb.runtime.turns._follow.TurnFollower`
then waits for a wake. We enqueue an operator message (what ``%holon say`` does) and take the time until
the scripted provider receives the woken turn's request: the follower's event wake-up, the message's
admission and the turn's start (store writes, request assembly). Repeated with a fresh agent each time.

Run: ``python benchmarks/bench_follow.py [RUNS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time

from _common import Stamped, save

from holon_nb import Runtime
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime.turns._follow import TurnFollower

REF = "scripted@default/scripted"
ASK = Step.tool_use("w1", "WaitFor", {"reason": "go-ahead", "wake": "operator_input", "delivery": "silent"})


def one(rt: Runtime, agent: str) -> float:
    provider = Stamped(ScriptedProvider([ASK, Step.text("ok")]))
    rt.providers.register(REF, provider)
    follower = TurnFollower(rt, agent, max_wakes=1, timeout_s=30)
    thread = threading.Thread(target=follower.run, args=("ask first",), kwargs={"model": REF})
    thread.start()
    while not (follower.results and follower.open_waits()):
        time.sleep(0.002)
    time.sleep(0.05)  # the follower is blocked on its event by now
    sent = time.perf_counter()
    rt.work.operator_prompt(agent, "go ahead")
    thread.join(30)
    assert follower.ended_because == "idle" and len(provider.stamps) == 2, follower.ended_because
    return (provider.stamps[1] - sent) * 1000


def main(runs: int = 30) -> None:
    with tempfile.TemporaryDirectory() as home, Runtime(home=home, workspace=home) as rt:
        for i in range(3):  # warm-up
            one(rt, f"warm-{i}")
        samples = sorted(one(rt, f"agent-{i}") for i in range(runs))
    save(
        "follow",
        {
            "runs": runs,
            "wake_to_request_ms": {
                "p50": round(statistics.median(samples), 2),
                "p90": round(samples[int(0.9 * (len(samples) - 1))], 2),
                "max": round(samples[-1], 2),
            },
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
