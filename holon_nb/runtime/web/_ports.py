"""What the web plane consumes: the settings :class:`~.service.WebService` reads at every call.

The runtime's composition root passes ``() -> RuntimeSettings``, which satisfies :class:`WebSettings`; the web
plane sees nothing else of the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["WebSettings"]


class WebSettings(Protocol):
    """The runtime options the web plane reads (``RuntimeSettings`` has them), read again at each call."""

    @property
    def web_fetch_enabled(self) -> bool:
        """WebFetch is offered."""
        ...

    @property
    def web_fetch_max_chars(self) -> int:
        """Most characters of extracted text a fetch returns."""
        ...

    @property
    def web_fetch_max_response_bytes(self) -> int:
        """Most bytes of a response body read."""
        ...

    @property
    def web_fetch_timeout_s(self) -> float:
        """Longest a fetch takes, in seconds."""
        ...

    @property
    def web_fetch_max_redirects(self) -> int:
        """Most redirects a fetch follows."""
        ...

    @property
    def web_allowed_hosts(self) -> tuple[str, ...]:
        """Hosts a fetch may reach (empty: any public host)."""
        ...

    @property
    def web_denied_hosts(self) -> tuple[str, ...]:
        """Hosts a fetch never reaches."""
        ...

    @property
    def web_search(self) -> Mapping[str, Any]:
        """WebSearch configuration (over ``$HOLON_NB_WEB_SEARCH``)."""
        ...

    @property
    def x_search(self) -> Mapping[str, Any]:
        """XSearch configuration."""
        ...

    @property
    def providers(self) -> Mapping[str, Any]:
        """Provider configuration by id (XSearch reads the xAI provider's)."""
        ...
