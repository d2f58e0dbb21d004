"""WebFetch cost: a 5 MB page from a local server through WebFetch (raw) vs httpx alone, and extraction cost.

1. ``raw``: ``Runtime.call("WebFetch", {"extract_mode": "raw"})`` of a 5 MB text page (``max_response_bytes``
   raised to 6 MB so the whole page is read) against ``httpx.get`` of the same page: the policy, the
   pinned transport, the bounded reader, hashing, decoding and the envelope. Goal: ratio <= 1.3.
2. Extraction per page: ``auto`` (trafilatura Markdown) and ``text`` (tag stripping) of a ~60 KB HTML page
   (the README site of the tutorial, repeated), timed around the extraction functions alone.

Run: ``python benchmarks/bench_web_fetch.py [RUNS]``. Measured on a shared 2-core machine under load.
"""

from __future__ import annotations

import http.server
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable

import httpx
from _common import median_ms, save

from holon_nb import Runtime
from holon_nb.runtime.web._extract import html_to_markdown, strip_tags

PAGE = b"holon_nb web fetch benchmark line of plain text, 64 bytes long...\n" * (5 * 1024 * 1024 // 64)
HTML = (
    "<html><head><title>Guide</title></head><body><nav><ul>"
    + "".join(f"<li><a href='/p{i}'>Section {i}</a></li>" for i in range(60))
    + "</ul></nav><main><article><h1>Guide</h1>"
    + "".join(
        f"<h2>Part {i}</h2><p>{'This paragraph explains one part of the guide in plain words. ' * 8}</p>"
        f"<pre><code>example_{i}(x) + 1</code></pre><ul><li>first point</li><li>second point</li></ul>"
        for i in range(40)
    )
    + "</article></main><footer>Copyright</footer></body></html>"
)


def interleaved_ms(variants: dict[str, Callable[[], object]], runs: int, warmup: int) -> dict[str, float]:
    """Median ms of each variant over ``runs`` rounds that call every variant once, in a shuffled order."""
    for _ in range(warmup):
        for fn in variants.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    order, rng = list(variants), random.Random(13)
    for _ in range(runs):
        rng.shuffle(order)  # no variant always runs right after another (a freed 5 MB, a busy server thread)
        for name in order:
            t0 = time.perf_counter()
            variants[name]()
            samples[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "text/plain; charset=utf-8")
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


def main(runs: int = 15) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/big"
    with tempfile.TemporaryDirectory() as home, Runtime(home=home, workspace=home) as rt:
        rt.settings = rt.settings.replace(
            web_allowed_hosts=(f"127.0.0.1:{server.server_address[1]}",), web_fetch_max_response_bytes=6 * 1024 * 1024
        )
        check = rt.call("WebFetch", {"url": url, "extract_mode": "raw"})
        assert check.ok and check.result["bytes_read"] == len(PAGE), check.envelope
        # like for like: WebFetch opens one new connection per hop, so the baseline does too (no keep-alive),
        # with its client (and TLS context) made once, as WebFetch caches its TLS context
        client = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
        pooled = httpx.Client()
        async_client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))

        async def async_get() -> bytes:  # httpx's async client on the runtime loop (WebFetch's former I/O model)
            return (await async_client.get(url)).content

        variants = {
            "call": lambda: rt.call("WebFetch", {"url": url, "extract_mode": "raw"}),
            "fetcher": lambda: rt._loop.call(rt.web.fetcher.fetch, url, None, "raw"),
            "httpx": lambda: client.get(url).content,
            "pooled": lambda: pooled.get(url).content,
            "async": lambda: rt._loop.call(async_get),
        }
        # interleaved rounds: every variant once per round, so load from other processes hits them alike
        times = interleaved_ms(variants, runs, warmup=3)
        fetch_ms, fetcher_ms, httpx_ms = times["call"], times["fetcher"], times["httpx"]
        pooled_ms, async_ms = times["pooled"], times["async"]
        client.close()
        pooled.close()
        rt._loop.call(async_client.aclose)
    server.shutdown()
    html_to_markdown(HTML)  # import trafilatura and warm its caches
    auto_ms = median_ms(lambda: html_to_markdown(HTML, "http://bench/"), runs, warmup=2)
    text_ms = median_ms(lambda: strip_tags(HTML), runs, warmup=2)
    save(
        "web_fetch",
        {
            "page_bytes": len(PAGE),
            "runs": runs,
            "webfetch_runtime_call_raw_ms": round(fetch_ms, 1),
            "webfetch_fetcher_only_raw_ms": round(fetcher_ms, 1),
            "httpx_new_connection_ms": round(httpx_ms, 1),
            "httpx_keepalive_ms": round(pooled_ms, 1),
            "ratio_runtime_call_vs_httpx": round(fetch_ms / httpx_ms, 2),
            "ratio_fetcher_vs_httpx": round(fetcher_ms / httpx_ms, 2),
            "goal_ratio": 1.3,
            "httpx_async_new_connection_on_runtime_loop_ms": round(async_ms, 1),
            "ratio_fetcher_vs_httpx_async": round(fetcher_ms / async_ms, 2),
            "extract_html_bytes": len(HTML),
            "extract_auto_markdown_ms": round(auto_ms, 2),
            "extract_text_strip_ms": round(text_ms, 2),
            "note": "shared 2-core machine under load from other agents; the variants run interleaved, one call "
            "each per round in a shuffled order, medians over the rounds. fetcher_only = policy, pinned connection, "
            "bounded reader, sha256 of 5 MB, decoding what raw returns; runtime_call adds dispatch, "
            "the envelope, receipt rendering, scrubbing and the SQLite execution record",
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
