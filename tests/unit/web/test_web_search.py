"""WebSearch (workspace spec §10, §15 cases 14-17): routing and every adapter against local servers speaking its API."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import err, ok
from _web_support import LocalServer, Request, page

from holon_nb import Runtime
from holon_nb.runtime.web._search_providers import parse_duckduckgo_lite


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


def configure(rt: Runtime, **web_search: Any) -> None:
    rt.settings = rt.settings.replace(web_search=web_search)


def hits(n: int, base: str = "https://example.org/doc") -> list[dict[str, Any]]:
    return [{"title": f"Result {i}", "url": f"{base}{i}#part", "content": f"snippet {i}"} for i in range(1, n + 1)]


def as_json(data: Any, status: int = 200):
    return lambda req: (status, {"content-type": "application/json"}, json.dumps(data).encode())


def command_script(tmp_path: Path, results: list[dict[str, Any]] | str, exit_code: int = 0) -> list[str]:
    script = tmp_path / "search.py"
    body = results if isinstance(results, str) else json.dumps({"results": results})
    script.write_text(
        "import sys, json\nq, n = sys.argv[1], int(sys.argv[2])\n"
        f"sys.stdout.write({body!r}.replace('QUERY', q))\nsys.exit({exit_code})\n"
    )
    return [sys.executable, str(script), "{{query}}", "{{max_results}}"]


# ---------------------------------------------------------------- §15 cases 14-17
def test_no_provider_and_duckduckgo_failing_is_provider_unavailable(rt: Runtime, server: LocalServer) -> None:
    server.routes["/lite/"] = page("down", "text/plain", status=503)
    configure(rt, duckduckgo_base_url=server.url(""))
    e = err(rt.call("WebSearch", {"query": "jupyter"}), "provider_unavailable")
    assert e["details"]["attempted_providers"] == ["duckduckgo"] and e["details"]["winning_provider"] is None
    assert "routing exhausted" in e["message"] and "provider_configs" in e["recovery_hint"]
    assert e["retryable"] is True  # the one attempt was a network failure
    assert server.requests[0].method == "POST" and b"q=jupyter" in server.requests[0].body


def test_max_results_zero_is_invalid_and_fifty_is_clamped(rt: Runtime, tmp_path: Path) -> None:
    err(rt.call("WebSearch", {"query": "x", "max_results": 0}), "invalid_tool_input")
    err(rt.call("WebSearch", {"query": "  "}), "invalid_tool_input")
    err(rt.call("WebSearch", {"query": "x", "mode": "single"}), "invalid_tool_input")
    configure(
        rt,
        providers=["cmd"],
        provider_configs={
            "cmd": {
                "kind": "command",
                "command": command_script(
                    tmp_path, [{"title": f"QUERY {i}", "url": f"https://ex.org/{i}", "snippet": "s"} for i in range(10)]
                ),
            }
        },
    )
    res = ok(rt.call("WebSearch", {"query": "tea", "max_results": 50}))
    assert len(res["results"]) == 5 and res["winning_provider"] == "cmd" and res["mode"] == "fallback"
    assert res["citations"] == [{"title": r["title"], "url": r["url"]} for r in res["results"]]
    assert [r["rank"] for r in res["results"]] == [1, 2, 3, 4, 5] and res["results"][0]["title"] == "tea 0"
    assert res["provider_attempts"][0]["command"] == sys.executable
    assert rt.call("WebSearch", {"query": "tea"}).envelope["summary_text"] == "5 web results"


def test_unknown_explicit_provider_is_single_and_unavailable(rt: Runtime) -> None:
    e = err(rt.call("WebSearch", {"query": "x", "provider": "nope"}), "provider_unavailable")
    assert e["details"]["mode"] == "single" and e["details"]["attempted_providers"] == ["nope"]
    assert "not configured" in e["message"]


def test_fallback_past_a_rate_limited_provider(rt: Runtime, server: LocalServer) -> None:
    server.routes["/p1/search"] = as_json({"error": "slow down"}, 429)
    server.routes["/p2/search"] = as_json({"results": hits(3)})
    configure(
        rt,
        providers=["p1", "p2"],
        provider_configs={
            "p1": {"kind": "searxng", "base_url": server.url("/p1")},
            "p2": {"kind": "searxng", "base_url": server.url("/p2")},
        },
    )
    res = ok(rt.call("WebSearch", {"query": "q"}))
    assert res["winning_provider"] == "p2" and res["provider"] == "p2"
    assert [(a["status"], a["error_kind"]) for a in res["provider_attempts"]] == [
        ("error", "rate_limited"),
        ("success", None),
    ]
    first = res["results"][0]
    assert first["canonical_url"] == "https://example.org/doc1" and first["display_url"] == "example.org/doc1"
    assert first["source"] == "p2" and first["snippet"] == "snippet 1"
    # the same provider alone (single) keeps its own error kind, retryable
    e = err(rt.call("WebSearch", {"query": "q", "provider": "p1"}), "rate_limited")
    assert e["retryable"] is True and e["details"]["attempted_providers"] == ["p1"]


# ---------------------------------------------------------------- modes and normalisation
def test_aggregate_merges_and_deduplicates(rt: Runtime, server: LocalServer) -> None:
    server.routes["/a/search"] = as_json({"results": hits(2)})
    server.routes["/b/search"] = as_json(
        {
            "results": [
                *hits(2),
                {"title": "Other", "url": "https://other.org/?x=1"},
                {"title": "", "url": "https://untitled.org/"},
                {"title": "ftp", "url": "ftp://files.org/"},
            ]
        }
    )
    configure(
        rt,
        mode="aggregate",
        providers=["a", "b"],
        provider_configs={
            "a": {"kind": "searxng", "base_url": server.url("/a")},
            "b": {"kind": "searxng", "base_url": server.url("/b")},
        },
    )
    res = ok(rt.call("WebSearch", {"query": "q"}))
    assert res["winning_provider"] is None and res["mode"] == "aggregate"
    assert [r["url"] for r in res["results"]] == [
        "https://example.org/doc1#part",
        "https://example.org/doc2#part",
        "https://other.org/?x=1",
    ]
    assert res["results"][2]["display_url"] == "other.org?x=1" and [r["rank"] for r in res["results"]] == [1, 2, 3]
    server.routes["/a/search"] = server.routes["/b/search"] = as_json({"results": []})
    err(rt.call("WebSearch", {"query": "q"}), "provider_unavailable")


def test_auto_order_by_priority_and_attempt_cap(
    rt: Runtime, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("s", "b", "t", "e"):
        server.routes[f"/{name}/search"] = as_json({}, 500)
    server.routes["/b/res/v1/web/search"] = as_json({}, 500)
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key-123456")
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    server.routes["/lite/"] = page("no", status=500)
    configure(
        rt,
        max_provider_attempts=2,
        duckduckgo_base_url=server.url(""),
        provider_configs={
            "s": {"kind": "searxng", "base_url": server.url("/s")},
            "b": {"kind": "brave", "base_url": server.url("/b")},
            "t": {"kind": "tavily", "base_url": server.url("/t")},
            "x": {"kind": "open_ai_native"},
        },
    )
    e = err(rt.call("WebSearch", {"query": "q"}), "provider_unavailable")
    # tavily has no key (not supported), native search is not a managed provider: brave 80, searxng 50
    assert e["details"]["attempted_providers"] == ["b", "s"]
    e = err(rt.call("WebSearch", {"query": "q", "provider": "x"}), "provider_unavailable")
    assert "reserved" in e["message"]


def test_disabled_and_misconfigured(rt: Runtime) -> None:
    configure(rt, enabled=False)
    err(rt.call("WebSearch", {"query": "q"}), "provider_unavailable")
    configure(rt, provider_configs={"sh": {"kind": "command", "command": ["/bin/sh", "-c", "echo"]}})
    e = err(rt.call("WebSearch", {"query": "q"}), "tool_execution_failed")
    assert "may not be a shell" in e["message"]
    configure(rt, provider_configs={"z": {"kind": "zzz"}})
    assert "unknown kind" in err(rt.call("WebSearch", {"query": "q"}), "tool_execution_failed")["message"]


# ---------------------------------------------------------------- adapters
def test_brave_adapter_and_its_401(rt: Runtime, server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Request] = []

    def brave(req: Request):
        seen.append(req)
        if req.headers.get("x-subscription-token") != "brave-secret-key-1":
            return 401, {"content-type": "application/json"}, b"{}"
        return (
            200,
            {"content-type": "application/json"},
            json.dumps(
                {
                    "web": {
                        "results": [
                            {
                                "title": "Brave hit",
                                "url": "https://brave.example/a",
                                "description": "from brave",
                                "page_age": "2026-01-02",
                                "language": "en",
                            }
                        ]
                    }
                }
            ).encode(),
        )

    server.routes["/res/v1/web/search"] = brave
    configure(rt, provider_configs={"br": {"kind": "brave", "base_url": server.url(""), "api_key_env": "MY_BRAVE"}})
    monkeypatch.setenv("MY_BRAVE", "brave-secret-key-1")
    res = ok(rt.call("WebSearch", {"query": "hello", "provider": "br", "max_results": 3}))
    assert res["results"][0]["published_at"] == "2026-01-02" and res["results"][0]["language"] == "en"
    assert "q=hello" in seen[0].path and "count=3" in seen[0].path
    monkeypatch.setenv("MY_BRAVE", "wrong-key-00000")
    result = rt.call("WebSearch", {"query": "hello", "provider": "br"})
    err(result, "provider_unavailable")
    monkeypatch.setenv("MY_BRAVE", "brave-secret-key-1")
    result = rt.call("WebSearch", {"query": "brave-secret-key-1", "provider": "br"})
    assert "brave-secret-key-1" not in result.receipt  # provider keys are scrubbed like model keys (D6)


def test_tavily_and_exa_adapters(rt: Runtime, server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.routes["/search"] = lambda req: (
        (
            200,
            {"content-type": "application/json"},
            json.dumps(
                {
                    "results": [
                        {
                            "title": "Tavily hit",
                            "url": "https://t.example/",
                            "content": "tav",
                            "published_date": "2026-02-03",
                        }
                    ]
                }
            ).encode(),
        )
        if req.headers.get("authorization") == "Bearer tvly-key-0001" and json.loads(req.body)["max_results"] == 2
        else (
            200,
            {"content-type": "application/json"},
            json.dumps(
                {
                    "results": [
                        {
                            "title": "Exa hit",
                            "url": "https://e.example/x",
                            "text": "exa text",
                            "publishedDate": "2026-03-04",
                        }
                    ]
                }
            ).encode(),
        )
        if req.headers.get("x-api-key") == "exa-key-000001" and json.loads(req.body)["numResults"] == 2
        else (403, {}, b"{}")
    )
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-key-0001")
    monkeypatch.setenv("EXA_API_KEY", "exa-key-000001")
    configure(
        rt,
        provider_configs={
            "tv": {"kind": "tavily", "base_url": server.url("")},
            "ex": {"kind": "exa", "base_url": server.url("")},
        },
    )
    tv = ok(rt.call("WebSearch", {"query": "q", "provider": "tv", "max_results": 2}))["results"][0]
    assert tv["title"] == "Tavily hit" and tv["published_at"] == "2026-02-03" and tv["snippet"] == "tav"
    ex = ok(rt.call("WebSearch", {"query": "q", "provider": "ex", "max_results": 2}))["results"][0]
    assert ex["title"] == "Exa hit" and ex["snippet"] == "exa text"
    monkeypatch.delenv("EXA_API_KEY")
    assert (
        "EXA_API_KEY" in err(rt.call("WebSearch", {"query": "q", "provider": "ex"}), "provider_unavailable")["message"]
    )


@pytest.mark.parametrize(
    "body,kind",
    [
        (b"{not json", "parse_failed"),
        (b"\xff\xfe{}", "parse_failed"),
        (b'{"results": 3}', "parse_failed"),
        (b"x" * 1_000_001, "response_too_large"),
    ],
)
def test_searxng_bad_answers(rt: Runtime, server: LocalServer, body: bytes, kind: str) -> None:
    server.routes["/search"] = lambda req: (200, {"content-type": "application/json"}, body)
    configure(rt, provider_configs={"sx": {"kind": "searxng", "base_url": server.url("")}})
    err(rt.call("WebSearch", {"query": "q", "provider": "sx"}), kind)


def test_network_failure_and_http_error(rt: Runtime, server: LocalServer) -> None:
    with LocalServer() as gone:
        dead = gone.url("")
    server.routes["/search"] = as_json({}, 502)
    configure(
        rt,
        provider_configs={
            "dead": {"kind": "searxng", "base_url": dead},
            "bad": {"kind": "searxng", "base_url": server.url("")},
        },
    )
    assert err(rt.call("WebSearch", {"query": "q", "provider": "dead"}), "network_failed")["retryable"] is True
    assert "502" in err(rt.call("WebSearch", {"query": "q", "provider": "bad"}), "network_failed")["message"]


def test_command_provider_failures(rt: Runtime, tmp_path: Path) -> None:
    def use(argv: list[str], **limits: Any) -> None:
        configure(rt, provider_configs={"c": {"kind": "command", "command": argv, "limits": limits}})

    use(command_script(tmp_path, [], exit_code=3))
    assert "status 3" in err(rt.call("WebSearch", {"query": "q", "provider": "c"}), "provider_unavailable")["message"]
    use(command_script(tmp_path, "x" * 5000), max_output_bytes=1000)
    err(rt.call("WebSearch", {"query": "q", "provider": "c"}), "response_too_large")
    use([sys.executable, "-c", "import time; time.sleep(5)"], timeout_ms=300)
    err(rt.call("WebSearch", {"query": "q", "provider": "c"}), "network_failed")
    use(command_script(tmp_path, "not json"))
    err(rt.call("WebSearch", {"query": "q", "provider": "c"}), "parse_failed")
    use(["/no/such/search-tool", "{{query}}"])
    err(rt.call("WebSearch", {"query": "q", "provider": "c"}), "provider_unavailable")


DDG_PAGE = """<html><body><table>
<tr><td>1.&nbsp;</td><td><a rel="nofollow" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.python.org%2F3%2F&amp;rut=abc"
 class='result-link'>Python <b>3</b> docs</a></td></tr>
