"""WebSearch provider adapters (workspace spec §10 rules 9-10): SearXNG, Brave, Tavily, Exa, command, DuckDuckGo Lite.

Each adapter is ``async (provider, query, max_results) -> [raw result dict]`` and raises
:class:`ProviderError` with a spec error kind. Raw results carry ``title``, ``url``, ``snippet``
and optionally ``published_at``, ``language``, ``metadata``; normalisation happens in
:mod:`holon_nb.runtime.web._search`. Provider endpoints are operator-configured and are not subject
to the WebFetch address policy (rule 9).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio

from ...tools._errors import HolonNBError

__all__ = [
    "ADAPTERS",
    "DEFAULT_BASE_URLS",
    "DEFAULT_KEY_ENV",
    "Provider",
    "ProviderError",
    "SHELLS",
    "MAX_PROVIDER_BYTES",
    "parse_duckduckgo_lite",
]

#: Provider HTTP bodies are capped (rule 9).
MAX_PROVIDER_BYTES = 1_000_000
_TIMEOUT_S = 20.0
_UA = "holon-nb-websearch/0.1"

DEFAULT_BASE_URLS = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
    "exa": "https://api.exa.ai",
    "duck_duck_go": "https://lite.duckduckgo.com",
}
#: The environment variable holding each keyed kind's API key unless ``api_key_env`` names another.
DEFAULT_KEY_ENV = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY", "exa": "EXA_API_KEY"}
#: Shell binaries a ``command`` provider may not run (rule 10: argv is executed directly, never through a shell).
SHELLS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "csh",
        "tcsh",
        "ash",
        "busybox",
        "cmd",
        "cmd.exe",
        "powershell",
        "pwsh",
    }
)


class ProviderError(HolonNBError):
    """A failed provider attempt: ``kind`` is one of the workspace spec §10 error kinds."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class Provider:
    """One configured provider (``web_search["provider_configs"][id]``).

    Attributes:
        id: The provider id.
        kind: ``searxng``, ``brave``, ``tavily``, ``exa``, ``command``, ``duck_duck_go`` (others are known but
            not implemented here).
        base_url: API base URL (default per kind).
        api_key_env: Name of the variable holding the key (keyed kinds).
        command: argv of a ``command`` provider, ``{{query}}``/``{{max_results}}`` substituted per argument.
        limits: ``timeout_ms`` (10000) and ``max_output_bytes`` (200000) of a ``command`` provider.
    """

    id: str
    kind: str
    base_url: str | None = None
    api_key_env: str | None = None
    command: tuple[str, ...] = ()
    limits: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The base URL without a trailing slash."""
        return str(self.base_url or DEFAULT_BASE_URLS.get(self.kind, "")).rstrip("/")

    def key(self) -> str | None:
        """The API key from the environment, or None."""
        name = self.api_key_env or DEFAULT_KEY_ENV.get(self.kind)
        value = os.environ.get(name, "").strip() if name else ""
        return value or None


async def _request(method: str, url: str, *, provider: Provider, **kwargs: Any) -> bytes:
    """One provider HTTP request; the body is read up to :data:`MAX_PROVIDER_BYTES`; errors mapped (rule 9)."""
    import httpx  # here: the scrubber reads provider keys from this module at every start (issue 12)

    headers = {"user-agent": _UA, "accept": "application/json", **kwargs.pop("headers", {})}
    try:
        async with httpx.AsyncClient(timeout=_TIMEOUT_S, follow_redirects=True, trust_env=False) as client:
            async with client.stream(method, url, headers=headers, **kwargs) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_PROVIDER_BYTES:
                        raise ProviderError(
                            "response_too_large", f"{provider.id} answered more than {MAX_PROVIDER_BYTES} bytes"
                        )
                status = response.status_code
    except httpx.HTTPError as exc:
        raise ProviderError("network_failed", f"{provider.id} could not be reached: {type(exc).__name__}") from None
    if status == 429:
        raise ProviderError("rate_limited", f"{provider.id} answered 429 Too Many Requests")
    if status == 401 and provider.kind == "brave":
        raise ProviderError("provider_unavailable", f"{provider.id} refused the API key (401)")
    if not 200 <= status < 300:
        raise ProviderError("network_failed", f"{provider.id} answered HTTP {status}")
    return bytes(body)


def _json(body: bytes, provider: Provider) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ProviderError("parse_failed", f"{provider.id} did not answer valid UTF-8 JSON") from None


def _items(data: Any, *path: str) -> list[dict[str, Any]]:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, list):
        raise ProviderError("parse_failed", f"the answer has no {'.'.join(path)} list")
    return [item for item in data if isinstance(item, dict)]


def _need_key(provider: Provider) -> str:
    key = provider.key()
    if key is None:
        name = provider.api_key_env or DEFAULT_KEY_ENV.get(provider.kind)
        raise ProviderError("provider_unavailable", f"{provider.id} needs an API key in ${name}")
    return key


async def searxng(provider: Provider, query: str, max_results: int) -> list[dict[str, Any]]:
    """SearXNG's JSON API: ``GET <base>/search?q=…&format=json``."""
    if not provider.url:
        raise ProviderError("provider_unavailable", f"{provider.id} has no base_url")
    body = await _request("GET", f"{provider.url}/search", provider=provider, params={"q": query, "format": "json"})
    return [
        {
            "title": r.get("title"),
            "url": r.get("url"),
            "snippet": r.get("content"),
            "published_at": r.get("publishedDate"),
            "metadata": {"engine": r.get("engine")},
        }
        for r in _items(_json(body, provider), "results")
    ]


