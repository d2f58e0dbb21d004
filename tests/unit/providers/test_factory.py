"""build_provider / build_lineage (turn-loop spec §2.2): which transport a ref gets, and unsupported transports."""

from __future__ import annotations

import pytest

from holon_nb.providers._anthropic_messages import AnthropicMessagesProvider
from holon_nb.providers._catalog import ProviderConfigError
from holon_nb.providers._factory import UnsupportedTransportProvider, build_lineage, build_provider
from holon_nb.providers._lineage import LineageFailed
from holon_nb.providers._openai_chat import OpenAIChatProvider
from holon_nb.providers._openai_responses import OpenAIResponsesProvider
from holon_nb.providers._refs import ModelRefError
from holon_nb.providers.base import Provider, ProviderTransportError, TurnRequest, UserText

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "ref, cls, url",
    [
        ("openai/gpt-5.4", OpenAIResponsesProvider, "https://api.openai.com/v1/responses"),
        ("anthropic/claude-sonnet-4-6", AnthropicMessagesProvider, "https://api.anthropic.com/v1/messages"),
        ("deepseek/deepseek-chat", AnthropicMessagesProvider, "https://api.deepseek.com/anthropic/v1/messages"),
        ("openrouter/anthropic/claude-sonnet-4", OpenAIChatProvider, "https://openrouter.ai/api/v1/chat/completions"),
        ("litellm/gpt", OpenAIChatProvider, "http://localhost:4000/v1/chat/completions"),
        ("vllm/Qwen/Qwen3-8B", OpenAIChatProvider, "http://127.0.0.1:8000/v1/chat/completions"),
        ("ollama/qwen3:8b", OpenAIChatProvider, "http://127.0.0.1:11434/v1/chat/completions"),
        ("llamacpp/default", OpenAIChatProvider, "http://127.0.0.1:8080/v1/chat/completions"),
        ("xai/grok", OpenAIResponsesProvider, "https://api.x.ai/v1/responses"),
    ],
)
async def test_transport_per_ref(ref, cls, url):
    p = build_provider(ref, environ={})
    try:
        assert isinstance(p, cls) and isinstance(p, Provider)
        assert p.url == url and "@" in p.route_ref
        assert p.prompt_capabilities() >= {"full_request_only"}
        assert p.resolved_image_input_support() is None and p.context_management_policy() is None
        with pytest.raises(ProviderTransportError):
            await p.generate_image({})
    finally:
        await p.aclose()


async def test_base_url_env_override_reaches_the_transport():
    p = build_provider("vllm/q", environ={"HOLON_VLLM_BASE_URL": "http://gpu-box:9000/v1"})
    try:
        assert p.url == "http://gpu-box:9000/v1/chat/completions"
    finally:
        await p.aclose()


@pytest.mark.parametrize("ref", ["gemini/gemini-2.5-pro", "openai-codex/gpt-5.4"])
async def test_unsupported_transports_fail_fast_in_one_attempt(ref):
    p = build_provider(ref, environ={"GEMINI_API_KEY": "g-0123456789"})
    assert isinstance(p, UnsupportedTransportProvider)
    with pytest.raises(ProviderTransportError) as info:
        await p.complete_turn(TurnRequest(conversation=(UserText("x"),)))
    assert (info.value.kind, info.value.disposition) == ("unsupported_transport", "fail_fast")
    lin = build_lineage(ref, environ={})
    with pytest.raises(LineageFailed) as info:
        await lin.complete_turn(TurnRequest(conversation=(UserText("x"),)))
    assert len(info.value.timeline.attempts) == 1 and "fail_fast (unsupported_transport)" in str(info.value)


def test_build_errors():
    with pytest.raises(ModelRefError):
        build_provider("no-slash", environ={})
    with pytest.raises(ProviderConfigError):
        build_provider("nosuchprovider/m", environ={})
    with pytest.raises(ModelRefError):
        build_lineage(environ={})


def test_sdk_imports_stay_in_transport_modules():
    import pathlib

    import holon_nb.providers as pkg

    root = pathlib.Path(pkg.__file__).parent
    allowed = {"_openai_client.py", "_openai_responses.py", "_openai_chat.py", "_anthropic_messages.py"}
    for path in root.glob("*.py"):
        text = path.read_text()
        uses_sdk = any(
            line.startswith(("import openai", "import anthropic", "from openai", "from anthropic"))
            for line in text.splitlines()
        )
        if uses_sdk:
            assert path.name in allowed, path.name
