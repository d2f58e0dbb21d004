"""Model refs (turn-loop spec §2.2, case 29) and the provider catalog / configuration resolution."""

from __future__ import annotations

import json

import pytest

from holon_nb.providers._catalog import (
    BUILTIN_PROVIDERS,
    ProviderConfigError,
    base_url_env_name,
    builtin_provider,
    resolve_provider,
    timeouts_from_env,
)
from holon_nb.providers._refs import ModelRefError, lineage_refs_from_env, parse_model_list, parse_model_ref

# ------------------------------------------------------------------ refs (case 29)


@pytest.mark.parametrize(
    "text, parts, compact",
    [
        (
            "openrouter/anthropic/claude-sonnet-4",
            ("openrouter", "default", "anthropic/claude-sonnet-4"),
            "openrouter/anthropic/claude-sonnet-4",
        ),
        ("byteplus@coding/seed-1", ("byteplus", "coding", "seed-1"), "byteplus@coding/seed-1"),
        ("vllm/Qwen/Qwen3-8B", ("vllm", "default", "Qwen/Qwen3-8B"), "vllm/Qwen/Qwen3-8B"),
        ("ollama/qwen3:8b", ("ollama", "default", "qwen3:8b"), "ollama/qwen3:8b"),
        ("openai@default/gpt-5.4", ("openai", "default", "gpt-5.4"), "openai/gpt-5.4"),
    ],
)
def test_case29_parse_model_refs(text, parts, compact):
    ref = parse_model_ref(text)
    assert (ref.provider, ref.endpoint, ref.model) == parts
    assert ref.compact == compact
    assert ref.canonical == f"{parts[0]}@{parts[1]}/{parts[2]}"
    assert parse_model_ref(ref.canonical) == ref


def test_legacy_alias_maps_to_builtin_endpoint():
    assert parse_model_ref("byteplus-coding/seed-1").canonical == "byteplus@coding/seed-1"
    assert parse_model_ref("dashscope-token-plan/qwen").canonical == "dashscope@token-plan/qwen"


@pytest.mark.parametrize("bad", ["", "gpt-5.4", "/model", "openai/", "OpenAI/gpt", "open ai/gpt", "a@/m", "@e/m"])
def test_malformed_refs_raise(bad):
    with pytest.raises(ModelRefError):
        parse_model_ref(bad)


def test_model_list_comma_and_json():
    assert parse_model_list("a/x, b/y ,,") == ["a/x", "b/y"]
    assert parse_model_list('["a/x", "b/y"]') == ["a/x", "b/y"]
    with pytest.raises(ModelRefError):
        parse_model_list('["a/x", 1]')


def test_lineage_from_env_dedupes_and_can_disable_fallbacks():
    env = {
        "HOLON_MODEL": "openai/gpt-5.4",
        "HOLON_MODEL_FALLBACKS": '["anthropic/claude-sonnet-4-6", "openai@default/gpt-5.4", "vllm/q"]',
    }
    assert [r.canonical for r in lineage_refs_from_env(env)] == [
        "openai@default/gpt-5.4",
        "anthropic@default/claude-sonnet-4-6",
        "vllm@default/q",
    ]
    assert [r.compact for r in lineage_refs_from_env({**env, "HOLON_DISABLE_PROVIDER_FALLBACK": "true"})] == [
        "openai/gpt-5.4"
    ]
    assert lineage_refs_from_env(env, model="ollama/m")[0].compact == "ollama/m"
    with pytest.raises(ModelRefError):
        lineage_refs_from_env({})


# ------------------------------------------------------------------ catalog table (§2.2)


