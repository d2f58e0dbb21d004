"""A hostile soak (issue 25's acceptance): one holon home under mixed hostile load, the runtime SIGKILLed and
restarted every 2 minutes.

The parent (this process) drives a runtime *worker* process (this file with ``--worker``, one per
generation) and never imports the runtime itself. Everything binds to 127.0.0.1; every file lives in a
temporary directory, removed at the end (``--keep`` keeps it).

The worker opens ``Runtime`` on the home (``max_home_bytes`` = ``--cap-mib``, a fixed callback port, a soft
limit of 1,024 descriptors as a kernel has) and runs, each in its own thread:

- the latency probe: ``GetWorkItem`` on one existing work item every ~100 ms;
- mixed calls, one at a time (``_OPS``): commands printing secrets held in secret-named variables plainly,
  coloured by ``grep --color=always``, with escape codes inside them (printf), half on stdout and half on
  stderr (foreground and as a task read back by TaskOutput); ``CreateWorkItem``, one-shot ``CreateTimer``,
  ``MemorySearch``, ``TaskOutput`` of earlier tasks, background ``sleep 600`` tasks;
- a flood: every ``--flood-every-s`` a background command printing ``--flood-mb`` MB of lines holding a secret;
- the tail case: every 30 s a >4 MB stdout whose 110-character secret straddles the start of the kept
  128,000-character tail (``max_output_tokens: 64000``);
- a chunk-bomb PNG (1.39 M tEXt chunks, 20 MB) through ``ViewImage`` every 30 s;
- a long-running command always inside its (5-minute) yield window, so a SIGKILL always finds one.

The first generation also creates repeating timers at the minimum interval (1000 ms) and writes a few
``interval_ms = 1`` timers straight into the ``timers`` table, as an older home has them. Each generation
creates (renews) an external trigger and publishes its URL to the parent.

The worker appends the id of each acknowledged write to an ack file only after the call returned ok, and
checks each result it got (receipt, full receipt, display envelope, notebook mimebundle) for any 8
characters of a secret a reader would see (escape codes and HTML tags removed), and, after the call that
created it, for 16 hex digits of a live trigger token.

The parent, meanwhile: samples the home's size (every file under it) and the worker's open descriptors
every 0.5 s; holds a foreign SQLite write lock (``BEGIN IMMEDIATE`` on its own connection) for
``--lock-s`` every 30 s; keeps ``--idle`` idle connections open to the callback port (replacing those the
server closes) and posts a valid wake every second; SIGKILLs the worker every ``--kill-every-s`` and starts
the next generation on the same home (before restarting, it scans the home at rest, WAL included). At the
end it asks the last generation to close, then reports (goals from issue 25):

- ``secrets_persisted``: files of the home (database, WAL, task logs, artifacts) showing any 8 characters
  of a secret or 16 hex digits of a trigger token, in any scan (goal 0);
- ``secrets_shown``: results that showed any (goal 0);
- ``peak_home_bytes`` vs ``cap_bytes`` (goal <= cap);
- ``peak_fds`` of the runtime process;
- ``get_work_item_ms`` p50/p99/max (goal p99 <= 250 ms);
- ``orphan_process_groups``: process groups still running with the run's marker in their environment after
  the last runtime closed (goal 0);
- ``acked_writes_lost``: acknowledged work items and one-shot timers, and wakes answered 202, missing from
  the database at the end (goal 0). Tool-execution records of calls that returned are reported apart
  (``execution_records_lost``): they are written off the call's path.

Each generation also reports its store's lock statistics (``store_by_generation``): ``loop_lock_waits`` counts
writes that slept on the runtime's loop thread waiting for the foreign lock (each held up every call).

Run: ``python benchmarks/soak_hostile.py [--minutes 10] [--cap-mib 200]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import secrets
import shutil
import signal
import socket
import sqlite3
import string
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
import zlib
from pathlib import Path
from typing import Any

from _common import save

#: Secret-named variables (the runtime scrubs values of names holding KEY, TOKEN, SECRET or PASSWORD), by case
SECRET_VARS = {
    "plain": "SOAK_API_KEY",
    "grep_colour": "SOAK_COLOUR_SECRET",
    "printf_colour": "SOAK_PRINTF_PASSWORD",
    "split_streams": "SOAK_SPLIT_TOKEN",
    "tail_straddle": "SOAK_LONG_API_KEY",
    "flood": "SOAK_FLOOD_KEY",
}
WINDOW = 8  # a secret counts as shown when any WINDOW consecutive characters of it are (tests/hostile use 8)
TOKEN_WINDOW = 16  # hex digits of a trigger token
MIN_TIMER_MS = 1000

#: >4 MB of stdout; the secret (argv[1], 110 characters) starts 42 characters before the 128,000-character
#: tail the runtime keeps in memory (tests/hostile/test_secrets_round3.py)
BIG = (
    "import sys\n"
    "w = sys.stdout.write\n"
    "for _ in range(45000): w('f' * 99 + '\\n')\n"
    "w('s=' + sys.argv[1])\n"
    "w(('g' * 99 + '\\n') * 1279 + 'g' * 31 + '\\n')\n"
)

#: What each generation reports of ``Store.stats()``
_STORE_STATS = ("loop_lock_waits", "loop_lock_wait_max_ms", "loop_lock_wait_where", "busy_retries", "busy_refusals")

#: (operation, weight) of the worker's mixed calls
_OPS = (
    ("plain", 8),
    ("grep_colour", 8),
    ("printf_colour", 8),
    ("split_streams", 4),
    ("split_task", 3),
    ("work_item", 12),
    ("timer_once", 4),
    ("search", 4),
    ("task_output", 4),
    ("bg_sleep", 2),
)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def chunk_bomb(text_chunks: int = 1_390_000) -> bytes:
    """A valid 1x1 grey PNG whose 20 MB are ``text_chunks`` 3-byte tEXt chunks (tests/hostile/test_exhaustion)."""
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)),
            _png_chunk(b"tEXt", b"a\0b") * text_chunks,
            _png_chunk(b"IDAT", zlib.compress(b"\0\0")),
            _png_chunk(b"IEND", b""),
        ]
    )


def _secret(n: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _append(path: Path, obj: Any) -> None:
    """One JSON line appended with a single write (survives a SIGKILL once ``os.write`` returned)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (json.dumps(obj) + "\n").encode())
    finally:
        os.close(fd)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _read_lines(path: Path) -> list[Any]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))  # a line cut by a SIGKILL mid-write is skipped
    return out


