"""Process layer under ``ExecCommand``: launch, capture, input, stop.

Every method runs on the runtime's event-loop thread (asyncio backend of anyio); a command may have been
started on a calling thread first (:mod:`._early`), and then adopted here.
Output is read with ``loop.add_reader`` on non-blocking pipes or a pty master (no
reader threads), decoded incrementally as UTF-8 with ``errors="replace"``, kept as a
bounded in-memory tail per stream and spooled to disk complete (commands spec §4.1, §4.2, commands spec §4.4,
§6.3; D13 caps each spool file). Exit is noticed through a pidfd (or 20 ms polling).

Example::

    proc = await CommandProcess.spawn(LaunchSpec(("sh", "-c", "echo hi"), cwd, env, spool))
    await proc.wait(5.0)
    proc.stdout.tail()  # "hi\\n"
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import errno
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from ...render._scrubbing import Scrubber
from ._launch import LaunchSpec, grow_pipe, launch
from ._process_groups import end_group, group_members

__all__ = ("CommandProcess", "LaunchSpec", "StreamCapture")

_log = logging.getLogger(__name__)

_READ_CHUNK = 256 * 1024  # bytes per os.read
_READS_PER_WAKEUP = 1  # reads per readiness callback before yielding to the loop (a 256 KiB chunk is scrubbed
# twice, stream and combined: ~35-80 ms of the loop on this machine; four in a row kept a GetWorkItem waiting 330 ms)
_DRAIN_S = 0.1  # output drained after the leader exits, seconds
_POLL_S = 0.02  # exit polling interval when pidfd is unavailable, seconds
#: The loop starts watching a command's output pipes this long after its start (seconds). A command that ends
#: sooner (most: ``true``, ``ls``, ``git status``) is read to its end once, when its exit is seen, without the
#: two reader registrations and removals each command cost (issue 27 item 7); a longer one is watched from then
#: on, and until then its output waits in the pipes (64 KiB each; a command that fills one waits that long).
_WATCH_AFTER_S = 0.005
#: read passes over a never-watched command's pipes at its exit: one reads what it wrote (at most a pipe's 64 KiB,
#: within one read), the next its end; a pipe still open after them (a background child holds it) is watched
_EXIT_READS = 2
_TAIL_CHARS = {"stdout": 128_000, "stderr": 128_000, "combined": 256_000}
_FFFD_BYTES = "\ufffd".encode()
_PIPE_DEFAULT = 64 * 1024  # a new pipe's buffer on Linux, bytes: a read of this much says the stream is large
#: A spool's first bytes are kept in memory; its file is made once they pass this (bytes), or when someone asks for
#: it (an artifact, a task log, a head read). Most commands write less: no file is made, written, closed and
#: deleted for them (issue 27 item 7: ~0.25 ms a command with output). The caps count held bytes as written.
_HOLD_BYTES = 64 * 1024


class StreamCapture:
    """Decoded text of one stream ("stdout", "stderr" or "combined").

    Attributes:
        name: stream name.
        total_chars: characters decoded so far (the complete stream, not just the tail).
        lossy: True once the decoder replaced an invalid byte with U+FFFD.
        spool_path: file holding the kept stream as UTF-8 (made once the stream passes ``_HOLD_BYTES``, or
            when asked for; until then the bytes are held in memory); None once discarded.
        bytes_dropped: UTF-8 bytes not written to the spool because of the cap.
        capped_by: why the spool stopped growing: ``max_task_log_bytes`` (its own cap), ``max_home_bytes``
            (the home's cap: ``disk_grant`` granted less than asked) or ``write_failed``; None while it grows.
    """

    def __init__(
        self,
        name: str,
        spool_dir: Path,
        cap: int,
        scrubber: Scrubber | None = None,
        disk_grant: Callable[[int], int] | None = None,
    ) -> None:
        self.name = name
        self._scrubber = scrubber
        self._stream_scrub = scrubber.stream() if scrubber is not None else None
        self.capped_by: str | None = None
        self._grant = disk_grant
        self.total_chars = 0
        self.lossy = False
        self.bytes_dropped = 0
        self._dir = spool_dir
        self._path: Path | None = None  # created past _HOLD_BYTES (or on first access): little output, no file
        self._fd: int | None = None
        self._held: list[bytes] = []  # the spool's bytes while it has no file (at most _HOLD_BYTES)
        self._held_size = 0
        self._discarded = False
        self._closed = False
        self._cap = cap
        self._written = 0
        self._full = False
        self._limit = _TAIL_CHARS[name]
        self._pieces: collections.deque[str] = collections.deque()
        self._size = 0

    @property
    def spool_path(self) -> Path | None:
        """The spool file (created empty on first access if nothing was written yet); None once discarded."""
        if self._discarded:
            return None
        if self._path is None:
            self._open()
        return self._path

    @spool_path.setter
    def spool_path(self, value: Path | None) -> None:
        if value is None:  # the file was moved away by its new owner: stop writing, forget it
            self._close_fd()
            self._discarded, self._path = True, None
            self._held, self._held_size = [], 0
        else:
            self._path = Path(value)

    @property
    def _wants_bytes(self) -> bool:
        """True while the spool is live (written to, or counting what the cap drops)."""
        return not (self._discarded or self._closed)

    def _open(self) -> None:
        """Make the spool file, with the bytes held so far."""
        fd, path = tempfile.mkstemp(prefix=f"cmd-{self.name}-", suffix=".log", dir=self._dir)
        self._path = Path(path)
        held, self._held, self._held_size = b"".join(self._held), [], 0
        unwritten = self._write_out(fd, memoryview(held))  # counted as written when held
        self._written -= unwritten
        self.bytes_dropped += unwritten
        if self._closed:
            os.close(fd)
        else:
            self._fd = fd

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def tail(self) -> str:
        """Return the last characters of the stream (at most 128,000; 256,000 for combined).

        The tail is raw text (callers scrub it before they cut it), except that when it starts where
        the stream was cut, a partial secret at its start is already ``[redacted]`` (D6): no scrub of
        the tail alone could recognise it.
        """
        if len(self._pieces) != 1:
            text = "".join(self._pieces)[-self._limit :]
            self._pieces = collections.deque([text] if text else ())
            self._size = len(text)
        text = self._pieces[0] if self._pieces else ""
        if self._scrubber is not None and self.total_chars > len(text):
            text = self._scrubber.edges(text, start=True)
        return text

    def read_all(self) -> str:
        """Return the complete kept text from the spool file.

        Raises:
            RuntimeError: if the spool was discarded (``spool_path`` is None).
            OSError: if the spool file cannot be read.
        """
        if self._discarded:
            raise RuntimeError(f"{self.name} spool was discarded")
        if self._path is None:  # all of it is held, if any
            return b"".join(self._held).decode("utf-8", "replace")
        return self._path.read_bytes().decode("utf-8", "replace")

    def _append(self, text: str, data: bytes) -> None:
        self.total_chars += len(text)
        if len(text) >= self._limit:
            self._pieces = collections.deque([text[-self._limit :]])
            self._size = self._limit
        else:
            self._pieces.append(text)
            self._size += len(text)
            while self._size - len(self._pieces[0]) >= self._limit:
                self._size -= len(self._pieces.popleft())
        if not self._wants_bytes:
            return
        if self._stream_scrub is not None:  # D6: the file never holds a secret, even one split across reads
            data = self._stream_scrub.feed(text).encode()
            if not data:
                return
        self._spool_write(data)

    def _spool_write(self, data: bytes) -> None:
        keep = 0 if self._full else min(len(data), self._cap - self._written)
        if keep < len(data) and not self._full:
            self.capped_by = "max_task_log_bytes"
        if keep and self._grant is not None:  # issue 25 item 3a: the home's cap holds while output is written
            granted = self._grant(keep)
            if granted < keep:
                keep, self.capped_by = granted, "max_home_bytes"
        if keep < len(data):  # cap reached: cut at a UTF-8 boundary; the file stops growing
            self._full = True
            while keep > 0 and 0x80 <= data[keep] <= 0xBF:
                keep -= 1
        view = memoryview(data)[:keep]
        if self._fd is None and self._path is None and self._held_size + keep <= _HOLD_BYTES:
            if keep:  # held: counted as written (the caps and the home's grant apply as to a write)
                self._held.append(view.tobytes())
                self._held_size += keep
                self._written += keep
            self.bytes_dropped += len(data) - keep
            return
        if self._fd is None and view:
            self._open()
        if view:
            keep -= self._write_out(self._fd, view)  # type: ignore[arg-type]
            self._written += keep
        self.bytes_dropped += len(data) - keep

    def _write_out(self, fd: int, view: memoryview) -> int:
        """Write all of ``view`` to the spool's ``fd``; return how many bytes could not be written (after a
        failed write, e.g. ENOSPC, the spool stops growing: ``capped_by`` is ``write_failed``)."""
        try:
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:
            _log.warning("spool %s: write failed: %s", self._path, exc)
            self._full, self.capped_by = True, "write_failed"
        return len(view)

    def _close_spool(self, delete: bool = False) -> None:
        if self._stream_scrub is not None and self._wants_bytes and not delete:
            rest = self._stream_scrub.flush().encode()  # the held-back end of the stream
            if rest:
                self._spool_write(rest)
        self._close_fd()
        self._closed = True
        if delete and not self._discarded:
            if self._path is not None:
                self._path.unlink(missing_ok=True)
            self._discarded, self._path = True, None
            self._held, self._held_size = [], 0


class _Reader:
    """Non-blocking reader of one fd feeding one stream's incremental decoder."""

    def __init__(self, fd: int, stream: str, pipe: bool = False) -> None:
        self.fd = fd
        self.stream = stream
        self.small_pipe = pipe  # a pipe still at its default size: grown once a read fills it (grow_pipe)
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.prev2 = b""  # last two raw bytes, to recognise EF BF BD across reads

    def decode(self, data: bytes, final: bool = False) -> tuple[str, bool]:
        """Return (text, replaced): replaced is True when an invalid byte became U+FFFD."""
        text = self.decoder.decode(data, final)
        replaced = False
        if "\ufffd" in text:  # EF BF BD always decodes to a genuine U+FFFD: count them
            legit = data.count(_FFFD_BYTES) + (self.prev2 + data[:2]).count(_FFFD_BYTES)
            replaced = final or text.count("\ufffd") > legit
        self.prev2 = (self.prev2 + data[-2:])[-2:]
        return text, replaced


