"""ListWorkItems over 10,000 work items, and timer lateness while a command task streams output.

1. 10,000 open work items of one agent (inserted in batches through the work
   service's record layer, one transaction per batch, memory-indexed as usual;
   every tenth one blocked by a wait): median latency of ``ListWorkItems``
   (default limit 20, limit 100, and ``filter=queued``) through ``Runtime.call``.
2. 100 active timers due over 0.4-1.5 s, with and without a promoted command task
   streaming output (``yes | head -c 200000000`` in a loop, started right after
   the timers and stopped once they all fired): lateness = the moment the
   ``timer_fired`` event reaches a subscriber minus the timer's due time,
   p50/p99/max in milliseconds (and separately for the ticks that fired while the
   task was still streaming).

Run: ``python benchmarks/bench_work_items.py [ITEMS]``.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import threading
import time

from _common import median_ms, save

from holon_nb import Runtime
from holon_nb.runtime.core._clock import fmt, parse, utcnow
from holon_nb.runtime.core._store import new_id
from holon_nb.runtime.work._views import plan_meta_for


def _seed(rt: Runtime, items: int) -> None:
    svc = rt.work
    meta = plan_meta_for(svc.agent_home("default") / "no-such-plan.md")
    batch = 1000
    for start in range(0, items, batch):
        with svc.tx() as t:
            for i in range(start, min(items, start + batch)):
                now = fmt(utcnow())
                rec = {
                    "id": new_id("work"),
                    "agent_id": "default",
                    "workspace_id": "agent_home",
                    "objective": f"objective number {i}",
                    "state": "open",
                    "plan_status": "draft",
                    "plan_meta": meta,
                    "todo_list": [{"text": f"todo {i}", "state": "pending"}],
                    "work_refs": [],
                    "created_at": now,
                    "updated_at": now,
                }
                rec = svc.records.insert(t, rec)
                if i % 10 == 0:
                    rec = svc.records.write(t, rec, {"blocked_by": f"waiting {i}"})
    rt.call("PickWorkItem", {"work_item_id": rt.store.query("SELECT id FROM work_items LIMIT 1")[0][0]})


def bench_list(items: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        t0 = time.perf_counter()
        _seed(rt, items)
        seed_s = time.perf_counter() - t0
        out = {"items": items, "seed_s": round(seed_s, 2)}
        for label, args in (
            ("list_default_ms", {}),
            ("list_limit_100_ms", {"limit": 100}),
            ("list_queued_ms", {"filter": "queued"}),
            ("list_todos_100_ms", {"limit": 100, "include_todo_list": True}),
        ):
            r = rt.call("ListWorkItems", args)
            assert r.ok and r.result["total_matching"] > 0, r.receipt[:500]
            out[label] = round(median_ms(lambda a=args: rt.call("ListWorkItems", a), runs=30, warmup=3), 2)
        out["get_work_item_ms"] = round(
            median_ms(lambda: rt.call("GetWorkItem", {"work_item_id": r.result["work_items"][0]["id"]}), runs=30), 2
        )
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_timers(stream: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        lateness: list[float] = []
        during: list[float] = []  # lateness of ticks that fired while the task still streamed
        done = threading.Event()
        streaming = threading.Event()

        def on_event(e) -> None:
            if e.kind == "timer_fired":
                late = (time.time() - parse(e.data["due_at"]).timestamp()) * 1000
                lateness.append(late)
                if streaming.is_set():
                    during.append(late)
                if len(lateness) == 100:
                    done.set()
            elif e.kind == "task_ended":
                streaming.clear()

        rt.subscribe(on_event)
        task_id = None
        rnd = random.Random(1)
        for _ in range(100):
            rt.call("CreateTimer", {"duration_ms": rnd.randint(400, 1500)})
        if stream:  # 200 MB chunks until the timers are done (then stopped), so the stream outlasts them
            r = rt.call(
                "ExecCommand",
                {"cmd": "while true; do yes | head -c 200000000; done", "yield_time_ms": 0, "login": False},
            )
            task_id = r.result["task_handle"]["task_id"]
            streaming.set()
        done.wait(60)
        status = None
        if task_id:
            status = rt.call("TaskStatus", {"task_id": task_id}).result["task"]["status"]
            rt.call("TaskStop", {"task_id": task_id})
            rt.call("TaskOutput", {"task_id": task_id, "timeout_ms": 120_000})
        fired = len(lateness)
        extra = {}
        if stream:
            extra = {"fired_while_streaming": len(during)}
            if during:
                extra["streaming_lateness_p50_ms"] = round(statistics.median(during), 2)
                extra["streaming_lateness_p99_ms"] = round(_percentile(during, 0.99), 2)
        return {
            "fired": fired,
            "task_status_after_timers": status,
            **extra,
            "lateness_p50_ms": round(statistics.median(lateness), 2),
            "lateness_p99_ms": round(_percentile(lateness, 0.99), 2),
            "lateness_max_ms": round(max(lateness), 2),
        }


def main(items: int = 10_000) -> None:
    save(
        "work_items",
        {"list": bench_list(items), "timers_idle": bench_timers(False), "timers_while_streaming": bench_timers(True)},
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