# ---------------------------------------------------------------------------------------------- the worker


class _Shown:
    """Checks what a call showed for pieces of the secrets (and of trigger tokens)."""

    def __init__(self, values: dict[str, str]):
        from holon_nb.render._ansi import strip_ansi

        self.strip_ansi = strip_ansi
        self.windows = {
            name: {v[i : i + WINDOW].lower() for i in range(len(v) - WINDOW + 1)} for name, v in values.items()
        }

    def add_token(self, token: str) -> None:
        hexpart = token.removeprefix("cb_")
        self.windows[f"trigger_token:{token[:9]}"] = {
            hexpart[i : i + TOKEN_WINDOW] for i in range(len(hexpart) - TOKEN_WINDOW + 1)
        }

    def visible(self, text: str) -> str:
        import html

        text = text.replace("\\u001b", "\x1b").replace("\\x1b", "\x1b")
        return html.unescape(re.sub(r"<[^>]*>", "", self.strip_ansi(text))).lower()

    def check(self, result: Any, skip: str | None = None) -> list[tuple[str, str]]:
        """``[(secret, where)]`` of each secret some part of ``result`` a reader gets shows."""
        bundle = result._repr_mimebundle_()
        parts = {
            "receipt": result.receipt,
            "full_receipt": result.full_receipt,
            "display_envelope": json.dumps(result.display_envelope, default=str),
            **{f"bundle:{k}": v if isinstance(v, str) else json.dumps(v, default=str) for k, v in bundle.items()},
        }
        found = []
        for where, text in parts.items():
            seen = self.visible(text)
            for name, windows in self.windows.items():
                if name != skip and any(w in seen for w in windows):
                    found.append((name, where))
        return found


