"""Pruning of a holon home: a size cap and an age for command output files (D13).

What may be removed: the complete-output artifacts of finished commands
(``agents/<id>/tool-artifacts/*``) and the logs of ended background tasks
(``agents/<id>/task-output/<task_id>.log``). Nothing else under the home
(the SQLite store, work-item plans, agent files, spools) is ever removed.

What is never removed:

- the log of a task that is ``queued``, ``running`` or ``cancelling`` (a live task writes it);
- any file whose path (or whose task id) a work item names (objective, plan
  metadata, ``work_refs``, todo list): work that refers to output keeps it;
- by age, any file changed in the last :data:`GRACE_S` seconds (a command just wrote it). The size
  cap has no such grace (issue 25 item 3a: a burst of output grew the home far past its cap for a
  minute): a finished artifact or an ended task's log is complete, however young.

Order: every removable file older than ``max_age_s`` goes first; then, while the
home (every file under it) is larger than ``max_home_bytes``, the oldest
removable files go, one by one. When files are not enough, the runtime also prunes
old execution records (:mod:`.records`). Records stay: a pruned task's ``detail`` gets
``output_pruned`` ``{at, bytes, reason}``, and ``output_ref``\\ s keep resolving
through MemoryGet from the stored execution record (its previews), with the
artifact pointer marked ``pruned`` (see :mod:`holon_nb.runtime.memory_sources`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core._rows import set_task_detail, task_ids_with_status, task_in
from ..work._items import WorkItemRecords

if TYPE_CHECKING:
    from ..core._store import Store

__all__ = ["GRACE_S", "PrunePolicy", "PruneReport", "StoreReader", "home_bytes", "prune_home", "record_task_pruned"]

#: Files changed within this many seconds are never removed by age (the size cap may remove them).
GRACE_S = 60.0
_LIVE = ("queued", "running", "cancelling")


@dataclass(frozen=True)
class PrunePolicy:
    """When output files are removed.

    Attributes:
        max_home_bytes: Size cap of the whole home in bytes; 0 or None: no cap.
        max_age_s: Removable files older than this many seconds are removed; 0 or None: no age limit.
    """

    max_home_bytes: int | None = None
    max_age_s: float | None = None


@dataclass
class PruneReport:
    """What a prune did.

    Attributes:
        removed: ``{path, bytes, reason}`` per removed file (``reason``: ``age`` or ``size``), oldest first.
        kept_live: Files kept because a live task writes them.
        kept_referenced: Files kept because a work item names them.
        home_bytes_before, home_bytes_after: Size of every file under the home, bytes.
        over_cap: The home is still over ``max_home_bytes`` (nothing more may be removed).
        dry_run: Nothing was removed; ``removed`` lists what would be.
        records_removed: Execution records pruned because files were not enough (the runtime's prune, issue 25).
    """

    removed: list[dict[str, Any]] = field(default_factory=list)
    kept_live: int = 0
    kept_referenced: int = 0
    home_bytes_before: int = 0
    home_bytes_after: int = 0
    over_cap: bool = False
    dry_run: bool = False
    records_removed: int = 0

    @property
    def removed_bytes(self) -> int:
        """Bytes freed (or that would be)."""
        return sum(r["bytes"] for r in self.removed)

    def text(self, limit: int = 20) -> str:
        """A short human summary: one line, then one line per removed file (at most ``limit``)."""
        verb = "would remove" if self.dry_run else "removed"
        head = (
            f"prune: {verb} {len(self.removed)} file(s), {_mib(self.removed_bytes)}; home "
            f"{_mib(self.home_bytes_before)} -> {_mib(self.home_bytes_after)}; kept {self.kept_live} of live "
            f"tasks, {self.kept_referenced} named by work items"
        )
        if self.records_removed:
            head += f"; pruned {self.records_removed} old execution record(s)"
        if self.over_cap:
            head += "; still over max_home_bytes (the rest is not removable)"
        lines = [head] + [f"  {r['reason']:<4} {_mib(r['bytes']):>10}  {r['path']}" for r in self.removed[:limit]]
        if len(self.removed) > limit:
            lines.append(f"  … and {len(self.removed) - limit} more")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (what ``holon-nb prune --json`` prints)."""
        return {
            "removed": self.removed,
            "removed_bytes": self.removed_bytes,
            "kept_live": self.kept_live,
            "kept_referenced": self.kept_referenced,
            "home_bytes_before": self.home_bytes_before,
            "home_bytes_after": self.home_bytes_after,
            "over_cap": self.over_cap,
            "dry_run": self.dry_run,
            "records_removed": self.records_removed,
        }


class _Rows(list[Any]):
    def fetchall(self) -> list[Any]:
        return list(self)


class StoreReader:
    """``execute(sql, params).fetchall()`` for read queries through a store's lock (what pruning reads)."""

    def __init__(self, store: Store):
        self._store = store

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> _Rows:
        return _Rows(self._store.query(sql, params))


def _mib(n: int) -> str:
    return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n / 1024:.1f} KiB"


