"""Model-plane read tools: ListModelProviders and ListProviderModels (agents spec §5.19–§5.20).

Both are ``core_agent`` tools (every profile) and strictly read-only. The data comes
from the runtime's model catalog (``ctx.model_catalog``,
:mod:`holon_nb.runtime.models._catalog`); this module holds the input models, the
filtering and paging rules and the errors. No secret value is ever returned.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ...render.human import fields, shape, table
from .._context import ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, ToolSpec
from .results._services import ListModelProvidersResult, ListProviderModelsResult

__all__ = ["ListModelProvidersInput", "ListProviderModelsInput", "page_models", "SPECS", "DEFAULT_LIMIT", "MAX_LIMIT"]

#: ListProviderModels page size when ``limit`` is null, and its clamp (agents spec §5.20).
DEFAULT_LIMIT = 100
MAX_LIMIT = 500

UInt = Annotated[int, Field(ge=0, le=2**64 - 1, json_schema_extra={"format": "uint"})]

_PROVIDERS_FLAG = (
    "Diagnostic-only. Defaults to false so normal selection paths only see usable providers; "
    "set true only to inspect blocked provider options and unavailable reasons."
)
_MODELS_FLAG = (
    "Diagnostic-only. Defaults to false so normal selection paths only see usable models; "
    "set true only to inspect blocked models and unavailable reasons."
)


class ListModelProvidersInput(BaseModel):
    """Arguments of ListModelProviders (agents spec §5.19)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    include_unavailable: bool = Field(False, description=_PROVIDERS_FLAG)


class ListProviderModelsInput(BaseModel):
    """Arguments of ListProviderModels (agents spec §5.20)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    provider: str = Field(description="A provider id returned by ListModelProviders.")
    cursor: str | None = Field(
        None, description="The next_cursor (a model_ref) of the previous page; null: the first page."
    )
    limit: UInt | None = Field(None, description="Page size, clamped to 1..500; null means 100.")
    include_unavailable: bool = Field(False, description=_MODELS_FLAG)


async def list_model_providers(args: ListModelProvidersInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ListModelProviders: unavailable providers dropped unless asked for; degraded ones kept."""
    providers = ctx.model_catalog.providers()
    if not args.include_unavailable:
        providers = [p for p in providers if p["availability"] != "unavailable"]
    shown = len(providers)
    return {
        "include_unavailable": args.include_unavailable,
        "providers": providers,
        "summary_text": f"{shown} model provider{'s' if shown != 1 else ''}"
        + ("" if args.include_unavailable else " available or degraded"),
    }


def page_models(
    models: list[dict[str, Any]], cursor: str | None, limit: int
) -> tuple[list[dict[str, Any]], str | None]:
    """One page after the entry whose ``model_ref`` is ``cursor`` (an unknown cursor restarts at the top).

    Returns:
        ``(page, next_cursor)``; ``next_cursor`` is the last returned ``model_ref`` when more remain, else None.
    """
    start = 0
    if cursor is not None:
        start = next((i + 1 for i, m in enumerate(models) if m["model_ref"] == cursor), 0)
    page = models[start : start + limit + 1]
    if len(page) <= limit:
        return page, None
    page = page[:limit]
    return page, page[-1]["model_ref"]


async def list_provider_models(args: ListProviderModelsInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ListProviderModels: filter, then page by ``model_ref`` cursor (agents spec §5.20)."""
    provider = args.provider.strip()
    if not provider:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message="ListProviderModels requires a non-empty provider",
                details={
                    "tool_name": "ListProviderModels",
                    "field": "provider",
                    "validation_error": "must not be empty",
                },
                recovery_hint="Call ListModelProviders first and pass one returned provider id.",
            )
        )
    limit = max(1, min(DEFAULT_LIMIT if args.limit is None else args.limit, MAX_LIMIT))
    cursor = args.cursor.strip() if args.cursor is not None and args.cursor.strip() else None
    models = ctx.model_catalog.provider_models(provider)
    if not args.include_unavailable:
        models = [m for m in models if m["availability"] != "unavailable"]
    page, next_cursor = page_models(models, cursor, limit)
    more = "; more with cursor" if next_cursor else ""
    return {
        "provider": provider,
        "include_unavailable": args.include_unavailable,
        "limit": limit,
        "returned": len(page),
        "next_cursor": next_cursor,
        "models": page,
        "summary_text": f"{len(page)} model{'s' if len(page) != 1 else ''} of {provider}{more}",
    }


SPECS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="ListModelProviders",
        family=Family.CORE_AGENT,
        input_model=ListModelProvidersInput,
        handler=list_model_providers,
        result_name="ListModelProvidersResult",
        output_model=ListModelProvidersResult,
        human=table(
            "providers",
            "id",
            "availability",
            "transport",
            "endpoint",
            "model_count",
            "credential_source",
            empty="(no model providers)",
        ),
    ),
    ToolSpec(
        name="ListProviderModels",
        family=Family.CORE_AGENT,
        input_model=ListProviderModelsInput,
        handler=list_provider_models,
        result_name="ListProviderModelsResult",
        output_model=ListProviderModelsResult,
        human=shape(
            fields("provider", "returned", "next_cursor"),
            table("models", "model_ref", "availability", "context_window_tokens", "display_name", empty="(no models)"),
        ),
    ),
)
