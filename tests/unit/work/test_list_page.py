"""ListWorkItems pages through indexes and kept counts: the same answer as deriving and sorting every item."""

from __future__ import annotations

import random

from holon_nb import Runtime
from holon_nb.runtime.core._store import new_id
from holon_nb.runtime.work._views import (
    _FILTER_CLASSES,
    derive,
    list_page,
    load_context,
    matches_filter,
    order_views,
    plan_meta_for,
)


def _reference(db, agent_id: str, filter_name: str, limit: int) -> tuple[int, list[str]]:
    ctx = load_context(db.execute, agent_id)
    pairs = []
    for row in db.execute("SELECT * FROM work_items WHERE agent_id=?", (agent_id,)):
        rec = dict(row)
        d = derive(rec, ctx)
        if matches_filter(filter_name, rec, d):
            pairs.append((rec, d))
    ordered = order_views(pairs)
    return len(ordered), [r["id"] for r, _ in ordered[:limit]]


def _seed(rt: Runtime, n: int, rng: random.Random) -> list[dict]:
    svc = rt.work
    meta = plan_meta_for(svc.agent_home("default") / "no-plan.md")
    recs = []
    with svc.tx() as t:
        for i in range(n):
            stamp = f"2026-01-{1 + rng.randrange(28):02d}T00:00:{rng.randrange(60):02d}Z"
            rec = svc.records.insert(
                t,
                {
                    "id": new_id("work"),
                    "agent_id": rng.choice(["default", "default", "other"]),
                    "workspace_id": "agent_home",
                    "objective": f"item {i}",
                    "state": "open",
                    "plan_status": rng.choice(["draft", "draft", "needs_input"]),
                    "plan_meta": meta,
                    "todo_list": [],
                    "work_refs": [],
                    "created_at": stamp,
                    "updated_at": stamp,
                },
            )
            recs.append(rec)
    return recs


def _check_all(rt: Runtime) -> None:
    db = rt.work.reader()
    for agent in ("default", "other"):
        ctx = load_context(db.execute, agent)
        for filter_name in _FILTER_CLASSES:
            for limit in (1, 7, 500):
                total, page = list_page(db, agent, ctx, filter_name, limit)
                assert (total, [r["id"] for r, _ in page]) == _reference(db, agent, filter_name, limit), (
                    agent,
                    filter_name,
                    limit,
                )


def test_pages_and_counts_match_a_full_derivation(rt: Runtime) -> None:
    rng = random.Random(12)
    recs = _seed(rt, 120, rng)
    _check_all(rt)
    svc = rt.work
    with svc.tx() as t:  # updates move items between classes: the kept counts follow
        for rec in rng.sample(recs, 60):
            change = rng.choice(
                [
                    {"blocked_by": "waiting on a reviewer"},
                    {"state": "completing"},
                    {"state": "completed"},
                    {"plan_status": "needs_input"},
                    {"plan_status": "draft"},
                ]
            )
            svc.records.write(t, svc.records.load(t.db, rec["id"]), change)
    _check_all(rt)
    focus = next(
        r for r in recs if r["agent_id"] == "default" and svc.records.load(rt.work.reader(), r["id"])["state"] == "open"
    )
    assert rt.call("PickWorkItem", {"work_item_id": focus["id"]}).ok  # the focus is a special item
    _check_all(rt)


def test_counts_are_filled_for_a_home_made_before_them(tmp_path, workspace) -> None:
    home = tmp_path / "old-home"
    with Runtime(home=home, workspace=workspace) as rt:
        _seed(rt, 40, random.Random(3))
        with rt.store.tx() as db:  # as a home from before the counts table existed
            db.execute("DROP TABLE work_item_counts")
            for trigger in ("insert", "delete", "update"):
                db.execute(f"DROP TRIGGER work_item_counts_{trigger}")
    with Runtime(home=home, workspace=workspace) as rt:
        _check_all(rt)


def test_timer_totals_follow_creation_firing_and_cancelling(rt: Runtime) -> None:
    import time

    ids = [
        rt.call("CreateTimer", {"duration_ms": ms}).result["timer"]["id"]
        for ms in (1, 1, 3_600_000, 3_600_000, 3_600_000)
    ]
    assert rt.call("CancelTimer", {"timer_id": ids[2]}).ok
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and rt.call("ListTimers", {"filter": "completed"}).result["total_matching"] < 2:
        time.sleep(0.02)
    for name in ("all", "active", "completed", "cancelled"):
        where = {"all": "1", "active": "status IN ('active','scheduled')"}.get(name, f"status='{name}'")
        expected = rt.store.query(f"SELECT COUNT(*) FROM timers WHERE agent_id='default' AND {where}")[0][0]
        got = rt.call("ListTimers", {"filter": name}).result["total_matching"]
        assert got == expected, name
    assert rt.call("ListTimers", {}).result["total_matching"] == 5
    assert rt.call("ListTimers", {"filter": "active"}).result["total_matching"] == 2
