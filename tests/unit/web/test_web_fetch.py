"""WebFetch (workspace spec §9, §15 web cases 1-13a; D14) against local servers on 127.0.0.1.

"Public" hosts are names a stub resolver maps to public addresses; the fetcher's ``dial`` test seam
then sends the validated connection to the local server, so the policy sees what a real public host
would give while nothing outside 127.0.0.1 is reached.
"""

from __future__ import annotations

import gzip
import json
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from _support import err, ok
from _web_support import LocalServer, page, redirect

from holon_nb import Runtime
from holon_nb.runtime.web import WebService

PUBLIC_IP = "93.184.216.34"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


class StubDNS:
    """A resolver with a fixed table; it counts lookups and can answer differently the second time."""

    def __init__(self, table: dict[str, list[list[str]]]):
        self.table = table
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        answers = self.table.get(host)
        if answers is None:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return answers[min(len(self.lookups) - 1, len(answers) - 1)] if len(answers) > 1 else answers[0]


def use(rt: Runtime, dns: StubDNS | None = None, **settings: object) -> None:
    """Point ``rt``'s web plane at the stub resolver (public addresses dial 127.0.0.1) and apply settings."""
    rt.settings = rt.settings.replace(**settings)
    if dns is not None:
        rt.web = WebService(lambda: rt.settings, resolver=dns, dial=lambda a: "127.0.0.1" if a == PUBLIC_IP else a)


def allow(server: LocalServer) -> dict[str, object]:
    return {"web_allowed_hosts": (f"127.0.0.1:{server.port}",)}


def body_text(result: dict) -> str:
    text = result["text"]
    head, _, rest = text.partition("\n")
    assert head.startswith("<external_content source=")
    inner, _, notice = rest.rpartition("\n</external_content>\n\n")
    assert "untrusted" in notice
    return inner


# ---------------------------------------------------------------- §15 cases 1-3, 6-8: policy
def test_loopback_not_allowlisted_is_denied_without_a_request(rt: Runtime, server: LocalServer) -> None:
    server.routes["/"] = page("hi")
    e = err(rt.call("WebFetch", {"url": server.url()}), "network_denied")
    assert e["details"]["blocked_ips"] == ["127.0.0.1"] and e["retryable"] is False and e["recovery_hint"]
    assert server.requests == []


def test_metadata_address_is_refused_even_when_allowlisted(rt: Runtime) -> None:
    use(rt, web_allowed_hosts=("169.254.169.254",))
    e = err(rt.call("WebFetch", {"url": "http://169.254.169.254/latest/meta-data/"}), "network_denied")
    assert "metadata" in e["message"] and e["details"]["blocked_ips"] == ["169.254.169.254"]


def test_non_http_schemes_are_denied(rt: Runtime) -> None:
    e = err(rt.call("WebFetch", {"url": "file:///etc/passwd"}), "network_denied")
    assert e["details"]["scheme"] == "file"
    for url, scheme in (("ftp://example.org/x", "ftp"), ("data:text/plain,hi", "data"), ("gopher://h/", "gopher")):
        assert err(rt.call("WebFetch", {"url": url}), "network_denied")["details"]["scheme"] == scheme


def test_mixed_public_and_private_records_are_denied(rt: Runtime, server: LocalServer) -> None:
    dns = StubDNS({"mixed.test": [[PUBLIC_IP, "127.0.0.1"]]})
    use(rt, dns)
    e = err(rt.call("WebFetch", {"url": f"http://mixed.test:{server.port}/"}), "network_denied")
    assert e["details"]["blocked_ips"] == ["127.0.0.1"] and e["details"]["reason"] == "mixed_records"
    assert server.requests == []


@pytest.mark.parametrize(
    "host",
    [
        "[::ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "[::ffff:10.0.0.5]",
        "[64:ff9b::7f00:1]",
        "[::1]",
        "0.0.0.0",
        "10.1.2.3",
        "192.168.0.1",
        "[fd00::1]",
    ],
)
def test_private_and_wrapped_ipv4_literals_are_denied(rt: Runtime, host: str) -> None:
    e = err(rt.call("WebFetch", {"url": f"http://{host}/"}), "network_denied")
    assert e["details"]["blocked_ips"]


def test_allowlist_is_exact_per_port(rt: Runtime, server: LocalServer) -> None:
    server.routes["/"] = page("<p>hello</p>")
    use(rt, **allow(server))
    assert ok(rt.call("WebFetch", {"url": server.url()}))["status"] == 200
    e = err(rt.call("WebFetch", {"url": f"http://127.0.0.1:{server.port + 1}/"}), "network_denied")
    assert "not in allowed_hosts" in e["message"]


