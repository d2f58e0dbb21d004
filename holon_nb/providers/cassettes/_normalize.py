"""Request normalization, secret redaction and component fingerprints of cassettes (turn-loop spec §4.3).

Before hashing, a :class:`~holon_nb.providers.base.TurnRequest` becomes a plain JSON
*normalized request*::

    {"contract": {"transport", "schema_contract", "version"},
     "request_controls": {"model", "max_output_tokens", "reasoning", "tool_choice", "stream",
                          "native_web_search", "response_format", "continuation_scope_id"},
     "system": {"system_prompt", "system_blocks", "context_blocks"},
     "tools": [{"name", "description", "input_schema" (as lowered for the transport), "freeform_grammar"}],
     "conversation": [<message JSON as base.to_dict>, ...]}

in which, in every string: runtime-minted ids (``<prefix>_<15 hex>``) become per-kind ordinal
placeholders (``<tool_execution:1>``, numbered by first appearance, keys visited in sorted
order; the tools are numbered on their own); RFC 3339 timestamps and 13-digit epoch-ms values become ``<ts>``; workspace, holon-home,
user-home and temp roots become ``$WORKSPACE``, ``$HOLON_HOME``, ``$HOME``, ``$TMP``. Then secrets
are redacted with the upstream trace rules (:func:`redact_json`) and, last, secret values are
scrubbed (D6, :class:`~holon_nb.render._scrubbing.Scrubber`).

Components (upstream's stable-prefix split): ``contract``, ``request_controls``, ``system``,
``tools``, ``history_prefix`` (all messages but the last), ``tail`` (the last message).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...render._scrubbing import REDACTED, Scrubber
from ..base import ProviderToolSpec, TurnRequest, to_dict
from ._canonical import cassette_hash

__all__ = [
    "COMPONENTS",
    "FORMAT_VERSION",
    "LOWERED_TRANSPORTS",
    "Normalizer",
    "component_fingerprints",
    "component_values",
    "default_roots",
    "is_secret_key",
    "redact_headers",
    "redact_json",
    "redact_url",
    "request_key",
    "tool_fingerprints",
]

#: Major version of the cassette format (part of the ``contract`` component).
FORMAT_VERSION = 1
#: Component names, in the order drift reports look for the first difference (turn-loop spec §4.3).
COMPONENTS = ("contract", "request_controls", "system", "tools", "history_prefix", "tail")
#: Transports that send relaxed/strict-lowered schemas (turn-loop spec §3.5); the others send the source schema.
LOWERED_TRANSPORTS = frozenset({"openai_responses", "openai_chat_completions", "openai_codex_responses"})

_ID = re.compile(r"\b([a-z][a-z0-9]{0,15})_([0-9a-f]{15})\b")
#: Id prefixes (runtime/core/_store.py ``new_id``) whose placeholder kind has a longer name.
_ID_KINDS = {"tool": "tool_execution", "msg": "message", "wic": "completion_request", "waitreq": "wait_request"}
_TS = re.compile(r"\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
_EPOCH_MS = re.compile(r"(?<![\d.])1\d{12}(?![\d.])")
_URL = re.compile(r"https?://[^\s\"'<>]+")
_HEADER_NAMES = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})


# ---------------------------------------------------------------- secret redaction (upstream trace rules)


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """True for header names ``authorization``, ``proxy-authorization``, ``cookie``, ``set-cookie``,
    ``x-api-key`` and JSON keys containing ``api_key``/``apikey``/``secret``, equal to ``authorization``/``token``,
    or with a ``_token`` suffix, ``token_`` prefix or ``_token_`` infix (case-insensitive)."""
    k = key.lower()
    return (
        k in _HEADER_NAMES
        or "api_key" in k
        or "apikey" in k
        or "secret" in k
        or k == "token"
        or k.endswith("_token")
        or k.startswith("token_")
        or "_token_" in k
    )


def redact_url(text: str) -> str:
    """Replace the values of URL query keys containing ``key``, ``token`` or ``secret`` by ``[redacted]``,
    in every http(s) URL found in ``text``."""
    if "://" not in text or "?" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        url = m.group(0)
        base, sep, rest = url.partition("?")
        query, hsep, fragment = rest.partition("#")
        pairs = []
        for pair in query.split("&"):
            name, eq, _value = pair.partition("=")
            low = name.lower()
            if eq and ("key" in low or "token" in low or "secret" in low):
                pair = f"{name}={REDACTED}"
            pairs.append(pair)
        return base + sep + "&".join(pairs) + hsep + fragment

    return _URL.sub(one, text)


def redact_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``headers`` with secret header values replaced by ``[redacted]`` (:func:`is_secret_key`)."""
    return {k: (REDACTED if is_secret_key(k) else v) for k, v in headers.items()}