@pytest.mark.parametrize(
    "pid, transport, base, keys, base_envs",
    [
        (
            "openai",
            "openai_responses",
            "https://api.openai.com/v1",
            ("OPENAI_API_KEY",),
            ("HOLON_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
        ),
        (
            "anthropic",
            "anthropic_messages",
            "https://api.anthropic.com",
            ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"),
            ("ANTHROPIC_BASE_URL",),
        ),
        (
            "gemini",
            "gemini_generate_content",
            "https://generativelanguage.googleapis.com/v1beta",
            ("GEMINI_API_KEY",),
            ("HOLON_GEMINI_BASE_URL",),
        ),
        (
            "openrouter",
            "openai_chat_completions",
            "https://openrouter.ai/api/v1",
            ("OPENROUTER_API_KEY",),
            ("HOLON_OPENROUTER_BASE_URL",),
        ),
        (
            "deepseek",
            "anthropic_messages",
            "https://api.deepseek.com/anthropic",
            ("DEEPSEEK_API_KEY",),
            ("HOLON_DEEPSEEK_BASE_URL",),
        ),
        ("vllm", "openai_chat_completions", "http://127.0.0.1:8000/v1", (), ("HOLON_VLLM_BASE_URL",)),
        (
            "litellm",
            "openai_chat_completions",
            "http://localhost:4000",
            ("LITELLM_API_KEY",),
            ("HOLON_LITELLM_BASE_URL",),
        ),
        ("ollama", "openai_chat_completions", "http://127.0.0.1:11434/v1", (), ("HOLON_OLLAMA_BASE_URL",)),
        ("llamacpp", "openai_chat_completions", "http://127.0.0.1:8080/v1", (), ("HOLON_LLAMACPP_BASE_URL",)),
    ],
)
def test_builtin_table(pid, transport, base, keys, base_envs):
    d = builtin_provider(pid)
    assert d is not None
    assert (d.transport, d.default_base_url, d.key_envs, d.base_url_envs) == (transport, base, keys, base_envs)


def test_catalog_has_the_upstream_table_and_unique_routes():
    routes = [(d.provider, d.endpoint) for d in BUILTIN_PROVIDERS]
    assert len(routes) == len(set(routes))
    assert len(BUILTIN_PROVIDERS) >= 40
    assert {"mistral", "together", "xai", "zai"} <= {d.provider for d in BUILTIN_PROVIDERS}
    assert builtin_provider("dashscope", "token-plan") is not None


def test_base_url_env_name():
    assert base_url_env_name("vercel-ai-gateway") == "HOLON_VERCEL_AI_GATEWAY_BASE_URL"
    assert base_url_env_name("byteplus-coding") == "HOLON_BYTEPLUS_CODING_BASE_URL"


def test_resolve_env_key_and_base_override():
    env = {"OPENROUTER_API_KEY": "or-secret-123456", "HOLON_OPENROUTER_BASE_URL": "http://proxy:9/api/v1/"}
    r = resolve_provider(parse_model_ref("openrouter/anthropic/claude-sonnet-4"), env)
    assert (r.transport, r.base_url, r.auth_kind, r.api_key, r.key_env) == (
        "openai_chat_completions",
        "http://proxy:9/api/v1",
        "bearer",
        "or-secret-123456",
        "OPENROUTER_API_KEY",
    )
    assert "or-secret-123456" not in repr(r)
    assert r.send_prompt_cache_key and not r.local_tolerances


def test_openai_base_url_precedence():
    ref = parse_model_ref("openai/gpt-5.4")
    both = {"HOLON_OPENAI_BASE_URL": "http://a/v1", "OPENAI_BASE_URL": "http://b/v1"}
    assert resolve_provider(ref, both).base_url == "http://a/v1"
    assert resolve_provider(ref, {"OPENAI_BASE_URL": "http://b/v1"}).base_url == "http://b/v1"
    assert resolve_provider(ref, {}).base_url == "https://api.openai.com/v1"
    assert resolve_provider(ref, {}).auth_kind == "none"


def test_local_presets_turn_tolerances_on():
    r = resolve_provider(parse_model_ref("llamacpp/default"), {})
    assert r.local_tolerances and not r.send_prompt_cache_key and r.send_strict_flag and r.auth_kind == "none"


def test_anthropic_auth_token_is_bearer_and_api_key_alone_is_x_api_key(tmp_path):
    ref = parse_model_ref("anthropic/claude-sonnet-4-6")
    both = {"ANTHROPIC_AUTH_TOKEN": "tok-1234567890", "ANTHROPIC_API_KEY": "key-1234567890"}
    assert (resolve_provider(ref, both).auth_kind, resolve_provider(ref, both).api_key) == ("bearer", "tok-1234567890")
    only_key = resolve_provider(ref, {"ANTHROPIC_API_KEY": "key-1234567890"})
    assert (only_key.auth_kind, only_key.api_key) == ("x_api_key", "key-1234567890")


def test_anthropic_falls_back_to_claude_settings(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": "from-settings-123", "ANTHROPIC_BASE_URL": "http://claude.local"}})
    )
    r = resolve_provider(parse_model_ref("anthropic/claude-sonnet-4-6"), {"HOME": str(tmp_path)})
    assert (r.api_key, r.base_url, r.auth_kind) == ("from-settings-123", "http://claude.local", "bearer")
    env = {"HOME": str(tmp_path), "ANTHROPIC_AUTH_TOKEN": "env-wins-12345"}
    assert resolve_provider(parse_model_ref("anthropic/x"), env).api_key == "env-wins-12345"
    # other providers never read it
    assert resolve_provider(parse_model_ref("deepseek/x"), {"HOME": str(tmp_path)}).api_key is None


def test_custom_provider_from_config():
    config = {
        "providers": {
            "mybox": {
                "transport": "openai_chat_completions",
                "base_url": "http://box:1234",
                "auth": {"source": "env", "env": "MYBOX_TOKEN"},
                "local_tolerances": True,
                "schema_contract": "strict",
            }
        }
    }
    r = resolve_provider(parse_model_ref("mybox/model-a"), {"MYBOX_TOKEN": "box-secret-99"}, config)
    assert (r.transport, r.base_url, r.api_key, r.local_tolerances, r.schema_contract) == (
        "openai_chat_completions",
        "http://box:1234",
        "box-secret-99",
        True,
        "strict",
    )


@pytest.mark.parametrize(
    "config, fragment",
    [
        ({}, "unknown provider"),
        ({"providers": {"mybox": {"transport": "carrier_pigeon", "base_url": "http://x"}}}, "transport"),
        (
            {"providers": {"mybox": {"transport": "openai_responses", "base_url": "http://x", "api_key": "s"}}},
            "secrets never live in config",
        ),
        (
            {
                "providers": {
                    "mybox": {
                        "transport": "openai_responses",
                        "base_url": "http://x",
                        "auth": {"source": "credential_process"},
                    }
                }
            },
            "not supported",
        ),
    ],
)
def test_config_errors(config, fragment):
    with pytest.raises(ProviderConfigError, match=fragment):
        resolve_provider(parse_model_ref("mybox/m"), {}, config)


def test_timeouts_from_env():
    assert timeouts_from_env({}) == {"http_timeout_s": 300.0, "body_timeout_s": 300.0, "stream_idle_timeout_ms": 300000}
    t = timeouts_from_env({"HOLON_PROVIDER_HTTP_TIMEOUT_SECS": "12", "HOLON_PROVIDER_STREAM_IDLE_TIMEOUT_MS": "250"})
    assert t == {"http_timeout_s": 12.0, "body_timeout_s": 12.0, "stream_idle_timeout_ms": 250}
    with pytest.raises(ProviderConfigError):
        timeouts_from_env({"HOLON_PROVIDER_HTTP_TIMEOUT_SECS": "soon"})
