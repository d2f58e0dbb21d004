"""Which model looks at an image and which one draws (workspace spec §12 rules 9–10, §13 rule 3).

Configuration (no secret lives in it):

- ``HOLON_VISION_MODEL`` — the explicit ``vision.default`` (a model ref, ``openai/gpt-5.4``);
- ``HOLON_IMAGE_GENERATION_MODEL`` — the explicit ``image_generation.default`` (``openai/gpt-image-1``);
- capabilities of configured models: a ``models`` entry of the provider configuration
  (``%config HolonNB.providers`` / ``$HOLON_NB_PROVIDERS``) may say ``{"id": "…", "image_input": true}``
  or ``{"id": "…", "image_generation": true}``; the built-in ``openai`` and ``anthropic`` models of the
  catalog (:data:`~holon_nb.runtime.models._catalog.KNOWN_MODELS`) all advertise ``image_input``.

A model is *usable* when its provider resolves with a credential (``require_credential``; a keyless
local preset counts) and its transport can produce an observation (OpenAI-compatible or Anthropic
Messages). ``HOLON_MODEL_FALLBACKS`` are never selected (compatibility candidates only, rule 9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...providers._catalog import ProviderConfigError, ResolvedProvider, resolve_provider
from ...providers._modelref import ModelRefError
from ...providers._refs import parse_model_ref
from ...providers.media import OPENAI_COMPATIBLE, VISION_TRANSPORTS
from ..models._catalog import KNOWN_MODELS, provider_config

__all__ = ["VISION_ENV", "IMAGE_GENERATION_ENV", "Candidate", "Selection", "select_vision", "select_generator"]

VISION_ENV = "HOLON_VISION_MODEL"
IMAGE_GENERATION_ENV = "HOLON_IMAGE_GENERATION_MODEL"


@dataclass(frozen=True)
class Candidate:
    """A model considered: ``{provider, model, model_ref, image_input, reason}`` in the error details."""

    provider: str
    model: str
    model_ref: str
    image_input: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The wire form of one candidate."""
        return {
            "provider": self.provider,
            "model": self.model,
            "model_ref": self.model_ref,
            "image_input": self.image_input,
            "reason": self.reason,
        }


