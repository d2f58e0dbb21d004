"""Canonical JSON, keys, component fingerprints, normalization and redaction (turn-loop spec §4.3)."""

from __future__ import annotations

import hashlib

from holon_nb.providers._schema_lowering import lower_tool_schema
from holon_nb.providers.base import (
    AssistantBlocks,
    ContextBlock,
    PromptFrame,
    ProviderToolSpec,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnRequest,
    UserBlocks,
    UserText,
    UserToolResults,
)
from holon_nb.providers.cassettes._canonical import (
    bounded_diff,
    canonical_json,
    cassette_hash,
    first_difference,
)
from holon_nb.providers.cassettes._normalize import (
    Normalizer,
    component_fingerprints,
    redact_json,
    redact_url,
    request_key,
)

SCHEMA = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}


def norm(tmp_path, **kw) -> Normalizer:
    return Normalizer(
        roots={
            "$WORKSPACE": str(tmp_path / "W"),
            "$HOLON_HOME": str(tmp_path / "home"),
            "$HOME": "/root",
            "$TMP": "/tmp",
        },
        **kw,
    )


def req(text: str = "hi", tools=(), conversation=None) -> TurnRequest:
    return TurnRequest(
        conversation=tuple(conversation or (UserBlocks((ContextBlock(text),)),)),
        tools=tuple(tools),
        prompt_frame=PromptFrame("sys"),
        continuation_scope_id="default",
    )


def test_canonical_json_sorts_keys_keeps_ints_and_unicode_and_shortest_floats():
    assert canonical_json({"b": 1, "a": [1.5, "é", 0.1, 2, 0.0]}) == '{"a":[1.5,"é",0.1,2,0.0],"b":1}'
    assert canonical_json({"x": {"d": None, "c": True}}) == '{"x":{"c":true,"d":null}}'


def test_key_is_domain_separated_sha256_of_canonical_json():
    body = {"conversation": [], "tools": []}
    want = "sha256:" + hashlib.sha256(b'holon_nb.cassette:v1:{"conversation":[],"tools":[]}').hexdigest()
    assert request_key(body) == want == cassette_hash(body)
    assert cassette_hash([], "tail") == "sha256:" + hashlib.sha256(b"holon_nb.cassette:v1:tail:[]").hexdigest()


def test_components_split_history_prefix_and_tail(tmp_path):
    n = norm(tmp_path)
    conv1 = (
        UserBlocks((ContextBlock("hi"),)),
        AssistantBlocks((ToolUseBlock("c1", "GetAgent", {}),)),
        UserToolResults((ToolResultBlock("c1", "r1"),)),
    )
    conv2 = conv1[:2] + (UserToolResults((ToolResultBlock("c1", "r2"),)),)
    a = component_fingerprints(
        n.request(req(conversation=conv1), route_ref="r", transport="scripted", schema_contract="relaxed")
    )
    b = component_fingerprints(
        n.request(req(conversation=conv2), route_ref="r", transport="scripted", schema_contract="relaxed")
    )
    assert [k for k in a if a[k] != b[k]] == ["tail"]
    c = component_fingerprints(
        n.request(req(conversation=conv1), route_ref="other", transport="scripted", schema_contract="relaxed")
    )
    assert [k for k in a if a[k] != c[k]] == ["request_controls"]


def test_ids_timestamps_and_roots_are_normalized(tmp_path):
    n = norm(tmp_path)
    text = (
        f"turn turn_0123456789abcde at 2026-11-30T03:17:44.123456Z ran tool_aaaaaaaaaaaaaaa and "
        f"tool_bbbbbbbbbbbbbbb then tool_aaaaaaaaaaaaaaa; epoch 1767225600000; "
        f"file {tmp_path}/W/a.txt, log {tmp_path}/home/agents/x.log, tmp /tmp/zz, W2 {tmp_path}/W2"
    )
    body = n.request(req(text), route_ref="r", transport="scripted", schema_contract="relaxed")
    got = body["conversation"][0]["blocks"][0]["text"]
    assert got == (
        "turn <turn:1> at <ts> ran <tool_execution:1> and <tool_execution:2> then <tool_execution:1>; "
        "epoch <ts>; file $WORKSPACE/a.txt, log $HOLON_HOME/agents/x.log, tmp $TMP/zz, "
        f"W2 $TMP/{tmp_path.relative_to('/tmp')}/W2"
    )


