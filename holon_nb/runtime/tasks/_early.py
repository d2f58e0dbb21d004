"""A foreground command started on the calling thread, before its call reaches the runtime's loop (issue 27 item 7).

A direct call (``Runtime.call``, a magic) waits on its thread while the loop thread wakes up, runs the
call and starts the command: the wake-up alone was ~0.1 ms of a ``true`` that takes ~0.9 ms. When the
call's tool can say on the calling thread what it is going to start (:attr:`ToolSpec.start_early
<holon_nb.tools._spec.ToolSpec.start_early>`), the command starts there, and the loop, once awake,
adopts the running process (:meth:`EarlyCommand.adopt`) where the handler would have started it: its
output, exit and promotion are then the loop's as for any command.

Only the OS part runs on the calling thread (:func:`~._launch.launch`: pipes, ``Popen``, the group
journal); everything that touches the loop (readers, timers) is made by :meth:`adopt`. A process the
call did not adopt (its handler started nothing, or the caller was interrupted first) is killed and
reaped by :meth:`abandon`. A command starts early only when its handler is certain to start the same
one; the one race left (a task of the same identity appearing between the two threads, which the handler
gives back instead) ends with the early command killed at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time

from ._launch import LaunchSpec, launch
from ._processes import CommandProcess

__all__ = ["EarlyCommand", "LaunchKey"]

#: What a handler asks to start: ``(shell, cmd, workdir, login, tty, accepts_input)``.
LaunchKey = tuple[str, str, str, bool, bool, bool]


class EarlyCommand:
    """A started command waiting for its call to adopt it.

    Args:
        key: What was started, as the handler will ask for it (:data:`LaunchKey`).
        spec: How it was started.

    Raises:
        OSError: from the constructor, when the command could not start (nothing is left behind; the call
            then starts it on the loop as usual, and reports the failure there).
    """

    def __init__(self, key: LaunchKey, spec: LaunchSpec) -> None:
        self.key = key
        self.spec = spec
        self._popen, self._read_fds, self._input_fd = launch(spec)  # our fds: handed over on adoption
        self.started_at = time.time()
        self._lock = threading.Lock()
        self._state = "started"  # then "adopted" or "abandoned", once

    def adopt(self) -> CommandProcess | None:
        """The running command as a :class:`~._processes.CommandProcess` (on the loop thread), or None when it
        was abandoned meanwhile (the caller was interrupted)."""
        with self._lock:
            if self._state != "started":
                return None
            self._state = "adopted"
        return CommandProcess.adopt(self.spec, self._popen, self._read_fds, self._input_fd, self.started_at)

    def abandon(self) -> bool:
        """Kill and reap the command unless it was adopted (any thread; blocks until it is gone, a few ms).

        Returns:
            True when it was running unadopted and is now gone.
        """
        with self._lock:
            if self._state != "started":
                return False
            self._state = "abandoned"
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(5.0)
        for fd in (*self._read_fds, *([] if self._input_fd is None else [self._input_fd])):
            with contextlib.suppress(OSError):
                os.close(fd)
        return True
