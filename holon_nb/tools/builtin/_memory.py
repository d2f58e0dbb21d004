"""Memory tools: MemorySearch and MemoryGet (agents spec §5.17, §5.18, §6).

Input models, validation and error shapes live here; the index, the catch-up
of runtime records and ``source_ref`` resolution live in the runtime's memory
service (``ctx.memory``, :mod:`holon_nb.runtime.memory._service`). Both tools are
read-only: they change no agent, task, message or work-item state.

MemoryGet fits its content to the caller's tool-output budget
(:func:`fit_to_budget`), so reading an ``output_ref`` never yields another one.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ...render.human import MAX_LINE, clip, fields, record, shape, text_block
from .._context import ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._source_refs import ALLOWED_SOURCE_REF_PREFIXES, SourceRefError, parse_source_ref
from .._spec import Family, ToolSpec
from ._work_inputs import budget_chars, receipt_chars
from .results._services import MemoryGetResponse, MemorySearchResponse

__all__ = [
    "GET_CHARS_DEFAULT",
    "GET_CHARS_MAX",
    "SEARCH_LIMIT_DEFAULT",
    "SEARCH_LIMIT_MAX",
    "SPECS",
    "MemoryGetInput",
    "MemorySearchInput",
    "fit_to_budget",
]

SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX = 10, 50
GET_CHARS_DEFAULT, GET_CHARS_MAX = 12_000, 50_000
_SURFACES = ("memory/runtime APIs",)

UInt = Annotated[int, Field(ge=0, json_schema_extra={"format": "uint"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class MemorySearchInput(_Strict):
    """Arguments of MemorySearch (agents spec §5.17)."""

    query: str = Field(description="Words to look for; each is matched on its own (any of them).")
    limit: UInt | None = Field(None, description="Maximum results, clamped to 1..50; null means 10.")
    include_all_workspaces: bool = Field(
        False, description="Also search workspace-scoped documents of other workspaces."
    )


class MemoryGetInput(_Strict):
    """Arguments of MemoryGet (agents spec §5.18)."""

    source_ref: str = Field(description="A source_ref copied verbatim from MemorySearch or a prompt ref.")
    max_chars: int | None = Field(
        None,
        description="Maximum content characters, 1..50000; null means 12000.",
        json_schema_extra={"format": "uint", "minimum": 1, "maximum": GET_CHARS_MAX},
    )


def _trim_query(args: MemorySearchInput, tool_name: str) -> MemorySearchInput:
    query = args.query.strip()
    if not query:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"{tool_name} requires a non-empty `query`",
                details={"tool_name": tool_name, "field": "query", "validation_error": "must not be empty"},
                recovery_hint='Pass one or more words to search for, e.g. {"query": "deploy checklist"}.',
            )
        )
    return args.model_copy(update={"query": query})


async def memory_search(args: MemorySearchInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of MemorySearch (agents spec §5.17)."""
    limit = SEARCH_LIMIT_DEFAULT if args.limit is None else max(1, min(args.limit, SEARCH_LIMIT_MAX))
    found = await ctx.memory.search(args.query, limit=limit, include_all_workspaces=args.include_all_workspaces)
    n = len(found["results"])
    return {
        "query": args.query,
        "results": found["results"],
        "index_status": found["index_status"],
        "summary_text": f"found {n} memory result{'' if n == 1 else 's'}",
    }


def _bad_ref(source_ref: str, validation_error: str) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"invalid source_ref: {validation_error}",
            details={
                "tool_name": "MemoryGet",
                "field": "source_ref",
                "source_ref": source_ref,
                "validation_error": validation_error,
                "allowed_source_ref_prefixes": list(ALLOWED_SOURCE_REF_PREFIXES),
            },
            recovery_hint=(
                "Copy a source_ref verbatim from MemorySearch results or from a prompt ref such as "
                "output_ref; do not invent refs. Read files with file tools (ExecCommand), not MemoryGet."
            ),
        )
    )