async def brave(provider: Provider, query: str, max_results: int) -> list[dict[str, Any]]:
    """Brave Search API: ``GET <base>/res/v1/web/search`` with ``X-Subscription-Token``."""
    body = await _request(
        "GET",
        f"{provider.url}/res/v1/web/search",
        provider=provider,
        params={"q": query, "count": min(max_results, 20)},
        headers={"x-subscription-token": _need_key(provider)},
    )
    return [
        {
            "title": r.get("title"),
            "url": r.get("url"),
            "snippet": r.get("description"),
            "published_at": r.get("page_age") or r.get("age"),
            "language": r.get("language"),
        }
        for r in _items(_json(body, provider), "web", "results")
    ]


async def tavily(provider: Provider, query: str, max_results: int) -> list[dict[str, Any]]:
    """Tavily: ``POST <base>/search`` with a bearer key."""
    body = await _request(
        "POST",
        f"{provider.url}/search",
        provider=provider,
        json={"query": query, "max_results": max_results},
        headers={"authorization": f"Bearer {_need_key(provider)}"},
    )
    return [
        {
            "title": r.get("title"),
            "url": r.get("url"),
            "snippet": r.get("content"),
            "published_at": r.get("published_date"),
            "metadata": {"score": r.get("score")},
        }
        for r in _items(_json(body, provider), "results")
    ]


async def exa(provider: Provider, query: str, max_results: int) -> list[dict[str, Any]]:
    """Exa: ``POST <base>/search`` with ``x-api-key``."""
    body = await _request(
        "POST",
        f"{provider.url}/search",
        provider=provider,
        json={"query": query, "numResults": max_results, "contents": {"text": {"maxCharacters": 400}}},
        headers={"x-api-key": _need_key(provider)},
    )
    out = []
    for r in _items(_json(body, provider), "results"):
        snippet = r.get("text") or " ".join(h for h in r.get("highlights") or () if isinstance(h, str)) or None
        out.append(
            {
                "title": r.get("title"),
                "url": r.get("url"),
                "snippet": snippet,
                "published_at": r.get("publishedDate"),
                "metadata": {"author": r.get("author")},
            }
        )
    return out


def _run_command(argv: list[str], timeout_s: float, cap: int) -> tuple[int, bytes, bytes]:
    """Run ``argv`` without a shell; stdout capped at ``cap``, stderr at ``min(cap, 65536)`` (rule 10)."""
    err_cap = min(cap, 65_536)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise ProviderError("network_failed", f"the command provider did not finish within {timeout_s:g} s") from None
    if len(out) > cap or len(err) > err_cap:
        raise ProviderError(
            "response_too_large", f"the command provider printed more than {cap if len(out) > cap else err_cap} bytes"
        )
    return proc.returncode, out, err


