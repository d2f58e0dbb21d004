"""Failure classification tables (turn-loop spec §2.4) and the secret rule for diagnostics (§2.3)."""

from __future__ import annotations

import pytest

from holon_nb.providers._errors import (
    ToolSchemaRejected,
    classify_chat_error_body,
    classify_exception,
    classify_responses_failure_code,
    classify_status,
    find_rejected_tool,
    format_failure,
    sanitize_url,
    status_error,
)
from holon_nb.providers.base import ProviderTransportError
from holon_nb.render._scrubbing import Scrubber


@pytest.mark.parametrize(
    "status, expected",
    [
        (429, ("rate_limited", "retryable")),
        (401, ("auth_error", "fail_fast")),
        (403, ("auth_error", "fail_fast")),
        (500, ("server_error", "retryable")),
        (502, ("server_error", "retryable")),
        (503, ("server_error", "retryable")),
        (504, ("server_error", "retryable")),
        (529, ("server_error", "retryable")),
        (400, ("contract_error", "fail_fast")),
        (404, ("contract_error", "fail_fast")),
        (408, ("contract_error", "fail_fast")),
        (409, ("contract_error", "fail_fast")),
        (413, ("contract_error", "fail_fast")),
        (422, ("contract_error", "fail_fast")),
        (302, ("unknown", "fail_fast")),
        (600, ("unknown", "fail_fast")),
    ],
)
def test_status_table(status, expected):
    assert classify_status(status) == expected


@pytest.mark.parametrize(
    "status, body, expected",
    [
        (
            429,
            {"error": {"code": "insufficient_quota", "message": "pay"}},
            ("auth_error", "fail_fast", "insufficient_quota"),
        ),
        (400, {"error": {"code": "rate_limit_exceeded"}}, ("rate_limited", "retryable", "rate_limit_exceeded")),
        (
            400,
            {"error": {"code": "context_length_exceeded"}},
            ("contract_error", "fail_fast", "context_length_exceeded"),
        ),
        (500, {"error": {"code": "invalid_api_key"}}, ("auth_error", "fail_fast", "invalid_api_key")),
        (400, {"error": {"code": "service_unavailable"}}, ("server_error", "retryable", "service_unavailable")),
        (400, {"error": {"type": "rate_limit_error"}}, ("rate_limited", "retryable", None)),
        (500, {"error": {"type": "authentication_error"}}, ("auth_error", "fail_fast", None)),
        # ⚑ unrecognised body → the status table (upstream: contract_error) — case 24
        (503, {"error": {"message": "busy"}}, ("server_error", "retryable", None)),
        (418, "not json at all", ("contract_error", "fail_fast", None)),
    ],
)
def test_chat_body_classification(status, body, expected):
    import json

    text = body if isinstance(body, str) else json.dumps(body)
    assert classify_chat_error_body(status, text) == expected


@pytest.mark.parametrize(
    "code, kind",
    [
        ("rate_limit_exceeded", "rate_limited"),
        ("server_error", "server_error"),
        ("service_unavailable", "server_error"),
        ("server_is_overloaded", "server_error"),
        ("slow_down", "server_error"),
        ("insufficient_quota", "auth_error"),
        ("context_length_exceeded", "contract_error"),
        ("invalid_prompt", "contract_error"),
        (None, "contract_error"),
    ],
)
def test_responses_failure_codes(code, kind):
    assert classify_responses_failure_code(code)[0] == kind


@pytest.mark.parametrize(
    "url, clean",
    [
        ("https://user:secret@example.com/v1/responses?api_key=token#frag", "https://example.com/v1/responses"),
        ("user:secret@example.com/v1/responses?api_key=token#frag", "example.com/v1/responses"),
        ("http://127.0.0.1:8000/v1/chat/completions", "http://127.0.0.1:8000/v1/chat/completions"),
    ],
)
def test_sanitize_url(url, clean):
    assert sanitize_url(url) == clean


def test_status_error_never_carries_the_body_and_scrubs_the_provider_message():
    secret = "sk-live-abcdefghijklmnop"
    body = f'{{"error": {{"message": "key {secret} is not valid for org 42", "code": "invalid_api_key"}}}}'
    err = status_error(
        "openai responses request",
        401,
        body,
        provider="openai",
        model_ref="openai@default/m",
        url="https://u:p@api.example/v1/responses?key=zz",
        scrubber=Scrubber({}, extra=[secret]),
    )
    assert str(err) == "openai responses request with status 401 Unauthorized"
    assert secret not in str(err) and "org 42" not in str(err)
    assert err.diagnostics["provider_message"] == "key [redacted] is not valid for org 42"
    assert err.diagnostics["url"] == "https://api.example/v1/responses"
    assert (err.kind, err.disposition, err.status, err.code) == ("auth_error", "fail_fast", 401, None)


def test_schema_rejection_names_the_tool_or_index():
    body = '{"error": {"message": "Invalid schema for function \'WaitFor\': extra required key"}}'
    err = status_error("ctx", 400, body, provider="p", model_ref="m", url=None, tool_names=("GetAgent", "WaitFor"))
    assert isinstance(err, ToolSchemaRejected) and err.tool_name == "WaitFor"
    assert (err.kind, err.disposition) == ("contract_error", "fail_fast")
    assert "Invalid schema" not in str(err) and "WaitFor" in str(err)
    assert find_rejected_tool("bad schema at tools[1].function.parameters", ["GetAgent", "WaitFor"]) == "WaitFor"
    assert find_rejected_tool("GetAgentX is odd", ["GetAgent"]) is None
    plain = status_error(
        "ctx", 400, '{"error": {"message": "nope"}}', provider="p", model_ref="m", url=None, tool_names=("WaitFor",)
    )
    assert not isinstance(plain, ToolSchemaRejected)


class ReadTimeout(Exception):
    pass


class ConnectError(Exception):
    pass


class RemoteProtocolError(Exception):
    pass


@pytest.mark.parametrize(
    "exc, kind",
    [
        (ReadTimeout("read timed out"), "timeout"),
        (TimeoutError(), "timeout"),
        (ConnectError("[Errno 111] Connection refused"), "connection"),
        (ConnectionResetError(), "connection"),
        (
            RemoteProtocolError(
                "peer closed connection without sending complete message body (incomplete chunked read)"
            ),
            "connection",
        ),
        (ValueError("something else"), "unknown"),
    ],
)
def test_exception_classification(exc, kind):
    err = classify_exception(
        exc, stage="response_body", context="ctx", provider="p", model_ref="m", url="http://a:b@h/x?k=v"
    )
    assert err.kind == kind
    assert err.disposition == ("fail_fast" if kind == "unknown" else "retryable")
    assert err.diagnostics["url"] == "http://h/x" and err.diagnostics["stage"] == "response_body"


def test_format_failure():
    retry = ProviderTransportError("server_error", "boom", status=500)
    assert (
        format_failure("openai@default/m", 3, retry)
        == "openai@default/m: retries_exhausted after 3 attempts (server_error, status=500): boom"
    )
    fast = ProviderTransportError("invalid_response", "bad json")
    assert format_failure("r", 1, fast) == "r: fail_fast (invalid_response): bad json"
    assert format_failure("r", 1, RuntimeError("x")) == "r: fail_fast (unknown): x"
