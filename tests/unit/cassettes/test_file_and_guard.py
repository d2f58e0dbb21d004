"""Cassette files (location, format errors, redact hook, secrets) and the replay network guard (§4.3)."""

from __future__ import annotations

import json
import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from unit.cassettes._drive import drive, tool_specs

from holon_nb.providers.cassettes._cassette import CassetteProvider, cassette_path
from holon_nb.providers.cassettes._errors import CassetteFormatError, NetworkBlocked
from holon_nb.providers.cassettes._file import read_cassette
from holon_nb.providers.cassettes._guard import NetworkGuard
from holon_nb.providers.scripted import ScriptedProvider, Step


def test_cassette_path_beside_the_notebook(tmp_path):
    assert cassette_path(tmp_path / "demo.ipynb", "cell-1") == tmp_path / "demo.holon" / "cassettes" / "cell-1.jsonl"
    assert cassette_path("nb/x.y.ipynb", "a_b") == Path("nb/x.y.holon/cassettes/a_b.jsonl")
    for bad in ("", "../x", "a/b"):
        with pytest.raises(ValueError):
            cassette_path("demo.ipynb", bad)


def test_format_errors_name_the_problem(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"kind":"header","format":"holon_nb.cassette","version":2}\n')
    with pytest.raises(CassetteFormatError, match="version 2"):
        read_cassette(p)
    p.write_text('{"kind":"interaction"}\n')
    with pytest.raises(CassetteFormatError, match="header"):
        read_cassette(p)
    p.write_text('{"kind":"header","format":"holon_nb.cassette","version":1}\nnot json\n')
    with pytest.raises(CassetteFormatError, match=":2: not JSON"):
        read_cassette(p)
    p.write_text("")
    with pytest.raises(CassetteFormatError, match="empty"):
        read_cassette(p)


def test_redact_hook_runs_on_every_record_before_write(rt, tmp_path):
    seen = []

    def hook(rec):
        seen.append(rec["kind"])
        return json.loads(json.dumps(rec).replace("PRIVATE", "[hooked]"))

    path = tmp_path / "c.jsonl"
    cas = CassetteProvider(
        ScriptedProvider([Step.text("PRIVATE answer")]), path, "record", redact_hook=hook, workspace=rt.workspace
    )
    drive(rt, cas, "PRIVATE question", tool_specs())
    cas.close()
    assert seen == ["header", "interaction", "footer"]
    assert "PRIVATE" not in path.read_text() and "[hooked]" in path.read_text()


def test_secret_in_tool_receipt_never_reaches_the_cassette(rt, tmp_path, monkeypatch):
    """Case 41 at the cassette boundary: env key, a receipt containing its value, recorded."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    path = tmp_path / "c.jsonl"
    cas = CassetteProvider(
        ScriptedProvider([Step.tool_use("call_1", "ExecCommand", {"cmd": "echo $OPENAI_API_KEY"}), Step.text("ok")]),
        path,
        "record",
        workspace=rt.workspace,
    )
    out = drive(rt, cas, "print the key", tool_specs())
    cas.close()
    assert "[redacted]" in out.receipts[0] and "sk-test-0123456789" not in out.receipts[0]
    text = path.read_text()
    assert "sk-test-0123456789" not in text
    tool = read_cassette(path).tools[0]
    assert "[redacted]" in tool["receipt"]
    assert "sk-test-0123456789" not in json.dumps(tool["envelope"])


def test_guard_blocks_tcp_including_loopback_and_restores(tmp_path):
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/"
    original = socket.socket.connect
    try:
        with NetworkGuard() as guard:
            with pytest.raises(NetworkBlocked):
                socket.create_connection(("127.0.0.1", srv.server_address[1]), timeout=2)
            with pytest.raises(NetworkBlocked):
                urllib.request.urlopen(url, timeout=2)
            a, b = socket.socketpair()  # unix sockets stay usable
            a.close(), b.close()
        assert len(guard.attempts) == 2
        assert socket.socket.connect is original
        assert urllib.request.urlopen(url, timeout=5).status == 200
    finally:
        srv.shutdown()
        srv.server_close()


def test_nested_guards_restore_only_after_the_last(tmp_path):
    original = socket.socket.connect
    g1, g2 = NetworkGuard().start(), NetworkGuard().start()
    g1.stop()
    assert socket.socket.connect is not original
    g2.stop()
    g2.stop()
    assert socket.socket.connect is original


def test_replaying_cassette_guards_until_closed(rt, tmp_path):
    path = tmp_path / "c.jsonl"
    cas = CassetteProvider(ScriptedProvider([Step.text("hi")]), path, "record", workspace=rt.workspace)
    drive(rt, cas, "q", tool_specs())
    cas.close()
    original = socket.socket.connect
    with CassetteProvider(None, path, "replay", workspace=rt.workspace) as replay:
        assert socket.socket.connect is not original
        assert drive(rt, replay, "q", tool_specs()).final_text == "hi"
    assert socket.socket.connect is original and replay.network_attempts == []
