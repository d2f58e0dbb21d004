"""XSearch (workspace spec §11, §15 case 18) against a local server speaking the Responses API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from _support import err, ok
from _web_support import LocalServer, Request

from holon_nb import Runtime
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.tools._spec import Profile

KEY = "xai-test-key-0123456789"
ANSWER = {
    "id": "resp_1",
    "model": "grok-4.3",
    "output": [
        {"type": "x_search_call", "id": "xs_1", "status": "completed"},
        {"type": "x_search_call", "id": "xs_2", "status": "completed"},
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "Holon shipped a release. ",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url": "https://x.com/holon_run/status/1",
                            "title": "post 1",
                            "start_index": 0,
                            "end_index": 10,
                        }
                    ],
                },
                {
                    "type": "output_text",
                    "text": "People liked it.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url": "https://x.com/holon_run/status/1",
                            "start_index": 11,
                            "end_index": 20,
                        },
                        {
                            "type": "url_citation",
                            "url": "https://x.com/someone/status/2",
                            "start_index": 25,
                            "end_index": 40,
                        },
                    ],
                },
            ],
        },
    ],
}


class Responses:
    """A /v1/responses endpoint: records requests, answers from a queue (last answer repeats)."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.answers: list[tuple[int, Any]] = [(200, ANSWER)]

    def __call__(self, req: Request):
        self.requests.append(req)
        status, body = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return status, {"content-type": "application/json", "x-request-id": "req_abc"}, json.dumps(body).encode()

    def body(self, i: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[i].body)


@pytest.fixture
def xai(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> Iterator[Responses]:
    endpoint = Responses()
    with LocalServer({"/v1/responses": endpoint}) as server:
        monkeypatch.setenv("XAI_API_KEY", KEY)
        rt.settings = rt.settings.replace(providers={"xai": {"base_url": server.url("/v1")}})
        yield endpoint


def advertised(rt: Runtime) -> set[str]:
    return {t.name for t in rt.turns.advertised_tools(Profile.PUBLIC_NAMED)}


def test_without_a_credential_it_is_hidden_and_unavailable(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    assert "XSearch" not in advertised(rt) and {"WebFetch", "WebSearch"} <= advertised(rt)
    e = err(rt.call("XSearch", {"query": "holon"}), "x_search_unavailable")
    assert "XAI_API_KEY" in e["message"] + e["recovery_hint"]
    rt.providers.register(
        "scripted@default/scripted",
        ScriptedProvider([Step.tool_use("c1", "XSearch", {"query": "holon"}), Step.text("ok")]),
    )
    turn = rt.run_turn("search X", model="scripted@default/scripted")
    assert turn.tool_calls[0].envelope["error"]["kind"] == "tool_not_exposed_for_round"


def test_disabled_by_config_is_unavailable(rt: Runtime, xai: Responses) -> None:
    assert "XSearch" in advertised(rt)
    rt.settings = rt.settings.replace(x_search={"enabled": False})
    assert "XSearch" not in advertised(rt)
    err(rt.call("XSearch", {"query": "holon"}), "x_search_unavailable")
    assert xai.requests == []


def test_a_search_through_the_responses_api(rt: Runtime, xai: Responses) -> None:
    env = rt.call(
        "XSearch",
        {
            "query": " holon release ",
            "allowed_x_handles": ["@holon_run", " other_1 "],
            "from_date": "2026-01-01",
            "to_date": "2026-02-01",
        },
    ).envelope
    assert env["status"] == "success" and env["summary_text"] == "xAI X search returned 2 citation(s)"
    res = env["result"]
    assert res["text"] == "Holon shipped a release. People liked it."
    assert res["citations"] == [
        {"url": "https://x.com/holon_run/status/1", "title": "post 1", "start_index": 0, "end_index": 10},
        {"url": "https://x.com/someone/status/2", "start_index": 25, "end_index": 40},
    ]
    assert res["provider"] == "xai" and res["backend"] == "x_search" and res["model"] == "grok-4.3"
    assert res["diagnostics"]["hosted_item_types"] == {"x_search_call": 2}
    assert res["diagnostics"]["provider_request_id"] == "req_abc" and res["diagnostics"]["latency_ms"] >= 0
    sent = xai.body()
    assert sent["model"] == "grok-4.3" and sent["input"] == "holon release" and sent["store"] is False
    assert sent["tool_choice"] == "auto"
    assert sent["tools"] == [
        {
            "type": "x_search",
            "allowed_x_handles": ["holon_run", "other_1"],
            "from_date": "2026-01-01",
            "to_date": "2026-02-01",
        }
    ]
    assert xai.requests[0].headers["authorization"] == f"Bearer {KEY}"
    rt.settings = rt.settings.replace(x_search={"model": "grok-x"})
    ok(rt.call("XSearch", {"query": "q", "excluded_x_handles": ["spam"]}))
    assert xai.body()["model"] == "grok-x" and xai.body()["tools"][0] == {
        "type": "x_search",
        "excluded_x_handles": ["spam"],
    }


@pytest.mark.parametrize(
    "args,field",
    [
        ({"allowed_x_handles": [f"h{i}" for i in range(11)]}, "allowed_x_handles"),
        ({"excluded_x_handles": ["bad handle"]}, "excluded_x_handles"),
        ({"allowed_x_handles": ["a"], "excluded_x_handles": ["b"]}, "allowed_x_handles"),
        ({"from_date": "2026-02-01", "to_date": "2026-01-01"}, "from_date"),
        ({"from_date": "2026-02-30"}, "from_date"),
        ({"to_date": "26-01-01"}, "to_date"),
    ],
)
def test_invalid_filters(rt: Runtime, xai: Responses, args: dict[str, Any], field: str) -> None:
    e = err(rt.call("XSearch", {"query": "q", **args}), "invalid_tool_input")
    assert e["details"]["field"] == field and xai.requests == []


def test_schema_level_errors(rt: Runtime, xai: Responses) -> None:
    err(rt.call("XSearch", {"query": "q", "allowed_x_handles": None}), "invalid_tool_input")
    err(rt.call("XSearch", {"query": "   "}), "invalid_tool_input")
    err(rt.call("XSearch", {"query": "q", "since": "2026"}), "invalid_tool_input")


def test_401_is_retried_once_then_errors_and_empty_text(rt: Runtime, xai: Responses) -> None:
    xai.answers = [(401, {"error": "expired"}), (200, ANSWER)]
    assert ok(rt.call("XSearch", {"query": "q"}))["text"].startswith("Holon") and len(xai.requests) == 2
    xai.answers = [(500, {"error": "boom"})]
    e = err(rt.call("XSearch", {"query": "q"}), "tool_execution_failed")
    assert "500" in e["message"] and e["retryable"] is True
    xai.answers = [(200, {"model": "grok-4.3", "output": [{"type": "x_search_call"}]})]
    err(rt.call("XSearch", {"query": "q"}), "tool_execution_failed")


def test_the_key_is_scrubbed_from_receipts(rt: Runtime, xai: Responses) -> None:
    xai.answers = [
        (
            200,
            {
                **ANSWER,
                "output": [
                    {"type": "message", "content": [{"type": "output_text", "text": f"echo {KEY}", "annotations": []}]}
                ],
            },
        )
    ]
    result = rt.call("XSearch", {"query": "q"})
    assert KEY not in result.receipt and "[redacted]" in result.receipt
