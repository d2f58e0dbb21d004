"""Tests for holon_nb.runtime.tasks._processes, with real subprocesses (spec §4.1, §4.2, §4.4, §6.3)."""

from __future__ import annotations

import codecs
import errno
import fcntl
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from holon_nb.runtime.tasks import _processes as processes
from holon_nb.runtime.tasks._processes import CommandProcess, LaunchSpec

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def spool(tmp_path: Path) -> Path:
    path = tmp_path / "spool"
    path.mkdir()
    return path


def make_spec(spool: Path, cmd: str, **kw: object) -> LaunchSpec:
    return LaunchSpec(argv=("bash", "-c", cmd), cwd=str(spool.parent), env=dict(os.environ), spool_dir=spool, **kw)


async def run(spool: Path, cmd: str, timeout: float = 5.0, **kw: object) -> CommandProcess:
    proc = await CommandProcess.spawn(make_spec(spool, cmd, **kw))
    assert await proc.wait(timeout), f"{cmd!r} did not finish within {timeout} s"
    return proc


async def wait_for_text(proc: CommandProcess, text: str, timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while text not in proc.combined.tail():
            await anyio.sleep(0.01)


def open_fds() -> set[tuple[str, str]]:
    """This process's open descriptors as ``(fd, what it points at)``. Tests compare sets, not counts: another
    thread of the worker (a test before this one winding down) may close a descriptor of its own meanwhile."""
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        except OSError:  # closed between the listing and the readlink (the listing's own descriptor, for one)
            pass
    return fds


class TestExit:
    async def test_exit_code_and_separate_streams(self, spool: Path) -> None:
        proc = await run(spool, "echo out; sleep 0.05; echo err >&2; sleep 0.05; echo again; exit 3")
        assert (proc.returncode, proc.exit_status, proc.signal_name, proc.done) == (3, 3, None, True)
        assert proc.stdout.tail() == "out\nagain\n"
        assert proc.stderr.tail() == "err\n"
        assert proc.combined.tail() == "out\nerr\nagain\n"
        assert proc.combined.read_all() == "out\nerr\nagain\n"
        assert proc.stdout.total_chars == 10 and proc.combined.total_chars == 14
        assert proc.pgid == proc.pid and proc.started_at <= time.time()

    async def test_signal_death_has_no_exit_status(self, spool: Path) -> None:
        proc = await run(spool, "kill -9 $$")
        assert (proc.returncode, proc.exit_status, proc.signal_name) == (-9, None, "SIGKILL")

    async def test_wait_times_out_while_running(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "sleep 5"))
        assert await proc.wait(0.05) is False and not proc.done and proc.returncode is None
        await proc.stop()
        assert proc.done and proc.signal_name == "SIGTERM" and proc.exit_status is None

    @pytest.mark.parametrize(
        ("argv", "cwd", "exc"),
        [
            (("/nonexistent/sh", "-c", "true"), None, FileNotFoundError),
            (("bash", "-c", "true"), "file", NotADirectoryError),
        ],
    )
    async def test_spawn_failure_leaves_nothing(
        self, spool: Path, argv: tuple[str, ...], cwd: str | None, exc: type[OSError]
    ) -> None:
        a_file = spool.parent / "file"
        a_file.write_text("x")
        spec = LaunchSpec(argv, str(a_file) if cwd else str(spool.parent), dict(os.environ), spool)
        before = open_fds()
        with pytest.raises(exc):
            await CommandProcess.spawn(spec)
        assert not open_fds() - before, open_fds() - before  # every descriptor the test opened is closed
        assert list(spool.iterdir()) == []


