"""A pytest plugin: a session fails when a process one of its tests started is still alive at its end (issue 23).

Which processes are the session's, read from ``/proc`` (Linux; psutil is not a dependency):

- the descendants of this pytest process (the ``ppid`` chain of ``/proc/<pid>/stat``): kernels, commands,
  servers a test started and did not end;
- any process whose environment carries this session's mark, :data:`MARK` (set here, at import, for every
  process started afterwards): a command's background child outlives its shell and is re-parented to
  init, so only the mark still ties it to the session.

Each process marks its own children: under pytest-xdist every worker checks its own (the controller runs no
test, so it checks nothing). The check runs in the teardown of a session-scoped autouse fixture, so it comes
after every other fixture's teardown: module and class fixtures are torn down before the session ones, and
session fixtures a test requests (a JupyterLab server, a Chromium) are set up after this one and so torn down
before it. Leftovers get a grace period (:data:`GRACE_ENV`, default 10 s) to end by themselves; those still
alive are reported by pid and command line, then killed so that they cannot disturb a later session, and the
teardown fails: pytest reports an error at the teardown of the session's last test, and exits non-zero.

Zombies (ended, not yet reaped) are not alive and are left out, and so are the helpers the standard library
keeps for the life of the process that started them (:data:`HELPERS`: multiprocessing's resource tracker, which
a ``spawn`` context starts once and never ends).
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The environment variable that marks the processes a session starts: ``<pytest pid>:<random>``.
MARK = "HOLON_TESTS_SESSION"
#: Seconds the leftovers get to end by themselves before they are reported (environment variable).
GRACE_ENV = "HOLON_TESTS_LEAK_GRACE_S"

#: Command lines of process-lifetime helpers that are not leaks (substrings).
HELPERS = ("from multiprocessing.resource_tracker import main", "from multiprocessing.forkserver import main")

TOKEN = f"{os.getpid()}:{secrets.token_hex(6)}"
os.environ[MARK] = TOKEN  # inherited by everything this process starts from now on


def _stat(pid: int) -> tuple[str, int] | None:
    """``(state, ppid)`` of ``pid``, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def _marked(pid: int, needle: bytes) -> bool:
    try:
        return needle in b"\0" + Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or another user's
        return False


def leftovers(owner: int | None = None, token: str | None = None) -> list[int]:
    """Live processes (not zombies) descended from ``owner`` (this process) or carrying ``token`` (this
    session's mark) in their environment, ``owner`` itself excepted."""
    owner = os.getpid() if owner is None else owner
    needle = f"\0{MARK}={TOKEN if token is None else token}\0".encode()
    table: dict[int, tuple[str, int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            table[int(entry.name)] = stat
    children: dict[int, list[int]] = {}
    for pid, (_, ppid) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(children.get(owner, []))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    found |= {pid for pid in table if pid != owner and _marked(pid, needle)}
    return sorted(pid for pid in found if table[pid][0] != "Z" and not any(h in _cmdline(pid) for h in HELPERS))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _describe(pid: int) -> str:
    cmdline = _cmdline(pid)
    stat = _stat(pid)
    ppid = stat[1] if stat else "?"
    return f"  pid {pid} (parent {ppid}): {cmdline[:300] or '?'}"


def check(grace_s: float) -> str | None:
    """Wait up to ``grace_s`` seconds for this session's leftovers to end; kill the rest and describe them
    (None when there are none)."""
    deadline = time.monotonic() + grace_s
    while (left := leftovers()) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not left:
        return None
    lines = [_describe(pid) for pid in left]
    for pid in left:
        if pid in leftovers():  # still this session's (not a pid reused meanwhile)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    deadline = time.monotonic() + 10  # a killed process still runs until the kernel has ended it
    while set(left) & set(leftovers()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return (
        f"{len(left)} process(es) started by this test session still ran {grace_s:g} s after its last test "
        "(now killed); a test or fixture must end what it starts:\n" + "\n".join(lines)
    )


@pytest.fixture(scope="session", autouse=True)
def _no_process_outlives_the_session() -> Iterator[None]:
    """Fail the session when a process its tests started is still alive after every other fixture's teardown."""
    yield
    problem = check(float(os.environ.get(GRACE_ENV, "10")))
    if problem:
        pytest.fail(problem, pytrace=False)
