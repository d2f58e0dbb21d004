"""Result models of the service tools: memory (agents spec §6), models, web (workspace spec §9-§11), images
(workspace spec §12-§13) and external triggers (workspace spec §14)."""

from __future__ import annotations

from ._base import Record, Records, ResultModel

__all__ = [
    "MemorySearchResponse",
    "MemoryGetResponse",
    "ListModelProvidersResult",
    "ListProviderModelsResult",
    "WebFetchResult",
    "WebSearchResult",
    "XSearchResult",
    "ViewImageResult",
    "GenerateImageResult",
    "ExternalTriggerCapability",
    "ExternalTriggerRecord",
]


class MemorySearchResponse(ResultModel):
    """Memory search hits (``source_ref``, snippet, score...) and the state of the index."""

    query: str
    results: Records
    index_status: Record


class MemoryGetResponse(ResultModel):
    """One memory document's content (cut to fit the tool-output budget; ``metadata`` says how much)."""

    memory: Record


class ListModelProvidersResult(ResultModel):
    """The configured or discovered model providers (unavailable ones only when asked)."""

    include_unavailable: bool
    providers: Records


class ListProviderModelsResult(ResultModel):
    """One page of a provider's models; ``next_cursor`` is the last ``model_ref`` when more remain."""

    provider: str
    include_unavailable: bool
    limit: int
    returned: int
    next_cursor: str | None
    models: Records


class WebFetchResult(ResultModel):
    """A fetched URL: where it ended, its status and type, the bytes read and the extracted text (wrapped as
    untrusted content)."""

    url: str
    final_url: str
    status: int
    content_type: str | None
    bytes_read: int
    truncated: bool
    sha256: str
    fetched_at: str
    source: str
    text: str


class WebSearchResult(ResultModel):
    """Search results from the winning provider (``single``/``fallback``) or merged (``aggregate``), with
    every provider attempt."""

    query: str
    provider: str
    mode: str
    provider_attempts: Records
    winning_provider: str | None
    results: Records
    citations: Records
    fetched_at: str


class XSearchResult(ResultModel):
    """xAI's answer about public X posts, its citations and diagnostics."""

    text: str
    citations: Records
    provider: str
    backend: str
    model: str
    diagnostics: Record


class ViewImageResult(ResultModel):
    """A validated local image (its visual reference) and the vision observation made of it."""

    visual_reference: Record
    observation: Record
    selected_mode: str
    vision_selection: Record


class GenerateImageResult(ResultModel):
    """The images written under the agent home, by which provider and model, for which prompt."""

    images: Records
    provider: str
    model: str
    prompt: str
    parameters: Record


class ExternalTriggerCapability(ResultModel):
    """The agent's active trigger and its capability URL (a bearer secret); always ``wake_hint``."""

    external_trigger_id: str
    trigger_url: str
    target_agent_id: str
    delivery_mode: str
    status: str


class ExternalTriggerRecord(ResultModel):
    """A trigger's record after a revoke, without its token."""

    external_trigger_id: str
    target_agent_id: str
    scope: str
    delivery_mode: str
    status: str
    delivery_count: int
    created_at: str
    revoked_at: str | None
    last_delivered_at: str | None
