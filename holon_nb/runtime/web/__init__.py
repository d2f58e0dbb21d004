"""The web plane: WebFetch, WebSearch and XSearch (workspace spec §9-§11, decision D14)."""

from .fetch import FetchConfig, WebFetcher, system_resolver
from .service import WebService

__all__ = ["FetchConfig", "WebFetcher", "WebService", "system_resolver"]