async def memory_get(args: MemoryGetInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of MemoryGet (agents spec §5.18)."""
    try:
        ref = parse_source_ref(args.source_ref)
    except SourceRefError as exc:
        raise _bad_ref(args.source_ref, exc.validation_error) from None
    max_chars = GET_CHARS_DEFAULT if args.max_chars is None else args.max_chars
    if not 1 <= max_chars <= GET_CHARS_MAX:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"max_chars must be between 1 and {GET_CHARS_MAX}",
                details={
                    "tool_name": "MemoryGet",
                    "field": "max_chars",
                    "max_chars": max_chars,
                    "validation_error": "out of range",
                    "minimum": 1,
                    "maximum": GET_CHARS_MAX,
                },
                recovery_hint=f"Pass max_chars from 1 to {GET_CHARS_MAX}, or omit it for {GET_CHARS_DEFAULT}.",
            )
        )
    doc = await ctx.memory.get(ref)
    if doc is None:
        raise ToolFailure(
            ToolError(
                kind="memory_source_not_found",
                message=f"no memory source {args.source_ref} is available to this agent",
                details={
                    "source_ref": args.source_ref,
                    "allowed_source_ref_prefixes": list(ALLOWED_SOURCE_REF_PREFIXES),
                    "reason": "no document with this source_ref is visible to the calling agent",
                },
                recovery_hint="Use MemorySearch to find refs, or copy a ref the runtime gave you (e.g. output_ref).",
            )
        )
    return fit_to_budget(doc, max_chars, int(ctx.setting("tool_output_budget_tokens")))


def _payload(doc: Any, n: int, total: int, level: int) -> dict[str, Any]:
    """The MemoryGet result with ``content`` = the first ``n`` characters, at a reduction ``level``.

    Level 0 is the full agents spec §5.18 shape; level 1 drops provenance metadata, ``workspace_id`` and
    ``source_path``; level 2 (budgets under ~100 tokens) keeps only ``content``, ``truncated``
    and the character counts, with no ``summary_text``.
    """
    cut = n < total
    counts = {"returned_chars": n, "total_chars": total}
    if level == 2:
        return {"memory": {"content": doc.body[:n], "truncated": cut, "metadata": counts}}
    memory = doc.result(n)
    memory["truncated"] = cut
    memory["metadata"] = {**memory["metadata"], **counts} if level == 0 else counts
    if level == 1:
        memory.pop("workspace_id", None)
        memory.pop("source_path", None)
    note = f" (truncated: {n} of {total} chars)" if cut else ""
    return {"memory": memory, "summary_text": f"retrieved {memory['kind']} {memory['source_ref']}{note}"}


def fit_to_budget(doc: Any, max_chars: int, budget_tokens: int) -> dict[str, Any]:
    """MemoryGet's result, its ``content`` cut so that the receipt fits ``budget_tokens``.

    Departure from agents spec §5.18 rule 4 (review fix): ``content`` is the first
    ``min(max_chars, what fits)`` characters, so MemoryGet of an ``output_ref`` is never
    projected to yet another ``output_ref``. ``metadata.returned_chars`` and
    ``metadata.total_chars`` say how much was returned; ``truncated`` is true when any
    was left out. When even empty content does not fit with the full shape, the result
    is reduced (see :func:`_payload`) rather than replaced by a projection stand-in.

    Args:
        doc: The resolved :class:`~holon_nb.runtime.memory._index.Doc`.
        max_chars: The caller's bound (1..50000).
        budget_tokens: The caller's tool-output budget (``tool_output_budget_tokens``).

    Returns:
        The payload ``{memory, summary_text?}``.
    """
    total = len(doc.body)
    want = min(max_chars, total)
    limit = budget_chars(budget_tokens)

    def size(n: int, level: int) -> int:
        return receipt_chars("MemoryGet", _payload(doc, n, total, level))

    if size(want, 0) <= limit:  # the usual case: all that was asked for fits
        return _payload(doc, want, total, 0)
    fallback = None
    for level in (0, 1, 2):
        if size(0, level) > limit:
            continue
        lo, hi = 0, want  # the largest n with size(n) <= limit (size grows with n)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if size(mid, level) <= limit:
                lo = mid
            else:
                hi = mid - 1
        if lo > 0 or want == 0:
            return _payload(doc, lo, total, level)
        fallback = level if fallback is None else fallback
    # nothing fits: empty content at the smallest shape (projected only if even that is over budget)
    return _payload(doc, 0, total, 2 if fallback is None else fallback)


def _hits(result: dict[str, Any]) -> list[str]:
    """Search hits, two lines each: ``source_ref  (kind)``, then ``title — snippet`` further in.

    A four-column table of them is about 160 characters wide and wraps in a notebook card; this
    keeps each hit within about 110.
    """
    hits = [h for h in result.get("results") or [] if isinstance(h, dict)]
    if not hits:
        return ["  (no hits)"]
    lines = [f"  hits ({len(hits)}):"]
    for hit in hits[:25]:
        lines.append(clip(f"    {hit.get('source_ref', '?')}  ({hit.get('kind', '?')})", MAX_LINE))
        about = " — ".join(str(v) for v in (hit.get("title"), hit.get("snippet")) if v)
        if about:
            lines.append("        " + clip(about, 96))
    if len(hits) > 25:
        lines.append(f"    … {len(hits) - 25} more")
    return lines


#: Human receipts (render/human): search hits (source ref, then title and snippet); one memory with its content.
HITS = shape(fields("query", "index_status.freshness"), _hits)
MEMORY = shape(
    record("memory", "source_ref", "kind", "title", "truncated", "updated_at"), text_block("memory.content", "content")
)

SPECS = (
    ToolSpec(
        name="MemorySearch",
        family=Family.CORE_AGENT,
        input_model=MemorySearchInput,
        handler=memory_search,
        result_name="MemorySearchResponse",
        output_model=MemorySearchResponse,
        normalize=_trim_query,
        related_surfaces=_SURFACES,
        human=HITS,
    ),
    ToolSpec(
        name="MemoryGet",
        family=Family.CORE_AGENT,
        input_model=MemoryGetInput,
        handler=memory_get,
        result_name="MemoryGetResponse",
        output_model=MemoryGetResponse,
        related_surfaces=_SURFACES,
        human=MEMORY,
    ),
)
