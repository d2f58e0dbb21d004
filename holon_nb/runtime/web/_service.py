"""The web plane service behind ``ctx.web``: WebFetch, WebSearch and XSearch for handlers.

It reads the runtime settings at every call (a ``%config`` change applies to the next call)
and holds no per-agent state.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._fetch import FetchConfig, Resolver, WebFetcher
    from ._ports import WebSettings
    from ._search import WebSearcher
    from ._xsearch import XSearcher

__all__ = ["WebService", "fetch_config"]


def fetch_config(settings: WebSettings) -> FetchConfig:
    """The :class:`FetchConfig` of a ``RuntimeSettings`` (its ``web_*`` fields)."""
    from ._fetch import FetchConfig

    return FetchConfig(
        enabled=bool(settings.web_fetch_enabled),
        max_chars=max(0, int(settings.web_fetch_max_chars)),
        max_response_bytes=max(1, int(settings.web_fetch_max_response_bytes)),
        timeout_seconds=max(1.0, float(settings.web_fetch_timeout_s)),
        max_redirects=max(0, int(settings.web_fetch_max_redirects)),
        allowed_hosts=tuple(settings.web_allowed_hosts),
        denied_hosts=tuple(settings.web_denied_hosts),
    )


class WebService:
    """WebFetch, WebSearch and XSearch for tool handlers.

    The fetcher, searcher and XSearch client are built on first use, so a runtime that never
    reaches the web does not import httpx (issue 12: ~90 ms of ``%load_ext``).

    Args:
        settings: ``() -> RuntimeSettings``.
        resolver: The DNS resolver of WebFetch (tests inject one); None: the system's.
        dial: WebFetch's connection test seam (see :class:`~holon_nb.runtime.web._transport.PinnedBackend`).
    """

    def __init__(
        self,
        settings: Callable[[], WebSettings],
        resolver: Resolver | None = None,
        dial: Callable[[str], str] | None = None,
    ):
        self._settings = settings
        self._resolver = resolver
        self._dial = dial

    @cached_property
    def fetcher(self) -> WebFetcher:
        """The WebFetch client (workspace spec §9)."""
        from ._fetch import WebFetcher, system_resolver

        return WebFetcher(lambda: fetch_config(self._settings()), self._resolver or system_resolver, self._dial)

    @cached_property
    def searcher(self) -> WebSearcher:
        """The WebSearch router (workspace spec §10)."""
        from ._search import WebSearcher, search_config

        return WebSearcher(lambda: search_config(self._settings()))

    @cached_property
    def xsearcher(self) -> XSearcher:
        """The XSearch client (workspace spec §11)."""
        from ._xsearch import XSearcher

        return XSearcher(self._settings)

    async def fetch(self, url: str, max_chars: int | None, extract_mode: str) -> dict[str, Any]:
        """WebFetch (workspace spec §9); see :meth:`WebFetcher.fetch`."""
        return await self.fetcher.fetch(url, max_chars, extract_mode)

    async def search(self, query: str, max_results: int | None, provider: str | None) -> dict[str, Any]:
        """WebSearch (workspace spec §10); see :meth:`WebSearcher.search`."""
        return await self.searcher.search(query, max_results, provider)

    async def x_search(
        self, query: str, allowed: list[str], excluded: list[str], from_date: str | None, to_date: str | None
    ) -> dict[str, Any]:
        """XSearch (workspace spec §11); see :meth:`XSearcher.search`."""
        return await self.xsearcher.search(query, allowed, excluded, from_date, to_date)

    def x_search_available(self) -> bool:
        """True when XSearch resolves (rule 4): the turn loop then advertises it."""
        return self.xsearcher.available()

    def secret_values(self) -> tuple[str, ...]:
        """API keys of configured web providers found in the environment (scrubbed like model keys, D6)."""
        from ._search import search_config

        try:
            keys = search_config(self._settings()).key_values()
        except ValueError:
            keys = ()
        return keys