def worker(cfg_path: str, gen: int) -> None:
    """One runtime generation: setup, then the threads described in the module docstring until stopped."""
    cfg = json.loads(Path(cfg_path).read_text())
    run = Path(cfg["run"])
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))  # as a kernel's soft limit
    from holon_nb import Runtime, RuntimeSettings

    marker = os.environ["SOAK_MARKER"]
    values = {case: os.environ[var] for case, var in SECRET_VARS.items()}
    shown = _Shown(values)
    for token in (run / "tokens.txt").read_text().split() if (run / "tokens.txt").exists() else []:
        shown.add_token(token)
    lock = threading.Lock()
    stats: dict[str, Any] = {"gen": gen, "ops": {}, "errors": {}, "shown": {}, "shown_where": {}, "calls": 0}
    acks, lat_path = run / "acks.jsonl", run / f"latency-{gen}.txt"
    stop = threading.Event()
    tasks: list[str] = []
    rng = random.Random(gen)

    def bump(section: str, key: str) -> None:
        with lock:
            stats[section][key] = stats[section].get(key, 0) + 1

    settings = RuntimeSettings(max_home_bytes=cfg["cap_bytes"], callback_port=cfg["port"])
    started = time.monotonic()
    rt = Runtime(home=cfg["home"], workspace=cfg["workspace"], settings=settings)

    def call(op: str, tool: str, args: dict[str, Any], skip: str | None = None, expect: str | None = None) -> Any:
        try:
            r = rt.call(tool, args)
        except Exception as exc:  # noqa: BLE001 - an exception reaching a caller is counted
            bump("errors", f"{op}:exception:{type(exc).__name__}")
            return None
        with lock:
            stats["calls"] += 1
        bump("ops", op)
        _append(acks, {"kind": "execution", "id": r.execution_id, "gen": gen, "op": op, "t": time.time()})
        for name, where in shown.check(r, skip):
            bump("shown", f"{op}:{name}")
            bump("shown_where", f"{name}:{where}")
        if not r.ok:
            kind = r.envelope["error"]["kind"]
            bump("errors", f"{op}:{kind}" + (" (expected)" if kind == expect else ""))
            return None
        return r.envelope["result"]

    def task_of(res: Any) -> str | None:
        handle = (res or {}).get("task_handle") or {}
        tid = handle.get("task_id")
        if tid:
            with lock:
                tasks.append(tid)
        return tid

    # ---- setup
    probe_file = run / "probe.txt"
    if gen == 0:
        made = call("setup", "CreateWorkItem", {"objective": "soak latency probe"})
        probe = made["work_item"]["id"]
        _append(acks, {"kind": "work_item", "id": probe, "gen": gen})
        _write_atomic(probe_file, probe)
        repeating = []
        for i in range(3 + cfg["fast_timers"]):
            res = call("setup", "CreateTimer", {"duration_ms": 1000, "interval_ms": MIN_TIMER_MS, "summary": f"r{i}"})
            if res:
                repeating.append(res["timer"]["id"])
        fast = repeating[3:]
        db = sqlite3.connect(Path(cfg["home"]) / "holon.sqlite3", timeout=60)
        with db:  # as an earlier version let CreateTimer write them
            db.executemany("UPDATE timers SET interval_ms=1 WHERE id=?", [(t,) for t in fast])
        db.close()
        _write_atomic(run / "timers.json", json.dumps({"repeating": repeating[:3], "fast": fast}))
    probe = probe_file.read_text().strip()
    made = call("setup", "CreateExternalTrigger", {"delivery_mode": "wake_hint"})
    if made:
        url = made["trigger_url"]
        token = url.rsplit("/", 1)[1]
        with open(run / "tokens.txt", "a") as f:
            f.write(token + "\n")
        shown.add_token(token)
        _write_atomic(run / f"trigger-{gen}.txt", url)

    def write_stats() -> None:
        store = rt.store.stats()  # the loop's waits for the home's write lock (each held up every call on the loop)
        store = {k: store.get(k) for k in _STORE_STATS}
        with lock:
            text = json.dumps({**stats, "ready_s": ready_s, "tasks": len(tasks), "store": store})
        _write_atomic(run / f"stats-{gen}.json", text)

    ready_s = round(time.monotonic() - started, 2)
    write_stats()
    (run / f"ready-{gen}").touch()

    # ---- threads
    def latency() -> None:
        fd = os.open(lat_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                good = rt.call("GetWorkItem", {"work_item_id": probe}).ok
            except Exception:  # noqa: BLE001
                good = False
            ms = (time.perf_counter() - t0) * 1000
            os.write(fd, f"{time.time():.3f} {ms:.2f} {int(good)}\n".encode())
            stop.wait(max(0.0, 0.1 - ms / 1000))

    def long_yield() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            # inside its yield window for 5 minutes: every SIGKILL finds one
            res = call(
                "long_yield", "ExecCommand", {"cmd": f"sleep 900 # {marker} y{gen}-{n}", "yield_time_ms": 300_000}
            )
            task_of(res)
            stop.wait(1)

    def every(period: float, fn: Any) -> Any:
        def loop() -> None:
            stop.wait(rng.uniform(0, period / 2))
            while not stop.is_set():
                t0 = time.monotonic()
                fn()
                stop.wait(max(1.0, period - (time.monotonic() - t0)))

        return loop

    def flood() -> None:
        lines = cfg["flood_mb"] * 1_000_000 // 49  # 'row ' + 40 + ' row' + newline
        res = call(
            "flood",
            "ExecCommand",
            {"cmd": f'yes "row $SOAK_FLOOD_KEY row" | head -n {lines} # {marker}', "yield_time_ms": 0},
        )
        task_of(res)

    def tail() -> None:
        cmd = f'{sys.executable} -c "$SOAK_BIG" "$SOAK_LONG_API_KEY" # {marker}'
        call("tail_straddle", "ExecCommand", {"cmd": cmd, "max_output_tokens": 64000, "yield_time_ms": 120_000})

    def bomb() -> None:
        call("bomb", "ViewImage", {"path": "bomb.png", "prompt": "what is it?"}, expect="invalid_tool_input")

    threads = [
        threading.Thread(target=latency, daemon=True),
        threading.Thread(target=long_yield, daemon=True),
        threading.Thread(target=every(cfg["flood_every_s"], flood), daemon=True),
        threading.Thread(target=every(30, tail), daemon=True),
        threading.Thread(target=every(30, bomb), daemon=True),
    ]
    for t in threads:
        t.start()

    names = [n for n, w in _OPS for _ in range(w)]
    bg_live = 0
    last_stats = time.monotonic()
    n = 0
    while not (run / "stop").exists():
        n += 1
        op = rng.choice(names)
        word = f"soak{gen}w{n}"
        if op == "plain":
            call(op, "ExecCommand", {"cmd": f'echo "{word} key=$SOAK_API_KEY end"'})
        elif op == "grep_colour":
            call(
                op,
                "ExecCommand",
                {"cmd": f'echo "{word} key=$SOAK_COLOUR_SECRET end" | grep --color=always "$SOAK_GREP"'},
            )
        elif op == "printf_colour":
            cmd = f'printf \'{word} pw=%s\\033[1;31m%s\\033[0m%s end\\n\' "$SOAK_PF_A" "$SOAK_PF_B" "$SOAK_PF_C"'
            call(op, "ExecCommand", {"cmd": cmd})
        elif op in ("split_streams", "split_task"):
            cmd = f"printf '{word} a %s' \"$SOAK_SP_A\"; sleep 0.05; printf '%s b\\n' \"$SOAK_SP_B\" >&2"
            if op == "split_streams":
                call(op, "ExecCommand", {"cmd": cmd})
            else:
                tid = task_of(call(op, "ExecCommand", {"cmd": "sleep 0.2; " + cmd, "yield_time_ms": 0}))
                if tid:
                    call(op, "TaskOutput", {"task_id": tid, "block": True, "timeout_ms": 20000})
        elif op == "work_item":
            res = call(op, "CreateWorkItem", {"objective": f"soak objective {word}"})
            if res:
                _append(acks, {"kind": "work_item", "id": res["work_item"]["id"], "gen": gen, "t": time.time()})
        elif op == "timer_once":
            res = call(op, "CreateTimer", {"duration_ms": rng.randint(100, 5000), "summary": f"once {word}"})
            if res:
                _append(acks, {"kind": "timer", "id": res["timer"]["id"], "gen": gen, "t": time.time()})
        elif op == "search":
            call(op, "MemorySearch", {"query": rng.choice(["key", "pw", "row", "redacted", "soak objective"])})
        elif op == "task_output":
            with lock:
                tid = rng.choice(tasks) if tasks else None
            if tid:
                call(op, "TaskOutput", {"task_id": tid, "block": False})
        elif op == "bg_sleep" and bg_live < 4:
            bg_live += (
                task_of(call(op, "ExecCommand", {"cmd": f"sleep 600 # {marker} b{gen}-{n}", "yield_time_ms": 0}))
                is not None
            )
        if time.monotonic() - last_stats > 5:
            write_stats()
            last_stats = time.monotonic()
        time.sleep(cfg["pace_ms"] / 1000)

    # ---- asked to stop: close as a kernel does (live tasks stopped), then report
    stop.set()
    write_stats()
    t0 = time.monotonic()
    rt.close()
    with lock:
        stats["close_s"] = round(time.monotonic() - t0, 2)
    write_stats()
    os._exit(0)  # the long-yield thread may still be unwinding its cancelled call


# ---------------------------------------------------------------------------------------------- the parent

_ESC = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def _visible_bytes(data: bytes) -> bytes:
    data = data.replace(b"\\u001b", b"\x1b").replace(b"\\u001B", b"\x1b").replace(b"\\x1b", b"\x1b")
    return _ESC.sub(b"", data)


class HomeScanner:
    """Finds pieces of secrets and trigger tokens in every file of the home, ``grep -F`` doing the search."""

    def __init__(self, values: dict[str, str], patterns: Path):
        self.values, self.patterns = values, patterns
        self.tokens: list[str] = []

    def _windows(self) -> dict[str, str]:
        out = {}
        for name, v in self.values.items():
            for i in range(len(v) - WINDOW + 1):
                out[v[i : i + WINDOW].lower()] = name
        for token in self.tokens:
            h = token.removeprefix("cb_")
            for i in range(len(h) - TOKEN_WINDOW + 1):
                out[h[i : i + TOKEN_WINDOW].lower()] = f"trigger_token:{token[:9]}"
        return out

    def _grep(self, data: bytes, windows: dict[str, str]) -> set[str]:
        done = subprocess.run(
            ["grep", "-a", "-o", "-i", "-F", "-f", str(self.patterns)], input=data, capture_output=True, timeout=600
        )
        return {windows.get(m.lower(), "?") for m in done.stdout.decode("ascii", "replace").split()}

    def scan(self, home: Path) -> dict[str, list[str]]:
        """``{file (relative to home): [secret names]}`` of every file showing a piece of a secret."""
        windows = self._windows()
        self.patterns.write_text("\n".join(windows) + "\n")
        files = [p for p in sorted(home.rglob("*")) if p.is_file()]
        found: dict[str, list[str]] = {}
        batch: list[tuple[Path, bytes]] = []
        size = 0

        def flush() -> None:
            nonlocal size
            if batch and self._grep(b"\n\0\n".join(d for _, d in batch), windows):
                for path, data in batch:  # a hit: which files
                    names = self._grep(data, windows)
                    if names:
                        found[str(path.relative_to(home))] = sorted(names)
            batch.clear()
            size = 0

        for path in files:
            try:
                data = _visible_bytes(path.read_bytes())
            except OSError:
                continue
            batch.append((path, data))
            size += len(data)
            if size > 64 * 1024 * 1024:
                flush()
        flush()
        return found


def _home_bytes(home: Path) -> int:
    total = 0
    stack = [str(home)]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as it:
            for e in it:
                with contextlib.suppress(OSError):
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    elif e.is_file(follow_symlinks=False):
                        total += e.stat(follow_symlinks=False).st_size
    return total


def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def marked_processes(marker: str) -> list[dict[str, Any]]:
    """Live processes whose environment holds ``SOAK_MARKER=<marker>`` (this user's; others are unreadable)."""
    needle = f"SOAK_MARKER={marker}".encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if needle not in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                continue
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] == "Z":
                continue
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            out.append({"pid": int(entry), "pgid": int(fields[2]), "cmd": cmd[:120]})
        except (OSError, ValueError, IndexError):
            continue
    return out


