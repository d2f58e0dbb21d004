"""Resource exhaustion (issue 25 item 2): idle callback connections, chunk-bomb images, 1 ms timers.

(a) The trigger callback port needs no token to connect. A runtime that kept every connection open had its
1,024 file descriptors taken by 1,100 idle sockets: ExecCommand failed with "Too many open files" and valid
wakes timed out. The runtime here is a real second process whose soft ``RLIMIT_NOFILE`` is 1,024, as a
kernel's is; the test process opens the idle sockets (its own soft limit raised for them, up to the hard
limit), so only the server's accepted sockets count against the runtime's descriptors, as in the real failure.

(c) ViewImage parsed images on the runtime's loop thread: a 20 MB PNG of 1.4 M tiny text chunks blocked
every other call for 18 s. Whether another call runs while an image is checked is shown with events, not
a stopwatch: the check is held (a wrapper around ``probe_image`` waits) until a ListTimers call has
completed; on the loop thread that call could not run until the hold gave up.

(b) Ten ``CreateTimer {interval_ms: 1}`` left the runtime unresponsive for 30 s and more: each tick was a
transaction and a queued message, a thousand a second per timer. A repeating timer now has a minimum
interval (CreateTimer refuses less; an older home's faster timer is fired at that pace), and its ticks
coalesce while the last one is undelivered. Timer tests run on a :class:`ManualClock`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _support import err, eventually, ok, read_db

from holon_nb.runtime import Runtime
from holon_nb.runtime.core._clock import ManualClock, parse
from holon_nb.runtime.core._settings import RuntimeSettings

IDLE_SOCKETS = 2000
RUNTIME_FD_LIMIT = 1024

#: A runtime in its own process: prints its trigger URL, then answers ``[tool, args]`` lines with envelopes.
CHILD = textwrap.dedent("""
    import json, resource, sys
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[3]), hard))
    from holon_nb.runtime import Runtime
    rt = Runtime(home=sys.argv[1], workspace=sys.argv[2])
    try:
        made = rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}).envelope["result"]
        print(json.dumps(made["trigger_url"]), flush=True)
        for line in sys.stdin:
            name, args = json.loads(line)
            print(json.dumps(rt.call(name, args).envelope), flush=True)
    finally:
        rt.close()
""")


class _Child:
    """A runtime process driven over its stdin/stdout."""

    def __init__(self, home: Path, workspace: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(home), str(workspace), str(RUNTIME_FD_LIMIT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url: str = json.loads(self.proc.stdout.readline())
        self.peak_fds = 0

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([name, args]) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def fds(self) -> int:
        """How many descriptors the runtime process holds now (also kept as :attr:`peak_fds`)."""
        n = len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        self.peak_fds = max(self.peak_fds, n)
        return n

    def close(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextlib.contextmanager
def _fd_limit(n: int) -> Iterator[None]:
    """This process's soft descriptor limit raised to ``n`` (the client sockets are ours), then restored."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < n:
        pytest.skip(f"the hard descriptor limit ({hard}) is below the {n} this test needs for its client sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, n), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _connected(sock: socket.socket, addr: tuple[str, int]) -> bool:
    code = sock.connect_ex(addr)
    return code in (0, errno.EISCONN)


def test_idle_callback_connections_exhaust_nothing_and_wakes_still_land(tmp_path: Path) -> None:
    (tmp_path / "W").mkdir()
    socks: list[socket.socket] = []
    with _fd_limit(IDLE_SOCKETS + 512):
        child = _Child(tmp_path / "home", tmp_path / "W")
        try:
            port = httpx.URL(child.url).port
            assert port is not None
            addr = ("127.0.0.1", port)
            baseline = child.fds()
            for _ in range(IDLE_SOCKETS):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                socks.append(s)
                s.connect_ex(addr)
            pending = list(socks)

            def settled() -> bool:
                # every idle socket is connected (so the server has taken nearly all of them from its backlog of
                # 128), or the runtime is out of descriptors (what happened before the fix)
                pending[:] = [s for s in pending if not _connected(s, addr)]
                return not pending or child.fds() >= RUNTIME_FD_LIMIT - 8

            eventually(settled, timeout=120)
            child.fds()

            alive = child.call("ExecCommand", {"cmd": "echo alive", "yield_time_ms": 30000})
            assert alive["status"] == "success", alive.get("error")
            assert alive["result"]["stdout_preview"] == "alive"
            with httpx.Client(timeout=30) as client:
                for _ in range(5):
                    answer = client.post(child.url, json={"n": 1}, headers={"connection": "close"})
                    assert answer.status_code == 202, answer.text
                    child.fds()
            db = tmp_path / "home" / "holon.sqlite3"
            rows = read_db(db, "SELECT delivery_count FROM external_triggers")
            assert rows == [(5,)]
            print(f"runtime fds: {baseline} before, peak {child.peak_fds} with {IDLE_SOCKETS} idle sockets")
            assert child.peak_fds < RUNTIME_FD_LIMIT // 2
        finally:
            for s in socks:
                s.close()
            child.close()


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except ConnectionError:
        return True


def test_a_connection_that_stalls_in_its_headers_or_body_is_closed(rt: Runtime) -> None:
    from holon_nb.runtime.triggers._server import CallbackLimits

    rt.triggers.server.limits = CallbackLimits(header_timeout_s=0.3, body_timeout_s=0.3)
    url = httpx.URL(ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))["trigger_url"])
    assert url.port is not None
    head = f"POST {url.raw_path.decode()} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    stalls = {
        "silent": b"",
        "half a header": head.encode(),
        "half a body": (head + "Content-Length: 100\r\nContent-Type: application/json\r\n\r\n{").encode(),
    }
    socks = {}
    try:
        for name, data in stalls.items():
            s = socket.create_connection(("127.0.0.1", url.port))
            s.sendall(data)
            s.setblocking(False)
            socks[name] = s
        for s in socks.values():
            eventually(lambda s=s: _closed_by_server(s), timeout=30)
        # nothing was delivered, and a valid wake still lands
        assert rt.triggers.list("default")[0]["delivery_count"] == 0
        assert httpx.post(str(url), json={}).status_code == 202
    finally:
        for s in socks.values():
            s.close()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _chunk_bomb(text_chunks: int = 1_390_000) -> bytes:
    """A valid 1x1 grey PNG whose 20 MB (under ViewImage's 20 MiB cap) are ``text_chunks`` 3-byte tEXt chunks."""
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)),
            _png_chunk(b"tEXt", b"a\0b") * text_chunks,
            _png_chunk(b"IDAT", zlib.compress(b"\0\0")),
            _png_chunk(b"IEND", b""),
        ]
    )


