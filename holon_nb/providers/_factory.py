"""Build providers from model refs (turn-loop spec §2.2): ``build_provider`` for one route, ``build_lineage`` for
the turn's lineage ``[model or HOLON_MODEL, *HOLON_MODEL_FALLBACKS]`` wrapped in the retry layer (turn-loop spec §2.3).

Example::

    provider = build_provider("ollama/qwen3:8b", environ={})          # Chat Completions at 127.0.0.1:11434/v1
    lineage = build_lineage(environ={"HOLON_MODEL": "openai/gpt-5.4", "OPENAI_API_KEY": "…"})
    response, timeline = await lineage.complete_turn_with_diagnostics(request)
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ._catalog import ResolvedProvider, resolve_provider
from ._lineage import LineageCandidate, LineageProvider
from ._refs import ModelRef, lineage_refs_from_env, parse_model_ref
from ._wire import DeltaListener
from .base import ProviderTransportError, TurnRequest, TurnResponse

__all__ = ["build_provider", "build_lineage", "UnsupportedTransportProvider"]


class UnsupportedTransportProvider:
    """Stands in for a route whose transport holon_nb does not implement (``gemini_generate_content``,
    ``openai_codex_responses``): every call fails fast with ``unsupported_transport`` (turn-loop spec §2.4)."""

    def __init__(self, resolved: ResolvedProvider):
        self.resolved = resolved
        self.route_ref = resolved.route_ref
        self.provider_name = resolved.ref.provider
        self.transport = resolved.transport

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """Raises:
        ProviderTransportError: always, kind ``unsupported_transport``/``fail_fast``."""
        raise ProviderTransportError(
            "unsupported_transport",
            f"transport {self.transport} (route {self.route_ref}) is not supported by holon_nb",
            disposition="fail_fast",
            diagnostics={"stage": "build", "provider": self.provider_name, "model_ref": self.route_ref},
        )

    async def aclose(self) -> None:
        """Nothing to close."""


def build_provider(
    model_ref: str | ModelRef,
    *,
    environ: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    delta_listener: DeltaListener | None = None,
    require_credential: bool = False,
) -> Any:
    """The transport for one route ref (no retries; see :func:`build_lineage`).

    Args:
        model_ref: ``provider@endpoint/model`` or legacy ``provider/model``.
        environ: Environment for keys, base URLs and timeouts (default ``os.environ``).
        config: Provider config (see :func:`~holon_nb.providers._catalog.resolve_provider`).
        delta_listener: Streaming UI listener ``(kind, payload)``.
        require_credential: Raise when the provider expects a key and none is set (turns use this).

    Returns:
        An :class:`~holon_nb.providers._openai_responses.OpenAIResponsesProvider`,
        :class:`~holon_nb.providers._openai_chat.OpenAIChatProvider`,
        :class:`~holon_nb.providers._anthropic_messages.AnthropicMessagesProvider`, or an
        :class:`UnsupportedTransportProvider`; each has ``route_ref`` (canonical) and ``complete_turn``.

    Raises:
        ModelRefError: malformed ref.
        ProviderConfigError: unknown provider, bad config.
    """
    env = os.environ if environ is None else environ
    ref = model_ref if isinstance(model_ref, ModelRef) else parse_model_ref(model_ref)
    resolved = resolve_provider(ref, env, config, require_credential=require_credential)
    if resolved.transport == "openai_responses":
        from ._openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(resolved, environ=env, delta_listener=delta_listener)
    if resolved.transport == "openai_chat_completions":
        from ._openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(resolved, environ=env, delta_listener=delta_listener)
    if resolved.transport == "anthropic_messages":
        from ._anthropic_messages import AnthropicMessagesProvider

        return AnthropicMessagesProvider(resolved, environ=env, delta_listener=delta_listener)
    return UnsupportedTransportProvider(resolved)


def build_lineage(
    model: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    requested_model_ref: str | None = None,
    sleep: Callable[[float], Awaitable[Any]] | None = None,
    head_provider: Any = None,
    delta_listener: DeltaListener | None = None,
    **lineage_options: Any,
) -> LineageProvider:
    """The turn's :class:`~holon_nb.providers._lineage.LineageProvider` (turn-loop spec §1.1, §2.3).

    The lineage is ``[model or HOLON_MODEL, *HOLON_MODEL_FALLBACKS]`` (deduplicated; only the head when
    ``HOLON_DISABLE_PROVIDER_FALLBACK`` is true). Only the head is built; fallbacks are named for the pending
    fallback and never called in the same turn.

    Args:
        model: The head ref (default ``HOLON_MODEL``); a recovery turn passes the fallback it names.
        requested_model_ref: The turn's originally requested ref (recovery turns), for the model hint.
        sleep: Backoff sleep (seconds), e.g. a cassette's virtual clock.
        head_provider: A provider to use for the head instead of building one (scripted, cassette replay).
        lineage_options: Passed to :class:`LineageProvider` (``now``, ``monotonic``, ``honor_retry_after`` …).

    Raises:
        ModelRefError: no model and ``HOLON_MODEL`` unset, or a malformed ref.
        ProviderConfigError: the head cannot be configured.
    """
    env = os.environ if environ is None else environ
    refs = lineage_refs_from_env(env, model)
    head = head_provider or build_provider(refs[0], environ=env, config=config, delta_listener=delta_listener)
    candidates = [LineageCandidate(refs[0].canonical, refs[0].provider, head)]
    candidates += [LineageCandidate(r.canonical, r.provider) for r in refs[1:]]
    requested = parse_model_ref(requested_model_ref).canonical if requested_model_ref else None
    return LineageProvider(candidates, requested_model_ref=requested, sleep=sleep, **lineage_options)
