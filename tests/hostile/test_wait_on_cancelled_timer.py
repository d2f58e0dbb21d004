"""WaitFor on a timer another runtime cancels meanwhile (issue 25 item 5).

WaitFor validates its timer when it is called and registers the wait later, in the settlement transaction.
A CancelTimer committed between the two (another runtime on the home) cancels the timer's waits, of which
there is none yet; the wait then registered on the cancelled timer, and its work item stayed blocked forever
(9 of 150 two-runtime races). The settlement now reads the timer again inside its transaction. Two real
runtimes on one home (two SQLite connections); nothing is mocked. benchmarks/bench_wait_timer_race.py runs
1,000 races.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from _support import ok

from holon_nb.runtime import Runtime
from holon_nb.runtime.core._ids import DEFAULT_AGENT_ID
from holon_nb.runtime.core._store import new_id
from holon_nb.tools._context import CallContext
from holon_nb.tools._errors import ToolFailure
from holon_nb.tools._spec import Profile


def _stuck(rt: Runtime, timer_id: str, item_id: str) -> bool:
    """A wait left active on a cancelled timer, or the item still blocked with no wait to unblock it."""
    timer = ok(rt.call("GetTimer", {"timer_id": timer_id}))["timer"]
    active = rt.store.query(
        "SELECT COUNT(*) FROM waits WHERE subject_ref=? AND status IN ('active','triggered')", (timer_id,)
    )[0][0]
    blocked = rt.work.record(item_id)["blocked_by"] is not None
    return timer["status"] == "cancelled" and (active > 0 or blocked)


def test_a_wait_validated_before_another_runtime_cancels_its_timer_is_not_registered(
    tmp_path: Path, workspace: Path
) -> None:
    """The interleaving that lost the race, made deterministic: validate, cancel elsewhere, settle."""
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as a, Runtime(home=home, workspace=workspace) as b:
        item = ok(a.call("CreateWorkItem", {"objective": "wait for a tick"}))["work_item"]["id"]
        timer = ok(a.call("CreateTimer", {"duration_ms": 600_000}))["timer"]["id"]
        call = CallContext(
            agent_id=DEFAULT_AGENT_ID, profile=Profile.PUBLIC_NAMED, execution={}, execution_id=new_id("tool")
        )
        work = a.work.bind(call)
        staged = work.stage_wait("tick", "timer", "silent", timer, item, None)  # WaitFor's call-time check
        ok(b.call("CancelTimer", {"timer_id": timer}))  # another runtime on the home, before the settlement
        with pytest.raises(ToolFailure) as failure:
            work.settle_wait(staged)
        assert failure.value.error.kind == "timer_not_active"
        assert not _stuck(a, timer, item)
        assert ok(a.call("GetWorkItem", {"work_item_id": item}))["work_item"]["readiness"] == "runnable"


def race(a: Runtime, b: Runtime, races: int) -> int:
    """Run ``races`` WaitFor (runtime ``a``) against CancelTimer (runtime ``b``) races; return how many left a
    wait or a blocked work item on a cancelled timer (shared with benchmarks/bench_wait_timer_race.py)."""
    stuck = 0
    for _ in range(races):
        item = ok(a.call("CreateWorkItem", {"objective": "wait for a tick"}))["work_item"]["id"]
        timer = ok(a.call("CreateTimer", {"duration_ms": 600_000}))["timer"]["id"]
        start = threading.Barrier(2)
        wait_args = {"reason": "tick", "wake": "timer", "resource": timer, "work_item_id": item, "delivery": "silent"}

        def wait(start: threading.Barrier, args: dict[str, str]) -> None:
            start.wait()
            a.call("WaitFor", args)  # success, or timer_not_active: either is right

        waiter = threading.Thread(target=wait, args=(start, wait_args))
        waiter.start()
        start.wait()
        ok(b.call("CancelTimer", {"timer_id": timer}))
        waiter.join(60)
        stuck += _stuck(a, timer, item)
    return stuck


def test_waitfor_against_canceltimer_in_two_runtimes_never_leaves_a_blocked_item(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as a, Runtime(home=home, workspace=workspace) as b:
        assert race(a, b, 40) == 0
