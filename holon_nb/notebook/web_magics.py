"""The web and external-trigger magics: ``%web``, ``%xsearch``, ``%trigger``.

Each calls one tool through ``Runtime.call`` (the one dispatch path) and displays
its result once: a fetched page as rendered Markdown, search results as a table
of linked titles, trigger records as receipts.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..tools.errors import ToolCallError
from .magics import SessionMagics, raise_option
from .parsing import parse_quoted
from .web_view import FetchView, SearchView

__all__ = ["WebMagics"]


@magics_class
class WebMagics(SessionMagics):
    """``%web fetch|search`` (WebFetch, WebSearch), ``%xsearch`` (XSearch), ``%trigger`` (external triggers)."""

    def _show(self, view: Any, result: Any, raise_error: bool) -> None:
        display(view)
        if not result.ok and (raise_error or self._session.config.raise_on_tool_error):
            raise ToolCallError(result.display_envelope)

    # ------------------------------------------------------------ %web
    @line_magic
    @magic_arguments()
    @argument("action", choices=("fetch", "search"),
              help="fetch URL: read one page (WebFetch); search QUERY: search the web (WebSearch).")
    @argument("target", nargs="*", help="fetch: the URL; search: the query words (quote them to keep spacing).")
    @argument("--mode", choices=("auto", "text", "raw"), default="auto",
              help="fetch: auto (HTML main content as Markdown), text (tags stripped) or raw.")
    @argument("--max-chars", type=int, default=None, help="fetch: most characters of text (clamped to the config).")
    @argument("--provider", default=None, help="search: a provider id (duckduckgo, or one of HolonNB.web_search).")
    @argument("--max", dest="max_results", type=int, default=None, help="search: most results (clamped).")
    @raise_option
    def web(self, line: str) -> None:
        """Fetch a page or search the web under the runtime's web policy.

        Private, loopback and cloud-metadata addresses are refused unless allowlisted
        (``%config HolonNB.web_allowed_hosts = ["127.0.0.1:8000"]``; metadata never).

        Examples::

            %web fetch https://docs.python.org/3/library/json.html
            %web fetch http://127.0.0.1:8000/ --mode text --max-chars 2000
            %web search jupyter kernel protocol --max 5
        """
        args = parse_quoted(self.web, line)
        target = " ".join(args.target).strip()
        if args.action == "fetch":
            if not target:
                raise UsageError("%web fetch needs a URL, e.g. %web fetch https://example.org/")
            payload: dict[str, Any] = {"url": target, "extract_mode": args.mode}
            if args.max_chars is not None:
                payload["max_chars"] = args.max_chars
            result = self._session.rt.call("WebFetch", payload)
            self._show(FetchView(result, args.mode), result, args.raise_error)
            return
        if not target:
            raise UsageError("%web search needs a query, e.g. %web search python asyncio tutorial")
        payload = {"query": target}
        if args.provider is not None:
            payload["provider"] = args.provider
        if args.max_results is not None:
            payload["max_results"] = args.max_results
        result = self._session.rt.call("WebSearch", payload)
        self._show(SearchView(result), result, args.raise_error)
