"""Extraction quality of WebFetch ``auto`` (trafilatura Markdown, D14) on a corpus nobody here wrote.

Corpus: Python's HTML documentation from Debian's ``python3-doc`` (``apt-get install python3-doc``),
the pages of ``library/``, served by ``http.server`` on 127.0.0.1 and fetched through ``Runtime.call
("WebFetch")`` (host allowlisted; limits raised so nothing is cut). For each page:

- *first paragraph kept*: the first ``<p>`` of ``div.body`` with at least 40 characters of text
  appears in the output (both compared as lower-case letters and digits only, with Markdown link targets
  removed, so escapes and link syntax do not count; the first 60 such characters);
- *sidebar dropped*: none of the Sphinx sidebar's headings ("Previous topic", "Next topic",
  "This Page", "Report a Bug", "Show Source") is in the output;
- output size relative to ``text`` (the spec's tag stripping) of the same page; time per page.

Run: ``python benchmarks/bench_extraction_quality.py [DOCS_DIR] [MAX_PAGES]``. Measured under load.
"""

from __future__ import annotations

import functools
import http.server
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import lxml.html
from _common import save

from holon_nb import Runtime

DEFAULT_DOCS = Path("/usr/share/doc/python3/html")
SIDEBAR = ("Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source")


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _plain(markdown: str) -> str:
    """The Markdown's words without link targets (``[text](url)`` -> ``text``), as :func:`_alnum`."""
    return _alnum(re.sub(r"\]\((?:<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)", "]", markdown))


def first_paragraph(html: bytes) -> str | None:
    """The text of the first ``<p>`` of ``div.body`` with at least 40 characters, or None."""
    tree = lxml.html.fromstring(html)
    for p in tree.xpath('//div[@role="main"]//p'):
        text = " ".join(p.text_content().split())
        if len(text) >= 40:
            return text
    return None


def body_of(result: dict) -> str:
    text = result["text"]
    return text.split("\n", 1)[1].rsplit("\n</external_content>", 1)[0]


def main(docs: Path = DEFAULT_DOCS, max_pages: int = 400) -> None:
    if not (docs / "library").is_dir():
        sys.exit(f"{docs}/library not found: apt-get install python3-doc (or pass the docs directory)")
    pages = sorted((docs / "library").glob("*.html"))[:max_pages]

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(docs))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    kept = dropped = dropped_text = counted = 0
    ratios, auto_ms, text_ms, misses = [], [], [], []
    with tempfile.TemporaryDirectory() as home, Runtime(home=home, workspace=home) as rt:
        rt.settings = rt.settings.replace(
            web_allowed_hosts=(base.split("//")[1],),
            web_fetch_max_chars=50_000_000,
            web_fetch_max_response_bytes=50_000_000,
        )
        for page in pages:
            raw = page.read_bytes()
            para = first_paragraph(raw)
            url = f"{base}/library/{page.name}"
            t0 = time.perf_counter()
            auto = rt.call("WebFetch", {"url": url})
            t1 = time.perf_counter()
            text = rt.call("WebFetch", {"url": url, "extract_mode": "text"})
            t2 = time.perf_counter()
            assert auto.ok and text.ok, (auto.envelope, text.envelope)
            auto_ms.append((t1 - t0) * 1000)
            text_ms.append((t2 - t1) * 1000)
            out, stripped = body_of(auto.result), body_of(text.result)
            ratios.append(len(out) / max(1, len(stripped)))
            if para is not None:
                counted += 1
                if _alnum(para)[:60] in _plain(out):
                    kept += 1
                else:
                    misses.append(page.name)
            if not any(s in out for s in SIDEBAR):
                dropped += 1
            if not any(s in stripped for s in SIDEBAR):
                dropped_text += 1
    server.shutdown()
    n = len(pages)
    save(
        "extraction_quality",
        {
            "corpus": f"{docs}/library/*.html (Debian python3-doc)",
            "pages": n,
            "pages_with_a_first_paragraph": counted,
            "first_paragraph_kept_share": round(kept / max(1, counted), 3),
            "sidebar_dropped_share": round(dropped / max(1, n), 3),
            "sidebar_dropped_share_text_mode": round(dropped_text / max(1, n), 3),
            "output_chars_vs_tag_stripping_median": round(statistics.median(ratios), 3),
            "output_chars_vs_tag_stripping_p10_p90": [
                round(q, 3) for q in (statistics.quantiles(ratios, n=10)[0], statistics.quantiles(ratios, n=10)[-1])
            ],
            "auto_ms_per_page_median": round(statistics.median(auto_ms), 1),
            "auto_ms_per_page_p90": round(statistics.quantiles(auto_ms, n=10)[-1], 1),
            "text_ms_per_page_median": round(statistics.median(text_ms), 1),
            "first_paragraph_misses": misses[:20],
            "note": "shared 2-core machine under load; times include the local HTTP round trip and Runtime.call",
        },
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DOCS, int(sys.argv[2]) if len(sys.argv) > 2 else 400)
