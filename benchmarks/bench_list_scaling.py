"""List tools at 1k and at 100k rows: ListWorkItems, ListTimers, ListTasks (issue 12, "flat-cost queries").

Targets: ListWorkItems (limit 20) at 100k items <= 10 ms and within 2x of its 1k time.
Rows are inserted straight through the work service's record layer (work items;
every tenth blocked) and the store (timers: all fired but 5 active; tasks: all
completed but none active), one transaction per batch. The lists are timed once
the memory index has caught up on those rows (``index_catch_up_s``): while it
catches up (about 18 s for 100k tasks here) its passes share the GIL and the
store with every call, and a list timed then measures the indexer, not itself.
Run: ``python benchmarks/bench_list_scaling.py [SMALL] [LARGE]``.
"""

from __future__ import annotations

import sys
import tempfile
import time

from _common import median_ms, save
from bench_work_items import _seed

from holon_nb import Runtime
from holon_nb.runtime.core._clock import fmt, utcnow
from holon_nb.runtime.core._store import Store, new_id


def _seed_timers_and_tasks(rt: Runtime, n: int) -> None:
    now = fmt(utcnow())
    with rt.store.tx() as db:
        for i in range(n):
            status = "active" if i < 5 else "fired"
            db.execute(
                "INSERT INTO timers (id, agent_id, created_at, updated_at, duration_ms, repeat, status,"
                " next_fire_at) VALUES (?,?,?,?,?,?,?,?)",
                (new_id("timer"), "default", now, now, 3_600_000, 0, status, "2999-01-01T00:00:00Z"),
            )
            Store.insert_task(
                db,
                {
                    "id": new_id("task"),
                    "agent_id": "default",
                    "kind": "command_task",
                    "status": "completed",
                    "summary": f"old task {i}",
                    "detail": {},
                    "created_at": now,
                    "updated_at": now,
                },
            )


def _indexed(rt: Runtime, out: dict, key: str) -> None:
    """Index what seeding wrote before timing (steady state); record how long that took (s)."""
    t0 = time.perf_counter()
    while rt.memory.catch_up(limit=20_000)["lag"]:
        pass
    out[key] = round(time.perf_counter() - t0, 1)


def _time(rt: Runtime, out: dict, cases: tuple) -> None:
    for label, name, args in cases:
        r = rt.call(name, args)
        assert r.ok, r.receipt[:500]
        out[label] = round(median_ms(lambda n=name, a=args: rt.call(n, a), runs=30, warmup=3), 2)


def measure(items: int) -> dict:
    out = {"rows": items}
    # two runtimes, so each list is timed over its own table at full size
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        _seed(rt, items)
        _indexed(rt, out, "work_items_index_catch_up_s")
        _time(
            rt,
            out,
            (
                ("list_work_items_ms", "ListWorkItems", {}),
                ("list_work_items_blocked_ms", "ListWorkItems", {"filter": "blocked"}),
            ),
        )
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        _seed_timers_and_tasks(rt, items)
        _indexed(rt, out, "tasks_index_catch_up_s")
        _time(
            rt,
            out,
            (
                ("list_timers_ms", "ListTimers", {}),
                ("list_timers_active_ms", "ListTimers", {"filter": "active"}),
                ("list_tasks_ms", "ListTasks", {}),
            ),
        )
    return out


def main(small: int = 1_000, large: int = 100_000) -> None:
    a, b = measure(small), measure(large)
    ratios = {k: round(b[k] / a[k], 2) for k in a if k.endswith("_ms")}
    save(
        "list_scaling",
        {
            "small": a,
            "large": b,
            "large_over_small": ratios,
            "list_work_items_large_within_10ms": b["list_work_items_ms"] <= 10,
            "list_work_items_within_2x": ratios["list_work_items_ms"] <= 2,
        },
    )


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:3]))
