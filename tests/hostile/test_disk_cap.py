"""The home's size cap holds during a burst, and the database is part of it (issue 25 item 3).

(a) Files younger than a minute were never pruned, so a burst of output grew the home far past
``max_home_bytes`` until a restart a minute later. The cap now holds while output is written: the oldest
finished artifacts go first, and output that would not fit is cut with a receipt that says so. (b) Inputs
refused as oversize were stored in full, twice, and the database was never pruned; a refused input is now kept
as a bounded digest, and old execution records are pruned (and the file vacuumed) when the database would
take the home over its cap. Real commands, real files, real SQLite; the home is measured by walking it, as
``du`` would, while the calls run.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _support import err, ok, read_db

from holon_nb.runtime import Runtime, RuntimeSettings

CAP = 4 * 1024 * 1024


def _home_bytes(home: Path) -> int:
    total = 0
    for folder, _, files in os.walk(home):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:  # removed while walked
                pass
    return total


@contextmanager
def _peak(home: Path) -> Iterator[list[int]]:
    """Sample the home's size in a thread while the block runs; yields ``[peak bytes]``."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _home_bytes(home))
            done.wait(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()
        peak[0] = max(peak[0], _home_bytes(home))


def _capped(tmp_path: Path, workspace: Path, cap: int = CAP) -> Runtime:
    return Runtime(
        home=tmp_path / "home",
        workspace=workspace,
        settings=RuntimeSettings(max_home_bytes=cap, memory_index_interval_s=0),
    )


def test_a_burst_of_output_keeps_the_home_under_its_cap(tmp_path: Path, workspace: Path) -> None:
    """Item 3(a): twelve commands of 1.2 MB output each, one right after the other (14 MB against 4 MiB)."""
    with _capped(tmp_path, workspace) as rt:
        with _peak(rt.home) as peak:
            for i in range(12):
                r = ok(rt.call("ExecCommand", {"cmd": f"yes burst-{i} | head -c 1200000", "max_output_tokens": 100}))
                assert r["artifacts"] and os.path.getsize(r["artifacts"][0]["path"]) == 1_200_000  # newest is whole
        assert peak[0] <= CAP, f"peak {peak[0]} bytes against a cap of {CAP}"


def test_output_that_cannot_fit_is_cut_with_a_receipt_that_says_so(tmp_path: Path, workspace: Path) -> None:
    """Item 3(a): one command printing more than the whole cap: its artifact stops at the cap and says so."""
    with _capped(tmp_path, workspace) as rt:
        with _peak(rt.home) as peak:
            result = rt.call("ExecCommand", {"cmd": "yes too-much | head -c 9000000", "max_output_tokens": 100})
        r = ok(result)
        assert peak[0] <= CAP, f"peak {peak[0]} bytes against a cap of {CAP}"
        assert r["stdout_chars"] >= 8_999_999  # the preview and counts still see the whole stream
        kept = os.path.getsize(r["artifacts"][0]["path"])
        assert kept < 9_000_000 and r["stdout_artifact_bytes_dropped"] == 9_000_000 - kept
        assert r["stdout_artifact_capped_by"] == "max_home_bytes"
        assert "max_home_bytes" in result.receipt and "not kept" in result.receipt


def test_refused_oversize_inputs_are_stored_as_bounded_digests(tmp_path: Path, workspace: Path) -> None:
    """Item 3(b): forty inputs over the 1 MiB field limit (48 MB of text) against a 4 MiB cap."""
    with _capped(tmp_path, workspace) as rt:
        ids = []
        with _peak(rt.home) as peak:
            for i in range(40):
                result = rt.call("ExecCommand", {"cmd": f"echo {i} " + "x" * 1_200_000})
                err(result, "invalid_tool_input")
                ids.append(result.execution_id)
        rt.store.flush_executions()
        assert peak[0] <= CAP, f"peak {peak[0]} bytes against a cap of {CAP}"
        rows = read_db(
            rt.home / "holon.sqlite3", "SELECT args, scrubbed_args FROM tool_executions WHERE id=?", (ids[-1],)
        )
        (args, scrubbed) = rows[0]
        assert len(args) < 4096 and len(scrubbed or "") < 4096
        digest = json.loads(args)["_refused_input"]
        assert digest["chars"] > 1_200_000 and len(digest["sha256"]) == 64 and digest["fields"] == ["cmd"]


@pytest.mark.slow  # 200 commands, 40 MB through the store
def test_execution_records_are_pruned_when_the_database_would_pass_the_cap(tmp_path: Path, workspace: Path) -> None:
    """Item 3(b): 200 accepted calls with 100 KB inputs (stored with their records: 40 MB) against a 16 MiB cap
    (SQLite's WAL alone may reach 4 MB before it is checkpointed): the oldest records go and the file is
    vacuumed; the newest records stay."""
    cap = 16 * 1024 * 1024
    with _capped(tmp_path, workspace, cap) as rt:
        ids = []
        with _peak(rt.home) as peak:
            for i in range(200):
                ids.append(rt.call("ExecCommand", {"cmd": f": {i} " + "y" * 100_000}).execution_id)
            rt.store.flush_executions()
        assert peak[0] <= cap, f"peak {peak[0]} bytes against a cap of {cap}"
        kept = {r[0] for r in read_db(rt.home / "holon.sqlite3", "SELECT id FROM tool_executions")}
        assert ids[-1] in kept and ids[0] not in kept