@dataclass
class Selection:
    """The outcome of a selection.

    Attributes:
        mode: ``unavailable`` | ``native_image_with_observation`` (the turn's primary model itself) |
            ``vision_adapter`` (another model); for generation ``image_generation`` or ``unavailable``.
        reason: Why (``explicit_default``, ``auto_discovered``, ``no_usable_model`` …).
        resolved: The chosen route, or None.
        primary_provider, primary_model: The turn's primary model (``HOLON_MODEL``), if any.
        candidates: Everything considered, in order.
    """

    mode: str
    reason: str
    resolved: ResolvedProvider | None = None
    primary_provider: str | None = None
    primary_model: str | None = None
    candidates: list[Candidate] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``vision_selection`` object of the result (absent fields omitted)."""
        out: dict[str, Any] = {"selected_mode": self.mode}
        if self.resolved is not None:
            out["vision_provider"] = self.resolved.ref.provider
            out["vision_model"] = self.resolved.ref.model
        out["selection_reason"] = self.reason
        if self.primary_provider:
            out["primary_provider"] = self.primary_provider
            out["primary_model"] = self.primary_model
        out["candidates"] = [c.to_dict() for c in self.candidates]
        return out


def _capable_refs(config: Mapping[str, Any], capability: str) -> list[str]:
    """Model refs that advertise ``capability``: configured models flagged so, then (``image_input``) built-ins."""
    refs = []
    for key, cfg in (config.get("providers") or {}).items():
        models = cfg.get("models") if isinstance(cfg, Mapping) else None
        for m in models if isinstance(models, list) else ():
            if isinstance(m, Mapping) and m.get(capability) is True and isinstance(m.get("id"), str):
                refs.append(f"{key}/{m['id'].strip()}")
    if capability == "image_input":
        refs += [f"{p}/{mid}" for p, models in KNOWN_MODELS.items() for mid, _, _ in models]
    return refs


def _try(
    ref: str, environ: Mapping[str, str], config: Mapping[str, Any], capable: bool, transports: frozenset[str]
) -> tuple[Candidate, ResolvedProvider | None]:
    try:
        parsed = parse_model_ref(ref)
    except ModelRefError as exc:
        return Candidate("", "", ref, capable, f"invalid_model_ref: {exc}"), None

    def candidate(reason: str) -> Candidate:
        return Candidate(parsed.provider, parsed.model, parsed.compact, capable, reason)

    try:
        resolved = resolve_provider(parsed, environ, config, require_credential=True)
    except ProviderConfigError as exc:
        return candidate(f"not_authenticated: {str(exc)[:200]}"), None
    if resolved.transport not in transports:
        return candidate(f"unsupported_transport: {resolved.transport}"), None
    if not capable:
        return candidate("no_image_capability"), None
    return candidate("selected"), resolved


def _primary(environ: Mapping[str, str]) -> tuple[str | None, str | None, str | None]:
    text = environ.get("HOLON_MODEL", "").strip()
    try:
        ref = parse_model_ref(text) if text else None
    except ModelRefError:
        ref = None
    return (ref.provider, ref.model, ref.compact) if ref else (None, None, None)


def select_vision(
    environ: Mapping[str, str], settings_providers: Mapping[str, Any] | None = None, explicit: str | None = None
) -> Selection:
    """Pick the vision model (rule 9): explicit ``vision.default`` (``explicit`` or ``$HOLON_VISION_MODEL``),
    else the first usable model advertising ``image_input`` (the primary model first)."""
    config = provider_config(environ, settings_providers)
    capable = _capable_refs(config, "image_input")
    pp, pm, primary_ref = _primary(environ)
    sel = Selection("unavailable", "no_usable_image_input_model", primary_provider=pp, primary_model=pm)
    explicit = (explicit or environ.get(VISION_ENV, "")).strip() or None
    if explicit:
        cand, resolved = _try(explicit, environ, config, True, VISION_TRANSPORTS)
        sel.candidates.append(cand)
        if resolved is None:
            sel.reason = "explicit_vision_default_unusable"
            return sel
        sel.resolved, sel.reason = resolved, "explicit_vision_default"
    else:
        order = ([primary_ref] if primary_ref else []) + [r for r in capable if r != primary_ref]
        seen = set()
        for ref in order:
            cand, resolved = _try(ref, environ, config, ref in capable, VISION_TRANSPORTS)
            if cand.model_ref in seen:
                continue
            seen.add(cand.model_ref)
            if resolved is None and cand.reason.startswith("not_authenticated") and ref != primary_ref:
                continue  # an unconfigured built-in is not a candidate worth listing
            sel.candidates.append(cand)
            if resolved is not None:
                sel.resolved, sel.reason = resolved, "auto_discovered_image_input"
                break
        if sel.resolved is None:
            return sel
    assert sel.resolved is not None
    same = pp is not None and (sel.resolved.ref.provider, sel.resolved.ref.model) == (pp, pm)
    sel.mode = "native_image_with_observation" if same else "vision_adapter"
    return sel


def select_generator(
    environ: Mapping[str, str], settings_providers: Mapping[str, Any] | None = None, explicit: str | None = None
) -> Selection:
    """Pick the image-generation model (workspace spec §13 rule 3): explicit ``image_generation.default`` (``explicit`` or
    ``$HOLON_IMAGE_GENERATION_MODEL``), else the first configured model advertising ``image_generation``;
    only OpenAI-compatible transports can serve the Images API."""
    config = provider_config(environ, settings_providers)
    explicit = (explicit or environ.get(IMAGE_GENERATION_ENV, "")).strip() or None
    sel = Selection("unavailable", "no_image_generation_model")
    for ref in [explicit] if explicit else _capable_refs(config, "image_generation"):
        cand, resolved = _try(ref, environ, config, True, OPENAI_COMPATIBLE)
        sel.candidates.append(cand)
        if resolved is not None:
            sel.mode, sel.resolved = "image_generation", resolved
            sel.reason = "explicit_image_generation_default" if explicit else "first_image_generation_model"
            return sel
    if explicit:
        sel.reason = "explicit_image_generation_default_unusable"
    return sel