class CommandProcess:
    """A running command in its own process group (session), with captured output.

    Attributes:
        pid: process id of the leader; also its process group id (``pgid``).
        started_at: ``time.time()`` at spawn, seconds.
        stdout, stderr, combined: the captures; ``combined`` interleaves in arrival order.
        on_output: called on the loop thread with (stream name, text) per decoded chunk.
        on_exit: called once on the loop thread after exit and drain.
        returncode: None while running; negative signal number if killed by a signal.
        exit_status: exit code; None if killed by a signal or still running.
        signal_name: e.g. "SIGTERM" when killed by a signal, else None.
        done: True once the leader exited and its output was drained (<= 100 ms).
    """

    def __init__(
        self,
        spec: LaunchSpec,
        popen: subprocess.Popen[bytes],
        captures: dict[str, StreamCapture],
        read_fds: dict[int, str],
        input_fd: int | None,
        started_at: float | None = None,
    ) -> None:
        self.spec = spec
        self.pid = popen.pid
        self.pgid = popen.pid
        self.started_at = time.time() if started_at is None else started_at
        self.stdout = captures["stdout"]
        self.stderr = captures["stderr"]
        self.combined = captures["combined"]
        self.on_output: Callable[[str, str], None] | None = None
        self.on_exit: Callable[[CommandProcess], None] | None = None
        self.returncode: int | None = None
        self.exit_status: int | None = None
        self.signal_name: str | None = None
        self.done = False
        self._popen = popen
        self._loop = asyncio.get_running_loop()
        self._done_waiters: list[asyncio.Future[None]] = []  # ``wait`` calls in progress
        # asyncio's own, made without anyio's backend lookup (issue 27 item 7: every command makes one)
        self._exited_event = asyncio.Event()
        self._readers = {fd: _Reader(fd, stream, not spec.tty) for fd, stream in read_fds.items()}
        self._input_fd = input_fd
        self._write_waiter: asyncio.Future[None] | None = None
        self._write_lock: anyio.Lock | None = None  # made by the first write_input (few commands take input)
        self._drain_timer: asyncio.TimerHandle | None = None
        self._pidfd: int | None = None
        self._watching = False  # the loop's readers are on the output fds (see _WATCH_AFTER_S)
        self._watch_timer: asyncio.TimerHandle | None = None
        if spec.tty:  # a pty master: read as it comes (EIO, not EOF, ends it; an interactive program echoes)
            self._watch()
        else:
            self._watch_timer = self._loop.call_later(_WATCH_AFTER_S, self._watch)
        try:
            self._pidfd = os.pidfd_open(self.pid)
            self._loop.add_reader(self._pidfd, self._check_exit)
        except (AttributeError, OSError):
            self._loop.call_later(_POLL_S, self._check_exit)

    @classmethod
    async def spawn(cls, spec: LaunchSpec) -> CommandProcess:
        """Start ``spec.argv`` as the leader of a new session and process group.

        Args:
            spec: what to run; ``spec.spool_dir`` must exist.

        Returns:
            The started process; output capture is already running.

        Raises:
            FileNotFoundError: if the program (or ``cwd``) does not exist.
            NotADirectoryError: if ``cwd`` is not a directory.
            PermissionError: if the program is not executable.
            OSError: for any other launch failure; no fd, file or process is left behind.
        """
        return cls.adopt(spec, *launch(spec))

    @classmethod
    def adopt(
        cls,
        spec: LaunchSpec,
        popen: subprocess.Popen[bytes],
        read_fds: dict[int, str],
        input_fd: int | None,
        started_at: float | None = None,
    ) -> CommandProcess:
        """The loop's side of a command :func:`~._launch.launch` started (here by :meth:`spawn`, or on a calling
        thread by :class:`~._early.EarlyCommand`): its captures, and the watching of its output and exit.
        ``started_at``: ``time.time()`` at its start (default now)."""
        captures = {
            name: StreamCapture(name, spec.spool_dir, spec.max_log_bytes, spec.scrubber, spec.disk_grant)
            for name in ("stdout", "stderr", "combined")
        }
        return cls(spec, popen, captures, read_fds, input_fd, started_at)

    def _watch(self) -> None:
        """Have the loop read the output fds as data comes: at once for a pty, else ``_WATCH_AFTER_S`` after the
        start (a promoted task too), or at the exit when its output is still open."""
        self._watch_timer = None
        if self._watching:
            return
        self._watching = True
        for fd in self._readers:
            self._loop.add_reader(fd, self._on_readable, fd)

    def _read_to_end(self) -> None:
        """At the exit of a command whose pipes were never watched: read them to their end (``_EXIT_READS``
        passes of :meth:`read_ready`); one still open (a background child holds it) is watched from now on."""
        if self._watch_timer is not None:
            self._watch_timer.cancel()
            self._watch_timer = None
        for _ in range(_EXIT_READS):
            if not self._readers:
                break
            self.read_ready()
        if self._readers:
            self._watch()

    def _on_readable(self, fd: int) -> None:
        reader = self._readers.get(fd)
        if reader is None:
            return
        for _ in range(_READS_PER_WAKEUP):
            try:
                data = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError as exc:  # EIO from a pty master once the slave side is closed
                if exc.errno != errno.EIO:
                    _log.warning("read of %s failed: %s", reader.stream, exc)
                data = b""
            if not data:
                self._close_reader(reader)
                if not self._readers and self.returncode is not None:
                    self._finish()
                return
            if reader.small_pipe and len(data) >= _PIPE_DEFAULT:  # a large stream: a bigger buffer from now on
                reader.small_pipe = False
                grow_pipe(fd)
            self._emit(reader, data)
            if len(data) < _READ_CHUNK:
                return

    def read_ready(self) -> None:
        """Read, without waiting, what the command already wrote to its pipes (call on the loop thread).

        The loop reads output when it next runs its reader callbacks; a caller that decides now
        from what was captured (ExecCommand promoting after its yield time) calls this first, so
        output written just before the decision is in the captures, not read a moment later.
        """
        for fd in list(self._readers):  # one reader wake-up each: a bounded read, even of a flood
            self._on_readable(fd)

    def _emit(self, reader: _Reader, data: bytes, final: bool = False) -> None:
        text, replaced = reader.decode(data, final)
        if not text:
            return
        capture = self.stdout if reader.stream == "stdout" else self.stderr
        if replaced:
            capture.lossy = self.combined.lossy = True
        data = text.encode() if capture._wants_bytes or self.combined._wants_bytes else b""
        capture._append(text, data)
        self.combined._append(text, data)
        _call(self.on_output, reader.stream, text)

    def _close_reader(self, reader: _Reader) -> None:
        del self._readers[reader.fd]
        if self._watching:
            self._loop.remove_reader(reader.fd)
        if reader.fd == self._input_fd:  # a pty master: input closes with it
            self._close_input(close_fd=False)
        os.close(reader.fd)
        self._emit(reader, b"", final=True)

    def _check_exit(self) -> None:
        if self._popen.poll() is None:
            if self._pidfd is None:
                self._loop.call_later(_POLL_S, self._check_exit)
            return
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        rc = self.returncode = self._popen.returncode
        if rc >= 0:
            self.exit_status = rc
        else:
            self.signal_name = signal.Signals(-rc).name if -rc in signal.valid_signals() else f"SIG{-rc}"
        self._exited_event.set()
        if not self._watching:
            self._read_to_end()
        elif self._readers:
            self.read_ready()  # output that ended with the exit: read to its end now (finishes when it did)
        if self.done:
            return
        if self._readers:
            self._drain_timer = self._loop.call_later(_DRAIN_S, self._finish)
        else:
            self._finish()

    def _finish(self) -> None:
        if self.done:
            return
        if self._drain_timer is not None:
            self._drain_timer.cancel()
        if self._watch_timer is not None:
            self._watch_timer.cancel()
            self._watch_timer = None
        for reader in list(self._readers.values()):  # abandoned: e.g. a background child
            self._close_reader(reader)
        self._close_input()
        for capture in (self.stdout, self.stderr, self.combined):
            capture._close_spool()
        self.done = True
        for waiter in self._done_waiters:
            _resolve(waiter)
        self._done_waiters.clear()
        _call(self.on_exit, self)

    def _close_input(self, close_fd: bool = True) -> None:
        fd, self._input_fd = self._input_fd, None
        if fd is None:
            return
        if self._write_waiter is not None:
            self._loop.remove_writer(fd)
            if not self._write_waiter.done():
                self._write_waiter.set_exception(BrokenPipeError("input channel closed"))
        if close_fd:
            os.close(fd)

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until the process is done (exited and drained).

        Args:
            timeout: seconds to wait; None waits without limit.

        Returns:
            True if done within ``timeout``, else False.
        """
        if self.done:
            return True
        # a bare loop future, resolved by _finish or the timeout (issue 12: no cancel scope per command)
        waiter = self._loop.create_future()
        self._done_waiters.append(waiter)
        timer = None if timeout is None else self._loop.call_later(timeout, _resolve, waiter)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
            if waiter in self._done_waiters:  # else _finish emptied the list (no exception raised per command)
                self._done_waiters.remove(waiter)
        return self.done

    async def write_input(self, data: bytes) -> int:
        """Write all of ``data`` to the stdin pipe or the pty master.

        Args:
            data: bytes to deliver, verbatim.

        Returns:
            ``len(data)``.

        Raises:
            RuntimeError: ("input not accepted") if the spec had ``accepts_input=False``.
            BrokenPipeError: if the channel is closed (process done or reader gone).
            OSError: if the write fails otherwise.
        """
        if not self.spec.accepts_input:
            raise RuntimeError("input not accepted")
        if self._input_fd is None:
            raise BrokenPipeError("input channel closed")
        view = memoryview(data)
        if self._write_lock is None:
            self._write_lock = anyio.Lock()
        async with self._write_lock:
            while view:
                view = await self._write_some(view)
        return len(data)

    async def _write_some(self, view: memoryview) -> memoryview:
        fd = self._input_fd
        if fd is None:
            raise BrokenPipeError("input channel closed")
        try:
            return view[os.write(fd, view) :]
        except BlockingIOError:
            self._write_waiter = self._loop.create_future()
            self._loop.add_writer(fd, _resolve, self._write_waiter)
            try:
                await self._write_waiter
            finally:
                if self._input_fd == fd:
                    self._loop.remove_writer(fd)
                self._write_waiter = None
            return view
        except OSError as exc:
            if exc.errno == errno.EIO:
                raise BrokenPipeError("input channel closed") from exc
            raise

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the whole process group; no error if the group is gone."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, sig)

    def group_members(self) -> list[int]:
        """Live processes (pids) still in this command's process group, the leader included if alive."""
        return group_members(self.pgid)

    async def stop(self, grace_s: float = 0.1) -> None:
        """Terminate the group: SIGTERM, up to ``grace_s`` seconds, then SIGKILL.

        Returns once the leader is reaped and output drained. Descendants that left the
        group (``setsid``) are not reached. When the leader already exited, members it left
        in the group (``(sleep 1000 &)``) are still ended.

        Args:
            grace_s: seconds between SIGTERM and SIGKILL.
        """
        if self.done:
            if group_members(self.pgid):
                await anyio.to_thread.run_sync(end_group, self.pgid, grace_s)
            return
        self.signal_group(signal.SIGTERM)
        with anyio.move_on_after(grace_s):
            await self._exited_event.wait()
        self.signal_group(signal.SIGKILL)
        await self.wait(None)

    def promote(self, log_path: Path) -> None:
        """Turn the combined spool into the task log at ``log_path`` and keep appending.

        The stdout and stderr spools are deleted (their ``spool_path`` becomes None);
        tails keep following the stream. The D13 cap keeps applying to the log.

        Args:
            log_path: destination file; its parent is created if missing.

        Raises:
            RuntimeError: if the combined spool was already discarded.
            OSError: if the log cannot be moved or copied to ``log_path``.
        """
        combined = self.combined
        if combined._discarded:
            raise RuntimeError("combined spool was discarded")
        source = combined.spool_path  # created now if nothing was written yet
        assert source is not None
        log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(source, log_path)  # the open fd follows the inode
        except OSError:  # e.g. EXDEV: copy, then append to the copy
            shutil.copyfile(source, log_path)
            if combined._fd is not None:
                os.close(combined._fd)
                combined._fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
            source.unlink(missing_ok=True)
        combined.spool_path = log_path
        self.stdout._close_spool(delete=True)
        self.stderr._close_spool(delete=True)

    def discard_spools(self, keep: set[str] | frozenset[str] = frozenset()) -> None:
        """Delete the spool files of streams not named in ``keep``.

        Args:
            keep: stream names to keep, from "stdout", "stderr", "combined".
        """
        for capture in (self.stdout, self.stderr, self.combined):
            if capture.name not in keep:
                capture._close_spool(delete=True)


def _call(callback: Callable[..., None] | None, *args: object) -> None:
    if callback is not None:
        try:
            callback(*args)
        except Exception:
            _log.exception("callback %r failed", callback)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
