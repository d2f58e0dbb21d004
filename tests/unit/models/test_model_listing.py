"""ListModelProviders and ListProviderModels through Runtime.call (agents spec §5.19–§5.20, cases 69–70).

Providers are configured through the environment only (``HOLON_NB_PROVIDERS`` and key
variables), never with a real secret or the network.
"""

from __future__ import annotations

import json

import pytest
from _support import err, ok

from holon_nb.runtime.models._catalog import PROVIDERS_ENV, ModelCatalogService, builtin_catalog

SECRET = "sk-test-0123456789abcdef"


URL = "http://127.0.0.1:9/v1"  # never contacted: listing makes no request


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No built-in provider configured: every key, base URL and lineage variable removed, and a HOME
    without ``.claude/settings.json`` (whose ``env`` object would configure anthropic)."""
    for p in builtin_catalog():
        for name in (*p.key_envs, *p.base_url_envs):
            monkeypatch.delenv(name, raising=False)
    for name in ("HOLON_MODEL", "HOLON_MODEL_FALLBACKS", PROVIDERS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home-without-settings"))
    return monkeypatch


def _configure(monkeypatch, providers: dict) -> None:
    monkeypatch.setenv(PROVIDERS_ENV, json.dumps(providers))


@pytest.fixture
def three(clean_env):
    """Case 70's providers: ok (available), slow (degraded), dead (unavailable)."""
    _configure(
        clean_env,
        {
            "ok": {
                "transport": "openai_chat_completions",
                "base_url": URL,
                "auth": {"env": "OK_API_KEY"},
                "models": ["m1", "m2"],
            },
            "slow": {
                "transport": "anthropic_messages",
                "base_url": URL,
                "auth": {"env": "SLOW_API_KEY"},
                "models": ["fast", {"id": "big", "enabled": False}],
            },
            "dead": {
                "transport": "openai_responses",
                "base_url": URL,
                "auth": {"env": "DEAD_API_KEY"},
                "models": ["x"],
            },
        },
    )
    clean_env.setenv("OK_API_KEY", SECRET)
    clean_env.setenv("SLOW_API_KEY", SECRET)
    clean_env.delenv("DEAD_API_KEY", raising=False)
    return clean_env


# ------------------------------------------------------------------ case 70


def test_case_70_unavailable_providers_are_dropped_degraded_kept(rt, three):
    result = rt.call("ListModelProviders", {})
    res = ok(result)
    assert res["include_unavailable"] is False
    assert [p["id"] for p in res["providers"]] == ["ok", "slow"]
    by_id = {p["id"]: p for p in res["providers"]}
    assert by_id["ok"]["availability"] == "available" and by_id["ok"]["model_count"] == 2
    assert by_id["slow"]["availability"] == "degraded"
    assert by_id["ok"]["credential_configured"] is True and by_id["ok"]["provider_source"] == "config"

    everything = ok(rt.call("ListModelProviders", {"include_unavailable": True}))
    by_id = {p["id"]: p for p in everything["providers"]}
    assert everything["include_unavailable"] is True
    assert {"ok", "slow", "dead"} <= set(by_id)
    assert by_id["dead"]["availability"] == "unavailable" and by_id["dead"]["credential_configured"] is False
    assert {p["availability"] for p in everything["providers"]} == {"available", "degraded", "unavailable"}
    # built-ins with no key are listed only on request
    assert by_id["openai"]["availability"] == "unavailable"


def test_secrets_never_appear(rt, three):
    for call in (
        ("ListModelProviders", {"include_unavailable": True}),
        ("ListProviderModels", {"provider": "ok", "include_unavailable": True}),
    ):
        result = rt.call(*call)
        ok(result)
        assert SECRET not in json.dumps(result.envelope) and SECRET not in result.full_receipt
        assert "OK_API_KEY" not in json.dumps(result.envelope)  # not even where the key lives


def test_key_set_in_a_cell_counts_at_the_next_call(rt, clean_env):
    ids = lambda: [p["id"] for p in ok(rt.call("ListModelProviders", {}))["providers"]]  # noqa: E731
    assert "openai" not in ids()
    clean_env.setenv("OPENAI_API_KEY", SECRET)
    assert "openai" in ids()
    clean_env.setenv("OPENAI_API_KEY", "   ")  # blank is not configured
    assert "openai" not in ids()


