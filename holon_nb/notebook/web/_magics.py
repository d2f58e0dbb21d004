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

from ...tools._errors import ToolCallError
from .._magics import SessionMagics, raise_option
from .._parsing import parse_quoted
from ._view import FetchView, SearchView, XSearchView

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
    @argument(
        "action",
        choices=("fetch", "search"),
        help="fetch URL: read one page (WebFetch); search QUERY: search the web (WebSearch).",
    )
    @argument("target", nargs="*", help="fetch: the URL; search: the query words (quote them to keep spacing).")
    @argument(
        "--mode",
        choices=("auto", "text", "raw"),
        default="auto",
        help="fetch: auto (HTML main content as Markdown), text (tags stripped) or raw.",
    )
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
            result = self._rt_call("WebFetch", payload)
            self._show(FetchView(result, args.mode), result, args.raise_error)
            return
        if not target:
            raise UsageError("%web search needs a query, e.g. %web search python asyncio tutorial")
        payload = {"query": target}
        if args.provider is not None:
            payload["provider"] = args.provider
        if args.max_results is not None:
            payload["max_results"] = args.max_results
        result = self._rt_call("WebSearch", payload)
        self._show(SearchView(result), result, args.raise_error)

    # ------------------------------------------------------------ %xsearch
    @line_magic
    @magic_arguments()
    @argument("query", nargs="*", help="What to look for on X (quote it to keep spacing).")
    @argument("--handles", default=None, help="Only these authors: comma-separated handles (at most 10).")
    @argument("--exclude", default=None, help="Leave these authors out: comma-separated handles (at most 10).")
    @argument("--from", dest="from_date", default=None, help="Earliest post date, YYYY-MM-DD.")
    @argument("--to", dest="to_date", default=None, help="Latest post date, YYYY-MM-DD.")
    @raise_option
    def xsearch(self, line: str) -> None:
        """Search public X posts through xAI (XSearch); needs XAI_API_KEY.

        Example::

            %xsearch jupyter agents --handles holon_run --from 2026-01-01
        """
        args = parse_quoted(self.xsearch, line)
        query = " ".join(args.query).strip()
        if not query:
            raise UsageError("%xsearch needs a query, e.g. %xsearch jupyter release")
        payload: dict[str, Any] = {"query": query}
        for field, value in (("allowed_x_handles", args.handles), ("excluded_x_handles", args.exclude)):
            if value:
                payload[field] = [h for h in (p.strip() for p in value.split(",")) if h]
        for field in ("from_date", "to_date"):
            if getattr(args, field):
                payload[field] = getattr(args, field)
        result = self._rt_call("XSearch", payload)
        self._show(XSearchView(result), result, args.raise_error)

    # ------------------------------------------------------------ %trigger
    @line_magic
    @magic_arguments()
    @argument(
        "action",
        choices=("create", "cancel", "list"),
        help="create: this agent's wake URL (CreateExternalTrigger); cancel ID: revoke it "
        "(CancelExternalTrigger); list: the agent's triggers (changes nothing).",
    )
    @argument("target", nargs="?", default=None, help="cancel: the external_trigger_id.")
    @argument(
        "--var",
        default="trigger_url",
        help="create: the Python variable that receives the URL (default trigger_url). The URL is a bearer "
        "secret, so it is never shown or saved in the notebook.",
    )
    @argument("--agent", default=None, help="The agent (default: the notebook's agent).")
    @raise_option
    def trigger(self, line: str) -> None:
        """Create, revoke or list external triggers: URLs that wake a waiting agent when POSTed to.

        The callback server listens on 127.0.0.1 (``%config HolonNB.callback_port``); behind
        JupyterHub or a remote server, expose it with jupyter-server-proxy and set
        ``%config HolonNB.callback_base_url`` to the proxied URL.

        Examples::

            %trigger create
            !curl -s -X POST "$trigger_url" -d '{"build": "passed"}'
            %trigger list
            %trigger cancel trigger_0123456789abcde
        """
        args = parse_quoted(self.trigger, line)
        rt = self._session.rt
        if args.action == "list":
            from .._display import Table

            rows = rt.triggers.list(args.agent or "default")
            display(
                Table(
                    f"external triggers of {args.agent or 'default'}",
                    [
                        "external_trigger_id",
                        "status",
                        "delivery_count",
                        "created_at",
                        "last_delivered_at",
                        "revoked_at",
                    ],
                    [
                        [
                            r[k]
                            for k in (
                                "external_trigger_id",
                                "status",
                                "delivery_count",
                                "created_at",
                                "last_delivered_at",
                                "revoked_at",
                            )
                        ]
                        for r in rows
                    ],
                    data=rows,
                )
            )
            return
        if args.action == "cancel":
            if not args.target:
                raise UsageError("%trigger cancel needs an external_trigger_id (see %trigger list)")
            result = rt.call("CancelExternalTrigger", {"external_trigger_id": args.target}, agent=args.agent)
            self._show(result, result, args.raise_error)
            return
        if not args.var.isidentifier():
            raise UsageError(f"--var must be a Python identifier, got {args.var!r}")
        result = rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}, agent=args.agent)
        self._show(result, result, args.raise_error)  # the token is redacted in everything displayed
        if result.ok:
            from .._display import Note

            # a running shell's namespace is a dict (IPython's own types allow None)
            self.ipython.user_ns[args.var] = result.result["trigger_url"]  # type: ignore[index]
            display(
                Note(
                    f"The wake URL is in the Python variable {args.var} (a bearer secret: not shown, not saved). "
                    f'POST to it to wake the agent, e.g. !curl -s -X POST "${args.var}".'
                )
            )
