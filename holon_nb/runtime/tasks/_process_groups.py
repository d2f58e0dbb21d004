"""Process groups the runtime started: who is still in one, and ending one (issue 9).

Commands run as leaders of their own session (``start_new_session``), so a command's
session id and process group id both equal its leader's pid. A background child the
command left behind (``(sleep 1000 &); echo done``) stays in that group after the
leader exits; these helpers find and end such members. Linux ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

__all__ = ["end_group", "group_members"]


def group_members(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes whose process group is ``pgid`` and whose session is ``pgid``.

    Commands run as leaders of their own session (``start_new_session``), so session and group
    ids both equal the leader's pid; requiring both guards against a reused number. Linux ``/proc``.
    A group with no process at all is answered by one ``killpg(pgid, 0)`` instead of a scan of
    ``/proc`` (issue 12: this runs after every command).
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except OSError:  # EPERM: a member we may not signal exists; the scan below decides
        pass
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and fields[0] != b"Z" and int(fields[2]) == pgid and int(fields[3]) == pgid:
            members.append(int(name))
    return members


def end_group(pgid: int, grace_s: float = 0.2) -> bool:
    """End a process group that still has live members: SIGTERM, ``grace_s`` seconds, then SIGKILL.

    Blocking (call it off the event loop). Returns True when the group had members.
    """
    if not group_members(pgid):
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and group_members(pgid):
        time.sleep(0.02)
    if group_members(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    return True
