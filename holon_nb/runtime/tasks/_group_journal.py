"""A durable list of the process groups a runtime started, for the next runtime to reap (issue 25 item 4b).

A command inside its foreground yield window has no task record yet: when its runtime is SIGKILLed, nothing
in the store names its process group, and the group (its own session) runs on. So each runtime appends every
group it starts to a journal file of its own, ``<home>/spool/groups/<runtime id>.pgids``, before it first
waits for the command: one ``write`` on an ``O_APPEND`` descriptor, which the kernel keeps when the process is
killed (no SQLite write, so another process's write lock never delays a command). The first line names the
owner (:func:`~.service.owner_token`). A runtime that closes ends its groups and removes its journal; a
runtime that starts reads the journals whose owner is gone and ends the groups still alive (:func:`reap`).

A group is ended when its leader still runs with the start time recorded, or when its leader is gone but
processes of its session remain (a background child, ``(sleep 1000 &)``), as at close
(:func:`~.process_groups.group_members`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ._process_groups import group_members

__all__ = ["GroupJournal", "reap"]

log = logging.getLogger("holon_nb.tasks")

_SUFFIX = ".pgids"
_GRACE_S = 0.2  # SIGTERM, then SIGKILL this many seconds later


class GroupJournal:
    """The journal of one runtime's process groups.

    Args:
        folder: ``<home>/spool/groups`` (created).
        owner: The owner token of the runtime (``<pid>:<start ticks>:<runtime id>``).
    """

    def __init__(self, folder: Path, owner: str):
        self.path = folder / f"{owner.rsplit(':', 1)[-1]}{_SUFFIX}"
        self._owner = owner
        self._fd: int | None = None
        self._folder = folder
        self._lock = threading.Lock()  # a command may start on a calling thread (:mod:`._early`)

    def record(self, pgid: int, start: str | None) -> None:
        """Append ``pgid`` and its leader's start time (``/proc`` ticks) before the runtime waits for it.

        A journal that cannot be written is logged and skipped: the command still runs, only a SIGKILL
        of this runtime would then leave it for nobody to end.
        """
        try:
            with self._lock:
                if self._fd is None:
                    self._folder.mkdir(parents=True, exist_ok=True)
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
                    os.write(self._fd, f"owner {self._owner}\n".encode())
                os.write(self._fd, f"{pgid} {start or '-'}\n".encode())
        except OSError as exc:
            log.warning("process group %d not journaled (%s): a SIGKILL would leave it running", pgid, exc)

    def close(self) -> None:
        """Forget the journal (the runtime ended its groups): close and remove the file. Idempotent."""
        with self._lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None
        with contextlib.suppress(OSError):
            self.path.unlink()


def _read(path: Path) -> tuple[str | None, list[tuple[int, str | None]]]:
    """``(owner token, [(pgid, start or None)])`` of a journal; a torn last line is skipped."""
    owner, groups = None, []
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None, []
    for line in text.splitlines():
        head, _, rest = line.partition(" ")
        if head == "owner":
            owner = rest.strip() or None
        elif head.isdigit() and rest:
            groups.append((int(head), None if rest.strip() == "-" else rest.strip()))
    return owner, groups


def _alive(pgid: int, start: str | None, proc_start: Callable[[int], str | None]) -> bool:
    """True when the group still has processes that are the ones the dead runtime started."""
    leader = proc_start(pgid)
    if leader is not None:
        return start is not None and leader == start  # the leader runs: only if it is the same process
    return bool(group_members(pgid))  # the leader is gone: what remains of its session


def reap(folder: Path, owner_alive: Callable[[str | None], bool], proc_start: Callable[[int], str | None]) -> list[int]:
    """End the process groups journaled by runtimes that are gone; remove their journals.

    Blocking (at most ~0.2 s when a group ignores SIGTERM). Journals of runtimes that still run (here or in
    another process on the home) are left alone.

    Args:
        folder: ``<home>/spool/groups``.
        owner_alive: ``owner_alive(token)``: True while that runtime runs.
        proc_start: ``proc_start(pid)``: the start time of a process in ``/proc`` ticks, None when gone.

    Returns:
        The process group ids that were signalled.
    """
    if not folder.is_dir():
        return []
    doomed: list[int] = []
    for path in sorted(folder.glob(f"*{_SUFFIX}")):
        owner, groups = _read(path)
        if owner is None or owner_alive(owner):
            continue  # a journal being started (no owner line yet), or a live runtime's
        doomed += [pgid for pgid, start in dict(groups).items() if _alive(pgid, start, proc_start)]
        with contextlib.suppress(OSError):
            path.unlink()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pgid in doomed:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
        deadline = time.monotonic() + _GRACE_S
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(group_members(p) for p in doomed):
            time.sleep(0.02)
        if not any(group_members(p) for p in doomed):
            break
    if doomed:
        log.info("ended %d process group(s) a runtime left running when it died: %s", len(doomed), doomed)
    return doomed
