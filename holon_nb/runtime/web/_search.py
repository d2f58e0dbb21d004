"""WebSearch routing (workspace spec §10): configuration, provider order, modes, normalisation.

Configuration is ``RuntimeSettings.web_search`` (``%config HolonNB.web_search``) over the JSON in
``$HOLON_NB_WEB_SEARCH``::

    {"mode": "fallback", "providers": ["local", "brave"], "max_results": 5,
     "provider_configs": {"local": {"kind": "searxng", "base_url": "http://127.0.0.1:8888"},
                          "brave": {"kind": "brave", "api_key_env": "BRAVE_API_KEY"}}}

With no provider configured the order is ``["duckduckgo"]``, a key-free scrape of DuckDuckGo Lite.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ._search_providers import ADAPTERS, DEFAULT_KEY_ENV, SHELLS, Provider, ProviderError

if TYPE_CHECKING:
    from ._ports import WebSettings

__all__ = ["KIND_PRIORITY", "NATIVE_ONLY", "SearchConfig", "WebSearcher", "normalise", "search_config"]

#: Default priorities of provider kinds (rule 4).
KIND_PRIORITY = {
    "brave": 80,
    "tencent_cloud_wsa": 78,
    "bocha": 76,
    "tavily": 75,
    "exa": 70,
    "perplexity": 60,
    "firecrawl": 55,
    "searxng": 50,
    "command": 40,
    "duck_duck_go": 10,
}
NATIVE_ONLY = frozenset({"open_ai_native", "anthropic_native", "gemini_native"})
_KINDS = {**{k: k for k in (*KIND_PRIORITY, *NATIVE_ONLY)}, "duckduckgo": "duck_duck_go"}
_HOW_TO = (
    'Configure a provider, e.g. %config HolonNB.web_search = {"providers": ["local"], "provider_configs": '
    '{"local": {"kind": "searxng", "base_url": "http://127.0.0.1:8888"}}} (or brave/tavily/exa with '
    "their API key in BRAVE_API_KEY/TAVILY_API_KEY/EXA_API_KEY, or a command provider); the built-in "
    "duckduckgo scrape needs internet access."
)


class SearchConfig:
    """The parsed ``web.search.*`` and ``web.providers.*`` settings.

    Raises:
        ValueError: for a malformed configuration (an unknown kind, a shell as command, a bad mode).
    """

    def __init__(self, raw: Mapping[str, Any]):
        self.enabled = bool(raw.get("enabled", True))
        self.provider = str(raw.get("provider") or "auto")
        self.mode = str(raw.get("mode") or "fallback")
        if self.mode not in ("single", "fallback", "aggregate"):
            raise ValueError(f"web_search.mode must be single, fallback or aggregate, got {self.mode!r}")
        self.max_results = max(1, int(raw.get("max_results", 5)))
        self.max_provider_attempts = max(1, int(raw.get("max_provider_attempts", 3)))
        self.order = list(dict.fromkeys(str(p) for p in raw.get("providers") or ()))
        self.providers: dict[str, Provider] = {}
        for pid, spec in dict(raw.get("provider_configs") or {}).items():
            if not isinstance(spec, Mapping):
                raise ValueError(f"web_search.provider_configs.{pid} must be an object")
            kind = _KINDS.get(str(spec.get("kind", "")))
            if kind is None:
                raise ValueError(f"web_search.provider_configs.{pid}: unknown kind {spec.get('kind')!r}")
            argv = tuple(str(a) for a in spec.get("command") or ())
            if argv and os.path.basename(argv[0]).lower() in SHELLS:
                raise ValueError(
                    f"web_search.provider_configs.{pid}: the command may not be a shell ({argv[0]}); "
                    "give the program's argv directly"
                )
            self.providers[str(pid)] = Provider(
                id=str(pid),
                kind=kind,
                base_url=spec.get("base_url"),
                api_key_env=spec.get("api_key_env"),
                command=argv,
                limits=dict(spec.get("limits") or {}),
            )
        self.duckduckgo = Provider(id="duckduckgo", kind="duck_duck_go", base_url=raw.get("duckduckgo_base_url"))

    def status(self, provider: Provider) -> str:
        """``supported``, ``missing_credential``, ``native_only`` or ``unsupported``."""
        if provider.kind in NATIVE_ONLY:
            return "native_only"
        if provider.kind not in ADAPTERS:
            return "unsupported"
        if provider.kind in DEFAULT_KEY_ENV and provider.key() is None:
            return "missing_credential"
        return "supported"

    def lookup(self, pid: str) -> Provider | None:
        """The provider called ``pid`` (``duckduckgo`` is built in), or None."""
        return self.providers.get(pid) or (self.duckduckgo if pid == "duckduckgo" else None)

    def key_values(self) -> tuple[str, ...]:
        """The provider keys present in the environment (scrubbed from receipts like model keys, D6)."""
        return tuple(k for k in (p.key() for p in self.providers.values() if p.kind in DEFAULT_KEY_ENV) if k)


def search_config(settings: WebSettings) -> SearchConfig:
    """``$HOLON_NB_WEB_SEARCH`` (JSON) overlaid by ``settings.web_search``."""
    raw: dict[str, Any] = {}
    env = os.environ.get("HOLON_NB_WEB_SEARCH", "").strip()
    if env:
        try:
            loaded = json.loads(env)
            raw.update(loaded if isinstance(loaded, dict) else {})
        except ValueError:
            raise ValueError("$HOLON_NB_WEB_SEARCH is not a JSON object") from None
    raw.update(dict(settings.web_search or {}))
    return SearchConfig(raw)


def _display_url(parts: Any) -> str:
    path = parts.path if parts.path not in ("", "/") else ""
    return parts.netloc + path + (f"?{parts.query}" if parts.query else "")


def normalise(raw: list[dict[str, Any]], source: str, limit: int) -> list[dict[str, Any]]:
    """Rule 11: drop results without a title or an absolute http(s) URL; add rank, canonical and display URLs."""
    out: list[dict[str, Any]] = []
    for item in raw:
        title = str(item.get("title") or "").strip()
        url = str(item.get("url") or "").strip()
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        if not title or parts.scheme not in ("http", "https") or not parts.netloc:
            continue
        entry: dict[str, Any] = {
            "title": title,
            "url": url,
            "snippet": (str(item["snippet"]).strip() if item.get("snippet") else None),
            "source": source,
            "published_at": item.get("published_at") or None,
            "canonical_url": urlunsplit(parts._replace(fragment="")),
            "display_url": _display_url(parts),
            "rank": len(out) + 1,
        }
        if item.get("language"):
            entry["language"] = item["language"]
        meta = {k: v for k, v in (item.get("metadata") or {}).items() if v is not None}
        if meta:
            entry["metadata"] = meta
        out.append(entry)
        if len(out) >= limit:
            break
    return out


def _unavailable(message: str, details: dict[str, Any], retryable: bool = False) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="provider_unavailable", message=message, details=details, recovery_hint=_HOW_TO, retryable=retryable
        )
    )


class WebSearcher:
    """Runs WebSearch calls against the configured providers.

    Args:
        config: ``() -> SearchConfig`` (read at each call).
    """

    def __init__(self, config: Any):
        self._config = config

    async def search(self, query: str, max_results: int | None, provider: str | None) -> dict[str, Any]:
        """Route ``query`` and return the ``WebSearchResult`` payload (with ``summary_text``).

        Raises:
            ToolFailure: ``provider_unavailable``, ``rate_limited``, ``network_failed``, ``parse_failed``,
                ``response_too_large``, ``invalid_tool_input``, ``tool_execution_failed`` (bad configuration).
        """
        try:
            cfg: SearchConfig = self._config()
        except ValueError as exc:
            raise ToolFailure(
                ToolError(
                    kind="tool_execution_failed",
                    message=f"web search misconfigured: {exc}",
                    recovery_hint="Fix HolonNB.web_search (or $HOLON_NB_WEB_SEARCH).",
                )
            ) from None
        if not cfg.enabled:
            raise _unavailable("WebSearch is disabled (web_search.enabled = false)", {"reason": "disabled"})
        limit = max(1, min(max_results if max_results is not None else cfg.max_results, cfg.max_results))
        requested = (provider or cfg.provider or "auto").strip() or "auto"
        mode = "single" if requested != "auto" else cfg.mode
        order = [requested] if requested != "auto" else self._auto_order(cfg)
        attempts: list[dict[str, Any]] = []
        merged: list[dict[str, Any]] = []
        seen: set[str] = set()
        winner = None
        for pid in order[: 1 if mode == "single" else cfg.max_provider_attempts]:
            results, attempt = await self._attempt(cfg, pid, query, limit)
            attempts.append(attempt)
            if results is None:
                continue
            if mode == "aggregate":
                for r in results:
                    if r["canonical_url"] not in seen and len(merged) < limit:
                        seen.add(r["canonical_url"])
                        merged.append({**r, "rank": len(merged) + 1})
                if len(merged) >= limit:
                    break
            else:
                merged, winner = results, pid
                break
        details = {
            "attempted_providers": [a["provider"] for a in attempts],
            "winning_provider": None,
            "provider_attempts": attempts,
            "mode": mode,
        }
        failed = not merged if mode == "aggregate" else winner is None
        if failed:
            if mode == "single":  # rule 6: the one attempt's own error
                first = attempts[0]
                hint = _HOW_TO if first["error_kind"] == "provider_unavailable" else None
                raise ToolFailure(
                    ToolError(
                        kind=first["error_kind"], message=first["error_message"], details=details, recovery_hint=hint
                    )
                )
            retry = any(a["error_kind"] in ("rate_limited", "network_failed") for a in attempts)
            what = "; ".join(f"{a['provider']}: {a['error_message']}" for a in attempts if a["error_message"])
            raise _unavailable(f"no web search provider answered (routing exhausted). {what}"[:900], details, retry)
        return {
            "query": query,
            "provider": winner or requested,
            "mode": mode,
            "provider_attempts": attempts,
            "winning_provider": None if mode == "aggregate" else winner,
            "results": merged,
            "citations": [{"title": r["title"], "url": r["url"]} for r in merged],
            "fetched_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "summary_text": f"{len(merged)} web results",
        }

    @staticmethod
    def _auto_order(cfg: SearchConfig) -> list[str]:
        """Rule 4-5: the configured order, else supported providers plus duckduckgo by priority."""
        if cfg.order:
            return cfg.order
        candidates = [p for p in cfg.providers.values() if cfg.status(p) == "supported"] + [cfg.duckduckgo]
        candidates.sort(key=lambda p: (-KIND_PRIORITY.get(p.kind, 0), p.kind, p.id))
        return [p.id for p in candidates]

    async def _attempt(
        self, cfg: SearchConfig, pid: str, query: str, limit: int
    ) -> tuple[list[dict[str, Any]] | None, dict[str, Any]]:
        provider = cfg.lookup(pid)
        attempt: dict[str, Any] = {
            "provider": pid,
            "status": "error",
            "result_count": 0,
            "error_kind": None,
            "error_message": None,
            "provider_kind": provider.kind if provider else None,
            "capabilities": ["web_search"],
        }
        if provider is not None and provider.kind == "command":
            attempt["command"] = provider.command[0] if provider.command else None
        try:
            if provider is None:
                raise ProviderError("provider_unavailable", f"provider {pid!r} is not configured")
            status = cfg.status(provider)
            if status == "native_only":
                raise ProviderError(
                    "provider_unavailable", f"{pid} ({provider.kind}) is provider-native search, reserved for the model"
                )
            if status == "unsupported":
                raise ProviderError("provider_unavailable", f"{pid}: kind {provider.kind} is not implemented here")
            raw = await ADAPTERS[provider.kind](provider, query, limit)
            results = normalise(raw, pid, limit)
            if not results and provider.kind == "duck_duck_go":
                raise ProviderError("parse_failed", "DuckDuckGo Lite answered no usable results")
        except ProviderError as exc:
            attempt.update(error_kind=exc.kind, error_message=exc.message)
            return None, attempt
        attempt.update(status="success", result_count=len(results))
        return results, attempt