class Parent:
    """The driver: generations, kills, locks, sockets, wakes, sampling and the final checks."""

    def __init__(self, a: argparse.Namespace, tmp: Path):
        self.a, self.tmp = a, tmp
        self.home, self.workspace, self.run = tmp / "home", tmp / "W", tmp / "run"
        self.workspace.mkdir()
        self.run.mkdir()
        (self.workspace / "bomb.png").write_bytes(chunk_bomb())
        self.marker = f"soak-{uuid.uuid4().hex}"
        self.values = {case: _secret(110 if case == "tail_straddle" else 40) for case in SECRET_VARS}
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.cap = a.cap_mib * 1024 * 1024
        self.cfg = self.run / "config.json"
        self.cfg.write_text(
            json.dumps(
                {
                    "run": str(self.run),
                    "home": str(self.home),
                    "workspace": str(self.workspace),
                    "port": self.port,
                    "cap_bytes": self.cap,
                    "flood_mb": a.flood_mb,
                    "flood_every_s": a.flood_every_s,
                    "pace_ms": a.pace_ms,
                    "fast_timers": a.fast_timers,
                }
            )
        )
        self.scanner = HomeScanner(self.values, self.run / "patterns.txt")
        self.stop = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None
        self.gen = -1
        self.url: str | None = None
        self.socks: list[socket.socket] = []
        self.lock_windows: list[tuple[float, float]] = []  # wall-clock (start, end) of each foreign lock
        self.figures: dict[str, Any] = {
            "peak_home_bytes": 0,
            "home_samples_over_cap": 0,
            "home_samples": 0,
            "peak_fds": 0,
            "kills": [],
            "locks": [],
            "wakes": {},
            "wake_ms": [],
            "idle_opened": 0,
            "idle_closed_by_server": 0,
            "persisted": {},
        }

    # -- the worker
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOLON_NB_HOME")}
        env.update({var: self.values[case] for case, var in SECRET_VARS.items()})
        colour, pf, sp = self.values["grep_colour"], self.values["printf_colour"], self.values["split_streams"]
        env.update(
            {
                "SHELL": "/bin/sh",
                "SOAK_MARKER": self.marker,
                "SOAK_GREP": colour[14:20],  # grep colours these 6 characters inside the secret
                "SOAK_PF_A": pf[:13],
                "SOAK_PF_B": pf[13:27],
                "SOAK_PF_C": pf[27:],
                "SOAK_SP_A": sp[:20],
                "SOAK_SP_B": sp[20:],
                "SOAK_BIG": BIG,
                "HOLON_NB_MAX_HOME_BYTES": str(self.cap),
                "PYTHONPATH": os.pathsep.join(
                    [str(Path(__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])]
                ),
            }
        )
        return env

    def start_worker(self) -> None:
        self.gen += 1
        log = open(self.run / f"worker-{self.gen}.log", "wb")  # noqa: SIM115 - closed with the run
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(self.cfg), "--gen", str(self.gen)],
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches only the parent, which ends everything
        )
        log.close()

    def wait_ready(self, timeout: float = 180) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (self.run / f"ready-{self.gen}").exists():
                self.url = (self.run / f"trigger-{self.gen}.txt").read_text().strip()
                self.scanner.tokens = (self.run / "tokens.txt").read_text().split()
                return True
            if self.proc is not None and self.proc.poll() is not None:
                return False
            self.sample()
            time.sleep(0.5)
        return False

    # -- the threads of the parent
    def sample(self) -> None:
        size = _home_bytes(self.home)
        f = self.figures
        f["peak_home_bytes"] = max(f["peak_home_bytes"], size)
        f["home_samples"] += 1
        f["home_samples_over_cap"] += size > self.cap
        if self.proc is not None and self.proc.poll() is None:
            f["peak_fds"] = max(f["peak_fds"], _fds(self.proc.pid))

    def foreign_lock(self) -> None:
        db = self.home / "holon.sqlite3"
        t0 = time.monotonic()
        try:
            conn = sqlite3.connect(db, timeout=30, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                got, wall = time.monotonic(), time.time()
                time.sleep(self.a.lock_s)
                conn.execute("COMMIT")
                held = time.monotonic() - got
                self.lock_windows.append((wall, wall + held))
                self.figures["locks"].append({"wait_s": round(got - t0, 2), "held_s": round(held, 2)})
            finally:
                conn.close()
        except sqlite3.Error as exc:
            self.figures["locks"].append({"error": str(exc)})

    def idle_sockets(self) -> None:
        while not self.stop.is_set():
            alive = []
            for s in self.socks:
                try:
                    closed = s.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    self.figures["idle_closed_by_server"] += 1
                    s.close()
                else:
                    alive.append(s)
            self.socks = alive
            while len(self.socks) < self.a.idle:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", self.port))
                self.socks.append(s)
                self.figures["idle_opened"] += 1
            self.stop.wait(2)

    def wakes(self) -> None:
        wakes = self.figures["wakes"]
        while not self.stop.is_set():
            url = self.url
            if url:
                req = urllib.request.Request(url, data=b'{"soak": 1}', method="POST")
                req.add_header("Content-Type", "application/json")
                t0 = time.monotonic()
                try:
                    with urllib.request.urlopen(req, timeout=15) as answer:
                        key = str(answer.status)
                except urllib.error.HTTPError as exc:
                    key = str(exc.code)
                except (OSError, urllib.error.URLError) as exc:
                    key = f"error:{type(getattr(exc, 'reason', exc)).__name__}"
                if key == "202":
                    self.figures["wake_ms"].append((time.monotonic() - t0) * 1000)
                wakes[key] = wakes.get(key, 0) + 1
            self.stop.wait(1)

    # -- the run
    def run_load(self) -> None:
        a = self.a
        started = time.monotonic()
        deadline = started + a.minutes * 60
        self.start_worker()
        if not self.wait_ready():
            raise SystemExit(f"worker 0 did not start: see {self.run}/worker-0.log")
        for fn in (self.idle_sockets, self.wakes):
            threading.Thread(target=fn, daemon=True).start()
        next_lock, next_kill = started + 30, started + a.kill_every_s
        lock_thread: threading.Thread | None = None
        while time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_lock:
                next_lock += 30
                if lock_thread is None or not lock_thread.is_alive():
                    lock_thread = threading.Thread(target=self.foreign_lock, daemon=True)
                    lock_thread.start()
            if now >= next_kill and deadline - now > 30:
                next_kill += a.kill_every_s
                self.kill_and_restart(round(now - started, 1))
            elif self.proc is not None and self.proc.poll() is not None:
                raise SystemExit(f"worker {self.gen} exited by itself ({self.proc.returncode}): see worker log")
            self.sample()
            time.sleep(0.5)
        if lock_thread is not None:
            lock_thread.join(60)

    def kill_and_restart(self, at_s: float) -> None:
        assert self.proc is not None
        live = marked_processes(self.marker)
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        t0 = time.monotonic()
        found = self.scanner.scan(self.home)  # the home at rest, WAL and all, as a SIGKILL left it
        for path, names in found.items():
            self.figures["persisted"].setdefault(path, set()).update(names)
        scan_s = time.monotonic() - t0
        self.start_worker()
        ready = self.wait_ready()
        self.figures["kills"].append(
            {
                "at_s": at_s,
                "gen_killed": self.gen - 1,
                "marked_processes_before": len(live),
                "marked_groups_before": len({p["pgid"] for p in live}),
                "files_with_secrets": len(found),
                "scan_s": round(scan_s, 1),
                "restart_ready_s": round(time.monotonic() - t0 - scan_s, 1) if ready else None,
            }
        )
        if not ready:
            raise SystemExit(f"worker {self.gen} did not start after a kill: see {self.run}/worker-{self.gen}.log")

    def finish(self) -> dict[str, Any]:
        """Ask the last generation to close; then the final checks."""
        (self.run / "stop").touch()
        t0 = time.monotonic()
        close_timed_out = False
        if self.proc is not None:
            try:
                self.proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                close_timed_out = True
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        close_s = time.monotonic() - t0
        self.stop.set()
        time.sleep(2)  # what the runtime stopped is given a moment to exit
        orphans = marked_processes(self.marker)
        found = self.scanner.scan(self.home)
        for path, names in found.items():
            self.figures["persisted"].setdefault(path, set()).update(names)
        return {"close_s": round(close_s, 1), "close_timed_out": close_timed_out, "orphans": orphans}

    def acked_lost(self) -> tuple[dict[str, int], dict[str, Any]]:
        acks = _read_lines(self.run / "acks.jsonl")
        db = sqlite3.connect(f"file:{self.home / 'holon.sqlite3'}?mode=ro", uri=True, timeout=60)
        try:
            table = {"work_item": "work_items", "timer": "timers", "execution": "tool_executions"}
            lost: dict[str, int] = {k: 0 for k in table}
            counts: dict[str, int] = {k: 0 for k in table}
            lost_exec: list[dict[str, Any]] = []
            for ack in acks:
                kind = ack["kind"]
                counts[kind] += 1
                if not db.execute(f"SELECT 1 FROM {table[kind]} WHERE id=?", (ack["id"],)).fetchone():
                    lost[kind] += 1
                    if kind == "execution":
                        lost_exec.append(ack)
            delivered = db.execute("SELECT COALESCE(SUM(delivery_count), 0) FROM external_triggers").fetchone()[0]
            timers = json.loads((self.run / "timers.json").read_text())
            fires = {
                t: db.execute("SELECT fire_count FROM timers WHERE id=?", (t,)).fetchone()
                for t in timers["repeating"] + timers["fast"]
            }
        finally:
            db.close()
        answered = self.figures["wakes"].get("202", 0)
        kill_times = [k["at_s"] for k in self.figures["kills"]]
        extra = {
            "acked": counts,
            "wakes_answered_202": answered,
            "wake_deliveries_recorded": delivered,
            "execution_records_lost_by_op": _count(a.get("op", "?") for a in lost_exec),
            "execution_records_lost_by_gen": _count(str(a["gen"]) for a in lost_exec),
            "kill_times_s": kill_times,
            "repeating_timer_fire_counts": [fires[t][0] if fires[t] else None for t in timers["repeating"]],
            "fast_timer_fire_counts": [fires[t][0] if fires[t] else None for t in timers["fast"]],
        }
        return {
            "work_items": lost["work_item"],
            "one_shot_timers": lost["timer"],
            "wakes": max(0, answered - delivered),
        }, {**extra, "execution_records_lost": lost["execution"]}


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def _report(parent: Parent, end: dict[str, Any], wall_s: float) -> dict[str, Any]:
    a, f, run = parent.a, parent.figures, parent.run
    stats = [json.loads(p.read_text()) for p in sorted(run.glob("stats-*.json"))]
    shown: dict[str, int] = {}
    where: dict[str, int] = {}
    ops: dict[str, int] = {}
    errors: dict[str, int] = {}
    for s in stats:
        for src, dst in ((s["shown"], shown), (s["shown_where"], where), (s["ops"], ops), (s["errors"], errors)):
            for k, v in src.items():
                dst[k] = dst.get(k, 0) + v
    lat: list[float] = []
    lat_failed = 0
    slow_in_lock = 0  # samples over 250 ms whose call overlapped a foreign write lock
    outside: list[float] = []  # samples whose call overlapped no foreign write lock
    per_gen = {}
    for p in sorted(run.glob("latency-*.txt"), key=lambda p: int(p.stem.split("-")[1])):
        mine = []
        for line in p.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3:
                end_t, ms = float(parts[0]), float(parts[1])
                mine.append(ms)
                lat_failed += parts[2] == "0"
                in_lock = any(s0 <= end_t and end_t - ms / 1000 <= s1 for s0, s1 in parent.lock_windows)
                slow_in_lock += ms > 250 and in_lock
                if not in_lock:
                    outside.append(ms)
        lat += mine
        per_gen[p.stem.split("-")[1]] = {"n": len(mine), "p99": _pct(mine, 0.99), "max": _pct(mine, 1.0)}
    lost, extra = parent.acked_lost()
    orphans = end["orphans"]
    persisted = {k: sorted(v) for k, v in f["persisted"].items()}
    return {
        "minutes": a.minutes,
        "wall_s": round(wall_s, 1),
        "commit": _git("rev-parse", "--short", "HEAD"),
        # the newest commit of main the code that ran contains
        "on_main": _git("rev-parse", "--short", _git("merge-base", "HEAD", "main") or "main"),
        "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "secrets_persisted": len(persisted),
        "secrets_persisted_files": dict(list(persisted.items())[:20]),
        "secrets_shown": sum(shown.values()),
        "secrets_shown_by_op": shown,
        "secrets_shown_where": where,
        "cap_bytes": parent.cap,
        "peak_home_bytes": f["peak_home_bytes"],
        "peak_home_vs_cap": round(f["peak_home_bytes"] / parent.cap, 3),
        "home_samples_over_cap": f"{f['home_samples_over_cap']}/{f['home_samples']}",
        "peak_fds": f["peak_fds"],
        "get_work_item_ms": {
            "n": len(lat),
            "failed": lat_failed,
            "p50": _pct(lat, 0.5),
            "p99": _pct(lat, 0.99),
            "max": _pct(lat, 1.0),
            "over_250": sum(v > 250 for v in lat),
            "over_250_overlapping_a_foreign_lock": slow_in_lock,
            "p99_of_calls_overlapping_no_foreign_lock": _pct(outside, 0.99),
            "by_generation": per_gen,
        },
        "orphan_process_groups": len({p["pgid"] for p in orphans}),
        "orphan_processes": orphans[:20],
        "acked_writes_lost": sum(lost.values()),
        "acked_lost_by_kind": lost,
        **extra,
        "kills": f["kills"],
        "final_close_s": end["close_s"],
        "final_close_timed_out": end["close_timed_out"],
        "foreign_locks": f["locks"],
        "idle_sockets": {"target": a.idle, "opened": f["idle_opened"], "closed_by_server": f["idle_closed_by_server"]},
        "wakes": f["wakes"],
        "wake_ms_202": {"p50": _pct(f["wake_ms"], 0.5), "p99": _pct(f["wake_ms"], 0.99), "max": _pct(f["wake_ms"], 1)},
        "ops": ops,
        "errors": errors,
        "worker_ready_s": [s.get("ready_s") for s in stats],
        # writes that slept on the runtime's loop thread waiting for another process's lock, by generation
        "store_by_generation": [s.get("store") for s in stats],
        "worker_log_exceptions": _log_exceptions(run),
        "load_average_at_end": os.getloadavg(),
    }


def _log_exceptions(run: Path) -> dict[str, int]:
    """The last line of each traceback the workers printed (background failures), counted."""
    out: dict[str, int] = {}
    for p in run.glob("worker-*.log"):
        lines = p.read_text(errors="replace").splitlines()
        for i, line in enumerate(lines):
            if line.startswith("Traceback"):
                j = i + 1
                while j < len(lines) and (lines[j].startswith(" ") or not lines[j].strip()):
                    j += 1
                last = lines[j][:160] if j < len(lines) else "?"
                out[last] = out.get(last, 0) + 1
    return out


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(Path(__file__).resolve().parent), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _raise_fd_limit(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n if hard == resource.RLIM_INFINITY else min(n, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--cap-mib", type=int, default=200, help="the home's size cap (max_home_bytes)")
    parser.add_argument("--kill-every-s", type=float, default=120.0)
    parser.add_argument("--lock-s", type=float, default=5.0, help="how long the foreign write lock is held")
    parser.add_argument("--idle", type=int, default=300, help="idle connections kept open to the callback port")
    parser.add_argument("--flood-mb", type=int, default=16)
    parser.add_argument("--flood-every-s", type=float, default=10.0)
    parser.add_argument("--fast-timers", type=int, default=5, help="interval_ms = 1 timers written into the table")
    parser.add_argument("--pace-ms", type=float, default=150.0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--gen", type=int, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.worker is not None:
        worker(a.worker, a.gen)
        return
    _raise_fd_limit(a.idle + 1024)
    tmp = Path(tempfile.mkdtemp(prefix="soak_hostile_"))
    parent = Parent(a, tmp)
    started = time.monotonic()
    print(f"soak_hostile: {a.minutes} min in {tmp}, cap {a.cap_mib} MiB, marker {parent.marker}", file=sys.stderr)
    try:
        parent.run_load()
        end = parent.finish()
        data = _report(parent, end, time.monotonic() - started)
    finally:
        parent.stop.set()
        if parent.proc is not None and parent.proc.poll() is None:
            os.kill(parent.proc.pid, signal.SIGKILL)
            parent.proc.wait()
        for s in parent.socks:
            s.close()
        for p in marked_processes(parent.marker):  # what the run left: ended by pid (counted above)
            with contextlib.suppress(OSError):
                os.kill(p["pid"], signal.SIGKILL)
        if a.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    save("soak_hostile", data)


if __name__ == "__main__":
    main()
