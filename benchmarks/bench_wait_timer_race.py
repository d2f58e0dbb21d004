"""WaitFor on a timer against CancelTimer from another process on the same home (issue 25 item 5).

Each race: this process creates a work item and a 600 s timer, then hands the timer id to a second process
(its own Runtime on the home) that cancels it at once, while this process calls ``WaitFor {wake: timer,
resource: the timer, work_item_id: the item}``. A race is lost when the timer ends cancelled while a wait on
it is still active or the work item is still blocked (nothing would ever wake it). Before the fix 9 of 150
races were lost in the hostile probe; the fix reads the timer again inside the settlement transaction.

Run: ``python benchmarks/bench_wait_timer_race.py [RACES]`` (default 1000). Prints and saves
``{races, lost, waits_registered, refused_timer_not_active}``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from _common import save

from holon_nb import Runtime

_CANCELLER = textwrap.dedent("""
    import sys
    from holon_nb import Runtime
    with Runtime(home=sys.argv[1], workspace=sys.argv[2]) as rt:
        print("ready", flush=True)
        for line in sys.stdin:
            result = rt.call("CancelTimer", {"timer_id": line.strip()})
            print(result.envelope["status"], flush=True)
""")


def _lost(rt: Runtime, timer_id: str, item_id: str) -> bool:
    status = rt.store.query("SELECT status FROM timers WHERE id=?", (timer_id,))[0][0]
    active = rt.store.query(
        "SELECT COUNT(*) FROM waits WHERE subject_ref=? AND status IN ('active','triggered')", (timer_id,)
    )[0][0]
    record = rt.work.record(item_id)
    return status == "cancelled" and (active > 0 or (record is not None and record["blocked_by"] is not None))


def main(races: int) -> dict[str, int]:
    """Run ``races`` races; return the counts."""
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "w"
        workspace.mkdir()
        counts = {"races": races, "lost": 0, "waits_registered": 0, "refused_timer_not_active": 0}
        with Runtime(home=home, workspace=workspace) as rt:
            other = subprocess.Popen(
                [sys.executable, "-c", _CANCELLER, str(home), str(workspace)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "SHELL": "/bin/sh"},
            )
            assert other.stdin is not None and other.stdout is not None
            try:
                assert other.stdout.readline().strip() == "ready"
                for _ in range(races):
                    item = rt.call("CreateWorkItem", {"objective": "wait for a tick"}).envelope["result"]
                    timer = rt.call("CreateTimer", {"duration_ms": 600_000}).envelope["result"]["timer"]["id"]
                    other.stdin.write(timer + "\n")
                    other.stdin.flush()
                    env = rt.call(
                        "WaitFor",
                        {
                            "reason": "tick",
                            "wake": "timer",
                            "resource": timer,
                            "work_item_id": item["work_item"]["id"],
                            "delivery": "silent",
                        },
                    ).envelope
                    assert other.stdout.readline().strip() == "success"
                    if env["status"] == "success":
                        counts["waits_registered"] += 1
                    elif env["error"]["kind"] == "timer_not_active":
                        counts["refused_timer_not_active"] += 1
                    counts["lost"] += _lost(rt, timer, item["work_item"]["id"])
            finally:
                other.stdin.close()
                other.wait(timeout=60)
    return counts


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
    save("wait_timer_race", result)
