"""Issue 25 item 1: secrets shown and stored (the third hostile round).

(a) a secret printed with colour (``grep --color=always`` puts escape codes inside it) is scrubbed as a
terminal shows it, in every receipt, display, task log, record and index, and a later process without the
variable cannot show it; (b) a secret straddling the start of the in-memory tail of a >4 MB stdout leaves
no part behind; (c) a secret printed half to stdout and half to stderr is not shown whole where the streams
are merged (the combined task log and TaskOutput); (d) an external trigger's token is never in records,
receipts after creation, logs or the memory index, and is kept at rest only as a hash.

Real subprocesses and a real SQLite home; nothing here is mocked.
"""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support import eventually, ok

from holon_nb import Runtime
from holon_nb.render._ansi import strip_ansi

SECRET = "Zq9Xw7Vt3Ru5Sp1On8Ml6Kj"  # 23 characters, no piece of it occurs by chance
# 110 characters for the tail case (item b)
LONG_SECRET = (
    "LqWm2Xc9Vb4Nz8Kj3Hg6Fd1Sa5Pq0Ow7Ie2Ur9Yt4Tr8Ey3Wq6Zm1Xn5Cb0Vl7Kp2Jh9Gf4Ds8Aq3Sw6De1Fr5Gt0Hy7Ju2Ki9Lo4Mp8Nb3Vc6"
)
assert len(LONG_SECRET) == 110


def visible(text: str) -> str:
    """What a reader sees of ``text``: JSON-escaped ESC decoded, escape sequences and HTML tags removed."""
    text = text.replace("\\u001b", "\x1b").replace("\\x1b", "\x1b")
    text = strip_ansi(text)
    return html.unescape(re.sub(r"<[^>]*>", "", text))


def leaked(text: str, secret: str = SECRET, n: int = 8) -> str | None:
    """A piece of ``secret`` of ``n`` characters that a reader sees in ``text``, or None."""
    seen = visible(text)
    return next((secret[i : i + n] for i in range(len(secret) - n + 1) if secret[i : i + n] in seen), None)


def home_leak(home: Path, secret: str = SECRET, n: int = 8) -> str | None:
    """The first file under ``home`` (database and WAL included) whose bytes show a piece of ``secret``."""
    for path in sorted(home.rglob("*")):
        if path.is_file():
            piece = leaked(path.read_bytes().decode("utf-8", "replace"), secret, n)
            if piece is not None:
                return f"{path}: {piece!r}"
    return None


def everything(rt: Runtime, result: Any) -> str:
    """Everything a caller, the notebook or the store gets of one call."""
    bundle = result._repr_mimebundle_()
    row = rt.store.execution(result.execution_id) or {}
    return json.dumps(
        [result.receipt, result.full_receipt, result.display_envelope, bundle, dict(row)], default=str
    ) + "\n".join(str(v) for v in bundle.values() if isinstance(v, str))


