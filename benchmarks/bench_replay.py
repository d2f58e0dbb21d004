"""Cassette replay of a 50-round agent turn (turn-loop spec §4.3): total time, no network, no sleeps.

1. Record once: a ScriptedProvider turn of 50 model rounds — round 1 answers a 429 first (one retry with
   the lineage's 200 ms backoff), rounds 1-49 each call ``ExecCommand`` (``echo round N``), round 50
   answers text — through ``Runtime.turns.run_sync`` with the cassette's ``TurnHooks`` (real tools, real
   SQLite, real backoff sleep).
2. Replay it ``RUNS`` times, each in a fresh runtime (a new kernel; the agent has no earlier history),
   with the network guard on: wall time of ``run_sync`` only. Replay runs no tool and sleeps nowhere
   (the backoff advances the cassette's virtual clock).

Reports the recording time, the replay median/min/max (ms), per-round replay cost, the cassette size,
and checks that every replay completed with the recorded final text and zero network attempts.

Run: ``python benchmarks/bench_replay.py [RUNS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import save

from holon_nb import Runtime
from holon_nb.providers.cassettes._cassette import CassetteProvider
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime.turns._records import TurnHooks

ROUNDS = 50
REF = "scripted@default/scripted"


def _script() -> ScriptedProvider:
    steps = [Step.error("rate_limited", status=429)]
    for n in range(1, ROUNDS):
        steps.append(Step.tool_use(f"call_{n}", "ExecCommand", {"cmd": f"echo round {n}"}).with_usage(100 + n, 10))
    steps.append(Step.text(f"finished after {ROUNDS} rounds").with_usage(200, 20))
    return ScriptedProvider(steps)


def main(runs: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "W"
        work.mkdir()
        path = root / "bench.holon" / "cassettes" / "cell-50.jsonl"
        with Runtime(home=root / "home-record", workspace=work) as rt:
            rt.providers.register(REF, _script())
            cas = CassetteProvider(None, path, "record", workspace=work, holon_home=rt.home)
            t0 = time.perf_counter()
            live = rt.turns.run_sync("run the 50-round benchmark", model=REF, hooks=TurnHooks(**cas.turn_hooks()))
            record_ms = (time.perf_counter() - t0) * 1000
            cas.close(terminal=live.terminal)
        assert live.terminal == "completed" and len(live.rounds) == ROUNDS, live
        samples = []
        for i in range(runs):
            with Runtime(home=root / f"home-replay-{i}", workspace=work) as rt:
                rt.providers.register(REF, ScriptedProvider([]))  # never called: replay answers
                cas = CassetteProvider(None, path, "replay", workspace=work, holon_home=rt.home)
                t0 = time.perf_counter()
                again = rt.turns.run_sync("run the 50-round benchmark", model=REF, hooks=TurnHooks(**cas.turn_hooks()))
                samples.append((time.perf_counter() - t0) * 1000)
                cas.close(terminal=again.terminal)
                assert cas.failure is None and cas.network_attempts == [], cas.failure
                assert again.final_text == live.final_text and len(again.rounds) == ROUNDS
                assert [c.receipt for c in again.tool_calls] == [c.receipt for c in live.tool_calls]
                assert rt.store.query("SELECT COUNT(*) FROM tasks")[0][0] == 0  # no tool ran
        median = statistics.median(samples)
        save(
            "replay",
            {
                "rounds": ROUNDS,
                "provider_attempts": ROUNDS + 1,
                "tool_calls": ROUNDS - 1,
                "runs": runs,
                "record_ms": round(record_ms, 1),
                "replay_median_ms": round(median, 1),
                "replay_min_ms": round(min(samples), 1),
                "replay_max_ms": round(max(samples), 1),
                "replay_per_round_ms": round(median / ROUNDS, 2),
                "cassette_bytes": path.stat().st_size,
                "network_attempts": 0,
                "wall_clock_sleeps_on_replay": 0,
            },
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
