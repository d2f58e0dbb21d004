"""The store while another process holds the home's write lock (issue 25): reads never wait, and a write made
on an event loop waits for the lock asynchronously (``Store.write``), leaving the loop free.

The lock holder is a real second process running ``BEGIN IMMEDIATE`` on the database until the test lets it go;
no wall-clock threshold: every wait is an event or a bound with a generous timeout.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from holon_nb.runtime.core._store import Store, StoreBusy
from holon_nb.runtime.core._writing import first_step_writing

_HOLDER = textwrap.dedent("""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
    db.execute("BEGIN IMMEDIATE")
    if len(sys.argv) > 2:
        db.execute(sys.argv[2])
    print("locked", flush=True)
    sys.stdin.readline()
    db.execute("COMMIT")
""")


class _Holder:
    def __init__(self, proc: subprocess.Popen[str]):
        self.proc = proc

    def release(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()  # end of file: the holder commits
        self.proc.wait(timeout=60)


@contextmanager
def _lock_held(db_path: Path, statement: str | None = None) -> Iterator[_Holder]:
    """Another process holds the write lock of ``db_path`` (and ran ``statement`` in it) until released."""
    argv = [sys.executable, "-c", _HOLDER, str(db_path), *([statement] if statement else [])]
    holder = _Holder(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    try:
        assert holder.proc.stdout is not None and holder.proc.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.release()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "holon.sqlite3", busy_timeout_s=60.0)
    with s.tx() as db:
        db.execute("CREATE TABLE t (v TEXT)")
    yield s
    s.close()


def _values(store: Store) -> list[str]:
    return [r[0] for r in store.query("SELECT v FROM t ORDER BY rowid")]


def _in_thread(fn: Any) -> tuple[list[Any], threading.Event]:
    out: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            out.append(fn())
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    return out, done


def test_a_read_answers_while_another_process_holds_the_write_lock_and_a_write_waits(store: Store) -> None:
    with store.tx() as db:
        db.execute("INSERT INTO t VALUES ('before')")

    def write() -> None:
        with store.tx() as db:
            db.execute("INSERT INTO t VALUES ('written')")

    with _lock_held(store.path, "INSERT INTO t VALUES ('theirs')") as holder:
        retries = store.stats()["busy_retries"]
        _, write_done = _in_thread(write)  # a write in another thread waits for the lock
        while store.stats()["busy_retries"] < retries + 2:
            threading.Event().wait(0.01)
        read, read_done = _in_thread(lambda: _values(store))
        assert read_done.wait(60), "a read waited for another process's write lock"
        assert read == [["before"]]  # the other process's uncommitted row is not seen
        assert _values(store) == ["before"]  # nor does a read here wait behind the waiting write
        assert holder.proc.poll() is None and not write_done.is_set()
        holder.release()
        assert write_done.wait(60)
    assert _values(store) == ["before", "theirs", "written"]


def test_a_read_inside_a_transaction_sees_its_writes_and_other_threads_see_the_last_commit(store: Store) -> None:
    with store.tx() as db:
        db.execute("INSERT INTO t VALUES ('mine')")
        assert _values(store) == ["mine"]  # this thread's transaction: its own write is seen
        other, done = _in_thread(lambda: _values(store))
        assert done.wait(60), "a read in another thread waited for this transaction"
        assert other == [[]]  # not committed yet
    other, done = _in_thread(lambda: _values(store))
    assert done.wait(60) and other == [["mine"]]


def test_cached_reads_follow_this_store_s_commits_and_another_process_s(store: Store) -> None:
    count = lambda: store.query("SELECT COUNT(*) FROM t")[0][0]  # noqa: E731
    assert store.cached("n", count) == 0
    with store.tx() as db:
        db.execute("INSERT INTO t VALUES ('a')")
    assert store.cached("n", count) == 1
    with _lock_held(store.path, "INSERT INTO t VALUES ('b')"):
        assert store.cached("n", count) == 1  # not committed yet
    assert store.cached("n", count) == 2  # the other process committed: the token moved


def test_write_waits_without_blocking_the_loop_and_its_first_transaction_uses_the_lock_it_took(
    store: Store,
) -> None:
    async def main() -> None:
        with _lock_held(store.path) as holder:
            retries = store.stats()["busy_retries"]
            done = anyio.Event()
            seen: list[list[str]] = []

            def fn() -> str:
                seen.append(_values(store))  # a read before the transaction: the latest commit
                with store.tx() as db:
                    db.execute("INSERT INTO t VALUES ('after the lock')")
                return "written"

            async def writer() -> None:
                assert await store.write(fn) == "written"
                done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(writer)
                while store.stats()["busy_retries"] < retries + 3:  # the loop runs this while the write waits
                    await anyio.sleep(0.01)
                assert not done.is_set() and seen == []
                await anyio.to_thread.run_sync(holder.release)
                with anyio.fail_after(60):
                    await done.wait()
        assert seen == [[]] and _values(store) == ["after the lock"]

    anyio.run(main)
    assert store.stats()["loop_lock_waits"] == 0


def test_write_gives_the_lock_back_when_fn_opens_no_transaction_and_gives_up_past_its_bound(store: Store) -> None:
    ran: list[int] = []
    assert anyio.run(lambda: store.write(lambda: ran.append(1) or "nothing")) == "nothing"
    other = sqlite3.connect(store.path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # free at once: the lock went back
    other.execute("ROLLBACK")
    other.close()
    with _lock_held(store.path):
        with pytest.raises(StoreBusy) as info:
            anyio.run(lambda: store.write(lambda: ran.append(2), timeout_s=0.2))
    assert ran == [1] and info.value.attempts >= 1  # fn never ran without the lock


def test_first_step_writing_runs_the_first_step_under_the_lock_and_the_rest_as_usual(store: Store) -> None:
    async def call() -> str:
        with store.tx() as db:
            db.execute("INSERT INTO t VALUES ('first step')")
        await anyio.sleep(0)
        with store.tx() as db:
            db.execute("INSERT INTO t VALUES ('second step')")
        return "done"

    async def main() -> None:
        with _lock_held(store.path) as holder:
            task_done = anyio.Event()
            result: list[str] = []

            async def run() -> None:
                result.append(await first_step_writing(store, call()))
                task_done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                retries = store.stats()["busy_retries"]
                while store.stats()["busy_retries"] < retries + 2:
                    await anyio.sleep(0.01)
                assert _values(store) == []  # nothing of the call ran
                await anyio.to_thread.run_sync(holder.release)
                with anyio.fail_after(60):
                    await task_done.wait()
        assert result == ["done"] and _values(store) == ["first step", "second step"]

    anyio.run(main)


def test_first_step_writing_passes_a_cancellation_into_the_call(store: Store) -> None:
    cleaned: list[str] = []

    async def call() -> None:
        with store.tx() as db:
            db.execute("INSERT INTO t VALUES ('started')")
        try:
            await anyio.sleep(3600)
        finally:
            cleaned.append("finally ran")

    async def main() -> None:
        with anyio.move_on_after(0.05):
            await first_step_writing(store, call())

    anyio.run(main)
    assert cleaned == ["finally ran"] and _values(store) == ["started"]