@pytest.fixture
def srt(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    monkeypatch.setenv("MY_LONG_API_KEY", LONG_SECRET)
    rt = Runtime(home=tmp_path / "home", workspace=workspace)
    yield rt
    rt.close()


# ---------------------------------------------------------------- (a) colour inside the secret

COLOURED = f"echo 'key={SECRET} end' | grep --color=always Vt3Ru"


def test_a_coloured_secret_is_scrubbed_in_receipt_display_and_record(srt: Runtime) -> None:
    r = srt.call("ExecCommand", {"cmd": COLOURED})
    res = ok(r)
    assert leaked(everything(srt, r)) is None
    assert "[redacted]" in visible(res["stdout_preview"])


def test_a_coloured_secret_never_reaches_the_task_log_and_a_later_process_cannot_show_it(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as rt:
        r = rt.call("ExecCommand", {"cmd": f"sleep 0.2; echo marker-word; {COLOURED}", "yield_time_ms": 0})
        task_id = ok(r)["task_handle"]["task_id"]
        out = rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 20000})
        assert ok(out)["task"]["status"] == "completed"
        assert leaked(everything(rt, out)) is None
        log = Path(rt.store.task(task_id)["detail"]["output_path"])
        assert leaked(log.read_bytes().decode()) is None, log.read_bytes()
        ok(rt.call("MemorySearch", {"query": "marker-word"}))  # the index catches up in this process
    assert home_leak(home) is None
    env = {k: v for k, v in os.environ.items() if k != "MY_SERVICE_TOKEN"}
    later = (
        "import json, sys\nfrom holon_nb import Runtime\n"
        "with Runtime(home=sys.argv[1], workspace=sys.argv[2]) as rt:\n"
        "    calls = [rt.call('TaskOutput', {'task_id': sys.argv[3], 'block': False}),\n"
        "             rt.call('MemorySearch', {'query': 'marker-word'}),\n"
        "             rt.call('MemoryGet', {'source_ref': 'task:' + sys.argv[3]})]\n"
        "    print(json.dumps([[c.envelope['status'], c.envelope, c.receipt] for c in calls], default=str))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", later, str(home), str(workspace), task_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert [c[0] for c in json.loads(done.stdout)] == ["success"] * 3
    assert leaked(done.stdout) is None


def test_a_secret_drawn_over_with_carriage_returns_is_scrubbed_as_shown(
    srt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the terminal shows the secret: its end is written first, the line is redrawn, its start overwrites
    # the filler (the pieces come from variables, so the command text holds none of them)
    monkeypatch.setenv("HALF_A", SECRET[:10])
    monkeypatch.setenv("HALF_B", SECRET[10:])
    cmd = 'printf \'QQQQQQQQQQ\\033[1m%s\\033[0m\\r%s\\n\' "$HALF_B" "$HALF_A"'
    r = srt.call("ExecCommand", {"cmd": cmd})
    ok(r)
    assert leaked(everything(srt, r)) is None
    assert leaked(visible(r.envelope["result"]["stdout_preview"])) is None


def test_a_coloured_secret_split_across_chunks_never_reaches_a_stream_written_in_pieces() -> None:
    from holon_nb.render._scrubbing import Scrubber

    scrub = Scrubber({"A_TOKEN": SECRET})
    text = f"x key={SECRET[:6]}\x1b[01;31m\x1b[K{SECRET[6:11]}\x1b[m\x1b[K{SECRET[11:]} end\nnext\n"
    assert scrub.text(text) == "x key=[redacted] end\nnext\n"
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            stream = scrub.stream()
            got = stream.feed(text[:i]) + stream.feed(text[i:j]) + stream.feed(text[j:]) + stream.flush()
            assert got == scrub.text(text), (i, j)
    stream = scrub.stream()
    assert stream.feed("hello\n") == "hello\n"  # text that cannot start a secret is written at once


# ---------------------------------------------------------------- (b) a secret at the tail's cut

# >4 MB of stdout; LONG_SECRET starts 42 characters before the 128,000-character tail, so 68 of its
# 110 characters are inside the tail the runtime keeps in memory
BIG = (
    "import sys\n"
    "w = sys.stdout.write\n"
    "for _ in range(45000): w('f' * 99 + '\\n')\n"
    "w('s=' + sys.argv[1])\n"
    "w(('g' * 99 + '\\n') * 1279 + 'g' * 31 + '\\n')\n"
)


def _big_cmd() -> str:
    return f'{sys.executable} -c "$BIG" "$MY_LONG_API_KEY"'


def test_a_secret_straddling_the_start_of_the_kept_tail_leaves_nothing_behind(
    srt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIG", BIG)
    r = srt.call("ExecCommand", {"cmd": _big_cmd(), "max_output_tokens": 64000})
    res = ok(r)
    assert res["stdout_chars"] > 4_000_000 and res["truncated"] is True
    assert leaked(everything(srt, r), LONG_SECRET) is None
    assert home_leak(srt.home, LONG_SECRET) is None


def test_a_task_summary_of_a_secret_straddling_the_kept_tail_leaves_nothing_behind(
    srt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIG", BIG)
    r = srt.call("ExecCommand", {"cmd": "sleep 0.2; " + _big_cmd(), "max_output_tokens": 64000, "yield_time_ms": 0})
    task_id = ok(r)["task_handle"]["task_id"]
    out = srt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 60000})
    assert ok(out)["task"]["status"] == "completed"
    assert leaked(everything(srt, out), LONG_SECRET) is None
    assert leaked(json.dumps(srt.store.task(task_id)), LONG_SECRET) is None
    assert all(leaked(m["text"], LONG_SECRET) is None for m in srt.messages())
    assert home_leak(srt.home, LONG_SECRET) is None


def test_scrubbing_a_cut_text_redacts_a_partial_secret_at_each_edge() -> None:
    from holon_nb.render._scrubbing import Scrubber

    scrub = Scrubber({"A_TOKEN": SECRET})
    assert scrub.edges(SECRET[9:] + " rest", start=True) == "[redacted] rest"
    assert scrub.edges("lead " + SECRET[:9], end=True) == "lead [redacted]"
    coloured = SECRET[6:12] + "\x1b[1m" + SECRET[12:] + "\x1b[0m rest"
    assert leaked(scrub.edges(coloured, start=True)) is None
    assert scrub.edges("Kj rest", start=True) == "Kj rest"  # three characters: not taken for a secret
    assert scrub.edges(SECRET[9:] + " rest") == SECRET[9:] + " rest"  # not a cut: nothing to guess


# ---------------------------------------------------------------- (c) half on stdout, half on stderr


def test_a_saved_notebook_shows_no_secret_split_between_stdout_and_stderr_or_coloured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a front end shows a cell's stdout and stderr outputs one after the other: one text to a reader
    import nbformat

    from holon_nb.testing import format_summary, run_notebook

    monkeypatch.delenv("HOLON_NB_HOME", raising=False)
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os, sys, time\ns = os.environ['MY_SERVICE_TOKEN']\n"
            "sys.stdout.write('a ' + s[:11]); sys.stdout.flush(); time.sleep(0.3)\n"
            "sys.stderr.write(s[11:] + ' b\\n'); sys.stderr.flush()"
        ),
        nbformat.v4.new_code_cell('!echo "key=$MY_SERVICE_TOKEN end" | grep --color=always Vt3Ru'),
    ]
    src = tmp_path / "split.ipynb"
    nbformat.write(nb, src)
    summary = run_notebook(src, timeout=120)
    assert summary.exit_code == 0, format_summary(summary)
    saved = nbformat.read(summary.output, as_version=4)
    first, second = [c for c in saved.cells if c.cell_type == "code"]
    streams = [o for o in first.outputs if o["output_type"] == "stream"]
    assert {o["name"] for o in streams} == {"stdout", "stderr"}, streams
    assert SECRET[:11] not in "".join(o["text"] for o in streams)
    assert SECRET[11:] not in "".join(o["text"] for o in streams)
    assert "[redacted]" in "".join(o["text"] for o in streams)
    assert leaked(json.dumps(second.outputs)) is None, second.outputs
    assert leaked(summary.output.read_text(encoding="utf-8")) is None


