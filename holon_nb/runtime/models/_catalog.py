"""The model catalog service behind ListModelProviders and ListProviderModels (agents spec §5.19–§5.20).

It joins three sources into one read-only view, recomputed on every call from the
live environment (a key set in a cell counts at the next call):

1. the built-in provider catalog, :data:`holon_nb.providers._catalog.BUILTIN_PROVIDERS`
   (turn-loop spec §2.2), with the models upstream's built-in model catalog lists for
   ``openai`` and ``anthropic`` (:data:`KNOWN_MODELS`);
2. custom providers: the provider configuration the runtime resolves routes with
   (``{"providers": {"<id>" | "<id>@<endpoint>": {transport, base_url, auth, …}}}``, the
   format of :func:`holon_nb.providers._catalog.resolve_provider`), from the ``HOLON_NB_PROVIDERS``
   environment variable (JSON), the runtime's settings (``%config HolonNB.providers``) and the
   constructor, in that order (see :func:`provider_config`), each entry optionally listing its
   ``models`` (ids, or ``{id, display_name?, enabled?, context_window_tokens?}``);
3. the model lineage: ``HOLON_MODEL`` and ``HOLON_MODEL_FALLBACKS`` name models that are
   listed even when no catalog knows them (``metadata_source: "unknown_fallback"``).

Availability (no network, no discovery in v1). A provider is *configured* when
:func:`~holon_nb.providers._catalog.resolve_provider` finds its credential (a key variable
set and non-blank — the same rule the transports use), or, for a keyless local server
preset (``vllm``, ``ollama``, ``llamacpp``, ``auth.source: "none"``), when it is preset:
configured explicitly, its base-URL variable set (``HOLON_<ID>_BASE_URL``), or named by
the model lineage — so a machine without a local server does not list one as usable. A
model is ``available`` when its provider is configured, its transport is one holon_nb
implements, and the configuration does not disable it. A provider is ``available`` when
all its models are, ``degraded`` when only some are, ``unavailable`` when none is; one
with no listed model is ``available`` exactly when it is configured with a supported
transport. Secret values never appear in an entry (only whether one is configured).

Example::

    svc = ModelCatalogService(environ={"OPENAI_API_KEY": "sk-…"})
    [p["id"] for p in svc.providers() if p["availability"] == "available"]   # ["openai"]
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...providers._catalog import (
    BUILTIN_PROVIDERS,
    SUPPORTED_TRANSPORTS,
    TRANSPORTS,
    ProviderConfigError,
    base_url_env_name,
    check_provider_settings,
    resolve_provider,
)
from ...providers._refs import DEFAULT_ENDPOINT, ModelRef, ModelRefError, parse_model_list, parse_model_ref

if TYPE_CHECKING:
    from ._ports import ProviderSettings

__all__ = [
    "CatalogModel",
    "CatalogProvider",
    "ModelCatalogService",
    "config_from_env",
    "provider_config",
    "group_id",
    "builtin_catalog",
    "KNOWN_MODELS",
    "PROVIDERS_ENV",
]

log = logging.getLogger("holon_nb.model_catalog")

#: Environment variable holding custom provider configuration (JSON; see the module docstring).
PROVIDERS_ENV = "HOLON_NB_PROVIDERS"

#: Models upstream's built-in model catalog lists, by provider id (upstream src/model_catalog/providers/core.rs).
KNOWN_MODELS: dict[str, tuple[tuple[str, str, int | None], ...]] = {
    "openai": (
        ("gpt-5.3", "GPT-5.3", 128_000),
        ("gpt-5.4", "GPT-5.4", 272_000),
        ("gpt-5.4-mini", "GPT-5.4 Mini", 128_000),
    ),
    "anthropic": (
        ("claude-haiku-4-5", "Claude Haiku 4.5", 200_000),
        ("claude-opus-4-8", "Claude Opus 4.8", 1_000_000),
        ("claude-sonnet-5", "Claude Sonnet 5", 1_000_000),
    ),
}


@dataclass(frozen=True)
class CatalogModel:
    """One model a provider serves.

    Attributes:
        id: The model id as the provider spells it (``gpt-5.4``, ``Qwen/Qwen3-8B``).
        display_name: Human name; empty means ``id``.
        metadata_source: ``built_in_catalog``, ``config`` or ``unknown_fallback`` (lineage refs).
        enabled: False when configuration disables the model (``unavailable``, reason ``disabled_by_config``).
        context_window_tokens: Known context window, else None.
    """

    id: str
    display_name: str = ""
    metadata_source: str = "built_in_catalog"
    enabled: bool = True
    context_window_tokens: int | None = None


@dataclass(frozen=True)
class CatalogProvider:
    """One provider endpoint: a built-in catalog row or a configured one.

    Attributes:
        id: The id model refs and configuration use (``openai``, legacy ``byteplus-coding``,
            configured ``acme@coding``).
        route_provider: Provider family of the route (``byteplus``).
        endpoint: Endpoint within it (``default``, ``coding``).
        transport: One of the five wire names.
        key_envs: Variables any of which may hold the credential (names only); empty: keyless.
        base_url_envs: Variables overriding the base URL (names only).
        local: A local server preset (keyless, turn-loop spec §2.7).
        models: Models it is known to serve.
        source: ``built_in`` or ``config``.
        auth_source: ``env``, ``none``, ``external_cli`` … (never a secret).
        auth_kind: ``api_key``, ``bearer_token``, ``oauth`` … or ``none``.
    """

    id: str
    route_provider: str
    endpoint: str
    transport: str
    key_envs: tuple[str, ...] = ()
    base_url_envs: tuple[str, ...] = ()
    local: bool = False
    models: tuple[CatalogModel, ...] = ()
    source: str = "built_in"
    auth_source: str = "env"
    auth_kind: str = "api_key"

    @property
    def keyless(self) -> bool:
        """True when the provider authenticates with nothing (local server presets, ``auth.source: none``)."""
        return self.auth_source == "none"

    @property
    def group(self) -> str:
        """The id ListModelProviders shows (:func:`group_id`)."""
        return group_id(self.route_provider, self.endpoint)

    def ref(self, model_id: str) -> str:
        """The compact route ref of one of its models (``openai/gpt-5.4``, ``byteplus@coding/seed-1``)."""
        return ModelRef(self.route_provider, self.endpoint, model_id).compact


def group_id(route_provider: str, endpoint: str) -> str:
    """The provider id ListModelProviders shows: the family alone for ``default``, else ``family:endpoint``."""
    return route_provider if endpoint == DEFAULT_ENDPOINT else f"{route_provider}:{endpoint}"


def builtin_catalog() -> tuple[CatalogProvider, ...]:
    """The built-in providers (turn-loop spec §2.2) as :class:`CatalogProvider` rows, catalog order."""
    out = []
    for d in BUILTIN_PROVIDERS:
        if d.transport == "openai_codex_responses":
            source, kind = "external_cli", "oauth"  # Codex CLI OAuth: out of scope in v1 (turn-loop spec §2.1)
        elif not d.key_envs:
            source, kind = "none", "none"
        else:
            source, kind = "env", "bearer_token" if d.key_envs[0].endswith("_TOKEN") else "api_key"
        models = tuple(
            CatalogModel(i, name, "built_in_catalog", True, ctx) for i, name, ctx in KNOWN_MODELS.get(d.legacy_id, ())
        )
        out.append(
            CatalogProvider(
                d.legacy_id,
                d.provider,
                d.endpoint,
                d.transport,
                d.key_envs,
                d.base_url_envs,
                d.local,
                models,
                "built_in",
                source,
                kind,
            )
        )
    return tuple(out)


# ------------------------------------------------------------------ configured providers


def config_from_env(environ: Mapping[str, str], *, strict: bool = False) -> dict[str, Any]:
    """Parse ``HOLON_NB_PROVIDERS``: ``{"providers": {…}}`` or the inner ``{id: settings}`` mapping.

    Args:
        environ: The environment to read.
        strict: Raise on a malformed value (a turn about to use it) instead of logging and ignoring it
            (listing, which must keep working).

    Returns:
        ``{"providers": {...}}`` (empty when unset, or malformed and not ``strict``).

    Raises:
        ProviderConfigError: ``strict`` and the value is not a JSON object of provider id -> settings.
    """
    text = (environ.get(PROVIDERS_ENV) or "").strip()
    if not text:
        return {"providers": {}}
    try:
        data = json.loads(text)
    except ValueError as exc:
        return _malformed(f"{PROVIDERS_ENV} is not valid JSON ({exc})", strict)
    if isinstance(data, dict) and isinstance(data.get("providers"), dict):
        data = data["providers"]
    if not isinstance(data, dict):
        return _malformed(f"{PROVIDERS_ENV} must be a JSON object of provider id -> settings", strict)
    return {"providers": data}


def _malformed(message: str, strict: bool) -> dict[str, Any]:
    if strict:
        raise ProviderConfigError(message)
    log.warning("%s; custom providers ignored", message)
    return {"providers": {}}


def provider_config(
    environ: Mapping[str, str], configured: Mapping[str, Any] | None = None, *, strict: bool = False
) -> dict[str, Any]:
    """The provider configuration routes are resolved with: ``HOLON_NB_PROVIDERS``, then ``configured``.

    Args:
        environ: The environment (``HOLON_NB_PROVIDERS``, JSON).
        configured: ``{id: settings}`` from the runtime's settings (``%config HolonNB.providers``); an
            entry replaces the environment's entry of the same id.
        strict: Check every entry with :func:`~holon_nb.providers._catalog.check_provider_settings` and
            raise on the first malformed one (a turn is about to use them). Otherwise entries are
            returned unchecked: listing shows a misconfigured provider as unavailable
            (``provider_config_error``) and leaves out only what it cannot name.

    Returns:
        ``{"providers": {id: settings}}``.

    Raises:
        ProviderConfigError: ``strict`` and an entry (or the variable) is malformed; the message names it.
    """
    merged = {**config_from_env(environ, strict=strict)["providers"], **dict(configured or {})}
    if strict:
        for key, settings in merged.items():
            check_provider_settings(key, settings)
    return {"providers": merged}


def _config_model(raw: Any) -> CatalogModel | None:
    if isinstance(raw, str) and raw.strip():
        return CatalogModel(raw.strip(), metadata_source="config")
    if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"].strip():
        ctx = raw.get("context_window_tokens")
        return CatalogModel(
            raw["id"].strip(),
            display_name=str(raw.get("display_name") or ""),
            metadata_source="config",
            enabled=raw.get("enabled", True) is not False,
            context_window_tokens=ctx if isinstance(ctx, int) and not isinstance(ctx, bool) else None,
        )
    return None


def _apply_config(builtins: tuple[CatalogProvider, ...], providers: Mapping[str, Any]) -> list[CatalogProvider]:
    """Built-ins overlaid with configured settings, plus configured providers the catalog lacks."""
    by_key = {p.id: p for p in builtins}
    by_key.update({f"{p.route_provider}@{p.endpoint}": p for p in builtins})
    rows = {p.id: p for p in builtins}
    for key, cfg in providers.items():
        if not isinstance(key, str) or not isinstance(cfg, Mapping):
            continue
        try:
            family, _, endpoint = key.partition("@")
            probe = ModelRef(family, endpoint or DEFAULT_ENDPOINT, "probe")
            parse_model_ref(probe.canonical, aliases={})  # validates the id grammar
        except ModelRefError:
            log.warning("%s: provider id %r is not a valid id; skipped", PROVIDERS_ENV, key)
            continue
        base = by_key.get(key)
        transport = cfg.get("transport") or (base.transport if base else None)
        if transport not in TRANSPORTS:
            log.warning("%s: provider %s has no valid transport (%r); skipped", PROVIDERS_ENV, key, transport)
            continue
        auth = raw_auth if isinstance(raw_auth := cfg.get("auth"), Mapping) else {}
        envs = auth.get("env")
        key_envs = (
            (envs,)
            if isinstance(envs, str)
            else tuple(e for e in envs if isinstance(e, str))
            if isinstance(envs, list)
            else (base.key_envs if base else ())
        )
        source = str(auth.get("source") or ("env" if key_envs else "none"))
        kind = str(auth.get("kind") or ("none" if source == "none" else base.auth_kind if base else "api_key"))
        raw_models = cfg.get("models")
        models = tuple(
            m for m in map(_config_model, raw_models if isinstance(raw_models, list) else ()) if m is not None
        )
        row = CatalogProvider(
            id=base.id if base else key,
            route_provider=base.route_provider if base else probe.provider,
            endpoint=base.endpoint if base else probe.endpoint,
            transport=transport,
            key_envs=key_envs,
            base_url_envs=base.base_url_envs if base else (base_url_env_name(key),),
            local=bool(cfg.get("local_tolerances", base.local if base else False)),
            models=(*(base.models if base else ()), *models),
            source="config",
            auth_source=source,
            auth_kind=kind,
        )
        rows[row.id] = row
    return list(rows.values())


# ------------------------------------------------------------------ the service


@dataclass
class _Model:
    provider: CatalogProvider
    model: CatalogModel

    @property
    def ref(self) -> str:
        return self.provider.ref(self.model.id)


@dataclass
class _View:
    config: dict[str, Any]
    providers: list[CatalogProvider] = field(default_factory=list)
    models: list[_Model] = field(default_factory=list)
    lineage: list[str] = field(default_factory=list)  # compact refs of HOLON_MODEL, then the fallbacks
    lineage_groups: set[str] = field(default_factory=set)


class ModelCatalogService:
    """Read-only provider/model listing (agents spec §5.19–§5.20); handlers see it as ``ctx.model_catalog``.

    Args:
        settings: Returns the runtime's current settings (their ``providers``: ``%config HolonNB.providers``);
            None (a catalog outside a runtime): none.
        environ: Environment to read; None means the live ``os.environ``.
        config: Provider configuration (``{"providers": {…}}``, as for ``resolve_provider``); its
            entries come after those of ``HOLON_NB_PROVIDERS`` and of the settings' ``providers``
            and win over them.
    """

    def __init__(
        self,
        settings: Callable[[], ProviderSettings] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        config: Mapping[str, Any] | None = None,
    ):
        self._settings = settings
        self._environ = environ
        self._config = dict((config or {}).get("providers") or {})

    # service protocol (runtime/_facade.py)
    def start(self) -> None:
        """Nothing to start: the catalog is computed on demand."""

    def bind(self, call: Any) -> ModelCatalogService:
        """The view a handler gets; the listing does not depend on the caller."""
        return self

    async def close(self) -> None:
        """Nothing to release."""

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment read at each call."""
        return os.environ if self._environ is None else self._environ

    # ---------------------------------------------------------------- building the view
    def _view(self) -> _View:
        settings = (self._settings().providers if self._settings is not None else None) or {}  # standalone: none
        config = provider_config(self.environ, {**settings, **self._config})
        view = _View(config=config, providers=_apply_config(builtin_catalog(), config["providers"]))
        seen: set[tuple[str, str]] = set()
        for p in view.providers:
            for m in p.models:
                if (p.id, m.id) not in seen:
                    seen.add((p.id, m.id))
                    view.models.append(_Model(p, m))
        by_route = {(p.route_provider, p.endpoint): p for p in view.providers}
        env = self.environ
        try:
            fallbacks = parse_model_list(env.get("HOLON_MODEL_FALLBACKS"))
        except ModelRefError:
            fallbacks = []
        for text in [env.get("HOLON_MODEL", "").strip(), *fallbacks]:
            try:
                ref = parse_model_ref(text) if text else None
            except ModelRefError:
                continue
            routed = by_route.get((ref.provider, ref.endpoint)) if ref else None
            if ref is None or routed is None:
                continue
            view.lineage.append(routed.ref(ref.model))
            view.lineage_groups.add(routed.group)
            if (routed.id, ref.model) not in seen:
                seen.add((routed.id, ref.model))
                view.models.append(_Model(routed, CatalogModel(ref.model, metadata_source="unknown_fallback")))
        view.models.sort(key=lambda m: m.ref)
        return view

    def _configured(self, p: CatalogProvider, view: _View) -> tuple[bool, bool, str | None]:
        """``(configured, credential_configured, reason)`` for one provider (see the module docstring)."""
        try:
            resolved = resolve_provider(ModelRef(p.route_provider, p.endpoint, "probe"), self.environ, view.config)
        except ProviderConfigError:
            return False, False, "provider_config_error"
        if resolved.api_key:
            return True, True, None
        if not p.keyless:
            return False, False, "credential_missing"
        env = self.environ
        preset = (
            p.source == "config"
            or p.group in view.lineage_groups
            or any((env.get(name) or "").strip() for name in p.base_url_envs)
        )
        return preset, True, None if preset else "local_server_not_configured"

    @staticmethod
    def _model_state(m: _Model, provider_state: tuple[bool, bool, str | None]) -> tuple[bool, str | None]:
        """``(available, unavailable_reason)`` of one model."""
        if not m.model.enabled:
            return False, "disabled_by_config"
        if not provider_state[0]:
            return False, provider_state[2]
        if m.provider.transport not in SUPPORTED_TRANSPORTS:
            return False, "unsupported_transport"
        return True, None

    # ---------------------------------------------------------------- reading
    def providers(self) -> list[dict[str, Any]]:
        """Every known provider as a ``ModelProviderEntry`` dict (agents spec §5.19), sorted by id.

        Returns:
            ``[{id, provider_family, endpoint, route_provider, display_name, availability,
            provider_configured, provider_source, transport, credential_source, credential_kind,
            credential_configured, default_model?, model_count, discovered_model_count}]``.
        """
        view = self._view()
        out: list[dict[str, Any]] = []
        for p in sorted(view.providers, key=lambda p: (p.group, p.id)):
            if any(o["id"] == p.group for o in out):
                continue  # an alias row of an endpoint already listed (first one wins)
            state = self._configured(p, view)
            models = [m for m in view.models if m.provider is p]
            flags = [self._model_state(m, state)[0] for m in models]
            if not models:
                available = state[0] and p.transport in SUPPORTED_TRANSPORTS
                availability = "available" if available else "unavailable"
            else:
                availability = "available" if all(flags) else "degraded" if any(flags) else "unavailable"
            entry: dict[str, Any] = {
                "id": p.group,
                "provider_family": p.route_provider,
                "endpoint": p.endpoint,
                "route_provider": p.id,
                "display_name": p.route_provider,
                "availability": availability,
                "provider_configured": True,
                "provider_source": p.source,
                "transport": p.transport,
                "credential_source": p.auth_source,
                "credential_kind": p.auth_kind,
                "credential_configured": state[1],
                "model_count": len(models),
                "discovered_model_count": 0,
            }
            refs = {m.ref for m in models}
            default = next((ref for ref in view.lineage if ref in refs), None)
            if default is not None:
                entry["default_model"] = default
            out.append(entry)
        return out

    def provider_models(self, provider: str) -> list[dict[str, Any]]:
        """The models of one provider as ``ProviderModelEntry`` dicts (agents spec §5.20), sorted by ``model_ref``.

        Args:
            provider: A provider id from :meth:`providers` (``openai``, ``byteplus:coding``), a configured
                or legacy id (``byteplus-coding``) or a provider family (``byteplus``: every endpoint).

        Returns:
            ``[{provider, provider_family, endpoint, route_provider, id, model_ref, display_name,
            availability, selectable, unavailable_reason?, metadata_source, policy}]``; ``[]`` for an
            unknown provider.
        """
        view = self._view()
        states: dict[str, tuple[bool, bool, str | None]] = {}
        out = []
        for m in view.models:
            p = m.provider
            if provider not in (p.id, p.route_provider, p.group):
                continue
            if p.id not in states:
                states[p.id] = self._configured(p, view)
            available, reason = self._model_state(m, states[p.id])
            entry: dict[str, Any] = {
                "provider": p.id,
                "provider_family": p.route_provider,
                "endpoint": p.endpoint,
                "route_provider": p.id,
                "id": m.model.id,
                "model_ref": m.ref,
                "display_name": m.model.display_name or m.model.id,
                "availability": "available" if available else "unavailable",
                "selectable": available,
                "metadata_source": m.model.metadata_source,
                "policy": {"model_ref": m.ref, "context_window_tokens": m.model.context_window_tokens},
            }
            if reason is not None:
                entry["unavailable_reason"] = reason
            out.append(entry)
        return out
