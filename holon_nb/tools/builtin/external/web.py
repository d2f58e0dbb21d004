"""Web tools: WebFetch, WebSearch, XSearch (workspace spec §9-§11; decision D14).

Input models and normalisation live here; the fetching, searching and policy live in the
runtime's web plane (``ctx.web``, :mod:`holon_nb.runtime.web`). All three are read-only.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...context import ToolContext
from ...envelope import ToolError
from ...errors import ToolFailure
from ...spec import Family, Stability, ToolSpec

__all__ = ["SPECS", "WebFetchInput", "WebSearchInput"]

_SURFACES = ("web adapter APIs",)
UInt = Annotated[int, Field(ge=0, json_schema_extra={"format": "uint"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class WebFetchInput(_Strict):
    """Arguments of WebFetch (workspace spec §9)."""

    url: str = Field(description="Absolute http:// or https:// URL.")
    max_chars: UInt | None = Field(None, description="Most characters of extracted text; clamped to the "
                                                     "configured max_chars (20000 by default).")
    extract_mode: Literal["auto", "text", "raw"] = Field(
        "auto", description="auto: an HTML page's main content as Markdown, other types as decoded; "
                            "text: tags stripped; raw: the decoded body.")


class WebSearchInput(_Strict):
    """Arguments of WebSearch (workspace spec §10)."""

    query: str = Field(description="What to search for.")
    max_results: UInt | None = Field(None, description="Most results (at least 1); clamped to the configured "
                                                       "max_results (5 by default).")
    provider: str | None = Field(None, description="A configured provider id, duckduckgo, or auto (null): the "
                                                   "configured routing.")


def _empty(tool: str, field: str, hint: str) -> ToolFailure:
    return ToolFailure(ToolError(
        kind="invalid_tool_input", message=f"{tool}: `{field}` must not be empty",
        details={"tool_name": tool, "field": field, "validation_error": "must not be empty"},
        recovery_hint=hint))


def _trim_url(args: WebFetchInput, tool_name: str) -> WebFetchInput:
    url = args.url.strip()
    if not url:
        raise _empty(tool_name, "url", "Pass an absolute URL, e.g. {\"url\": \"https://example.org/\"}.")
    return args.model_copy(update={"url": url})


def _check_search(args: WebSearchInput, tool_name: str) -> WebSearchInput:
    query = args.query.strip()
    if not query:
        raise _empty(tool_name, "query", "Pass what to search for, e.g. {\"query\": \"python asyncio timeout\"}.")
    if args.max_results == 0:
        raise ToolFailure(ToolError(
            kind="invalid_tool_input", message=f"{tool_name}: `max_results` must be at least 1",
            details={"tool_name": tool_name, "field": "max_results", "validation_error": "must be at least 1"},
            recovery_hint="Omit max_results for the configured default, or pass 1 or more."))
    provider = (args.provider or "").strip() or None
    return args.model_copy(update={"query": query, "provider": provider})


async def web_search(args: WebSearchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of WebSearch (workspace spec §10)."""
    return await ctx.web.search(args.query, args.max_results, args.provider)


async def web_fetch(args: WebFetchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of WebFetch (workspace spec §9)."""
    return await ctx.web.fetch(args.url, args.max_chars, args.extract_mode)


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(name="WebFetch", family=Family.WEB, input_model=WebFetchInput, handler=web_fetch,
             result_name="WebFetchResult", stability=Stability.EXPERIMENTAL, normalize=_trim_url,
             related_surfaces=_SURFACES),
    ToolSpec(name="WebSearch", family=Family.WEB, input_model=WebSearchInput, handler=web_search,
             result_name="WebSearchResult", stability=Stability.EXPERIMENTAL, normalize=_check_search,
             related_surfaces=_SURFACES),
)