async def command(provider: Provider, query: str, max_results: int) -> list[dict[str, Any]]:
    """A ``command`` provider: argv with ``{{query}}``/``{{max_results}}``; stdout is JSON results."""
    if not provider.command:
        raise ProviderError("provider_unavailable", f"{provider.id} has no command")
    argv = [a.replace("{{query}}", query).replace("{{max_results}}", str(max_results)) for a in provider.command]
    if shutil.which(argv[0]) is None:
        raise ProviderError("provider_unavailable", f"{provider.id}: {argv[0]} was not found")
    timeout_s = float(provider.limits.get("timeout_ms", 10_000)) / 1000
    cap = int(provider.limits.get("max_output_bytes", 200_000))
    try:
        code, out, err = await anyio.to_thread.run_sync(_run_command, argv, timeout_s, cap)
    except OSError as exc:
        raise ProviderError("provider_unavailable", f"{provider.id} could not start: {exc}") from None
    if code != 0:
        tail = err.decode("utf-8", "replace").strip()[-300:]
        raise ProviderError("provider_unavailable", f"{provider.id} exited with status {code}: {tail}")
    data = _json(out, provider)
    items = data if isinstance(data, list) else _items(data, "results")
    return [
        {
            "title": r.get("title"),
            "url": r.get("url"),
            "snippet": r.get("snippet") or r.get("content"),
            "published_at": r.get("published_at"),
        }
        for r in items
        if isinstance(r, dict)
    ]


_DDG_LINK = re.compile(
    r"<a[^>]*?href=[\"']([^\"']+)[\"'][^>]*class=[\"']result-link[\"'][^>]*>(.*?)</a>"
    r"|<a[^>]*class=[\"']result-link[\"'][^>]*href=[\"']([^\"']+)[\"'][^>]*>(.*?)</a>",
    re.S | re.I,
)
_DDG_SNIPPET = re.compile(r"<td[^>]*class=[\"']result-snippet[\"'][^>]*>(.*?)</td>", re.S | re.I)
_TAGS = re.compile(r"<[^>]+>")


def _ddg_target(href: str) -> str:
    href = html.unescape(href)
    if href.startswith("//"):
        href = "https:" + href
    parsed = urlparse(href)
    if parsed.path.startswith("/l/") and "uddg" in parse_qs(parsed.query):
        return parse_qs(parsed.query)["uddg"][0]
    return href


def parse_duckduckgo_lite(page: str) -> list[dict[str, Any]]:
    """Results of a DuckDuckGo Lite page (best effort: its markup is not an API)."""
    links = [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _DDG_LINK.finditer(page)]
    snippets = [html.unescape(_TAGS.sub("", s)).strip() for s in _DDG_SNIPPET.findall(page)]
    return [
        {
            "title": html.unescape(_TAGS.sub("", title)).strip(),
            "url": _ddg_target(href),
            "snippet": snippets[i] if i < len(snippets) else None,
        }
        for i, (href, title) in enumerate(links)
    ]


async def duckduckgo(provider: Provider, query: str, max_results: int) -> list[dict[str, Any]]:
    """The key-free default: a scrape of DuckDuckGo Lite; zero parsed results is ``parse_failed`` (rule 5)."""
    body = await _request(
        "POST", f"{provider.url}/lite/", provider=provider, data={"q": query}, headers={"accept": "text/html"}
    )
    results = parse_duckduckgo_lite(body.decode("utf-8", "replace"))
    if not results:
        raise ProviderError("parse_failed", "DuckDuckGo Lite answered a page without parseable results")
    return results


#: Adapter per implemented kind.
ADAPTERS: dict[str, Callable[[Provider, str, int], Awaitable[list[dict[str, Any]]]]] = {
    "searxng": searxng,
    "brave": brave,
    "tavily": tavily,
    "exa": exa,
    "command": command,
    "duck_duck_go": duckduckgo,
}