SPLIT = "printf 'a %s' \"${MY_SERVICE_TOKEN%${MY_SERVICE_TOKEN#???????????}}\"; printf '%s b\\n' \"${MY_SERVICE_TOKEN#???????????}\" >&2"


def test_a_secret_split_between_stdout_and_stderr_is_not_shown_in_a_commands_two_sections(srt: Runtime) -> None:
    # the soak (benchmarks/soak_hostile.py) found each half in the receipt's stdout and stderr sections,
    # the display and the record: shown one above the other, they read as the secret
    result = srt.call("ExecCommand", {"cmd": SPLIT})
    r = ok(result)
    assert r["stdout_preview"] == "a [redacted]" and r["stderr_preview"] == " b", r
    shown = everything(srt, result)
    assert SECRET[:11] not in shown and SECRET[11:] not in shown


def test_a_secret_split_between_stdout_and_stderr_is_not_in_a_tasks_summary(srt: Runtime) -> None:
    tid = ok(srt.call("ExecCommand", {"cmd": "sleep 0.2; " + SPLIT, "yield_time_ms": 0}))["task_handle"]["task_id"]
    out = srt.call("TaskOutput", {"task_id": tid, "block": True, "timeout_ms": 60000})
    assert ok(out)["retrieval_status"] == "success"
    shown = everything(srt, out)
    assert SECRET[:11] not in shown and SECRET[11:] not in shown, shown
    row = srt.store.query("SELECT * FROM tasks WHERE id=?", (tid,))[0]
    stored = json.dumps(dict(row), default=str)
    assert SECRET[:11] not in stored and SECRET[11:] not in stored


