"""The database's share of the home's size cap (issue 25 item 3b).

Execution records (``tool_executions``) are the log of every call, and the only part of the store that grows
with use alone; when the home is still over its cap once the removable files are gone, the oldest records go
(with the memory documents indexed from them), never the newest :data:`KEEP_NEWEST`, and the file is shrunk:
``PRAGMA incremental_vacuum`` (a database made before incremental auto-vacuum is converted once, by ``VACUUM``),
then a WAL checkpoint that truncates the ``-wal`` file. Work items, tasks, messages, waits and timers are state,
never pruned. An ``output_ref`` to a pruned record no longer resolves (MemoryGet says it was not found).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core._rows import delete_executions, oldest_executions
from ..memory._index import forget_executions
from ._prune import PrunePolicy, PruneReport, StoreReader, home_bytes, prune_home, record_task_pruned

__all__ = [
    "KEEP_NEWEST",
    "REFUSED_KEEP_CHARS",
    "prune_home_and_records",
    "prune_records",
    "refused_input_digest",
    "store_bytes",
    "truncate_wal",
]

log = logging.getLogger("holon_nb.runtime")

#: The newest execution records are never pruned (what a notebook just showed stays resolvable).
KEEP_NEWEST = 10
_BATCH = 200  # records weighed per query


def store_bytes(store: Any) -> int:
    """Bytes of the store's files on disk (the database, its ``-wal`` and ``-shm``)."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += store.path.with_name(store.path.name + suffix).stat().st_size
        except OSError:
            pass
    return total


def prune_records(store: Any, need_bytes: int, step_bytes: int = 1 << 20) -> tuple[int, int]:
    """Remove the oldest execution records until about ``need_bytes`` of their text is gone; shrink the file.

    Args:
        store: The home's :class:`~holon_nb.runtime.core._store.Store`.
        need_bytes: How many bytes the home is over its target.
        step_bytes: How much the file shrinks per vacuum step (the most the WAL holds meanwhile).

    Returns:
        ``(records removed, bytes the store's files shrank by)``.

    Raises:
        StoreBusy: another process held the write lock past the store's patience (nothing was removed).
    """
    if need_bytes <= 0:
        return 0, 0
    before = store_bytes(store)
    doomed: list[tuple[str, str]] = []
    freed = 0
    for execution_id, agent_id, size in oldest_executions(store.query, KEEP_NEWEST, _BATCH * 50):
        if freed >= need_bytes:
            break
        doomed.append((execution_id, agent_id))
        freed += size
    if not doomed:
        return 0, 0
    with store.tx(unversioned=True) as db:
        for start in range(0, len(doomed), _BATCH):
            chunk = doomed[start : start + _BATCH]
            delete_executions(db, [i for i, _ in chunk])
            forget_executions(db, chunk)
    _shrink(store, step_bytes)
    return len(doomed), max(0, before - store_bytes(store))


def truncate_wal(store: Any) -> None:
    """Checkpoint the WAL into the database and truncate the ``-wal`` file (it otherwise keeps its largest size)."""
    try:
        busy = store.query("PRAGMA wal_checkpoint(TRUNCATE)")[0][0]
    except sqlite3.OperationalError as exc:  # a reader of another process holds the WAL: the next one truncates
        busy = str(exc)
    if busy:
        log.info("WAL not truncated (a reader holds it): %s", busy)


def _shrink(store: Any, step_bytes: int) -> None:
    """Give freed pages back to the file system: incremental vacuum (converting the file once), WAL truncate.

    The vacuum moves live pages into the freed ones through the WAL, so it runs ``step_bytes`` at a time with
    the WAL truncated after each step: the home never holds more than one step of moved pages at once.
    """
    if store.query("PRAGMA auto_vacuum")[0][0] != 2:  # made before incremental auto-vacuum: convert it, once
        truncate_wal(store)
        store.query("PRAGMA auto_vacuum=INCREMENTAL")
        store.query("VACUUM")  # rewrites the file (a one-time cost of a home made before issue 25)
        truncate_wal(store)
        return
    page = store.query("PRAGMA page_size")[0][0]
    pages = max(16, step_bytes // page)
    truncate_wal(store)
    for _ in range(100_000):
        if store.query("PRAGMA freelist_count")[0][0] == 0:
            break
        store.query(f"PRAGMA incremental_vacuum({pages})")
        truncate_wal(store)


#: A refused input longer than this (characters of its JSON) is stored as a digest, not in full.
REFUSED_KEEP_CHARS = 4096


def refused_input_digest(args_text: str, args: Any, scrub: Callable[[str], str]) -> str:
    """The bounded JSON stored for an input refused as invalid (issue 25 item 3b): its length, the SHA-256 of its
    (scrubbed) text and the names of its top-level fields, never the text itself.

    Args:
        args_text: The input's JSON text, already scrubbed (D6).
        args: The input as given (a dict's field names are listed, scrubbed; other shapes list none).
        scrub: The D6 scrubber's ``text``.
    """
    names = [scrub(k) for k in args if isinstance(k, str) and len(k) <= 64][:32] if isinstance(args, dict) else []
    digest = {
        "chars": len(args_text),
        "sha256": hashlib.sha256(args_text.encode("utf-8", "surrogatepass")).hexdigest(),
        "fields": names,
        "note": "input refused as invalid; only this digest of it was stored",
    }
    return json.dumps({"_refused_input": digest})


def prune_home_and_records(store: Any, home: Path, policy: PrunePolicy, *, dry_run: bool = False) -> PruneReport:
    """:func:`~._prune.prune_home` with the store's task records, then, when the home is still over its cap,
    its WAL and old execution records (issue 25 item 3b; ``Runtime.prune``).

    Raises:
        StoreBusy: another process held the home's write lock past the store's busy timeout.
    """

    def record(task_id: str, info: dict[str, Any]) -> None:
        try:
            record_task_pruned(store, task_id, info)
        except sqlite3.OperationalError as exc:  # the file is gone either way; TaskOutput then finds no log
            log.warning("task %s: its pruned log not recorded: %s", task_id, exc)

    report = prune_home(home, StoreReader(store), policy, dry_run=dry_run, record=record)
    cap = policy.max_home_bytes
    if report.over_cap and not dry_run and cap is not None:  # files were not enough: the WAL, then old records
        truncate_wal(store)
        report.home_bytes_after = home_bytes(home)
        if report.home_bytes_after > cap:
            report.records_removed, _ = prune_records(store, report.home_bytes_after - cap, max(cap // 64, 4096))
            report.home_bytes_after = home_bytes(home)
        report.over_cap = report.home_bytes_after > cap
    return report
