"""The web plane: WebFetch, WebSearch and XSearch (workspace spec §9-§11, decision D14).

Its heavy modules (httpx, trafilatura) load on first use: ``WebService`` is light to build. It consumes the
settings of :mod:`.ports`, given by the runtime's composition root.
"""

from __future__ import annotations

from typing import Any

from ._service import WebService

__all__ = ["FetchConfig", "WebFetcher", "WebService", "system_resolver"]


def __getattr__(name: str) -> Any:
    if name in ("FetchConfig", "WebFetcher", "system_resolver"):
        from . import _fetch as fetch

        return getattr(fetch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
