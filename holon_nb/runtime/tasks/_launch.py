"""Starting a command: its channels (pipes or a pty) and the child process (commands spec §4.1).

:func:`launch` is what :meth:`CommandProcess.spawn <.processes.CommandProcess.spawn>` calls; the
process layer then reads the channels on the loop.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import shutil
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ...render._scrubbing import Scrubber

__all__ = ("CommandEnv", "LaunchSpec", "grow_pipe", "launch")

_PIPE_SIZE = 1024 * 1024  # requested kernel pipe buffer (F_SETPIPE_SZ), bytes
_T = TypeVar("_T")


class CommandEnv(dict[str, str]):
    """A command's complete environment as :meth:`TaskService.command_env <.service.TaskService.command_env>` makes
    it: read-only, and the same object while nothing it is made from changed (issue 27 item 7).

    What the steps after it derive from it (its encoding for the child, a shell snapshot's digest, the
    environment with ``BASH_ENV`` added) is kept on it (:meth:`memo`) instead of made again from its ~80
    variables on every command. Changing it raises ``TypeError``; a copy (``dict(env)``, ``{**env}``) is a
    plain dict.
    """

    __slots__ = ("_memo",)

    def __init__(self, env: Mapping[str, str]) -> None:
        dict.__init__(self, env)
        self._memo: dict[Hashable, Any] = {}

    def memo(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """``make()``, made once for this environment under ``key`` (it never changes, so neither does that)."""
        try:
            value: _T = self._memo[key]
        except KeyError:
            value = self._memo[key] = make()
        return value

    def _read_only(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a command's environment is read-only: change a copy (dict(env))")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]


@dataclass(frozen=True)
class LaunchSpec:
    """What to run and how.

    Attributes:
        argv: program and arguments, e.g. ``("bash", "-lc", "echo hi")``.
        cwd: working directory.
        env: the complete environment of the child.
        spool_dir: existing directory where the spool files are created.
        tty: run on a pseudo-terminal (80x24); stdout and stderr merge into "stdout".
        accepts_input: stdin is a pipe (or the pty) only when True; otherwise /dev/null.
        max_log_bytes: cap per spool file in bytes (D13); past it the file stops growing.
        scrubber: D6: secret values written to the spool files (task logs, artifacts) become
            ``[redacted]`` as they are written, also when a value is split across reads; None keeps
            the text as read (the in-memory tails are never scrubbed: previews scrub them before cutting).
        disk_grant: ``disk_grant(n)`` before each spool write of ``n`` bytes returns how many may be written
            (the home's size cap, :class:`~holon_nb.runtime.housekeeping._budget.DiskBudget`); None: no home cap.
        on_start: ``on_start(pid, window)`` the moment the child runs, before its channels and output capture are
            set up: the runtime journals the new process group there, so a SIGKILL of the runtime an instant after
            the start still leaves the group to the next runtime (issue 25 item 4b); ``window`` is
            ``(before, after)``, the boot clock (``CLOCK_BOOTTIME``, ns) read just before the child was created and
            just after, between which its start time lies (None where there is no such clock); None: nothing is
            called.
    """

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    spool_dir: Path
    tty: bool = False
    accepts_input: bool = False
    max_log_bytes: int = 256 * 1024 * 1024
    scrubber: Scrubber | None = None
    disk_grant: Callable[[int], int] | None = None
    on_start: Callable[[int, tuple[int, int] | None], None] | None = None


def launch(spec: LaunchSpec) -> tuple[subprocess.Popen[bytes], dict[int, str], int | None]:
    """Create the channels and start the child: the leader of a new session and process group.

    Returns:
        ``(popen, {our read fd: stream name}, our input fd or None)``: our ends of the channels, the
        caller's from now on (the child's ends are closed here).

    Raises:
        OSError: the program or ``cwd`` does not exist, or the start failed otherwise; no fd is left open.
    """
    opened: list[int] = []  # the child's ends, closed whatever happens
    kept: list[int] = []  # ours, the caller's on success
    try:
        return _start(spec, opened, kept)
    except BaseException:
        for fd in kept:
            os.close(fd)
        raise
    finally:
        for fd in opened:
            os.close(fd)


def _start(
    spec: LaunchSpec, opened: list[int], kept: list[int]
) -> tuple[subprocess.Popen[bytes], dict[int, str], int | None]:
    """:func:`launch`, the child's ends of the channels appended to ``opened``, ours to ``kept``."""
    stdin: int = subprocess.DEVNULL
    input_fd: int | None = None
    if spec.tty:
        master, slave = pty.openpty()
        kept.append(master)
        opened.append(slave)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        os.set_blocking(master, False)
        if spec.accepts_input:
            stdin, input_fd = slave, master
        read_fds, stdout, stderr = {master: "stdout"}, slave, slave
    else:
        if spec.accepts_input:
            stdin, input_fd = os.pipe()
            opened.append(stdin)
            kept.append(input_fd)
            os.set_blocking(input_fd, False)
        (out_r, stdout), (err_r, stderr) = os.pipe(), os.pipe()
        kept += [out_r, err_r]
        opened += [stdout, stderr]
        read_fds = {out_r: "stdout", err_r: "stderr"}
    executable = _executable(spec.argv[0], spec.env)
    env = _encoded(spec.env)

    def start(executable: str | None) -> subprocess.Popen[bytes]:
        window[0] = _boot_ns()  # the child is created after this
        return subprocess.Popen(
            list(spec.argv),
            executable=executable,
            cwd=spec.cwd,
            env=env,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=_acquire_ctty if spec.tty else None,
            close_fds=True,
        )

    window = [0, 0]
    try:
        popen = start(executable)
    except FileNotFoundError:
        if executable is None:
            raise
        _EXECUTABLES.clear()  # the program found a moment ago is gone: search the PATH as given
        popen = start(None)
    window[1] = _boot_ns()  # ... and before this
    if spec.on_start is not None:
        spec.on_start(popen.pid, (window[0], window[1]) if _BOOTTIME is not None else None)
    if not spec.tty:  # our ends only, set while the command starts (issue 12); nothing was read from them yet
        for fd in read_fds:
            os.set_blocking(fd, False)
    return popen, read_fds, input_fd