def test_keyless_local_presets_need_a_preset(rt, clean_env):
    everything = {p["id"]: p for p in ok(rt.call("ListModelProviders", {"include_unavailable": True}))["providers"]}
    assert everything["ollama"]["availability"] == "unavailable"
    assert everything["ollama"]["credential_source"] == "none"
    assert not ok(rt.call("ListModelProviders", {}))["providers"]  # clean machine: nothing usable
    clean_env.setenv("HOLON_OLLAMA_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("HOLON_MODEL", "vllm/Qwen/Qwen3-8B")
    shown = {p["id"]: p for p in ok(rt.call("ListModelProviders", {}))["providers"]}
    assert set(shown) == {"ollama", "vllm"}
    assert shown["vllm"]["default_model"] == "vllm/Qwen/Qwen3-8B" and shown["vllm"]["model_count"] == 1
    assert "default_model" not in shown["ollama"] and shown["ollama"]["model_count"] == 0
    models = ok(rt.call("ListProviderModels", {"provider": "vllm"}))["models"]
    assert [(m["id"], m["model_ref"], m["metadata_source"]) for m in models] == [
        ("Qwen/Qwen3-8B", "vllm/Qwen/Qwen3-8B", "unknown_fallback")
    ]


# ------------------------------------------------------------------ case 69 and ListProviderModels


def test_case_69_blank_provider_is_invalid_input(rt, clean_env):
    e = err(rt.call("ListProviderModels", {"provider": "  "}), "invalid_tool_input")
    assert "non-empty provider" in e["message"]
    assert "ListModelProviders" in e["recovery_hint"]
    assert e["details"]["field"] == "provider"


def test_case_69_unknown_provider_is_an_empty_page(rt, clean_env):
    result = rt.call("ListProviderModels", {"provider": "nope"})
    res = ok(result)
    assert res["models"] == [] and res["returned"] == 0 and res["provider"] == "nope"
    assert "next_cursor" in res and res["next_cursor"] is None  # always serialized
    assert json.loads(result.full_receipt)["result"]["next_cursor"] is None


def test_unavailable_models_only_on_request(rt, three):
    assert [m["id"] for m in ok(rt.call("ListProviderModels", {"provider": "slow"}))["models"]] == ["fast"]
    everything = ok(rt.call("ListProviderModels", {"provider": "slow", "include_unavailable": True}))["models"]
    assert [(m["id"], m["availability"], m["selectable"], m.get("unavailable_reason")) for m in everything] == [
        ("big", "unavailable", False, "disabled_by_config"),
        ("fast", "available", True, None),
    ]
    assert ok(rt.call("ListProviderModels", {"provider": "dead"}))["models"] == []
    dead = ok(rt.call("ListProviderModels", {"provider": "dead", "include_unavailable": True}))["models"]
    assert [(m["model_ref"], m["unavailable_reason"]) for m in dead] == [("dead/x", "credential_missing")]


def test_paging_follows_the_cursor(rt, clean_env):
    _configure(
        clean_env,
        {
            "many": {
                "transport": "openai_chat_completions",
                "base_url": URL,
                "auth": {"source": "none"},
                "models": [f"m{i}" for i in range(5)],
            }
        },
    )
    first = ok(rt.call("ListProviderModels", {"provider": "many", "limit": 2}))
    assert [m["id"] for m in first["models"]] == ["m0", "m1"]
    assert first["limit"] == 2 and first["returned"] == 2 and first["next_cursor"] == "many/m1"
    second = ok(rt.call("ListProviderModels", {"provider": "many", "limit": 2, "cursor": first["next_cursor"]}))
    assert [m["id"] for m in second["models"]] == ["m2", "m3"] and second["next_cursor"] == "many/m3"
    last = ok(rt.call("ListProviderModels", {"provider": "many", "limit": 2, "cursor": "many/m3"}))
    assert [m["id"] for m in last["models"]] == ["m4"] and last["next_cursor"] is None
    exact = ok(rt.call("ListProviderModels", {"provider": "many", "limit": 5}))
    assert exact["returned"] == 5 and exact["next_cursor"] is None
    restart = ok(rt.call("ListProviderModels", {"provider": "many", "limit": 2, "cursor": "many/zzz"}))
    assert [m["id"] for m in restart["models"]] == ["m0", "m1"]


@pytest.mark.parametrize("limit, expected", [(0, 1), (None, 100), (10_000, 500), ("3", 3)])
def test_limit_is_clamped(rt, clean_env, limit, expected):
    res = ok(rt.call("ListProviderModels", {"provider": "nope", "limit": limit}))
    assert res["limit"] == expected


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"include_unavailable": "maybe"}, "include_unavailable"),
        ({"include_unavailable": None}, "include_unavailable"),
        ({"include_unavailable": 1}, "include_unavailable"),
        ({"colour": "red"}, "unknown field `colour`"),
    ],
)
def test_list_model_providers_rejects_bad_flags(rt, clean_env, args, fragment):
    e = err(rt.call("ListModelProviders", args), "invalid_tool_input")
    assert fragment in e["details"]["parse_error"]


