"""Wake latency of an external trigger: from the HTTP POST to the woken turn's first model request.

An agent's turn ends with ``WaitFor(wake="external")``; a :class:`~holon_nb.runtime.turns._follow.TurnFollower`
waits for its wake. We POST to the agent's trigger URL (CreateExternalTrigger) with a plain HTTP client and
take the time until the scripted provider receives the woken turn's request: the callback server (uvicorn on
the runtime loop), the token lookup, the correlated ``callback_event``, the follower's wake-up and the turn's
start. Repeated with a fresh agent (and trigger) each time.

Run: ``python benchmarks/bench_trigger_wake.py [RUNS]``. Measured on a shared 2-core machine under load.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time

import httpx
from _common import Stamped, save

from holon_nb import Runtime
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime.turns._follow import TurnFollower

REF = "scripted@default/scripted"
WAIT = Step.tool_use("w1", "WaitFor", {"reason": "CI calls back", "wake": "external", "delivery": "silent"})


def one(rt: Runtime, client: httpx.Client, agent: str) -> tuple[float, float]:
    url = rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}, agent=agent).result["trigger_url"]
    provider = Stamped(ScriptedProvider([WAIT, Step.text("woken")]))
    rt.providers.register(REF, provider)
    follower = TurnFollower(rt, agent, max_wakes=1, timeout_s=30)
    thread = threading.Thread(target=follower.run, args=("wait for CI",), kwargs={"model": REF})
    thread.start()
    while not (follower.results and follower.open_waits()):
        time.sleep(0.002)
    time.sleep(0.05)  # the follower is blocked on its event by now
    sent = time.perf_counter()
    answer = client.post(url, content=b'{"status": "passed"}')
    answered = time.perf_counter()
    thread.join(30)
    assert answer.status_code == 202 and answer.json()["woke_wait"], answer.text
    assert follower.ended_because == "idle" and len(provider.stamps) == 2, follower.ended_because
    return (provider.stamps[1] - sent) * 1000, (answered - sent) * 1000


def main(runs: int = 30) -> None:
    with tempfile.TemporaryDirectory() as home, Runtime(home=home, workspace=home) as rt, httpx.Client() as client:
        for i in range(3):  # warm-up (the first trigger starts the callback server)
            one(rt, client, f"warm-{i}")
        samples = [one(rt, client, f"agent-{i}") for i in range(runs)]
    wake = sorted(s[0] for s in samples)
    http = sorted(s[1] for s in samples)

    def summary(values: list[float]) -> dict[str, float]:
        return {
            "p50": round(statistics.median(values), 2),
            "p90": round(values[int(0.9 * (len(values) - 1))], 2),
            "max": round(values[-1], 2),
        }

    save(
        "trigger_wake",
        {
            "runs": runs,
            "post_to_woken_request_ms": summary(wake),
            "post_answer_ms": summary(http),
            "note": "shared 2-core machine under load from other agents",
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