<tr><td></td><td class='result-snippet'>The official <b>Python</b> documentation &amp; tutorial.</td></tr>
<tr><td>2.&nbsp;</td><td><a rel="nofollow" href="https://jupyter.org/" class='result-link'>Project Jupyter</a></td></tr>
<tr><td></td><td class='result-snippet'>Notebooks.</td></tr>
</table></body></html>"""


def test_duckduckgo_lite_parsing_and_default_route(rt: Runtime, server: LocalServer) -> None:
    parsed = parse_duckduckgo_lite(DDG_PAGE)
    assert parsed[0] == {
        "title": "Python 3 docs",
        "url": "https://docs.python.org/3/",
        "snippet": "The official Python documentation & tutorial.",
    }
    assert parsed[1]["url"] == "https://jupyter.org/"
    server.routes["/lite/"] = page(DDG_PAGE)
    configure(rt, duckduckgo_base_url=server.url(""))
    res = ok(rt.call("WebSearch", {"query": "python docs"}))
    assert res["winning_provider"] == "duckduckgo" and len(res["results"]) == 2
    server.routes["/lite/"] = page("<html>a captcha page</html>")
    e = err(rt.call("WebSearch", {"query": "python docs"}), "provider_unavailable")
    assert e["details"]["provider_attempts"][0]["error_kind"] == "parse_failed"
