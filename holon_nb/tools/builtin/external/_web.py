"""Web tools: WebFetch, WebSearch, XSearch (workspace spec §9-§11; decision D14).

Input models and normalisation live here; the fetching, searching and policy live in the
runtime's web plane (``ctx.web``, :mod:`holon_nb.runtime.web`). All three are read-only.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ....render.human._builders import fields, shape, table, text_block
from ..._context import ToolContext
from ..._envelope import ToolError
from ..._errors import ToolFailure
from ..._spec import Family, Stability, ToolSpec
from ..results._services import WebFetchResult, WebSearchResult, XSearchResult

__all__ = ["SPECS", "WebFetchInput", "WebSearchInput", "XSearchInput"]

_SURFACES = ("web adapter APIs",)
UInt = Annotated[int, Field(ge=0, json_schema_extra={"format": "uint"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class WebFetchInput(_Strict):
    """Arguments of WebFetch (workspace spec §9)."""

    url: str = Field(description="Absolute http:// or https:// URL.")
    max_chars: UInt | None = Field(
        None, description="Most characters of extracted text; clamped to the configured max_chars (20000 by default)."
    )
    extract_mode: Literal["auto", "text", "raw"] = Field(
        "auto",
        description="auto: an HTML page's main content as Markdown, other types as decoded; "
        "text: tags stripped; raw: the decoded body.",
    )


class WebSearchInput(_Strict):
    """Arguments of WebSearch (workspace spec §10)."""

    query: str = Field(description="What to search for.")
    max_results: UInt | None = Field(
        None, description="Most results (at least 1); clamped to the configured max_results (5 by default)."
    )
    provider: str | None = Field(
        None, description="A configured provider id, duckduckgo, or auto (null): the configured routing."
    )


class XSearchInput(_Strict):
    """Arguments of XSearch (workspace spec §11)."""

    query: str = Field(description="What to look for on X.")
    allowed_x_handles: list[str] = Field(
        [],
        description="Only posts from these handles (at most "
        "10; a leading @ is dropped); not together with excluded_x_handles.",
    )
    excluded_x_handles: list[str] = Field(
        [], description="Leave out posts from these handles (at most 10); not together with allowed_x_handles."
    )
    from_date: str | None = Field(None, description="Earliest post date, YYYY-MM-DD.")
    to_date: str | None = Field(None, description="Latest post date, YYYY-MM-DD; not before from_date.")


_HANDLE = re.compile(r"[A-Za-z0-9_]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _bad(tool: str, field: str, problem: str, hint: str, **details: Any) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"{tool}: `{field}` {problem}",
            details={"tool_name": tool, "field": field, "validation_error": problem, **details},
            recovery_hint=hint,
        )
    )


def _check_x(args: XSearchInput, tool_name: str) -> XSearchInput:
    query = args.query.strip()
    if not query:
        raise _empty(tool_name, "query", 'Pass what to look for, e.g. {"query": "holon release"}.')
    lists = {}
    for field in ("allowed_x_handles", "excluded_x_handles"):
        raw = getattr(args, field)
        if len(raw) > 10:
            raise _bad(tool_name, field, "has more than 10 handles", "Pass at most 10 handles.", count=len(raw))
        handles = []
        for value in raw:
            handle = value.strip()
            handle = handle[1:] if handle.startswith("@") else handle
            if not _HANDLE.fullmatch(handle):
                raise _bad(
                    tool_name,
                    field,
                    f"has an invalid handle {value!r}",
                    "Handles are letters, digits and _ (a leading @ is allowed).",
                    handle=value,
                )
            handles.append(handle)
        lists[field] = handles
    if lists["allowed_x_handles"] and lists["excluded_x_handles"]:
        raise _bad(
            tool_name,
            "allowed_x_handles",
            "cannot be combined with excluded_x_handles",
            "Pass either allowed_x_handles or excluded_x_handles, not both.",
        )
    dates = {}
    for field in ("from_date", "to_date"):
        value = (getattr(args, field) or "").strip() or None
        if value is not None:
            try:
                if not _DATE.fullmatch(value):
                    raise ValueError
                dates[field] = _dt.date.fromisoformat(value)
            except ValueError:
                raise _bad(
                    tool_name,
                    field,
                    f"is not a valid YYYY-MM-DD date: {value!r}",
                    "Write dates as YYYY-MM-DD, e.g. 2026-01-31.",
                ) from None
    if "from_date" in dates and "to_date" in dates and dates["from_date"] > dates["to_date"]:
        raise _bad(
            tool_name,
            "from_date",
            "is after to_date",
            "Swap the dates or widen the range.",
            from_date=str(dates["from_date"]),
            to_date=str(dates["to_date"]),
        )
    return args.model_copy(
        update={
            "query": query,
            **lists,
            **{f: str(d) for f, d in dates.items()},
            **{f: None for f in ("from_date", "to_date") if f not in dates},
        }
    )


async def x_search(args: XSearchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of XSearch (workspace spec §11)."""
    return await ctx.web.x_search(
        args.query, list(args.allowed_x_handles), list(args.excluded_x_handles), args.from_date, args.to_date
    )