def test_provider_matches_group_route_and_family(rt, clean_env):
    _configure(
        clean_env,
        {
            "providers": {
                "acme@coding": {
                    "transport": "openai_chat_completions",
                    "base_url": URL,
                    "auth": {"env": "ACME_KEY"},
                    "models": ["c1"],
                }
            }
        },
    )
    clean_env.setenv("ACME_KEY", SECRET)
    clean_env.setenv("BYTEPLUS_API_KEY", SECRET)
    clean_env.setenv("HOLON_MODEL", "byteplus-coding/seed-1")  # legacy alias of byteplus@coding
    providers = {p["id"]: p for p in ok(rt.call("ListModelProviders", {}))["providers"]}
    entry = providers["acme:coding"]
    assert (entry["provider_family"], entry["endpoint"], entry["route_provider"]) == ("acme", "coding", "acme@coding")
    for name in ("acme:coding", "acme@coding", "acme"):
        models = ok(rt.call("ListProviderModels", {"provider": name}))["models"]
        assert [m["model_ref"] for m in models] == ["acme@coding/c1"], name
    bp = providers["byteplus:coding"]
    assert bp["route_provider"] == "byteplus-coding" and bp["default_model"] == "byteplus@coding/seed-1"
    for name in ("byteplus:coding", "byteplus-coding", "byteplus"):
        models = ok(rt.call("ListProviderModels", {"provider": name}))["models"]
        assert [m["model_ref"] for m in models] == ["byteplus@coding/seed-1"], name
    assert providers["byteplus"]["model_count"] == 0  # the default endpoint is another provider


def test_malformed_provider_config_is_ignored_not_fatal(rt, clean_env):
    clean_env.setenv(PROVIDERS_ENV, "{not json")
    assert ok(rt.call("ListModelProviders", {}))["providers"] == []
    _configure(
        clean_env,
        {
            "weird": {"transport": "carrier_pigeon", "base_url": URL},
            "Bad Id": {"transport": "openai_chat_completions", "base_url": URL},
            "nourl": {"transport": "openai_chat_completions", "models": ["a"]},
            "fine": {
                "transport": "openai_chat_completions",
                "base_url": URL,
                "auth": {"source": "none"},
                "models": ["a"],
            },
        },
    )
    assert [p["id"] for p in ok(rt.call("ListModelProviders", {}))["providers"]] == ["fine"]
    everything = {p["id"] for p in ok(rt.call("ListModelProviders", {"include_unavailable": True}))["providers"]}
    assert "nourl" in everything and not {"weird", "Bad Id"} & everything
    nourl = ok(rt.call("ListProviderModels", {"provider": "nourl", "include_unavailable": True}))["models"]
    assert [m["unavailable_reason"] for m in nourl] == ["provider_config_error"]  # a custom provider needs base_url


def test_service_reads_an_injected_environment():
    svc = ModelCatalogService(environ={"OPENAI_API_KEY": SECRET})
    openai = next(p for p in svc.providers() if p["id"] == "openai")
    assert openai["availability"] == "available" and openai["transport"] == "openai_responses"
    models = svc.provider_models("openai")
    assert models and all(m["selectable"] and m["model_ref"].startswith("openai/") for m in models)
    assert [m["model_ref"] for m in models] == sorted(m["model_ref"] for m in models)
    assert SECRET not in json.dumps(svc.providers()) + json.dumps(models)