def test_a_png_chunk_bomb_is_refused_with_a_clear_error(rt: Runtime, workspace: Path) -> None:
    bomb = _chunk_bomb()
    assert len(bomb) <= 20 * 1024 * 1024
    (workspace / "bomb.png").write_bytes(bomb)
    error = err(rt.call("ViewImage", {"path": "bomb.png", "prompt": "what is it?"}), "invalid_tool_input")
    assert error["details"]["validation_error"] == "too many PNG chunks", error
    assert error["details"]["field"] == "path"
    assert error["details"]["chunks_seen"] > error["details"]["max_chunk_count"]
    assert "chunks" in error["message"] and error["recovery_hint"]
    # a PNG just under the chunk budget is still checked (no vision model here: its reference is recorded)
    fine = _chunk_bomb(error["details"]["max_chunk_count"] - 4)
    (workspace / "fine.png").write_bytes(fine)
    ref = err(rt.call("ViewImage", {"path": "fine.png", "prompt": "x"}), "vision_adapter_unavailable")
    assert ref["details"]["visual_reference"]["size"] == {"width": 1, "height": 1}


def test_other_calls_proceed_while_an_image_is_checked(
    rt: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holon_nb.runtime.images import _service as service

    (workspace / "bomb.png").write_bytes(_chunk_bomb())
    checking, other_done = threading.Event(), threading.Event()
    real = service.probe_image

    def held(path: Path, tool: str = "ViewImage") -> Any:
        checking.set()
        other_done.wait(timeout=20)  # on the loop thread, ListTimers cannot complete before this gives up
        return real(path, tool)

    monkeypatch.setattr(service, "probe_image", held)
    results: dict[str, Any] = {}

    def view() -> None:
        results["view"] = rt.call("ViewImage", {"path": "bomb.png", "prompt": "x"})

    def list_timers() -> None:
        results["timers"] = rt.call("ListTimers", {})
        other_done.set()

    viewer, other = threading.Thread(target=view), threading.Thread(target=list_timers)
    viewer.start()
    try:
        assert checking.wait(20), "ViewImage never started checking the image"
        other.start()
        completed = other_done.wait(20)
    finally:
        other_done.set()
        viewer.join(60)
        if other.is_alive() or other.ident is not None:
            other.join(60)
    assert completed, "ListTimers did not complete while ViewImage was checking an image"
    ok(results["timers"])
    assert err(results["view"], "invalid_tool_input")["details"]["validation_error"] == "too many PNG chunks"


@pytest.fixture
def clock() -> ManualClock:
    """A clock that moves only when the test says so (the runtime's timer scheduler follows it)."""
    return ManualClock()


@pytest.fixture
def clocked(tmp_path: Path, workspace: Path, clock: ManualClock) -> Iterator[Runtime]:
    """A runtime whose timers run on :func:`clock`."""
    runtime = Runtime(home=tmp_path / "home", workspace=workspace, settings=RuntimeSettings(clock=clock))
    try:
        yield runtime
    finally:
        runtime.close()


def test_a_repeating_timer_faster_than_the_minimum_is_refused(rt: Runtime) -> None:
    for interval in (1, 999):
        error = err(rt.call("CreateTimer", {"duration_ms": 1, "interval_ms": interval}), "invalid_tool_input")
        assert error["details"]["field"] == "interval_ms"
        assert error["details"]["min_interval_ms"] == 1000 and "1000" in error["message"], error
        assert "1000" in error["recovery_hint"]
    assert ok(rt.call("ListTimers", {}))["timers"] == []  # nothing was created
    timer = ok(rt.call("CreateTimer", {"duration_ms": 1000, "interval_ms": 1000}))["timer"]
    assert timer["repeat"] and timer["interval_ms"] == 1000
    # a one-shot timer may still be short: it fires once
    assert ok(rt.call("CreateTimer", {"duration_ms": 1}))["timer"]["repeat"] is False


def _ticks(rt: Runtime, timer_id: str, status: str | None = None) -> list[dict[str, Any]]:
    return [
        m
        for m in rt.messages(kind="timer_tick")
        if m["metadata"].get("timer_id") == timer_id and status in (None, m["status"])
    ]


def test_repeating_ticks_coalesce_while_the_last_is_undelivered(clocked: Runtime, clock: ManualClock) -> None:
    rt = clocked
    timer = ok(rt.call("CreateTimer", {"duration_ms": 1000, "interval_ms": 1000, "summary": "poll"}))["timer"]
    fired = lambda n: rt.work.timer(timer["id"])["fire_count"] == n  # noqa: E731
    for n in (1, 2, 3):
        clock.advance(1000)
        eventually(lambda n=n: fired(n))
    assert len(_ticks(rt, timer["id"])) == 1  # three ticks, one undelivered message
    rt.work.process_message(_ticks(rt, timer["id"])[0]["id"])  # the agent takes it
    clock.advance(1000)
    eventually(lambda: fired(4))
    assert [m["status"] for m in _ticks(rt, timer["id"])] == ["processed", "queued"]
    # a wait registered while a tick is queued is woken by the next tick, which is never coalesced
    work_item = ok(rt.call("CreateWorkItem", {"objective": "parked on the timer"}))["work_item"]["id"]
    wait = ok(rt.call("WaitFor", {"reason": "tick", "wake": "timer", "resource": timer["id"], "delivery": "silent"}))
    clock.advance(1000)
    eventually(lambda: rt.work.waits_of("default", ("triggered",)))
    triggered = rt.work.waits_of("default", ("triggered",))[0]
    assert triggered["id"] == wait["wait_condition"]["id"]
    queued = _ticks(rt, timer["id"], "queued")
    assert len(queued) == 2 and triggered["trigger_message_id"] == queued[-1]["id"]
    assert queued[-1]["work_item_id"] == work_item


def test_an_older_homes_one_ms_timers_fire_at_the_minimum_pace(clocked: Runtime, clock: ManualClock) -> None:
    rt = clocked
    # ten timers as an earlier version let CreateTimer write them: interval_ms 1
    ids = [ok(rt.call("CreateTimer", {"duration_ms": 1000, "interval_ms": 1000}))["timer"]["id"] for _ in range(10)]
    db = rt.home / "holon.sqlite3"
    import sqlite3

    conn = sqlite3.connect(db, timeout=30)
    with conn:
        conn.execute("UPDATE timers SET interval_ms=1")
    conn.close()
    clock.advance(1000)
    eventually(lambda: all(rt.work.timer(i)["fire_count"] == 1 for i in ids))
    for i in ids:
        rec = rt.work.timer(i)
        assert (parse(rec["next_fire_at"]) - parse(rec["last_fired_at"])).total_seconds() == 1.0, rec
    clock.advance(999)
    assert rt.work.timers.fire_due() == 0
    clock.advance(1)
    eventually(lambda: all(rt.work.timer(i)["fire_count"] == 2 for i in ids))
    assert all(len(_ticks(rt, i)) == 1 for i in ids)  # and the undelivered ticks coalesced