def test_two_runs_with_different_ids_and_times_have_the_same_key(tmp_path):
    n = norm(tmp_path)
    a = n.request(
        req("task task_111111111111111 started 2026-01-01T00:00:00Z"),
        route_ref="r",
        transport="scripted",
        schema_contract="relaxed",
    )
    b = n.request(
        req("task task_222222222222222 started 2027-05-05T10:10:10.5+02:00"),
        route_ref="r",
        transport="scripted",
        schema_contract="relaxed",
    )
    assert request_key(a) == request_key(b)


def test_secret_keys_headers_and_url_queries_are_redacted():
    value = {
        "api_key": "k1",
        "client_secret": "s",
        "Authorization": "Bearer x",
        "token": "t",
        "id_token": "i",
        "token_type": "bearer",
        "a_token_b": "c",
        "x-api-key": "h",
        "cookie": "c=1",
        "tokens": 5,
        "token_usage": {"input_tokens": 3},
        "input_tokens": 7,
        "keyboard": "qwerty",
        "properties": {"token": {"type": "string"}},
        "url": "https://h/v1?api_key=abc&x=1&access_token=zz#f",
        "note": "see http://h/p?secret=1&q=2 now",
    }
    out = redact_json(value)
    for k in (
        "api_key",
        "client_secret",
        "Authorization",
        "token",
        "id_token",
        "token_type",
        "a_token_b",
        "x-api-key",
        "cookie",
    ):
        assert out[k] == "[redacted]", k
    assert out["tokens"] == 5 and out["token_usage"] == {"input_tokens": 3} and out["input_tokens"] == 7
    assert out["keyboard"] == "qwerty"
    assert out["properties"] == {"token": {"type": "string"}}  # a schema under a secret-looking key stays
    assert out["url"] == "https://h/v1?api_key=[redacted]&x=1&access_token=[redacted]#f"
    assert out["note"] == "see http://h/p?secret=[redacted]&q=2 now"
    assert redact_url("no url ?key=1") == "no url ?key=1"


def test_d6_secret_values_are_scrubbed_after_redaction(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    body = norm(tmp_path).request(
        req("the key is sk-test-0123456789."), route_ref="r", transport="scripted", schema_contract="relaxed"
    )
    assert body["conversation"][0]["blocks"][0]["text"] == "the key is [redacted]."


def test_tools_are_fingerprinted_as_lowered_for_the_transport(tmp_path):
    tools = [ProviderToolSpec("ExecCommand", "Run.", SCHEMA)]
    n = norm(tmp_path)
    chat = n.request(req(tools=tools), route_ref="r", transport="openai_chat_completions", schema_contract="strict")
    anth = n.request(req(tools=tools), route_ref="r", transport="anthropic_messages", schema_contract="relaxed")
    assert chat["tools"][0]["input_schema"] == lower_tool_schema(SCHEMA, "strict")
    assert anth["tools"][0]["input_schema"] == SCHEMA
    assert chat["request_controls"]["tool_choice"] == "auto" and anth["request_controls"]["tool_choice"] is None


def test_first_difference_and_bounded_diff():
    a = {"conversation": [{"text": "x"}, {"results": [{"content": "a"}]}]}
    b = {"conversation": [{"text": "x"}, {"results": [{"content": "b"}]}]}
    assert first_difference(a, b) == ["conversation", 1, "results", 0, "content"]
    assert first_difference([1, 2], [1, 2, 3]) == [2]
    assert first_difference({"a": 1}, {"a": 1}) is None
    big_a = {"k": [str(i) for i in range(200)]}
    big_b = {"k": [str(i) + "!" for i in range(200)]}
    diff = bounded_diff(big_a, big_b, "tail")
    assert len(diff.splitlines()) == 40 and diff.splitlines()[-1].startswith("… (")
    assert diff.splitlines()[0] == "--- recorded/tail"


def test_user_text_messages_round_trip_unchanged_when_nothing_to_normalize(tmp_path):
    body = norm(tmp_path).request(
        req(conversation=[UserText("plain"), AssistantBlocks((TextBlock("ok"),))]),
        route_ref="r",
        transport="scripted",
        schema_contract="relaxed",
    )
    assert body["conversation"] == [
        {"type": "user_text", "text": "plain"},
        {"type": "assistant_blocks", "blocks": [{"type": "text", "text": "ok"}]},
    ]
