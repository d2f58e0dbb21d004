"""%web fetch in IPython's in-process shell against a local server (D14 Markdown view, %config policy)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _web_support import LocalServer, page
from IPython.core.error import UsageError

from holon_nb.notebook.web._view import safe_markdown

RESULT = "application/vnd.holon.tool-result+json"
HTML = """<html><body><nav><a href="/a">Sidebar link one</a> <a href="/b">Sidebar link two</a></nav>
<article><h1>Release notes</h1><p>This release makes fetching pages faster and safer for everybody who
reads documentation from a notebook, with many small fixes.</p><p>Second paragraph &lt;script&gt;alert(1)&lt;/script&gt;
explains the <a href="javascript:alert(1)">details</a> of the change in plain words for readers.</p></article></body></html>"""


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer({"/": page(HTML), "/t": page("plain ``` text", "text/plain")}) as srv:
        yield srv


def test_web_fetch_renders_markdown_under_the_config_allowlist(ip: Any, run: Any, server: LocalServer) -> None:
    (denied,) = run("web", f"fetch {server.url()}")
    assert denied[RESULT]["error"]["kind"] == "network_denied" and "text/html" in denied
    ip.run_line_magic("config", f"HolonNB.web_allowed_hosts = ['127.0.0.1:{server.port}']")
    (bundle,) = run("web", f"fetch {server.url()}")
    md = bundle["text/markdown"]
    assert "text/html" not in bundle and bundle[RESULT]["status"] == "success"
    assert "# Release notes" in md and "Sidebar link" not in md and "Untrusted web content" in md
    # the page's literal "<script>" text reaches the Markdown only escaped (\\< renders as a plain "<")
    assert "\\<script>" in md and "<script>" not in md.replace("\\<", "") and "javascript:" not in md
    assert "WebFetch success" in bundle["text/plain"] or "200" in bundle["text/plain"]
    (text,) = run("web", f"fetch {server.url('/t')} --mode raw --max-chars 20")
    assert "````text\nplain ``` text\n````" in text["text/markdown"]
    (cut,) = run("web", f"fetch {server.url('/t')} --max-chars 5")
    assert "```text\nplain...\n```" in cut["text/markdown"] and "truncated" in cut["text/markdown"]


def test_web_fetch_usage_errors(ip: Any) -> None:
    with pytest.raises(UsageError):
        ip.run_line_magic("web", "fetch")
    with pytest.raises(UsageError):
        ip.run_line_magic("web", "search")


def test_config_rejects_bad_host_rules(ip: Any) -> None:
    from holon_nb.notebook import current_session

    _session = current_session()

    ip.run_line_magic("config", "HolonNB.web_allowed_hosts = ['a:b:c:d']")  # refused, the old value stays
    assert _session.rt.settings.web_allowed_hosts == ()


def test_safe_markdown_keeps_code_and_escapes_html() -> None:
    md = "Hi <img src=x onerror=alert(1)> `a<b`\n```\nif a<b: pass\n```\n[x](javascript:alert(1)) [y](https://ok.org)"
    out = safe_markdown(md)
    assert "&lt;img" in out and "`a<b`" in out and "if a<b: pass" in out
    assert "javascript:" not in out and "(https://ok.org)" in out


def test_trigger_magics_keep_the_token_out_of_outputs(ip: Any, run: Any) -> None:
    import json
    import urllib.request

    created = run("trigger", "create --var hook")
    url = ip.user_ns["hook"]
    token = url.rsplit("/", 1)[1]
    assert token.startswith("cb_") and token not in json.dumps(created)
    assert created[0][RESULT]["result"]["trigger_url"].endswith("/cb_[redacted]")
    assert "hook" in created[1]["text/plain"]
    with urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=10) as resp:
        assert resp.status == 202
    (table,) = run("trigger", "list")
    tid = created[0][RESULT]["result"]["external_trigger_id"]
    assert tid in table["text/plain"] and " 1 " in table["text/plain"] and token not in json.dumps(table)
    (cancelled,) = run("trigger", f"cancel {tid}")
    assert cancelled[RESULT]["result"]["status"] == "revoked"
    with pytest.raises(UsageError):
        ip.run_line_magic("trigger", "cancel")


def test_web_search_shows_a_table_of_linked_titles(ip: Any, run: Any) -> None:
    import json

    results = [
        {"title": "Docs <1>", "url": "https://docs.example.org/1", "content": "first"},
        {"title": "Evil", "url": "javascript:alert(1)", "content": "dropped"},
        {"title": "Docs 2", "url": "https://docs.example.org/2", "content": "second"},
        {"title": "Docs 3", "url": "https://docs.example.org/3", "content": "third"},
    ]
    route = lambda req: (200, {"content-type": "application/json"}, json.dumps({"results": results}).encode())  # noqa: E731
    with LocalServer({"/search": route}) as srv:
        ip.user_ns["_ws"] = {
            "providers": ["local"],
            "provider_configs": {"local": {"kind": "searxng", "base_url": srv.url("")}},
        }
        ip.run_line_magic("config", "HolonNB.web_search = _ws")
        (bundle,) = run("web", "search python  docs --max 2")
    html = bundle["text/html"]
    assert bundle[RESULT]["result"]["query"] == "python docs" and len(bundle[RESULT]["result"]["results"]) == 2
    assert "<a href='https://docs.example.org/1'" in html and "Docs &lt;1&gt;" in html and "javascript" not in html
    assert "Docs 3" not in html and "2 results" in html
    (failed,) = run("web", "search x --provider nope")
    assert failed[RESULT]["error"]["kind"] == "provider_unavailable"


def test_xsearch_magic(ip: Any, run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    answer = {
        "model": "grok-4.3",
        "output": [
            {
                "type": "message",
                "content": [
                    {
                        "type": "output_text",
                        "text": "A <b>post</b>.",
                        "annotations": [{"type": "url_citation", "url": "https://x.com/a/status/1"}],
                    }
                ],
            }
        ],
    }
    bodies: list[dict] = []

    def route(req: Any):
        bodies.append(json.loads(req.body))
        return 200, {"content-type": "application/json"}, json.dumps(answer).encode()

    monkeypatch.setenv("XAI_API_KEY", "xai-magic-key-000")
    with LocalServer({"/v1/responses": route}) as srv:
        ip.user_ns["_prov"] = {"xai": {"base_url": srv.url("/v1")}}
        ip.run_line_magic("config", "HolonNB.providers = _prov")
        (bundle,) = run("xsearch", "holon news --handles @holon_run,x_y --from 2026-01-01")
    md = bundle["text/markdown"]
    assert "A &lt;b>post&lt;/b>." in md and "1. <https://x.com/a/status/1>" in md
    assert bodies[0]["tools"][0] == {
        "type": "x_search",
        "allowed_x_handles": ["holon_run", "x_y"],
        "from_date": "2026-01-01",
    }
    with pytest.raises(UsageError):
        ip.run_line_magic("xsearch", "")