def test_denied_hosts_win(rt: Runtime, server: LocalServer) -> None:
    use(rt, web_allowed_hosts=(f"127.0.0.1:{server.port}",), web_denied_hosts=("127.0.0.1",))
    assert "denied_hosts" in err(rt.call("WebFetch", {"url": server.url()}), "network_denied")["message"]
    assert server.requests == []


# ---------------------------------------------------------------- cases 4-5: redirects
def test_redirect_to_private_metadata_mapped_and_file_is_denied_on_that_hop(rt: Runtime, server: LocalServer) -> None:
    dns = StubDNS({"public.test": [[PUBLIC_IP]]})
    use(rt, dns)
    base = f"http://public.test:{server.port}"
    for path, location, blocked in (
        ("/a", "http://10.0.0.5/admin", ["10.0.0.5"]),
        ("/b", "http://169.254.169.254/latest/", ["169.254.169.254"]),
        ("/c", "http://[::ffff:10.0.0.5]/", ["::ffff:a00:5"]),
        ("/d", "http://[::ffff:169.254.169.254]/", ["::ffff:a9fe:a9fe"]),
    ):
        server.routes[path] = redirect(location)
        e = err(rt.call("WebFetch", {"url": base + path}), "network_denied")
        assert e["details"]["blocked_ips"] == blocked, (path, e)
    server.routes["/f"] = redirect("file:///etc/passwd")
    assert err(rt.call("WebFetch", {"url": base + "/f"}), "network_denied")["details"]["scheme"] == "file"
    assert server.paths() == ["/a", "/b", "/c", "/d", "/f"]  # only the first hop of each ever arrived
    assert all(r.headers["host"] == f"public.test:{server.port}" for r in server.requests)


def test_redirect_chain_limits_and_missing_location(rt: Runtime, server: LocalServer) -> None:
    use(rt, **allow(server))
    for i in range(6):
        server.routes[f"/r{i}"] = redirect(f"/r{i + 1}" if i % 2 else server.url(f"/r{i + 1}"))
    server.routes["/r6"] = page("end", "text/plain")
    res = ok(rt.call("WebFetch", {"url": server.url("/r1")}))  # 5 redirects: r1 -> … -> r6
    assert res["final_url"] == server.url("/r6") and res["url"] == server.url("/r1")
    assert body_text(res) == "end"
    e = err(rt.call("WebFetch", {"url": server.url("/r0")}), "too_many_redirects")
    assert e["details"]["max_redirects"] == 5
    server.routes["/nol"] = redirect(None)
    err(rt.call("WebFetch", {"url": server.url("/nol")}), "redirect_without_location")


def test_dns_is_looked_up_once_per_hop_and_the_connection_stays_pinned(rt: Runtime, server: LocalServer) -> None:
    """A rebinding resolver answers a public address first and 10.0.0.5 afterwards: the one lookup decides."""
    server.routes["/"] = page("pinned", "text/plain")
    dns = StubDNS({"rebind.test": [[PUBLIC_IP], ["10.0.0.5"]]})
    use(rt, dns)
    res = ok(rt.call("WebFetch", {"url": f"http://rebind.test:{server.port}/"}))
    assert body_text(res) == "pinned" and dns.lookups == ["rebind.test"]
    assert server.requests[0].headers["host"] == f"rebind.test:{server.port}"
    # the second call resolves again, gets the private answer, and is refused before connecting
    err(rt.call("WebFetch", {"url": f"http://rebind.test:{server.port}/"}), "network_denied")
    assert len(server.requests) == 1


def test_dns_failure_and_refused_connection_are_retryable_network_failed(rt: Runtime) -> None:
    use(rt, StubDNS({}))
    e = err(rt.call("WebFetch", {"url": "http://nowhere.test/"}), "network_failed")
    assert e["retryable"] is True
    with LocalServer() as gone:
        port = gone.port
    use(rt, web_allowed_hosts=(f"127.0.0.1:{port}",))
    assert err(rt.call("WebFetch", {"url": f"http://127.0.0.1:{port}/"}), "network_failed")["retryable"] is True