class TestDecoding:
    async def test_multibyte_split_across_reads(self, spool: Path) -> None:
        proc = await run(spool, r"printf '\344\270'; sleep 0.3; printf '\255'")
        assert proc.stdout.tail() == "中" and not proc.stdout.lossy and proc.stdout.read_all() == "中"

    async def test_invalid_bytes_are_replaced_and_lossy(self, spool: Path) -> None:
        proc = await run(spool, r"printf '\377\376ok'; echo fine >&2")
        assert proc.stdout.tail() == "\ufffd\ufffdok"
        assert proc.stdout.lossy and proc.combined.lossy and not proc.stderr.lossy

    async def test_literal_replacement_char_is_not_lossy(self, spool: Path) -> None:
        proc = await run(spool, r"printf '\357\277\275a\357'; sleep 0.2; printf '\277\275'")
        assert proc.stdout.tail() == "\ufffda\ufffd"
        assert not proc.stdout.lossy and not proc.combined.lossy

    async def test_decoder_flushed_at_eof(self, spool: Path) -> None:
        proc = await run(spool, r"printf 'x\344\270'")
        assert proc.stdout.tail() == "x\ufffd" and proc.stdout.lossy

    async def test_c05_emoji_and_accents_survive(self, spool: Path) -> None:
        code = (
            "import sys; sys.stdout.buffer.write(b'a'*4095 + '\\U0001F389'.encode() + 'é'.encode()*3000);"
            "sys.stdout.flush()"
        )
        proc = await run(spool, f'"{sys.executable}" -c "{code}"')
        text = proc.stdout.read_all()
        assert text == "a" * 4095 + "\U0001f389" + "é" * 3000 and "\ufffd" not in text
        assert not proc.stdout.lossy

    def test_lossy_flag_matches_reference_decoder(self) -> None:
        """The fast exact lossy check agrees with a decoder whose error handler records replacements."""
        seen: list[int] = []

        def record(exc: UnicodeError) -> tuple[str, int]:
            assert isinstance(exc, UnicodeDecodeError)
            seen.append(exc.start)
            return "\ufffd", exc.end

        codecs.register_error("test_processes_record", record)
        rng = random.Random(7)
        alphabet = [b"\xef\xbf\xbd", b"\xef", b"\xbf", b"\xbd", b"\xe4\xb8\xad", b"\xe4", b"\xf0\x9f", b"a", b"\xff"]
        for _ in range(2000):
            data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
            cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 3))))
            reader = processes._Reader(-1, "stdout")
            text, lossy, start = "", False, 0
            for cut in [*cuts, len(data)]:
                part, replaced = reader.decode(data[start:cut])
                text, lossy, start = text + part, lossy or replaced, cut
            part, replaced = reader.decode(b"", final=True)
            text, lossy = text + part, lossy or replaced
            seen.clear()
            assert text == data.decode("utf-8", "test_processes_record") == data.decode("utf-8", "replace")
            assert lossy == bool(seen), data


class TestLifecycle:
    async def test_background_child_is_abandoned(self, spool: Path) -> None:
        proc = await run(spool, "sleep 30 & echo done", timeout=25)
        try:
            # it ended with the shell, not with the child holding its stdout: that child still runs
            assert proc.stdout.tail() == "done\n" and proc.exit_status == 0
            assert subprocess.run(["pgrep", "-g", str(proc.pgid), "sleep"], capture_output=True).returncode == 0
        finally:
            proc.signal_group(signal.SIGKILL)  # the runtime itself never kills a finished command's children

    async def test_stdin_is_null_without_input(self, spool: Path) -> None:
        # with stdin open, cat would read forever: the command ending at all shows it got end-of-file
        proc = await run(spool, "cat; echo after-cat", timeout=60)
        assert proc.stdout.tail() == "after-cat\n"
        with pytest.raises(RuntimeError, match="input not accepted"):
            await proc.write_input(b"x")

    async def test_on_output_chunks_in_order_and_on_exit_once(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "for i in 1 2 3; do echo tick-$i; sleep 0.2; done"))
        chunks: list[tuple[str, str]] = []
        exits: list[CommandProcess] = []
        proc.on_output = lambda stream, text: chunks.append((stream, text))
        proc.on_exit = exits.append
        assert await proc.wait(5)
        assert len(chunks) >= 3 and {stream for stream, _ in chunks} == {"stdout"}
        assert "".join(text for _, text in chunks) == "tick-1\ntick-2\ntick-3\n"
        assert exits == [proc]

    async def test_stop_kills_whole_tree(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(
            make_spec(spool, "(while true; do echo child-tick; sleep 1; done) & sleep 600")
        )
        await wait_for_text(proc, "child-tick", timeout=30)
        with anyio.fail_after(60):  # far below the shell's own 600 s: stop ended it, it did not end by itself
            await proc.stop()
        assert proc.done and proc.exit_status is None and proc.signal_name in {"SIGTERM", "SIGKILL"}
        with anyio.fail_after(30):
            while subprocess.run(["pgrep", "-f", "child-[t]ick"], capture_output=True).returncode == 0:
                await anyio.sleep(0.05)
        proc.signal_group(signal.SIGKILL)  # gone: no error
        await proc.stop()  # idempotent

    async def test_stop_escalates_to_sigkill(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "trap '' TERM; echo armed; sleep 600 & wait"))
        await wait_for_text(proc, "armed")
        await proc.stop(grace_s=0.1)
        assert proc.signal_name == "SIGKILL"


