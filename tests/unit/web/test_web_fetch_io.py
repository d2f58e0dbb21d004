"""WebFetch's I/O path: the request on a worker thread, its deadline and cancellation, the pinned TLS
connection, the capped body hashed while it is read, and decoding only what ``raw`` returns.

Every server is on 127.0.0.1; "public" host names reach it through the fetcher's ``dial`` seam.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from _support import eventually, ok
from _web_support import LocalServer, page

from holon_nb import Runtime
from holon_nb.runtime.web import WebService
from holon_nb.runtime.web import _transport as web_transport
from holon_nb.runtime.web._extract import decode_body, decode_head
from holon_nb.runtime.web._transport import CappedBody

PUBLIC_IP = "93.184.216.34"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


def allow(rt: Runtime, server: LocalServer, **settings: object) -> None:
    rt.settings = rt.settings.replace(web_allowed_hosts=(f"127.0.0.1:{server.port}",), **settings)


def inner(result: dict) -> str:
    """The fetched text inside the untrusted-content wrapper."""
    head, _, rest = result["text"].partition("\n")
    assert head.startswith("<external_content source=")
    return rest.rpartition("\n</external_content>\n\n")[0]


# ---------------------------------------------------------------- decoding only what is returned


def split(body: bytes, *sizes: int) -> list[bytes]:
    """``body`` cut into chunks of ``sizes`` (cycled), as a network read might cut it."""
    chunks, pos, i = [], 0, 0
    while pos < len(body):
        chunks.append(body[pos : pos + sizes[i % len(sizes)]])
        pos += sizes[i % len(sizes)]
        i += 1
    return chunks


@pytest.mark.parametrize("encoding", ["utf-8", "shift_jis", "latin-1", "gb18030", "utf-16"])
def test_a_decoded_head_is_the_start_of_the_full_decoding(encoding: str) -> None:
    text = "plain é 日本語 😀 " * 20_000 if encoding != "latin-1" else "café crème " * 60_000
    body = bytearray(text.encode(encoding, errors="replace"))
    body[70_001] = 0xFF  # an undecodable byte past the first step: U+FFFD in both decodings
    body = bytes(body)
    content_type = f"text/plain; charset={encoding}"
    full = decode_body(body, content_type)
    assert full == body.decode(encoding, errors="replace")
    for chunks in ([body], split(body, 1, 7, 65_537), split(body, 100_003)):  # characters split between chunks
        for limit in (0, 5, 20_000, 70_000):
            head = decode_head(chunks, content_type, limit)
            assert len(head) > limit and full.startswith(head)
            assert len(head) < len(full)  # it did stop early
        assert decode_head(chunks, content_type, 10 * len(body)) == full


def test_decoding_goes_on_past_a_step_that_gave_too_few_characters() -> None:
    # ISO-2022-JP switches character sets with 3-byte escapes: "日a" is 9 bytes, so the first 4 * (limit + 1)
    # bytes hold fewer than limit characters, and the steps split escapes and double-byte characters
    text = "日a" * 30_000
    body = text.encode("iso2022_jp")
    head = decode_head(split(body, 70_001), "text/plain; charset=iso-2022-jp", 20_000)
    assert len(head) > 20_000 and text.startswith(head) and len(head) < len(text)


def test_the_meta_charset_is_found_across_chunks_and_short_bodies_decode_whole() -> None:
    body = '<html><head><meta charset="shift_jis"></head><body>日本語</body></html>'.encode("shift_jis")
    assert decode_head(split(body, 3), "text/html", 1_000) == body.decode("shift_jis")
    assert decode_head([], "text/plain", 0) == "" and decode_head([b"", b"ab"], None, 0) == "ab"


def test_utf16_without_a_bom_decodes_like_before() -> None:
    body = "no byte order mark".encode("utf-16-le") * 10_000
    assert decode_head([body], "text/plain; charset=utf-16", 10) == body.decode("utf-16", "replace")


def test_raw_and_plain_auto_return_the_same_text_as_a_full_decoding(rt: Runtime, server: LocalServer) -> None:
    text = "Grüße aus 日本 😀\n" * 30_000  # ~600 KB of multi-byte UTF-8
    server.routes["/p"] = page(text.encode(), "text/plain; charset=utf-8")
    server.routes["/h"] = page(text.encode(), "text/html; charset=utf-8")
    allow(rt, server)
    for mode in ("raw", "auto"):
        res = ok(rt.call("WebFetch", {"url": server.url("/p"), "extract_mode": mode, "max_chars": 12_345}))
        assert inner(res) == text[:12_345] + "..." and res["truncated"] is True
        assert res["bytes_read"] == len(text.encode()) and res["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    res = ok(rt.call("WebFetch", {"url": server.url("/h"), "extract_mode": "raw", "max_chars": 7}))
    assert inner(res) == text[:7] + "..."


# ---------------------------------------------------------------- the capped body and its digest


def test_capped_body_keeps_at_most_the_cap_and_hashes_what_it_keeps() -> None:
    exact = CappedBody(10)
    assert exact.feed(b"12345") is False and exact.feed(b"67890") is False
    body = exact.finish()
    assert (body.data, body.size, body.truncated) == (b"1234567890", 10, False)
    assert body.sha256 == hashlib.sha256(b"1234567890").hexdigest() and body.chunks == [b"12345", b"67890"]
    over = CappedBody(10)
    assert over.feed(b"1234567") is False and over.feed(b"89abc") is True
    body = over.finish()
    assert (body.data, body.size, body.truncated) == (b"123456789a", 10, True)
    assert body.sha256 == hashlib.sha256(b"123456789a").hexdigest()


def test_a_gzip_body_is_decoded_under_the_cap_and_hashed_decoded() -> None:
    import gzip

    capped = CappedBody(1000, "gzip")
    wire = gzip.compress(b"z" * 5000)
    assert capped.feed(wire[:10]) is False and capped.feed(wire[10:]) is True
    body = capped.finish()
    assert body.data == b"z" * 1000 and body.sha256 == hashlib.sha256(b"z" * 1000).hexdigest() and body.truncated


def test_a_body_of_exactly_the_cap_is_not_truncated(rt: Runtime, server: LocalServer) -> None:
    body = bytes(range(256)) * 4096  # 1 MiB
    server.routes["/b"] = page(body, "application/octet-stream")
    allow(rt, server, web_fetch_max_response_bytes=len(body), web_fetch_max_chars=2 * len(body))
    res = ok(rt.call("WebFetch", {"url": server.url("/b"), "extract_mode": "raw"}))
    assert res["bytes_read"] == len(body) and res["truncated"] is False
    assert res["sha256"] == hashlib.sha256(body).hexdigest()
    allow(rt, server, web_fetch_max_response_bytes=len(body) - 1, web_fetch_max_chars=2 * len(body))
    res = ok(rt.call("WebFetch", {"url": server.url("/b"), "extract_mode": "raw"}))
    assert res["bytes_read"] == len(body) - 1 and res["truncated"] is True
    assert res["sha256"] == hashlib.sha256(body[:-1]).hexdigest()


# ---------------------------------------------------------------- deadline and cancellation stop the thread


def _drip(ended: threading.Event):
    def route(req):
        def chunks():
            try:
                for _ in range(600):  # a minute of one byte every 0.1 s
                    yield b"."
                    time.sleep(0.1)
            finally:
                ended.set()

        return 200, {"content-type": "text/plain"}, chunks()

    return route


def test_a_timed_out_hop_closes_its_connection(rt: Runtime, server: LocalServer) -> None:
    ended = threading.Event()
    server.routes["/slow"] = _drip(ended)
    allow(rt, server, web_fetch_timeout_s=1)
    result = rt.call("WebFetch", {"url": server.url("/slow")})
    assert result.envelope["error"]["kind"] == "network_failed"
    # the worker thread's socket was shut down: the server's writes fail well before its minute is up
    assert ended.wait(15)


@pytest.mark.parametrize("how", ["anyio scope", "asyncio task"])
def test_a_cancelled_fetch_returns_at_once_and_closes_its_connection(
    rt: Runtime, server: LocalServer, how: str
) -> None:
    ended = threading.Event()
    server.routes["/slow"] = _drip(ended)
    allow(rt, server)  # the 20 s default deadline: only the cancellation can stop it early

    async def cancel_after_half_a_second() -> bool:
        if how == "anyio scope":
            with anyio.move_on_after(0.5) as scope:
                await rt.web.fetcher.fetch(server.url("/slow"), None, "raw")
            return scope.cancelled_caught
        # what Runtime.call does on Ctrl-C and at stop: cancel the asyncio task running the call
        task = asyncio.ensure_future(rt.web.fetcher.fetch(server.url("/slow"), None, "raw"))
        await asyncio.sleep(0.5)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    assert rt._loop.call(cancel_after_half_a_second) is True
    assert eventually(lambda: len(server.requests) == 1)
    assert ended.wait(15)


# ---------------------------------------------------------------- TLS over the pinned connection


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for ``pinned.test`` (made by the openssl command) and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=pinned.test",
            "-addext",
            "subjectAltName=DNS:pinned.test",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_tls_keeps_the_host_name_for_sni_certificate_and_host_header(
    rt: Runtime, tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tls_files
    names: list[str | None] = []
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    server_ctx.sni_callback = lambda sock, name, ctx: names.append(name)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(web_transport, "_ssl_context", lambda: client_ctx)

    async def resolve(host: str, port: int) -> list[str]:
        return {"pinned.test": [PUBLIC_IP], "other.test": [PUBLIC_IP]}[host]

    with LocalServer(tls=server_ctx) as srv:
        srv.routes["/"] = page(b"over tls " * 50_000, "text/plain")  # 450 KB
        rt.web = WebService(lambda: rt.settings, resolver=resolve, dial=lambda a: "127.0.0.1" if a == PUBLIC_IP else a)
        res = ok(rt.call("WebFetch", {"url": f"https://pinned.test:{srv.port}/", "max_chars": 9}))
        assert inner(res) == "over tls ..." and res["bytes_read"] == 450_000
        assert names == ["pinned.test"] and srv.requests[0].headers["host"] == f"pinned.test:{srv.port}"
        # the certificate is checked against the URL's host name, not the pinned address
        result = rt.call("WebFetch", {"url": f"https://other.test:{srv.port}/"})
        assert result.envelope["error"]["kind"] == "network_failed"
        assert (
            "CERTIFICATE_VERIFY_FAILED" in result.envelope["error"]["message"]
            or "certificate" in result.envelope["error"]["message"].lower()
        )


def test_a_timed_out_tls_hop_closes_its_connection(
    rt: Runtime, tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tls_files
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    monkeypatch.setattr(web_transport, "_ssl_context", lambda: ssl.create_default_context(cafile=str(cert)))

    async def resolve(host: str, port: int) -> list[str]:
        return [PUBLIC_IP]

    ended = threading.Event()
    with LocalServer(tls=server_ctx) as srv:
        srv.routes["/slow"] = _drip(ended)
        rt.web = WebService(lambda: rt.settings, resolver=resolve, dial=lambda a: "127.0.0.1" if a == PUBLIC_IP else a)
        rt.settings = rt.settings.replace(web_fetch_timeout_s=1)
        result = rt.call("WebFetch", {"url": f"https://pinned.test:{srv.port}/slow"})
        assert result.envelope["error"]["kind"] == "network_failed"
        assert result.envelope["error"]["details"]["timeout_seconds"] == 1
        assert ended.wait(15)  # the TLS socket was shut down under the worker thread's read