def home_bytes(home: Path) -> int:
    """Bytes of every file under ``home`` (``lstat`` sizes; a file removed while walked counts 0), not
    counting another home nested in it (a folder with its own ``holon.sqlite3``, as the per-notebook homes
    ``.holon/notebooks/<stem>/`` are inside a shared ``.holon/``): that one keeps its own cap."""
    total = 0
    for dirpath, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if not os.path.exists(os.path.join(dirpath, d, "holon.sqlite3"))]
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def _candidates(home: Path) -> Iterable[tuple[Path, os.stat_result, str | None]]:
    """``(path, stat, task_id or None)`` of every removable-kind file under the home's agents."""
    agents = home / "agents"
    if not agents.is_dir():
        return
    for agent in agents.iterdir():
        for sub, is_log in (("tool-artifacts", False), ("task-output", True)):
            folder = agent / sub
            if not folder.is_dir() or folder.is_symlink():
                continue
            for entry in folder.iterdir():
                try:
                    st = entry.lstat()
                except OSError:
                    continue
                if entry.is_file() and not entry.is_symlink():
                    yield entry, st, (entry.stem if is_log else None)


def _protected(db: Any) -> tuple[set[str], str]:
    """Ids of live tasks, and the text of every work item (paths and ids it names)."""
    try:
        texts = WorkItemRecords.texts(db)
    except Exception:  # a home without the work plane's tables
        texts = []
    return task_ids_with_status(db, _LIVE), "\n".join(texts)


def prune_home(
    home: Path, db: Any, policy: PrunePolicy, *, now: float | None = None, dry_run: bool = False, record: Any = None
) -> PruneReport:
    """Remove command output files of a holon home by ``policy`` (see the module docstring).

    Args:
        home: The holon home.
        db: A connection (or :class:`~holon_nb.runtime.store.Store`-like object with ``execute``) to read
            tasks and work items from.
        policy: The size cap and age.
        now: The current time (``time.time()`` by default).
        dry_run: Report what would be removed, remove nothing.
        record: ``record(task_id, info)`` called for each removed task log (the caller stores
            ``output_pruned`` in the task's detail); None records nothing.

    Returns:
        The :class:`PruneReport`.
    """
    now = time.time() if now is None else now
    report = PruneReport(dry_run=dry_run, home_bytes_before=home_bytes(home))
    live, named = _protected(db)
    removable: list[tuple[float, Path, int, str | None]] = []
    for path, st, task_id in _candidates(home):
        if task_id is not None and task_id in live:
            report.kept_live += 1
        elif str(path) in named or path.name in named or (task_id is not None and task_id in named):
            report.kept_referenced += 1
        else:
            removable.append((st.st_mtime, path, st.st_size, task_id))
    removable.sort(key=lambda c: (c[0], str(c[1])))
    size = report.home_bytes_before
    cap = policy.max_home_bytes or 0
    age = policy.max_age_s or 0
    for mtime, path, nbytes, task_id in removable:
        if age > 0 and now - mtime > max(age, GRACE_S):
            reason = "age"
        elif cap > 0 and size > cap:
            reason = "size"
        else:
            continue
        if not dry_run:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError:
                continue
            if task_id is not None and record is not None:
                record(
                    task_id,
                    {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), "bytes": nbytes, "reason": reason},
                )
        size -= nbytes
        report.removed.append({"path": str(path), "bytes": nbytes, "reason": reason})
    report.home_bytes_after = size
    report.over_cap = cap > 0 and size > cap
    return report


def record_task_pruned(store: Any, task_id: str, info: dict[str, Any]) -> None:
    """Store ``output_pruned`` in a task's detail (TaskOutput then says the log was pruned)."""
    with store.tx() as db:
        rec = task_in(db, task_id)
        if rec is None:
            return
        set_task_detail(db, task_id, {**rec["detail"], "output_pruned": info})