# ---------------------------------------------------------------- (d) the external-trigger token


def _post(url: str) -> int:
    code = (
        "import sys, urllib.request, urllib.error\n"
        "req = urllib.request.Request(sys.argv[1], data=b'{}', method='POST')\n"
        "try:\n    print(urllib.request.urlopen(req, timeout=10).status)\n"
        "except urllib.error.HTTPError as e:\n    print(e.code)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, timeout=30, check=True, text=True)
    return int(out.stdout.strip())


def test_the_trigger_token_is_kept_only_as_a_hash_and_never_recorded_or_indexed(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as rt:
        created = rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"})
        url = ok(created)["trigger_url"]  # the in-memory envelope returned to the caller has it
        token = url.rsplit("/", 1)[1]
        assert re.fullmatch(r"cb_[0-9a-f]{64}", token)
        again = rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"})
        assert ok(again)["trigger_url"] == url  # idempotent in the process that minted it
        later = [again, rt.call("GetAgent", {}), rt.call("MemorySearch", {"query": "trigger callbacks wake"})]
        for result in [created, *later]:
            row = rt.store.execution(result.execution_id) or {}
            assert token not in json.dumps(dict(row), default=str), row
        for result in later:
            assert token not in result.receipt and token not in json.dumps(result._repr_mimebundle_())
        search = rt.call("MemorySearch", {"query": "cb_ " + token[3:13]})
        assert token not in json.dumps(search.envelope) and token not in search.receipt
        # a command that prints the URL it was given does not put the token in its log or receipt
        printed = rt.call("ExecCommand", {"cmd": 'echo "url: $HOLON_EXTERNAL_TRIGGER_URL"'})
        assert "/api/callbacks/wake/" in printed.receipt and token not in everything(rt, printed)
        assert _post(url) == 202
    # at rest: no file of the home holds the token (database, WAL, logs); its SHA-256 is what is kept
    for path in sorted(home.rglob("*")):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    db = sqlite3.connect(home / "holon.sqlite3")
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        dumped = "\n".join(str(row) for t in tables for row in db.execute(f'SELECT * FROM "{t}"'))
    finally:
        db.close()
    assert token not in dumped
    import hashlib

    assert hashlib.sha256(token.encode()).hexdigest() in dumped


def test_a_trigger_url_keeps_working_after_a_restart_without_the_token_at_rest(tmp_path: Path) -> None:
    import socket

    from holon_nb.runtime import RuntimeSettings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = RuntimeSettings(callback_port=port)
    home = tmp_path / "h"
    with Runtime(home=home, workspace=tmp_path, settings=settings) as first:
        made = ok(first.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    with Runtime(home=home, workspace=tmp_path, settings=settings) as second:
        eventually(lambda: second.triggers.server.running)
        assert _post(made["trigger_url"]) == 202  # the old URL still wakes the agent: its hash is kept
        renewed = ok(second.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
        # this process never knew the first token: the same trigger gets a new one, the old one still works
        assert renewed["external_trigger_id"] == made["external_trigger_id"]
        assert renewed["trigger_url"] != made["trigger_url"]
        assert _post(renewed["trigger_url"]) == 202 and _post(made["trigger_url"]) == 202
        assert second.triggers.env_for("default") == {"HOLON_EXTERNAL_TRIGGER_URL": renewed["trigger_url"]}
        ok(second.call("CancelExternalTrigger", {"external_trigger_id": made["external_trigger_id"]}))
        assert _post(renewed["trigger_url"]) == 404 and _post(made["trigger_url"]) == 404
