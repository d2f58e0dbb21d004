"""Model references ``provider@endpoint/model`` and the model lineage from the environment (turn-loop spec §2.2).

A route ref is split at the **first** ``/``: the prefix names the provider (``openai``) or the provider and its
endpoint (``byteplus@coding``); the rest is the model and may contain ``/`` or ``:``. A legacy prefix without ``@``
(``openrouter/…``, ``byteplus-coding/…``) maps to its catalog entry's built-in endpoint (usually ``default``).

Example::

    ref = parse_model_ref("openrouter/anthropic/claude-sonnet-4")
    (ref.provider, ref.endpoint, ref.model)   # ("openrouter", "default", "anthropic/claude-sonnet-4")
    ref.compact                                # "openrouter/anthropic/claude-sonnet-4"
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ._catalog import legacy_aliases
from ._modelref import _ID, DEFAULT_ENDPOINT, ModelRef, ModelRefError

__all__ = [
    "ModelRef",
    "ModelRefError",
    "parse_model_ref",
    "parse_model_list",
    "lineage_refs_from_env",
    "DEFAULT_ENDPOINT",
]


def parse_model_ref(text: str, aliases: Mapping[str, tuple[str, str]] | None = None) -> ModelRef:
    """Parse ``provider@endpoint/model`` or the legacy ``provider/model``.

    Args:
        text: The reference.
        aliases: Legacy provider ids → ``(provider, endpoint)`` (catalog alias canonicalization, e.g.
            ``byteplus-coding`` → ``("byteplus", "coding")``). Defaults to the built-in catalog's aliases.

    Returns:
        The :class:`ModelRef`.

    Raises:
        ModelRefError: no ``/``, an empty provider, endpoint or model, or an invalid provider/endpoint id.
    """
    if aliases is None:
        aliases = legacy_aliases()
    raw = (text or "").strip()
    prefix, sep, model = raw.partition("/")
    if not sep or not prefix or not model:
        raise ModelRefError(f"model ref {text!r} must look like provider@endpoint/model or provider/model")
    if "@" in prefix:
        provider, _, endpoint = prefix.partition("@")
    else:
        provider, endpoint = aliases.get(prefix, (prefix, DEFAULT_ENDPOINT))
    for what, value in (("provider", provider), ("endpoint", endpoint)):
        if not _ID.match(value):
            raise ModelRefError(
                f"model ref {text!r}: {what} id {value!r} must be lowercase ASCII letters, digits, '-' or '_'"
            )
    return ModelRef(provider, endpoint, model)


def parse_model_list(value: str | None) -> list[str]:
    """Parse ``HOLON_MODEL_FALLBACKS``: a comma list or a JSON string array. Blank entries are dropped.

    Raises:
        ModelRefError: a JSON value that is not an array of strings.
    """
    text = (value or "").strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise ModelRefError(f"model list is not valid JSON: {exc}") from None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ModelRefError("model list JSON must be an array of strings")
        return [i.strip() for i in items if i.strip()]
    return [i.strip() for i in text.split(",") if i.strip()]


_TRUE = {"1", "true", "yes", "on"}


def lineage_refs_from_env(
    environ: Mapping[str, str], model: str | None = None, aliases: Mapping[str, tuple[str, str]] | None = None
) -> list[ModelRef]:
    """The model lineage ``[model or HOLON_MODEL, *HOLON_MODEL_FALLBACKS]``, parsed and deduplicated (turn-loop spec §1.1, §2.2).

    ``HOLON_DISABLE_PROVIDER_FALLBACK`` (``1``/``true``/``yes``/``on``) keeps only the first candidate.

    Raises:
        ModelRefError: no model given and ``HOLON_MODEL`` unset, or a malformed ref.
    """
    head = model or environ.get("HOLON_MODEL", "").strip()
    if not head:
        raise ModelRefError("no model configured: pass model= or set HOLON_MODEL (provider@endpoint/model)")
    refs = [parse_model_ref(head, aliases)]
    if environ.get("HOLON_DISABLE_PROVIDER_FALLBACK", "").strip().lower() not in _TRUE:
        for item in parse_model_list(environ.get("HOLON_MODEL_FALLBACKS")):
            ref = parse_model_ref(item, aliases)
            if ref not in refs:
                refs.append(ref)
    return refs
