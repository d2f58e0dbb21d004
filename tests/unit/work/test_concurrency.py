"""Compare-and-set on work-item revisions under concurrent writers (agents spec §3.5, case 52)."""

from __future__ import annotations

import threading

from _support import ok

from holon_nb.runtime import Runtime

THREADS = 8
ROUNDS = 6


def test_case52_one_winner_per_revision(rt: Runtime) -> None:
    wid = ok(rt.call("CreateWorkItem", {"objective": "contended"}))["work_item"]["id"]
    outcomes: list[tuple[int, int, str, dict]] = []  # (round, read revision, status, error)
    lock = threading.Lock()

    def writer(n: int) -> None:
        for rnd in range(ROUNDS):
            read = rt.work.record(wid)["revision"]
            barrier.wait()  # everyone has read the same revision before anyone writes
            r = rt.call(
                "UpdateWorkItem",
                {"work_item_id": wid, "objective": f"writer {n} round {rnd}"},
                context={"expected_revision": read},
            )
            with lock:
                outcomes.append((rnd, read, r.status, r.envelope.get("error") or {}))
            barrier.wait()  # the round is over before anyone reads again

    barrier = threading.Barrier(THREADS)
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(outcomes) == THREADS * ROUNDS
    for rnd in range(ROUNDS):
        this = [o for o in outcomes if o[0] == rnd]
        assert len({o[1] for o in this}) == 1  # all read the same revision
        read = this[0][1]
        assert [o[2] for o in this].count("success") == 1
        for _, _, status, error in this:
            if status == "error":
                assert error["kind"] == "revision_conflict" and error["domain"] == "conflict"
                assert error["retryable"] is True and error["details"]["expected_revision"] == read
                assert error["details"]["actual_revision"] == read + 1
    rec = rt.work.record(wid)
    assert rec["revision"] == 1 + ROUNDS
    revs = [
        r[0]
        for r in rt.store.query(
            "SELECT revision FROM work_item_revisions WHERE work_item_id=? ORDER BY revision", (wid,)
        )
    ]
    assert revs == list(range(1, ROUNDS + 2))


def test_cas_fails_against_a_second_process_writer(rt: Runtime, tmp_path) -> None:
    """A write by another connection (another process on the same home) between read and commit loses nothing."""
    import sqlite3

    wid = ok(rt.call("CreateWorkItem", {"objective": "a"}))["work_item"]["id"]
    read = rt.work.record(wid)["revision"]
    other = sqlite3.connect(str(rt.home / "holon.sqlite3"))
    other.execute("UPDATE work_items SET revision=revision+1, objective='other' WHERE id=?", (wid,))
    other.commit()
    other.close()
    r = rt.call("UpdateWorkItem", {"work_item_id": wid, "objective": "mine"}, context={"expected_revision": read})
    assert r.envelope["error"]["kind"] == "revision_conflict"
    assert rt.work.record(wid)["objective"] == "other"