class TestInput:
    async def test_pipe_input(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "read -r line; echo got:$line", accepts_input=True))
        assert await proc.write_input(b"hello\n") == 6
        assert await proc.wait(3) and proc.stdout.tail() == "got:hello\n"
        with pytest.raises(BrokenPipeError):
            await proc.write_input(b"late\n")

    async def test_pipe_input_large_and_echoed(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "cat", accepts_input=True))
        payload = b"0123456789abcdef" * 65536  # 1 MiB: more than the pipe holds at once
        assert await proc.write_input(payload) == len(payload)
        with anyio.fail_after(3):
            while proc.stdout.total_chars < len(payload):
                await anyio.sleep(0.01)
        await proc.stop()
        assert proc.stdout.read_all() == payload.decode()

    async def test_pty_input_and_terminal(self, spool: Path) -> None:
        cmd = "[ -t 0 ] && [ -t 1 ] && echo is-tty; exec 3</dev/tty && echo has-ctty; echo to-err >&2; cat"
        proc = await CommandProcess.spawn(make_spec(spool, cmd, tty=True, accepts_input=True))
        await wait_for_text(proc, "to-err")
        assert os.getpgid(proc.pid) == proc.pid and os.getsid(proc.pid) == proc.pid
        assert await proc.write_input(b"hello\n") == 6
        await wait_for_text(proc, "hello\r\nhello\r\n")  # terminal echo, then cat's copy
        await proc.stop()
        assert "is-tty\r\nhas-ctty\r\nto-err\r\n" in proc.stdout.tail()
        assert proc.stderr.tail() == "" and proc.stdout.read_all() == proc.stdout.tail()
        with pytest.raises(BrokenPipeError):
            await proc.write_input(b"x")

    async def test_pty_without_input_has_null_stdin(self, spool: Path) -> None:
        proc = await run(spool, "cat; [ -t 1 ] && echo out-is-tty", tty=True)
        assert proc.stdout.tail() == "out-is-tty\r\n"