# ---------------------------------------------------------------- cases 9-12: bodies and extraction
def test_huge_body_stops_at_the_byte_cap(rt: Runtime, server: LocalServer) -> None:
    sent = []

    def huge(req):
        def chunks():
            for _ in range(50 * 16):  # 50 MB in 64 KiB chunks
                sent.append(1)
                yield b"x" * 65536

        return 200, {"content-type": "text/plain"}, chunks()

    server.routes["/big"] = huge
    use(rt, **allow(server))
    res = ok(rt.call("WebFetch", {"url": server.url("/big")}))
    assert res["bytes_read"] == 750_000 and res["truncated"] is True
    assert body_text(res) == "x" * 20_000 + "..."
    assert len(sent) < 50 * 16  # the server was not read to the end


def test_gzip_bomb_stops_at_the_cap(rt: Runtime, server: LocalServer) -> None:
    bomb = gzip.compress(b"\0" * (20 * 1024 * 1024), compresslevel=9)  # ~20 KB on the wire
    server.routes["/bomb"] = page(bomb, "text/plain", **{"content-encoding": "gzip"})
    server.routes["/deflate"] = page(zlib.compress(b"hello deflate"), "text/plain", **{"content-encoding": "deflate"})
    use(rt, **allow(server))
    res = ok(rt.call("WebFetch", {"url": server.url("/bomb")}))
    assert res["bytes_read"] == 750_000 and res["truncated"] is True
    assert body_text(ok(rt.call("WebFetch", {"url": server.url("/deflate")}))) == "hello deflate"
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"


def test_max_chars_is_clamped_to_the_config(rt: Runtime, server: LocalServer) -> None:
    server.routes["/p"] = page("y" * 30_000, "text/plain")
    use(rt, **allow(server))
    res = ok(rt.call("WebFetch", {"url": server.url("/p"), "max_chars": 100_000}))
    assert body_text(res) == "y" * 20_000 + "..." and res["truncated"] is True
    res = ok(rt.call("WebFetch", {"url": server.url("/p"), "max_chars": 0}))
    assert body_text(res) == "..."
    res = ok(rt.call("WebFetch", {"url": server.url("/p"), "max_chars": "10"}))  # scalar coercion
    assert body_text(res) == "y" * 10 + "..."


HTML = """<!doctype html><html><head><title>Guide</title><style>.x{}</style></head><body>
<nav class="sidebar"><ul><li><a href="/home">Home</a></li><li><a href="/about">About us</a></li>
<li><a href="/contact">Contact</a></li></ul></nav>
<main><article><h1>Installing the widget</h1>
<p>The widget installs from the package index &amp; needs Python 3.10 or newer to run well.</p>
<h2>Steps</h2><ol><li>Create a virtual environment</li><li>Install the package</li></ol>
<p>Read <a href="https://docs.example.org/widget">the full manual</a> for every option it has.</p>
<pre><code>pip install widget
widget --version</code></pre>
<table><tr><th>Option</th><th>Meaning</th></tr><tr><td>--fast</td><td>skip checks</td></tr></table>
</article></main>
<footer>Copyright 2026 Example Corp. All rights reserved.</footer></body></html>"""


def test_auto_on_html_is_markdown_of_the_main_content(rt: Runtime, server: LocalServer) -> None:
    server.routes["/doc"] = page(HTML)
    use(rt, **allow(server))
    md = body_text(ok(rt.call("WebFetch", {"url": server.url("/doc")})))
    assert "# Installing the widget" in md and "## Steps" in md
    assert "package index & needs" in md and "&amp;" not in md and "<p>" not in md
    assert "1. Create a virtual environment" in md
    assert "[the full manual](https://docs.example.org/widget)" in md
    assert "```" in md and "pip install widget" in md
    assert "| Option | Meaning |" in md
    assert "About us" not in md and "All rights reserved" not in md


def test_text_strips_tags_and_raw_keeps_them(rt: Runtime, server: LocalServer) -> None:
    server.routes["/doc"] = page(HTML)
    use(rt, **allow(server))
    text = body_text(ok(rt.call("WebFetch", {"url": server.url("/doc"), "extract_mode": "text"})))
    assert "<" not in text.replace("< ", "") and "package index & needs" in text and "About us" in text
    assert "  " not in text and "\n" not in text
    raw = body_text(ok(rt.call("WebFetch", {"url": server.url("/doc"), "extract_mode": "raw"})))
    assert '<nav class="sidebar">' in raw and "&amp;" in raw