def redact_json(value: Any) -> Any:
    """A copy of a JSON value where string values under secret keys (:func:`is_secret_key`) are ``[redacted]``
    and URL query secrets are redacted in every string. Objects and arrays under a secret key are walked,
    not replaced (so a tool schema property named ``token`` keeps its schema)."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and is_secret_key(k) and isinstance(v, str):
                out[k] = REDACTED
            elif isinstance(k, str) and is_secret_key(k) and isinstance(v, list):
                out[k] = [REDACTED if isinstance(x, str) else redact_json(x) for x in v]
            else:
                out[k] = redact_json(v)
        return out
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    if isinstance(value, str):
        return redact_url(value)
    return value


# ---------------------------------------------------------------- normalization


def default_roots(
    workspace: str | os.PathLike[str] | None = None, holon_home: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """The placeholder → directory map: ``$WORKSPACE`` (default: the cwd), ``$HOLON_HOME`` (when given),
    ``$HOME`` (the user's home) and ``$TMP`` (the temp directory)."""
    roots = {
        "$WORKSPACE": os.fspath(workspace) if workspace is not None else os.getcwd(),
        "$HOME": os.path.expanduser("~"),
        "$TMP": tempfile.gettempdir(),
    }
    if holon_home is not None:
        roots["$HOLON_HOME"] = os.fspath(holon_home)
    return roots


class _Ordinals:
    """Per-request id → ``<kind:n>`` map (numbered from 1 per kind, in order of first appearance)."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    def __call__(self, m: re.Match[str]) -> str:
        raw = m.group(0)
        if raw not in self.seen:
            kind = _ID_KINDS.get(m.group(1), m.group(1))
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.seen[raw] = f"<{kind}:{self.counts[kind]}>"
        return self.seen[raw]


@dataclass
class Normalizer:
    """Turns requests into normalized JSON (turn-loop spec §4.3) and scrubs values before they are written.

    Args:
        roots: Placeholder → directory (see :func:`default_roots`); each root is matched as given and
            as its realpath, longest first, only at a path-component boundary.
        scrubber: Builds the D6 :class:`Scrubber` (called per use, so a secret set later is honoured);
            default: a scrubber over ``os.environ`` plus ``secrets``.
        secrets: Extra secret values (provider API keys from the configuration).
    """

    roots: Mapping[str, str] = field(default_factory=default_roots)
    scrubber: Callable[[], Scrubber] | None = None
    secrets: Iterable[str] = ()

    def __post_init__(self) -> None:
        self.secrets = tuple(self.secrets)
        pairs: list[tuple[str, str]] = []
        for name, path in self.roots.items():
            for p in {os.fspath(path), os.path.realpath(os.fspath(path))}:
                p = p.rstrip("/")
                if p and p != "/":
                    pairs.append((p, name))
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
        self._root_names = dict(pairs)
        self._tools_cache: tuple[Any, Any, list[dict[str, Any]]] | None = None
        self._roots = (
            re.compile("(?:" + "|".join(re.escape(p) for p, _ in pairs) + r")(?![A-Za-z0-9_\-]|\.[A-Za-z0-9_])")
            if pairs
            else None
        )

    def roots_out(self, value: Any) -> Any:
        """``value`` (a JSON value) with the roots replaced by their placeholders in every string (tool records
        are stored this way, so a replay in another home or workspace gives back paths of its own)."""
        if self._roots is None:
            return value
        if isinstance(value, str):
            return self._roots.sub(lambda m: self._root_names[m.group(0)], value)
        if isinstance(value, dict):
            return {k: self.roots_out(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.roots_out(v) for v in value]
        return value

    def roots_in(self, value: Any) -> Any:
        """Inverse of :meth:`roots_out` with this run's roots."""
        if isinstance(value, str):
            if "$" not in value:
                return value
            for name in sorted(self.roots, key=len, reverse=True):
                value = value.replace(name, os.fspath(self.roots[name]).rstrip("/"))
            return value
        if isinstance(value, dict):
            return {k: self.roots_in(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.roots_in(v) for v in value]
        return value

    def make_scrubber(self) -> Scrubber:
        """The D6 scrubber to use now."""
        return self.scrubber() if self.scrubber is not None else Scrubber(extra=self.secrets)

    def text(self, s: str, ordinals: _Ordinals) -> str:
        """Ids → ordinals, timestamps → ``<ts>``, roots → placeholders, in one string."""
        s = _ID.sub(ordinals, s)
        s = _TS.sub("<ts>", s)
        s = _EPOCH_MS.sub("<ts>", s)
        if self._roots is not None:
            s = self._roots.sub(lambda m: self._root_names[m.group(0)], s)
        return s

    def _walk(self, value: Any, ordinals: _Ordinals, scrub: Callable[[str], str]) -> Any:
        """One pass over a JSON value: every string normalized (:meth:`text`), URL-redacted and scrubbed; string
        values under secret keys replaced (:func:`redact_json`'s rules); keys scrubbed; dicts rebuilt with
        sorted keys (the order ordinals are numbered in)."""
        if isinstance(value, str):
            return scrub(redact_url(self.text(value, ordinals)))
        if isinstance(value, dict):
            out = {}
            for k in sorted(value):
                v = value[k]
                if isinstance(k, str) and is_secret_key(k) and isinstance(v, (str, list)):
                    v = (
                        REDACTED
                        if isinstance(v, str)
                        else [REDACTED if isinstance(x, str) else self._walk(x, ordinals, scrub) for x in v]
                    )
                    out[scrub(k)] = v
                else:
                    out[scrub(k) if isinstance(k, str) else k] = self._walk(v, ordinals, scrub)
            return out
        if isinstance(value, list):
            return [self._walk(v, ordinals, scrub) for v in value]
        return value

    def scrub(self, value: Any, scrubber: Scrubber | None = None) -> Any:
        """D6: secret values replaced by ``[redacted]`` in every string (keys too) of a JSON value."""
        return (scrubber or self.make_scrubber()).value(value)

    def request(
        self,
        req: TurnRequest,
        *,
        route_ref: str,
        transport: str,
        schema_contract: str,
        controls: Mapping[str, Any] | None = None,
        scrubber: Scrubber | None = None,
    ) -> dict[str, Any]:
        """The normalized request of ``req`` (module docstring); pure apart from reading the environment
        for the D6 scrubber. The tools are normalized on their own (their own ordinals) and cached while the
        loop passes the same tool tuple (it resolves the tool list once per turn, turn-loop spec §1.2)."""
        scrubber = scrubber or self.make_scrubber()
        controls = dict(controls or {})
        tools = self.tools(req.tools, transport, schema_contract, scrubber)
        raw = to_dict(dataclasses.replace(req, tools=()))
        body = {
            "contract": {"transport": transport, "schema_contract": schema_contract, "version": FORMAT_VERSION},
            "request_controls": {
                "model": route_ref,
                "max_output_tokens": raw["max_output_tokens"],
                "reasoning": controls.get("reasoning"),
                "tool_choice": controls.get(
                    "tool_choice", "auto" if tools and transport in LOWERED_TRANSPORTS else None
                ),
                "stream": controls.get("stream"),
                "native_web_search": raw["native_web_search"],
                "response_format": raw["response_format"],
                "continuation_scope_id": raw["continuation_scope_id"],
            },
            "system": raw["prompt_frame"],
            "conversation": raw["conversation"],
        }
        out = self._walk(body, _Ordinals(), scrubber.text)
        out["tools"] = tools
        return out

    def tools(
        self, tools: Sequence[ProviderToolSpec], transport: str, schema_contract: str, scrubber: Scrubber | None = None
    ) -> list[dict[str, Any]]:
        """The normalized tools component: each tool as lowered for ``transport`` (turn-loop spec §3.5), then normalized like
        the rest of the request. Do not mutate the result (it is cached)."""
        scrubber = scrubber or self.make_scrubber()
        key = (transport, schema_contract, scrubber.values)
        cached = self._tools_cache
        if cached is not None and cached[0] is tools and cached[1] == key:
            return cached[2]
        lowered = [_lowered_tool(to_dict(t), transport, schema_contract) for t in tools]
        out = self._walk(lowered, _Ordinals(), scrubber.text)
        self._tools_cache = (tools, key, out)
        return out


def _lowered_tool(tool: dict[str, Any], transport: str, contract: str) -> dict[str, Any]:
    schema = tool["input_schema"]
    if transport in LOWERED_TRANSPORTS:
        try:
            from .._schema_lowering import lower_tool_schema

            schema = lower_tool_schema(schema, contract)
        except Exception:  # noqa: BLE001, S110 - an unlowerable schema fails the live request, not the cassette
            pass
    return {
        "name": tool["name"],
        "description": tool["description"],
        "input_schema": schema,
        "freeform_grammar": tool.get("freeform_grammar"),
    }


# ---------------------------------------------------------------- key and components


def component_values(request: Mapping[str, Any]) -> dict[str, Any]:
    """The six component values of a normalized request, in :data:`COMPONENTS` order."""
    conv = list(request.get("conversation") or [])
    return {
        "contract": request.get("contract"),
        "request_controls": request.get("request_controls"),
        "system": request.get("system"),
        "tools": request.get("tools"),
        "history_prefix": conv[:-1],
        "tail": conv[-1:],
    }


def component_fingerprints(request: Mapping[str, Any]) -> dict[str, str]:
    """``{component: "sha256:…"}`` of a normalized request (component name as hash domain)."""
    return {name: cassette_hash(value, name) for name, value in component_values(request).items()}


def request_key(request: Mapping[str, Any]) -> str:
    """``"sha256:" + hex(sha256("holon_nb.cassette:v1:" + canonical_json(request)))`` (turn-loop spec §4.3)."""
    return cassette_hash(dict(request))


def tool_fingerprints(tools: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``{tool name: "sha256:…"}`` of normalized (lowered) tools, to name the tools a drift is about."""
    return {t["name"]: cassette_hash(dict(t), "tool") for t in tools}