class TestSpools:
    async def test_large_output_keeps_memory_bounded(self, spool: Path) -> None:
        proc = await run(spool, "head -c 50000000 /dev/zero | tr '\\0' x; echo -n e >&2", timeout=15)
        assert len(proc.stdout.tail()) == 128_000 and len(proc.combined.tail()) == 256_000
        assert proc.stdout.tail() == "x" * 128_000 and proc.stderr.tail() == "e"
        assert proc.stdout.total_chars == 50_000_000 and proc.combined.total_chars == 50_000_001
        assert proc.stdout.spool_path is not None and proc.combined.spool_path is not None
        assert proc.stdout.spool_path.stat().st_size == 50_000_000
        assert proc.combined.spool_path.stat().st_size == 50_000_001
        assert proc.stdout.bytes_dropped == 0

    async def test_spool_cap(self, spool: Path) -> None:
        proc = await run(spool, "head -c 4990 /dev/zero | tr '\\0' y; printf 'tail-12345\\n'", max_log_bytes=1000)
        assert proc.stdout.spool_path is not None and proc.stdout.spool_path.stat().st_size == 1000
        assert proc.stdout.bytes_dropped == 4001 and proc.combined.bytes_dropped == 4001
        assert proc.stdout.read_all() == "y" * 1000
        assert proc.stdout.tail().endswith("tail-12345\n") and proc.stdout.total_chars == 5001

    async def test_spool_cap_cuts_at_utf8_boundary(self, spool: Path) -> None:
        proc = await run(spool, "for i in $(seq 2500); do printf 'é'; done", max_log_bytes=999)
        assert proc.stdout.read_all() == "é" * 499 and proc.stdout.bytes_dropped == 5000 - 998
        assert proc.stdout.tail() == "é" * 2500

    async def test_promote_moves_combined_spool_and_appends(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "echo before; echo warn >&2; sleep 0.3; echo after"))
        await wait_for_text(proc, "warn")
        old = [proc.stdout.spool_path, proc.stderr.spool_path, proc.combined.spool_path]
        log = spool.parent / "task-output" / "T1.log"
        proc.promote(log)
        assert proc.combined.spool_path == log and log.read_text() == "before\nwarn\n"
        assert proc.stdout.spool_path is None and proc.stderr.spool_path is None
        assert not any(path.exists() for path in old if path is not None)
        assert await proc.wait(3)
        assert log.read_text() == "before\nwarn\nafter\n" == proc.combined.read_all()
        assert proc.stdout.tail() == "before\nafter\n"
        with pytest.raises(RuntimeError):
            proc.stdout.read_all()

    async def test_promote_falls_back_to_copy(self, spool: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        def cross_device(src: object, dst: object) -> None:
            raise OSError(errno.EXDEV, "Invalid cross-device link")

        monkeypatch.setattr(processes.os, "replace", cross_device)
        proc = await CommandProcess.spawn(make_spec(spool, "echo before; sleep 0.3; echo after"))
        await wait_for_text(proc, "before")
        old = proc.combined.spool_path
        log = spool.parent / "T2.log"
        proc.promote(log)
        assert old is not None and not old.exists()
        assert await proc.wait(3) and log.read_text() == "before\nafter\n"

    async def test_a_small_output_is_held_without_a_file_until_one_is_asked_for(self, spool: Path) -> None:
        # issue 27 item 7: no file is made, written, closed and deleted for the few bytes most commands write
        proc = await run(spool, "printf small; printf err >&2")
        assert list(spool.iterdir()) == []
        assert proc.stdout.read_all() == "small" and sorted(proc.combined.read_all()) == sorted("smallerr")
        path = proc.stdout.spool_path  # asked for (an artifact, a head read): made with what was held
        assert path is not None and path.read_bytes() == b"small" and list(spool.iterdir()) == [path]
        proc.discard_spools()
        assert list(spool.iterdir()) == []

    async def test_an_output_past_the_held_size_is_written_to_a_file_as_it_comes(self, spool: Path) -> None:
        size = processes._HOLD_BYTES + 1
        proc = await CommandProcess.spawn(
            make_spec(spool, f"head -c {size} /dev/zero | tr '\\0' z; echo READY; sleep 30")
        )
        try:
            await wait_for_text(proc, "READY")
            made = sorted(path.name.split("-")[1] for path in spool.iterdir())
            assert made == ["combined", "stdout"]  # stderr wrote nothing: no file
            assert proc.stdout.spool_path is not None and proc.stdout.spool_path.stat().st_size == size + 6
        finally:
            await proc.stop()

    async def test_discard_spools(self, spool: Path) -> None:
        proc = await run(spool, "echo hi")
        kept = proc.combined.spool_path
        proc.discard_spools(keep={"combined"})
        assert proc.stdout.spool_path is None and proc.stderr.spool_path is None
        assert list(spool.iterdir()) == [kept]
        proc.discard_spools()
        assert list(spool.iterdir()) == [] and proc.stdout.tail() == "hi\n"


async def test_no_fd_leak_after_200_spawns(spool: Path) -> None:
    before = open_fds()
    for i in range(200):
        proc = await CommandProcess.spawn(make_spec(spool, "echo x", tty=i % 4 == 0, accepts_input=i % 3 == 0))
        assert await proc.wait(5)
        if i % 50 == 0:
            proc.promote(spool / f"log-{i}")
        proc.discard_spools()
    for argv in (("/nonexistent/sh",), ("bash", "-c", "sleep 600 & exec 1>&-")):
        spec = LaunchSpec(argv, "/", dict(os.environ), spool, accepts_input=True)
        try:
            proc = await CommandProcess.spawn(spec)
        except FileNotFoundError:
            continue
        await proc.wait(5)  # stdout/stderr of the leftover sleep are abandoned
        proc.signal_group(signal.SIGKILL)
    assert not open_fds() - before, open_fds() - before  # every descriptor the spawns opened is closed


class TestReadReady:
    async def test_output_written_before_a_decision_is_read_without_the_loop(self, spool: Path) -> None:
        printed = spool.parent / "printed"
        proc = await CommandProcess.spawn(make_spec(spool, f"echo printed-at-once; : > {printed}; sleep 30"))
        try:
            # the loop thread is blocked (as when a handler decides right after its yield time) until the
            # shell has written its line: the reader callbacks did not run, so the capture is still empty...
            deadline = time.monotonic() + 30
            while not printed.exists() and time.monotonic() < deadline:
                time.sleep(0.01)  # blocking on purpose: no loop turn
            assert printed.exists() and proc.combined.tail() == ""
            proc.read_ready()  # ...and reading what is ready needs no loop turn
            assert proc.combined.tail() == "printed-at-once\n"
            proc.read_ready()  # nothing more written: no change, no block
            assert proc.combined.tail() == "printed-at-once\n"
        finally:
            await proc.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
async def test_pipe_grows_once_a_stream_fills_it(spool: Path) -> None:
    """issue 27 item 7: a command's pipes keep the kernel's default buffer until a read fills it; a stream
    that proves large gets the 1 MiB buffer (fewer loop wake-ups) and loses nothing."""
    proc = await CommandProcess.spawn(
        make_spec(spool, "printf small >&2; head -c 300000 /dev/zero | tr '\\0' a; echo READY; sleep 30")
    )
    try:
        await wait_for_text(proc, "READY")
        sizes = {reader.stream: fcntl.fcntl(fd, 1032) for fd, reader in proc._readers.items()}  # F_GETPIPE_SZ
        assert sizes == {"stdout": 1024 * 1024, "stderr": 64 * 1024}
        assert proc.stdout.total_chars == 300_000 + len("READY\n")
        assert proc.stderr.tail() == "small"
    finally:
        await proc.stop()


class TestWatchingOutput:
    """Issue 27 item 7: the loop watches a command's pipes only from ``_WATCH_AFTER_S`` after its start; a command
    that ends sooner is read to its end at its exit, without reader registrations; output is never lost."""

    async def test_a_short_command_is_read_at_its_exit_without_watching(
        self, spool: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(processes, "_WATCH_AFTER_S", 60.0)  # it ends long before: on a loaded machine too
        proc = await run(spool, "printf 'one\\ntwo'; printf err >&2")
        assert proc._watching is False and proc._watch_timer is None  # the timer was cancelled at the exit
        assert (proc.stdout.tail(), proc.stderr.tail(), proc.exit_status) == ("one\ntwo", "err", 0)

    async def test_a_longer_command_is_watched_and_its_output_read_while_it_runs(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "echo first; sleep 30"))
        try:
            await wait_for_text(proc, "first")  # read while it runs: the loop watches its pipes by now
            assert proc._watching is True and proc.returncode is None
        finally:
            await proc.stop()

    async def test_more_than_a_pipe_holds_before_the_watch_starts_is_all_read(self, spool: Path) -> None:
        # 300 KB fill the 64 KiB pipe at once: the writer waits for the watch, then everything arrives
        proc = await run(spool, "head -c 300000 /dev/zero | tr '\\0' b; printf END", timeout=30)
        assert proc.stdout.total_chars == 300_000 + 3 and proc.stdout.tail().endswith("bbbEND")

    async def test_a_background_child_holding_the_pipes_is_watched_after_the_exit(
        self, spool: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the leader exits at once (before the watch would start); its background child keeps the pipes open
        monkeypatch.setattr(processes, "_WATCH_AFTER_S", 60.0)
        proc = await CommandProcess.spawn(make_spec(spool, "echo leader; (sleep 0.2; echo child) &"))
        try:
            assert await proc.wait(10)
            assert proc.exit_status == 0 and proc.stdout.tail().startswith("leader\n")
            assert proc._watching is True  # still open at the exit: watched from then on (until the drain time)
        finally:
            await proc.stop()

    async def test_a_pty_is_watched_from_the_start(self, spool: Path) -> None:
        proc = await CommandProcess.spawn(make_spec(spool, "echo tty-out; sleep 30", tty=True))
        try:
            assert proc._watching is True and proc._watch_timer is None
            await wait_for_text(proc, "tty-out")
        finally:
            await proc.stop()