def grow_pipe(fd: int) -> None:
    """Ask for a 1 MiB kernel buffer on the pipe ``fd`` (``F_SETPIPE_SZ``, Linux; elsewhere nothing): a stream
    that filled the default 64 KiB wakes the loop less often, and its writer blocks less while the loop is busy.

    Done for a stream once it proved large (:meth:`CommandProcess._on_readable`), not for every command: most
    write a few bytes, and growing both pipes of each cost ~15 us of kernel time a command (issue 27 item 7).
    """
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, 1031, _PIPE_SIZE)


_BOOTTIME: int | None = getattr(time, "CLOCK_BOOTTIME", None)  # Linux's; None elsewhere


def _boot_ns() -> int:
    """The boot clock in ns (0 where there is none: the window is then not passed on)."""
    return time.clock_gettime_ns(_BOOTTIME) if _BOOTTIME is not None else 0


#: ``(program, PATH) -> (its file, when found)``: the program file a spawn execs (:func:`_executable`)
_EXECUTABLES: dict[tuple[str, str], tuple[str | None, float]] = {}
_EXECUTABLE_TTL_S = 10.0  # a program installed earlier on the PATH meanwhile is used after at most this long


def _executable(program: str, env: Mapping[str, str]) -> str | None:
    """The file ``program`` resolves to on the child's PATH, looked up at most every 10 s (issue 12).

    ``subprocess`` execs each PATH directory's candidate in turn in the child until one exists (six
    failed ``execve`` calls for ``sh`` here, ~40 us a command); exec'ing the file found once skips them.
    ``argv[0]`` is unchanged (``$0`` is still ``sh``). None: let ``subprocess`` search (a path with
    a slash, or a program not found).
    """
    if "/" in program:
        return None
    path = env.get("PATH")
    key = (program, os.defpath if path is None else path)  # as subprocess reads it (os.get_exec_path)
    now = time.monotonic()
    hit = _EXECUTABLES.get(key)
    if hit is None or now - hit[1] > _EXECUTABLE_TTL_S:
        if len(_EXECUTABLES) > 64:
            _EXECUTABLES.clear()
        hit = _EXECUTABLES[key] = (shutil.which(program, path=key[1]), now)
    return hit[0]


#: the environments last encoded (:func:`_encoded`), newest first: ``(a copy, its encoding)``
_ENCODED: list[tuple[dict[str, str], dict[bytes, bytes]]] = []


def _encoded(env: Mapping[str, str]) -> dict[bytes, bytes]:
    """``env`` with its names and values encoded as ``subprocess`` encodes them (``os.fsencode``), from a
    cache of the last four (issue 27 item 7).

    ``subprocess`` encodes each variable of a ``str`` environment in Python on every start (~0.1 ms for
    80 variables here); an encoded one it passes on almost as it is. A command's environment rarely
    changes between commands: a :class:`CommandEnv` keeps its own encoding, another mapping is found by one
    dict comparison (C-level) with the copy made before.
    """
    if type(env) is CommandEnv:
        return env.memo("encoded", lambda: {os.fsencode(k): os.fsencode(v) for k, v in env.items()})
    for copy, encoded in _ENCODED:
        if copy == env:
            return encoded
    copy = dict(env)
    encoded = {os.fsencode(k): os.fsencode(v) for k, v in copy.items()}
    _ENCODED.insert(0, (copy, encoded))
    del _ENCODED[4:]
    return encoded


def _acquire_ctty() -> None:  # runs in the child, after setsid()
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)
