"""The built-in provider catalog and provider configuration resolution (turn-loop spec §2.2, §2.7, §1.9).

Each :class:`ProviderDefinition` names a route provider and endpoint, its transport (closed set
:data:`TRANSPORTS`), default base URL, the environment variables holding its key and overriding its base URL.
The table is upstream's (holon-run/holon src/provider/registry/providers.rs) with the holon_nb presets
``ollama`` and ``llamacpp`` (⚑ OpenAI-compatible Chat Completions with local tolerances).

:func:`resolve_provider` turns a :class:`~holon_nb.providers._refs.ModelRef` plus an environment and an optional
config into a :class:`ResolvedProvider` — everything a transport needs, the secret included (never in config).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict

from ..tools._errors import HolonNBError
from ._modelref import _ID, DEFAULT_ENDPOINT, ModelRef  # _ID: the provider-id grammar of model refs

__all__ = [
    "TRANSPORTS",
    "SUPPORTED_TRANSPORTS",
    "ProviderDefinition",
    "ResolvedProvider",
    "ProviderConfigError",
    "BUILTIN_PROVIDERS",
    "builtin_provider",
    "legacy_aliases",
    "base_url_env_name",
    "resolve_provider",
    "timeouts_from_env",
    "check_provider_settings",
    "PROVIDER_SETTING_KEYS",
]

#: Transport wire names (closed set, turn-loop spec §2.2).
TRANSPORTS = frozenset(
    {
        "openai_codex_responses",
        "openai_responses",
        "openai_chat_completions",
        "anthropic_messages",
        "gemini_generate_content",
    }
)
#: Transports holon_nb implements (the others answer ``unsupported_transport``).
SUPPORTED_TRANSPORTS = frozenset({"openai_responses", "openai_chat_completions", "anthropic_messages"})

_AUTH_SOURCES = frozenset({"env", "external_cli", "credential_profile", "credential_process", "none"})
_AUTH_KINDS = frozenset({"api_key", "bearer_token", "oauth", "session_token", "aws_sdk", "none"})


class ProviderConfigError(HolonNBError):
    """Raised when a provider cannot be configured: unknown provider id, bad transport or auth, a secret
    placed in config, or a credential source holon_nb does not support."""


@dataclass(frozen=True)
class ProviderDefinition:
    """One catalog entry.

    Attributes:
        provider: Route provider id (``byteplus``).
        endpoint: Route endpoint id (``coding``).
        legacy_id: The legacy ``provider/model`` prefix that maps here (``byteplus-coding``).
        transport: One of :data:`TRANSPORTS`.
        default_base_url: Base URL when no override is set.
        key_envs: Environment variables holding the credential, first set wins (empty: keyless).
        base_url_envs: Environment variables overriding the base URL, first set wins.
        local: Local OpenAI-compatible server preset: tolerances on, no prompt cache key (turn-loop spec §2.7).
        discovery: How ``ListProviderModels`` may list models (``openai_compatible``, ``ollama``, …) or None.
    """

    provider: str
    endpoint: str
    legacy_id: str
    transport: str
    default_base_url: str
    key_envs: tuple[str, ...] = ()
    base_url_envs: tuple[str, ...] = ()
    local: bool = False
    discovery: str | None = None

    @property
    def route_prefix(self) -> str:
        """``provider@endpoint``."""
        return f"{self.provider}@{self.endpoint}"


def base_url_env_name(provider_id: str) -> str:
    """``HOLON_<ID>_BASE_URL``: the id upper-cased, every non-alphanumeric character turned into ``_`` (turn-loop spec §2.2)."""
    return "HOLON_" + re.sub(r"[^A-Za-z0-9]", "_", provider_id).upper() + "_BASE_URL"


def _d(
    legacy: str,
    provider: str,
    endpoint: str,
    transport: str,
    base: str,
    keys: tuple[str, ...] = (),
    base_envs: tuple[str, ...] | None = None,
    local: bool = False,
    discovery: str | None = None,
) -> ProviderDefinition:
    envs = base_envs if base_envs is not None else (base_url_env_name(legacy),)
    return ProviderDefinition(provider, endpoint, legacy, transport, base, keys, envs, local, discovery)


_R, _C, _A, _G = "openai_responses", "openai_chat_completions", "anthropic_messages", "gemini_generate_content"

#: The built-in providers (upstream table plus the ⚑ local presets), in catalog order.
BUILTIN_PROVIDERS: tuple[ProviderDefinition, ...] = (
    _d("openai-codex", "openai-codex", "default", "openai_codex_responses", "https://chatgpt.com/backend-api/codex"),
    _d(
        "openai",
        "openai",
        "default",
        _R,
        "https://api.openai.com/v1",
        ("OPENAI_API_KEY",),
        ("HOLON_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
    ),
    _d(
        "anthropic",
        "anthropic",
        "default",
        _A,
        "https://api.anthropic.com",
        ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"),
        ("ANTHROPIC_BASE_URL",),
    ),
    _d("gemini", "gemini", "default", _G, "https://generativelanguage.googleapis.com/v1beta", ("GEMINI_API_KEY",)),
    _d("arcee", "arcee", "default", _C, "https://api.arcee.ai/v1", ("ARCEE_API_KEY",), discovery="fixed"),
    _d("byteplus", "byteplus", "default", _C, "https://ark.ap-southeast.bytepluses.com/api/v3", ("BYTEPLUS_API_KEY",)),
    _d(
        "byteplus-coding",
        "byteplus",
        "coding",
        _C,
        "https://ark.ap-southeast.bytepluses.com/api/coding/v3",
        ("BYTEPLUS_CODING_API_KEY", "BYTEPLUS_API_KEY"),
    ),
    _d("chutes", "chutes", "default", _C, "https://llm.chutes.ai/v1", ("CHUTES_API_KEY",)),
    _d(
        "dashscope",
        "dashscope",
        "default",
        _A,
        "https://dashscope.aliyuncs.com/apps/anthropic",
        ("DASHSCOPE_API_KEY", "QWEN_API_KEY"),
    ),
    _d(
        "dashscope-token-plan",
        "dashscope",
        "token-plan",
        _A,
        "https://token-plan.cn-beijing.maas.aliyuncs.com/apps/anthropic",
        ("DASHSCOPE_TOKEN_PLAN_API_KEY",),
    ),
    _d(
        "dashscope-coding-plan",
        "dashscope",
        "coding-plan",
        _A,
        "https://coding.dashscope.aliyuncs.com/apps/anthropic",
        ("DASHSCOPE_CODING_PLAN_API_KEY",),
    ),
    _d("deepseek", "deepseek", "default", _A, "https://api.deepseek.com/anthropic", ("DEEPSEEK_API_KEY",)),
    _d("fireworks", "fireworks", "default", _C, "https://api.fireworks.ai/inference/v1", ("FIREWORKS_API_KEY",)),
    _d(
        "huggingface",
        "huggingface",
        "default",
        _C,
        "https://router.huggingface.co/v1",
        ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
        discovery="openai_compatible",
    ),
    _d(
        "kilocode",
        "kilocode",
        "default",
        _C,
        "https://api.kilo.ai/api/gateway",
        ("KILOCODE_API_KEY",),
        discovery="openai_compatible",
    ),
    _d("litellm", "litellm", "default", _C, "http://localhost:4000", ("LITELLM_API_KEY",), discovery="openai_v1"),
    _d("llamacpp", "llamacpp", "default", _C, "http://127.0.0.1:8080/v1", local=True, discovery="openai_compatible"),
    _d("mistral", "mistral", "default", _C, "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",)),
    _d("moonshot", "moonshot", "default", _C, "https://api.moonshot.ai/v1", ("MOONSHOT_API_KEY",)),
    _d(
        "nearai",
        "nearai",
        "default",
        _C,
        "https://cloud-api.near.ai/v1",
        ("NEARAI_API_KEY",),
        discovery="openai_compatible",
    ),
    _d("nvidia", "nvidia", "default", _C, "https://integrate.api.nvidia.com/v1", ("NVIDIA_API_KEY",)),
    _d("ollama", "ollama", "default", _C, "http://127.0.0.1:11434/v1", local=True, discovery="ollama"),
    _d(
        "opencode-go",
        "opencode-go",
        "default",
        _C,
        "https://opencode.ai/zen/go/v1",
        ("OPENCODE_GO_API_KEY",),
        discovery="openai_compatible",
    ),
    _d(
        "opencode-go-messages", "opencode-go", "messages", _A, "https://opencode.ai/zen/go/v1", ("OPENCODE_GO_API_KEY",)
    ),
    _d(
        "openrouter",
        "openrouter",
        "default",
        _C,
        "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_KEY",),
        discovery="openai_compatible",
    ),
    _d("qianfan", "qianfan", "default", _C, "https://qianfan.baidubce.com/v2", ("QIANFAN_API_KEY",)),
    _d("stepfun", "stepfun", "default", _C, "https://api.stepfun.com/v1", ("STEPFUN_API_KEY",)),
    _d(
        "stepfun-plan",
        "stepfun",
        "plan",
        _C,
        "https://api.stepfun.com/step_plan/v1",
        ("STEPFUN_PLAN_API_KEY", "STEPFUN_API_KEY"),
    ),
    _d(
        "synthetic",
        "synthetic",
        "default",
        _A,
        "https://api.synthetic.new/anthropic",
        ("SYNTHETIC_API_KEY",),
        discovery="fixed",
    ),
    _d(
        "tencent-tokenhub",
        "tencent-tokenhub",
        "default",
        _C,
        "https://tokenhub.tencentmaas.com/v1",
        ("TOKENHUB_API_KEY",),
        discovery="openai_compatible",
    ),
    _d(
        "tencent-tokenhub-messages",
        "tencent-tokenhub",
        "messages",
        _A,
        "https://tokenhub.tencentmaas.com",
        ("TOKENHUB_API_KEY",),
    ),
    _d("together", "together", "default", _C, "https://api.together.xyz/v1", ("TOGETHER_API_KEY",)),
    _d("venice", "venice", "default", _C, "https://api.venice.ai/api/v1", ("VENICE_API_KEY",), discovery="venice"),
    _d("vllm", "vllm", "default", _C, "http://127.0.0.1:8000/v1", local=True, discovery="openai_compatible"),
    _d(
        "volcengine",
        "volcengine",
        "default",
        _R,
        "https://ark.cn-beijing.volces.com/api/v3",
        ("VOLCENGINE_API_KEY", "VOLCENGINE_IMAGE_OPENAI_API_KEY"),
    ),
    _d(
        "volcengine-coding",
        "volcengine",
        "coding",
        _R,
        "https://ark.cn-beijing.volces.com/api/coding/v3",
        ("VOLCENGINE_CODING_API_KEY",),
    ),
    _d(
        "volcengine-agent",
        "volcengine",
        "plan",
        _R,
        "https://ark.cn-beijing.volces.com/api/plan/v3",
        ("VOLCENGINE_AGENT_API_KEY",),
    ),
    _d("xiaomi", "xiaomi", "default", _R, "https://api.xiaomimimo.com/v1", ("XIAOMI_API_KEY",)),
    _d(
        "xiaomi-token-plan",
        "xiaomi",
        "token-plan",
        _R,
        "https://token-plan-cn.xiaomimimo.com/v1",
        ("XIAOMI_TOKEN_PLAN_API_KEY",),
    ),
    _d("xai", "xai", "default", _R, "https://api.x.ai/v1", ("XAI_API_KEY",)),
    _d("zai", "zai", "default", _A, "https://api.z.ai/api/anthropic", ("ZAI_API_KEY",)),
    _d("bigmodel", "bigmodel", "default", _A, "https://open.bigmodel.cn/api/anthropic", ("BIGMODEL_API_KEY",)),
    _d("minimax", "minimax", "default", _A, "https://api.minimax.io/anthropic", ("MINIMAX_API_KEY",)),
    _d(
        "vercel-ai-gateway",
        "vercel-ai-gateway",
        "default",
        _A,
        "https://ai-gateway.vercel.sh",
        ("VERCEL_OIDC_TOKEN", "AI_GATEWAY_API_KEY", "VERCEL_AI_GATEWAY_API_KEY"),
        discovery="vercel_ai_gateway",
    ),
)

_BY_ROUTE = {(d.provider, d.endpoint): d for d in BUILTIN_PROVIDERS}
# upstream's image alias shares volcengine's default endpoint
_EXTRA_ALIASES = {"volcengine-image-openai": ("volcengine", "default")}


def builtin_provider(provider: str, endpoint: str = DEFAULT_ENDPOINT) -> ProviderDefinition | None:
    """The catalog entry for ``provider@endpoint``, or None."""
    return _BY_ROUTE.get((provider, endpoint))


def legacy_aliases() -> dict[str, tuple[str, str]]:
    """Legacy provider prefixes → ``(provider, endpoint)`` (``byteplus-coding`` → ``("byteplus", "coding")``)."""
    out = {d.legacy_id: (d.provider, d.endpoint) for d in BUILTIN_PROVIDERS}
    out.update(_EXTRA_ALIASES)
    return out


@dataclass(frozen=True)
class ResolvedProvider:
    """Everything a transport needs for one route (secrets included, never printed by ``repr``).

    Attributes:
        ref: The canonical model ref.
        transport: Wire name (one of :data:`TRANSPORTS`).
        base_url: Base URL after overrides (no trailing ``/``).
        auth_kind: ``bearer`` (``authorization: Bearer``), ``x_api_key`` (Anthropic ``x-api-key``) or ``none``.
        api_key: The credential, or None when keyless.
        key_env: The environment variable the credential came from (for messages; never the value).
        local_tolerances: turn-loop spec §2.7 tolerances (synthesized call ids, text-form tool-call detector).
        send_prompt_cache_key: Send ``prompt_cache_key`` (Responses/Chat).
        send_strict_flag: Send ``strict`` on function tools (Responses/Chat).
        schema_contract: ``relaxed`` (default) or ``strict`` (turn-loop spec §3).
        stream: Use SSE where the transport makes it optional (Responses, Chat); Anthropic always streams.
        reasoning_effort: ``low|medium|high|xhigh|max`` or None.
        max_output_tokens: Default output budget when the request names none (tokens).
        http_timeout_s: Request send timeout (seconds, ``HOLON_PROVIDER_HTTP_TIMEOUT_SECS``).
        body_timeout_s: Whole-body read timeout (seconds, ``HOLON_PROVIDER_RESPONSE_BODY_TIMEOUT_SECS``).
        stream_idle_timeout_ms: Longest silence inside a stream (ms, ``HOLON_PROVIDER_STREAM_IDLE_TIMEOUT_MS``).
        extra_secrets: Values scrubbed from provider messages besides secret-named environment variables.
    """

    ref: ModelRef
    transport: str
    base_url: str
    auth_kind: str = "none"
    api_key: str | None = field(default=None, repr=False)
    key_env: str | None = None
    local_tolerances: bool = False
    send_prompt_cache_key: bool = True
    send_strict_flag: bool = True
    schema_contract: str = "relaxed"
    stream: bool = False
    reasoning_effort: str | None = None
    max_output_tokens: int = 8192
    http_timeout_s: float = 300.0
    body_timeout_s: float = 300.0
    stream_idle_timeout_ms: int = 300_000
    extra_secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def route_ref(self) -> str:
        """Canonical ``provider@endpoint/model``."""
        return self.ref.canonical


class ProviderTimeouts(TypedDict):
    """The timeout fields of :class:`ResolvedProvider`, as :func:`timeouts_from_env` reads them."""

    http_timeout_s: float
    body_timeout_s: float
    stream_idle_timeout_ms: int


def timeouts_from_env(environ: Mapping[str, str]) -> ProviderTimeouts:
    """``{http_timeout_s, body_timeout_s, stream_idle_timeout_ms}`` from the environment (turn-loop spec §1.9 defaults).

    Raises:
        ProviderConfigError: a value that is not a positive number.
    """

    def num(name: str, default: float) -> float:
        raw = environ.get(name, "").strip()
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ProviderConfigError(f"{name}={raw!r} is not a number") from None
        if value <= 0:
            raise ProviderConfigError(f"{name} must be positive")
        return value

    send = num("HOLON_PROVIDER_HTTP_TIMEOUT_SECS", 300.0)
    return {
        "http_timeout_s": send,
        "body_timeout_s": num("HOLON_PROVIDER_RESPONSE_BODY_TIMEOUT_SECS", send),
        "stream_idle_timeout_ms": int(num("HOLON_PROVIDER_STREAM_IDLE_TIMEOUT_MS", 300_000)),
    }


def _claude_settings_env(environ: Mapping[str, str], path: str | Path | None) -> dict[str, str]:
    """The ``env`` object of ``~/.claude/settings.json`` (string values only); {} when absent or unreadable."""
    if path is None:
        home = environ.get("HOME")
        if not home:
            return {}
        path = Path(home) / ".claude" / "settings.json"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    env = data.get("env") if isinstance(data, dict) else None
    return {k: v for k, v in env.items() if isinstance(v, str)} if isinstance(env, dict) else {}


#: Keys one provider's settings may hold (``resolve_provider``'s config, plus the catalog's ``models``).
PROVIDER_SETTING_KEYS = frozenset(
    {
        "transport",
        "base_url",
        "auth",
        "local_tolerances",
        "send_prompt_cache_key",
        "send_strict_flag",
        "schema_contract",
        "stream",
        "reasoning_effort",
        "max_output_tokens",
        "models",
    }
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_KEYS = ("api_key", "apikey", "token", "secret", "password", "auth_token", "key")
_BOOL_KEYS = ("local_tolerances", "send_prompt_cache_key", "send_strict_flag", "stream")


def check_provider_settings(provider_id: Any, settings: Any) -> None:
    """Check one entry of a provider configuration before it is used (turn-loop spec §2.2).

    Args:
        provider_id: ``"<id>"`` or ``"<id>@<endpoint>"`` (lowercase ASCII, digits, ``-``, ``_``).
        settings: ``{transport?, base_url?, auth?: {source?, kind?, env?}, local_tolerances?, …, models?}``;
            a provider the built-in catalog lacks needs ``transport`` and ``base_url``.

    Raises:
        ProviderConfigError: naming the provider and the first problem: a bad id, a non-mapping, an
            unknown key, a transport outside the closed set, a base URL that is not ``http(s)://…``, an
            unknown auth source or kind, a secret value (secrets never live in config: name the
            environment variable in ``auth.env``), or a non-boolean flag.
    """
    if (
        not isinstance(provider_id, str)
        or not all(_ID.match(part) for part in provider_id.split("@", 1))
        or provider_id.count("@") > 1
    ):
        raise ProviderConfigError(
            f"provider id {provider_id!r} is not <id> or <id>@<endpoint> (lowercase letters, digits, '-', '_')"
        )
    where = f"provider {provider_id!r}"
    if not isinstance(settings, Mapping):
        raise ProviderConfigError(f"{where}: settings must be a mapping, got {type(settings).__name__}")
    unknown = sorted(set(settings) - PROVIDER_SETTING_KEYS)
    for key in (*unknown, *((settings.get("auth") or {}) if isinstance(settings.get("auth"), Mapping) else {})):
        if str(key).lower() in _SECRET_KEYS:
            raise ProviderConfigError(
                f"{where} holds {key!r}: secrets never live in config; name the environment "
                "variable that holds it in auth.env"
            )
    if unknown:
        known = ", ".join(sorted(PROVIDER_SETTING_KEYS))
        raise ProviderConfigError(f"{where}: unknown setting {unknown[0]!r} (known: {known})")
    family, _, endpoint = provider_id.partition("@")
    builtin = builtin_provider(family, endpoint or DEFAULT_ENDPOINT) is not None or family in legacy_aliases()
    if not builtin and not ("transport" in settings and "base_url" in settings):
        raise ProviderConfigError(f"{where} is not in the built-in catalog: give it a transport and a base_url")
    if "transport" in settings and settings["transport"] not in TRANSPORTS:
        raise ProviderConfigError(f"{where}: transport {settings['transport']!r} is not one of {sorted(TRANSPORTS)}")
    url = settings.get("base_url")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://")) and len(url) > 8):
        raise ProviderConfigError(f"{where}: base_url must be an http:// or https:// URL, got {str(url)[:80]!r}")
    if url is not None and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        raise ProviderConfigError(
            f"{where}: base_url holds credentials (user:password@host); secrets never live in "
            "config: name the variable holding the key in auth.env"
        )
    auth = settings.get("auth", {})
    if not isinstance(auth, Mapping):
        raise ProviderConfigError(f"{where}: auth must be a mapping {{source, kind, env}}")
    if auth.get("source", "env") not in _AUTH_SOURCES:
        raise ProviderConfigError(f"{where}: auth.source {auth.get('source')!r} is not one of {sorted(_AUTH_SOURCES)}")
    if auth.get("kind", "none") not in _AUTH_KINDS:
        raise ProviderConfigError(f"{where}: auth.kind {auth.get('kind')!r} is not one of {sorted(_AUTH_KINDS)}")
    env = auth.get("env")
    names = env if isinstance(env, list) else [env]
    if env is not None and not all(isinstance(e, str) and _ENV_NAME.fullmatch(e) for e in names):
        # never echo the value: it may be a key pasted where its variable's name belongs
        raise ProviderConfigError(
            f"{where}: auth.env must name an environment variable (letters, digits and _, "
            "not starting with a digit) or a list of names; put the key itself in that "
            "variable, never in config"
        )
    for key in _BOOL_KEYS:
        if key in settings and not isinstance(settings[key], bool):
            raise ProviderConfigError(f"{where}: {key} must be true or false, got {settings[key]!r}")
    if "models" in settings and not isinstance(settings["models"], list):
        raise ProviderConfigError(f"{where}: models must be a list of model ids or {{id, display_name, …}}")


def _provider_overrides(config: Mapping[str, Any] | None, ref: ModelRef, legacy: str | None) -> dict[str, Any]:
    providers = (config or {}).get("providers", {}) if config else {}
    if not isinstance(providers, Mapping):
        raise ProviderConfigError("config['providers'] must be a mapping of provider id to settings")
    out: dict[str, Any] = {}
    for key in (ref.provider, legacy, f"{ref.provider}@{ref.endpoint}"):
        if key and isinstance(providers.get(key), Mapping):
            out.update(providers[key])
    for bad in ("api_key", "token", "secret", "password", "auth_token"):
        if bad in out or bad in (out.get("auth") or {}):
            raise ProviderConfigError(
                f"provider config for {ref.provider!r} holds {bad!r}: secrets never live in "
                "config; name an environment variable in auth.env instead"
            )
    return out


def _pick(environ: Mapping[str, str], names: tuple[str, ...]) -> tuple[str | None, str | None]:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return name, value
    return None, None


def _auth(
    defn_keys: tuple[str, ...],
    transport: str,
    over: dict[str, Any],
    environ: Mapping[str, str],
    claude_env: Mapping[str, str],
    provider: str,
    require_credential: bool = False,
) -> tuple[str, str | None, str | None]:
    auth = over.get("auth") or {}
    source = auth.get("source", "env" if (defn_keys or auth.get("env")) else "none")
    if source not in _AUTH_SOURCES:
        raise ProviderConfigError(f"auth.source {source!r} is not one of {sorted(_AUTH_SOURCES)}")
    kind = auth.get("kind")
    if kind is not None and kind not in _AUTH_KINDS:
        raise ProviderConfigError(f"auth.kind {kind!r} is not one of {sorted(_AUTH_KINDS)}")
    if source == "none" or kind == "none":
        return "none", None, None
    if source != "env":
        raise ProviderConfigError(f"auth.source {source!r} is not supported by holon_nb (use env or none)")
    names = (auth["env"],) if isinstance(auth.get("env"), str) else tuple(auth.get("env") or defn_keys)
    env_name, value = _pick(environ, names)
    if value is None and provider == "anthropic":
        env_name, value = _pick(claude_env, names)
    if value is None:
        if names and require_credential:  # a key is expected and none is set: say so before any request
            raise ProviderConfigError(
                f"no credential for {provider}: set {' or '.join(names)} in the environment (a keyless local "
                f'server: configure auth {{"source": "none"}})'
            )
        return "none", None, None
    if kind == "api_key" or (transport == "anthropic_messages" and env_name == "ANTHROPIC_API_KEY"):
        # ⚑ only ANTHROPIC_API_KEY set: sent as x-api-key (turn-loop spec §2.8)
        return ("x_api_key" if transport == "anthropic_messages" else "bearer"), value, env_name
    return "bearer", value, env_name


def resolve_provider(
    ref: ModelRef,
    environ: Mapping[str, str],
    config: Mapping[str, Any] | None = None,
    *,
    claude_settings: str | Path | None = None,
    require_credential: bool = False,
) -> ResolvedProvider:
    """Resolve a route into a :class:`ResolvedProvider` (turn-loop spec §2.2 table, base-URL and key env vars, turn-loop spec §2.7 presets).

    Config (optional; secrets never live here)::

        {"providers": {"<id>" | "<legacy id>" | "<id>@<endpoint>": {
            "transport": "openai_chat_completions", "base_url": "http://h:8000/v1",
            "auth": {"source": "env" | "none", "kind": "bearer_token" | "api_key" | "none", "env": "MY_KEY"},
            "local_tolerances": bool, "send_prompt_cache_key": bool, "send_strict_flag": bool,
            "schema_contract": "relaxed" | "strict", "stream": bool, "reasoning_effort": "medium",
            "max_output_tokens": 8192}}}

    A provider id absent from the catalog needs at least ``transport`` and ``base_url`` in config.
    ``ANTHROPIC_*`` values also fall back to the ``env`` object of ``~/.claude/settings.json`` (parity; the
    path is ``$HOME/.claude/settings.json`` of ``environ``, or ``claude_settings``).

    ``require_credential``: a provider that expects a key (a built-in's key variables, or ``auth.env``)
    and finds none raises instead of resolving keyless (a turn is about to send a request).

    Raises:
        ProviderConfigError: unknown provider without config, bad transport, unsupported auth source,
            a secret in config, malformed timeout variables, a missing key under ``require_credential``.
    """
    defn = builtin_provider(ref.provider, ref.endpoint)
    over = _provider_overrides(config, ref, defn.legacy_id if defn else None)
    if defn is None and not ("transport" in over and "base_url" in over):
        raise ProviderConfigError(
            f"unknown provider {ref.provider}@{ref.endpoint}: not in the built-in catalog; "
            "configure its transport and base_url (%config HolonNB.providers, or "
            "$HOLON_NB_PROVIDERS; %config logs why it refused a value)"
        )
    transport = over.get("transport") or defn.transport  # type: ignore[union-attr]
    if transport not in TRANSPORTS:
        raise ProviderConfigError(f"transport {transport!r} is not one of {sorted(TRANSPORTS)}")
    claude_env = _claude_settings_env(environ, claude_settings) if ref.provider == "anthropic" else {}
    base_url = over.get("base_url")
    if not base_url and defn is not None:
        _, base_url = _pick(environ, defn.base_url_envs)
        if base_url is None and ref.provider == "anthropic":
            _, base_url = _pick(claude_env, defn.base_url_envs)
        base_url = base_url or defn.default_base_url
    elif not base_url:
        base_url = ""
    auth_kind, key, key_env = _auth(
        defn.key_envs if defn else (), transport, over, environ, claude_env, ref.provider, require_credential
    )
    local = bool(over.get("local_tolerances", defn.local if defn else False))
    contract = over.get("schema_contract", "relaxed")
    if contract not in ("relaxed", "strict"):
        raise ProviderConfigError(f"schema_contract {contract!r} must be relaxed or strict")
    resolved = ResolvedProvider(
        ref=ref,
        transport=transport,
        base_url=str(base_url).rstrip("/"),
        auth_kind=auth_kind,
        api_key=key,
        key_env=key_env,
        local_tolerances=local,
        send_prompt_cache_key=bool(over.get("send_prompt_cache_key", not local)),
        send_strict_flag=bool(over.get("send_strict_flag", True)),
        schema_contract=contract,
        stream=bool(over.get("stream", False)),
        reasoning_effort=over.get("reasoning_effort"),
        max_output_tokens=int(over.get("max_output_tokens", 8192)),
        **timeouts_from_env(environ),
    )
    return replace(resolved, extra_secrets=(key,) if key else ())