def test_non_html_auto_is_the_decoded_body_and_charsets_are_honoured(rt: Runtime, server: LocalServer) -> None:
    server.routes["/latin1"] = page("café crème".encode("latin-1"), "text/plain; charset=ISO-8859-1")
    server.routes["/bad"] = page(b"ok \xff\xfe end", "text/plain")
    server.routes["/sjis"] = page(
        '<html><head><meta charset="shift_jis"></head><body><p>日本語のページです。'
        "十分な長さの本文がここにあります。</p></body></html>".encode("shift_jis"),
        "text/html",
    )
    use(rt, **allow(server))
    assert body_text(ok(rt.call("WebFetch", {"url": server.url("/latin1")}))) == "café crème"
    res = ok(rt.call("WebFetch", {"url": server.url("/bad")}))
    assert body_text(res) == "ok \ufffd\ufffd end" and res["bytes_read"] == 9
    assert "日本語のページです" in body_text(ok(rt.call("WebFetch", {"url": server.url("/sjis")})))


def test_error_status_is_a_success_with_provenance(rt: Runtime, server: LocalServer) -> None:
    use(rt, **allow(server))
    env = rt.call("WebFetch", {"url": server.url("/missing")}).envelope
    assert env["status"] == "success" and env["summary_text"] == f"404 {server.url('/missing')}"
    res = env["result"]
    assert res["status"] == 404 and res["source"] == "local_http" and res["content_type"] == "text/plain"
    import hashlib

    assert res["sha256"] == hashlib.sha256(b"not found").hexdigest() and res["bytes_read"] == 9
    assert res["fetched_at"].endswith("Z")


def test_slow_body_times_out_per_hop(rt: Runtime, server: LocalServer) -> None:
    def drip(req):
        def chunks():
            for _ in range(40):
                yield b"."
                time.sleep(0.1)

        return 200, {"content-type": "text/plain"}, chunks()

    server.routes["/slow"] = drip
    use(rt, web_fetch_timeout_s=1, **allow(server))
    e = err(rt.call("WebFetch", {"url": server.url("/slow")}), "network_failed")
    assert e["retryable"] is True and e["details"]["timeout_seconds"] == 1


# ---------------------------------------------------------------- cases 13, 13a: input and userinfo
def test_bad_input_and_disabled(rt: Runtime) -> None:
    err(rt.call("WebFetch", {"url": "not a url"}), "invalid_url")
    e = err(rt.call("WebFetch", {"url": "https://x", "foo": 1}), "invalid_tool_input")
    assert "foo" in json.dumps(e["details"])
    err(rt.call("WebFetch", {"url": "   "}), "invalid_tool_input")
    err(rt.call("WebFetch", {"url": "https://x", "extract_mode": None}), "invalid_tool_input")
    err(rt.call("WebFetch", {"url": "https://x", "extract_mode": "html"}), "invalid_tool_input")
    use(rt, web_fetch_enabled=False)
    err(rt.call("WebFetch", {"url": "https://x"}), "web_fetch_disabled")


def test_userinfo_is_refused_and_redacted(rt: Runtime, server: LocalServer) -> None:
    use(rt, **allow(server))
    result = rt.call("WebFetch", {"url": f"http://alice:hunter2secret@127.0.0.1:{server.port}/"})
    e = err(result, "invalid_url")
    assert e["details"]["reason"] == "userinfo_not_allowed" and "[redacted]@127.0.0.1" in e["details"]["url"]
    assert "hunter2secret" not in result.full_receipt and "hunter2secret" not in json.dumps(result.envelope)
    assert server.requests == []


def test_redirect_to_userinfo_is_invalid_redirect_location(rt: Runtime, server: LocalServer) -> None:
    server.routes["/go"] = redirect("https://u:p4ssw0rd@example.org/")
    use(rt, StubDNS({"public.test": [[PUBLIC_IP]]}))
    result = rt.call("WebFetch", {"url": f"http://public.test:{server.port}/go"})
    e = err(result, "invalid_redirect_location")
    assert e["details"]["reason"] == "userinfo_not_allowed" and "p4ssw0rd" not in result.full_receipt


def test_env_settings_reach_the_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from holon_nb.runtime import RuntimeSettings

    monkeypatch.setenv("HOLON_NB_WEB_ALLOWED_HOSTS", "127.0.0.1:9, [::1]")
    monkeypatch.setenv("HOLON_NB_WEB_FETCH_MAX_CHARS", "77")
    monkeypatch.setenv("HOLON_NB_WEB_FETCH_ENABLED", "false")
    s = RuntimeSettings()
    assert s.web_allowed_hosts == ("127.0.0.1:9", "[::1]") and s.web_fetch_max_chars == 77
    assert s.web_fetch_enabled is False
