"""Custom providers from configuration reach the turn loop (turn-loop spec §2.2): an id the built-in catalog
lacks, configured in ``$HOLON_NB_PROVIDERS`` or ``rt.settings.providers`` (``%config HolonNB.providers``), is
both listed and used by a turn; malformed configuration is a clear error before any request is sent."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from unit.providers.payloads import chat_text
from unit.providers.servers import Reply, WireServer

from holon_nb.providers._catalog import ProviderConfigError, check_provider_settings
from holon_nb.runtime import Runtime


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer() as srv:
        yield srv


def _lab(wire: WireServer, **extra: object) -> dict[str, object]:
    return {
        "transport": "openai_chat_completions",
        "base_url": wire.base_url + "/v1",
        "auth": {"source": "env", "kind": "bearer_token", "env": "LAB_KEY"},
        **extra,
    }


def test_a_provider_configured_in_the_environment_runs_a_turn(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_NB_PROVIDERS", json.dumps({"lab": _lab(wire)}))
    monkeypatch.setenv("LAB_KEY", "lab-secret-key-0001")
    wire.script(Reply(json=chat_text("hello from the lab")))
    r = rt.run_turn("hi", model="lab/qwen3:8b")
    assert r.terminal == "completed" and r.final_text == "hello from the lab"
    (req,) = wire.requests
    assert req.path == "/v1/chat/completions" and req.json["model"] == "qwen3:8b"
    assert req.headers["authorization"] == "Bearer lab-secret-key-0001"


def test_a_provider_configured_in_settings_is_listed_and_runs_a_turn(
    rt: Runtime, wire: WireServer, monkeypatch
) -> None:
    monkeypatch.delenv("HOLON_NB_PROVIDERS", raising=False)
    monkeypatch.setenv("LAB_KEY", "lab-secret-key-0002")
    rt.settings = rt.settings.replace(providers={"lab": _lab(wire, models=["qwen3:8b"])})
    listed = rt.call("ListProviderModels", {"provider": "lab"}, raise_on_error=True).result
    assert [m["model_ref"] for m in listed["models"]] == ["lab/qwen3:8b"]
    wire.script(Reply(json=chat_text("configured in settings")))
    r = rt.run_turn("hi", model="lab/qwen3:8b")
    assert r.final_text == "configured in settings" and len(wire.requests) == 1


def test_settings_replace_the_environment_entry_of_the_same_id(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.setenv(
        "HOLON_NB_PROVIDERS",
        json.dumps(
            {
                "lab": {
                    "transport": "openai_chat_completions",
                    "base_url": "http://127.0.0.1:9/v1",
                    "auth": {"source": "none"},
                }
            }
        ),
    )
    rt.settings = rt.settings.replace(providers={"lab": {**_lab(wire), "auth": {"source": "none"}}})
    wire.script(Reply(json=chat_text("settings won")))
    assert rt.run_turn("hi", model="lab/m").final_text == "settings won"


def test_a_built_in_provider_takes_just_a_new_base_url(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.delenv("HOLON_OLLAMA_BASE_URL", raising=False)
    rt.settings = rt.settings.replace(providers={"ollama": {"base_url": wire.base_url + "/v1"}})
    wire.script(Reply(json=chat_text("ollama elsewhere")))
    assert rt.run_turn("hi", model="ollama/llama3").final_text == "ollama elsewhere"
    assert wire.requests[0].json["model"] == "llama3"


@pytest.mark.parametrize(
    "value, needle",
    [
        ("{not json", "HOLON_NB_PROVIDERS is not valid JSON"),
        ('["lab"]', "must be a JSON object of provider id -> settings"),
        ('{"lab": {"base_url": "http://127.0.0.1:9/v1"}}', "give it a transport and a base_url"),
        (
            '{"lab": {"transport": "openai_chat_completions", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-1"}}',
            "secrets never live in config",
        ),
    ],
)
def test_malformed_environment_configuration_fails_the_turn_with_its_reason(
    rt: Runtime, wire: WireServer, monkeypatch, value: str, needle: str
) -> None:
    monkeypatch.setenv("HOLON_NB_PROVIDERS", value)
    with pytest.raises(ProviderConfigError) as info:
        rt.run_turn("hi", model="lab/m")
    assert needle in str(info.value)
    assert wire.requests == []
    # listing keeps working: built-ins stay listed, and a nameable misconfigured entry shows as unavailable
    listed = rt.call("ListModelProviders", {"include_unavailable": True}, raise_on_error=True).result["providers"]
    assert "openai" in {p["id"] for p in listed}
    assert all(p["availability"] == "unavailable" for p in listed if p["id"] == "lab")


@pytest.mark.parametrize(
    "provider_id, settings, needle",
    [
        ("Lab", {"transport": "openai_chat_completions", "base_url": "http://h/v1"}, "is not <id> or <id>@<endpoint>"),
        ("lab@a@b", {"transport": "openai_chat_completions", "base_url": "http://h/v1"}, "is not <id>"),
        ("lab", "http://h/v1", "settings must be a mapping"),
        ("lab", {"transport": "grpc", "base_url": "http://h/v1"}, "transport 'grpc' is not one of"),
        ("ollama", {"base_url": "127.0.0.1:11434"}, "base_url must be an http:// or https:// URL"),
        ("ollama", {"stream": "yes"}, "stream must be true or false"),
        ("ollama", {"bse_url": "http://h/v1"}, "unknown setting 'bse_url'"),
        ("openai", {"auth": {"env": "OPENAI_API_KEY", "token": "sk-live"}}, "secrets never live in config"),
        ("openai", {"auth": {"source": "keychain"}}, "auth.source 'keychain' is not one of"),
        ("openai", {"auth": {"env": 3}}, "auth.env must name an environment variable"),
        ("openai", {"auth": {"env": "sk-proj-PASTEDKEY123456"}}, "auth.env must name an environment variable"),
        ("openai", {"auth": {"env": ["OK_NAME", "has space"]}}, "auth.env must name an environment variable"),
        (
            "lab",
            {"transport": "openai_chat_completions", "base_url": "http://sk-abc:sk-secret@127.0.0.1:8765/v1"},
            "base_url holds credentials",
        ),
        ("ollama", {"models": "llama3"}, "models must be a list"),
    ],
)
def test_check_provider_settings_names_the_problem(provider_id: object, settings: object, needle: str) -> None:
    with pytest.raises(ProviderConfigError) as info:
        check_provider_settings(provider_id, settings)
    assert needle in str(info.value)
    assert "PASTEDKEY" not in str(info.value) and "sk-secret" not in str(info.value)  # never echoed


@pytest.mark.parametrize(
    "provider_id, settings",
    [
        ("lab", {"transport": "openai_chat_completions", "base_url": "http://127.0.0.1:8000/v1"}),
        (
            "lab@eu",
            {
                "transport": "anthropic_messages",
                "base_url": "https://eu.example/anthropic",
                "auth": {"source": "env", "kind": "api_key", "env": ["LAB_EU_KEY", "LAB_KEY"]},
            },
        ),
        ("openai", {"base_url": "https://proxy.example/v1", "stream": True, "models": ["gpt-x"]}),
        ("openrouter", {"send_strict_flag": False, "schema_contract": "strict"}),
    ],
)
def test_check_provider_settings_accepts_valid_entries(provider_id: str, settings: dict) -> None:
    check_provider_settings(provider_id, settings)


def test_a_missing_key_fails_the_turn_before_any_request(rt: Runtime, wire: WireServer, monkeypatch) -> None:
    monkeypatch.delenv("LAB_KEY", raising=False)
    rt.settings = rt.settings.replace(providers={"lab": _lab(wire)})
    with pytest.raises(ProviderConfigError, match="no credential for lab: set LAB_KEY in the environment"):
        rt.run_turn("hi", model="lab/m")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("HOLON_OPENAI_BASE_URL", wire.base_url + "/v1")
    with pytest.raises(ProviderConfigError, match="set OPENAI_API_KEY"):
        rt.run_turn("hi", model="openai/gpt-5.4")
    assert wire.requests == []


@pytest.mark.parametrize("fallbacks", ['["openai/gpt-5.4"', "openai/gpt-5.4,nonsense", '{"a": 1}'])
def test_a_malformed_fallback_list_fails_the_turn_with_its_reason(
    rt: Runtime, wire: WireServer, monkeypatch, fallbacks: str
) -> None:
    from holon_nb.providers._refs import ModelRefError

    monkeypatch.setenv("HOLON_VLLM_BASE_URL", wire.base_url + "/v1")
    monkeypatch.setenv("HOLON_MODEL_FALLBACKS", fallbacks)
    with pytest.raises(ModelRefError, match="HOLON_MODEL_FALLBACKS: "):
        rt.run_turn("hi", model="vllm/m")
    assert wire.requests == []


def test_a_key_named_by_auth_env_is_scrubbed_whatever_its_variable_is_called(
    rt: Runtime, wire: WireServer, monkeypatch
) -> None:
    monkeypatch.setenv("LAB_CRED", "hunter2-very-secret-cred")
    assert "hunter2" in rt.call("ExecCommand", {"cmd": "echo cred=$LAB_CRED"}).receipt  # not named as a secret yet
    rt.settings = rt.settings.replace(providers={"lab": {**_lab(wire), "auth": {"source": "env", "env": "LAB_CRED"}}})
    shown = rt.call("ExecCommand", {"cmd": "echo cred=$LAB_CRED"})
    assert "hunter2" not in shown.receipt and "cred=[redacted]" in shown.receipt
    assert "hunter2-very-secret-cred" in rt.scrubber().values
    monkeypatch.setenv("HOLON_NB_PROVIDERS", json.dumps({"other": {**_lab(wire), "auth": {"env": "OTHER_CRED"}}}))
    monkeypatch.setenv("OTHER_CRED", "another-long-credential")
    assert "[redacted]" in rt.call("ExecCommand", {"cmd": "echo $OTHER_CRED"}).receipt