def _empty(tool: str, field: str, hint: str) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"{tool}: `{field}` must not be empty",
            details={"tool_name": tool, "field": field, "validation_error": "must not be empty"},
            recovery_hint=hint,
        )
    )


def _trim_url(args: WebFetchInput, tool_name: str) -> WebFetchInput:
    url = args.url.strip()
    if not url:
        raise _empty(tool_name, "url", 'Pass an absolute URL, e.g. {"url": "https://example.org/"}.')
    return args.model_copy(update={"url": url})


def _check_search(args: WebSearchInput, tool_name: str) -> WebSearchInput:
    query = args.query.strip()
    if not query:
        raise _empty(tool_name, "query", 'Pass what to search for, e.g. {"query": "python asyncio timeout"}.')
    if args.max_results == 0:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"{tool_name}: `max_results` must be at least 1",
                details={"tool_name": tool_name, "field": "max_results", "validation_error": "must be at least 1"},
                recovery_hint="Omit max_results for the configured default, or pass 1 or more.",
            )
        )
    provider = (args.provider or "").strip() or None
    return args.model_copy(update={"query": query, "provider": provider})


async def web_search(args: WebSearchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of WebSearch (workspace spec §10)."""
    return await ctx.web.search(args.query, args.max_results, args.provider)


async def web_fetch(args: WebFetchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of WebFetch (workspace spec §9)."""
    return await ctx.web.fetch(args.url, args.max_chars, args.extract_mode)


#: What a person reads of a fetched page: where it came from, then its text (a notebook's ``text/plain``).
_FETCH_HUMAN = shape(
    fields("final_url:url", "status", "content_type", "bytes_read", "truncated"),
    text_block("text", "text", max_lines=60),
)
#: A search: the query and the winning provider, then the hits as a table.
_SEARCH_HUMAN = shape(
    fields("query", "winning_provider:provider", "mode"),
    table("results", "rank", "title", "display_url", "snippet", empty="(no results)"),
)

SPECS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="WebFetch",
        family=Family.WEB,
        input_model=WebFetchInput,
        handler=web_fetch,
        result_name="WebFetchResult",
        output_model=WebFetchResult,
        stability=Stability.EXPERIMENTAL,
        normalize=_trim_url,
        related_surfaces=_SURFACES,
        human=_FETCH_HUMAN,
    ),
    ToolSpec(
        name="WebSearch",
        family=Family.WEB,
        input_model=WebSearchInput,
        handler=web_search,
        result_name="WebSearchResult",
        output_model=WebSearchResult,
        stability=Stability.EXPERIMENTAL,
        normalize=_check_search,
        related_surfaces=_SURFACES,
        human=_SEARCH_HUMAN,
    ),
    ToolSpec(
        name="XSearch",
        family=Family.WEB,
        input_model=XSearchInput,
        handler=x_search,
        result_name="XSearchResult",
        output_model=XSearchResult,
        stability=Stability.EXPERIMENTAL,
        normalize=_check_x,
        related_surfaces=("xAI hosted search adapter",),
    ),
)
