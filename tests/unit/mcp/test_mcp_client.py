"""MCP servers' tools inside holon_nb (issue 29): a real server (holon_nb.runtime.mcp._demo, built on the SDK's
MCPServer) over stdio and over streamable HTTP on 127.0.0.1, called through the one dispatch path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _mcp_support import demo_http, stdio_entry
from _support import err, ok

from holon_nb import Runtime
from holon_nb.runtime import RuntimeSettings
from holon_nb.runtime.mcp import McpConfigError, load_servers, parse_server
from holon_nb.tools._spec import Family, Profile
from holon_nb.tools.builtin.external._mcp import public_name


@pytest.fixture(scope="module")
def mrt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    base = tmp_path_factory.mktemp("mcp")
    settings = RuntimeSettings(mcp_servers={"demo": stdio_entry(tool_timeout_s=5)})
    runtime = Runtime(home=base / "home", workspace=base, settings=settings)
    try:
        yield runtime
    finally:
        runtime.close()


def test_no_server_configured_leaves_the_registry_as_built_in(rt: Runtime) -> None:
    from holon_nb.tools._registry import REGISTRY

    assert [s.name for s in rt.registry] == REGISTRY.names()
    assert rt.mcp.status() == []


def test_a_stdio_server_starts_on_first_call_and_its_tools_join_the_registry(mrt: Runtime) -> None:
    assert ok(mrt.call("mcp__demo__add", {"a": 2, "b": 40}))["content"] == [{"type": "text", "text": "42"}]
    names = [s.name for s in mrt.registry if s.family is Family.MCP]
    assert {"mcp__demo__add", "mcp__demo__echo", "mcp__demo__tree", "mcp__demo__files_read_me"} <= set(names)
    spec = mrt.registry.get("mcp__demo__add")
    assert spec is not None and "Add two integers" in spec.description
    assert spec in mrt.registry.model_facing(Profile.PUBLIC_NAMED)
    assert spec not in mrt.registry.model_facing(Profile.PRIVATE_CHILD)
    [row] = mrt.mcp.status()
    assert row["state"] == "ready" and row["transport"] == "stdio"
    assert "add 2 40" in Path(row["log"]).read_text()  # the server's stderr went to its log, not the cell


def test_results_are_one_envelope_with_a_human_receipt(mrt: Runtime) -> None:
    r = mrt.call("mcp__demo__pixel", {})
    content = ok(r)["content"]
    assert content[0] == {"type": "text", "text": "one red pixel"}
    assert content[1]["type"] == "image" and content[1]["mime_type"] == "image/png"
    assert "one red pixel" in r.receipt and "[image image/png" in r.receipt
    assert "demo · pixel" in r.display_text and "one red pixel" in r.display_text
    [preview] = r.previews  # the image is shown inline in the notebook (a thumbnail beside the receipt)
    assert preview["mime"] == "image/png" and (preview["width"], preview["height"]) == (1, 1)
    assert "image/png" in r._repr_mimebundle_()
    link = mrt.call("mcp__demo__link", {})
    assert "[resource report.txt https://example.com/reports/report.txt]" in link.receipt


def test_arguments_follow_the_parser_rules(mrt: Runtime) -> None:
    e = err(mrt.call("mcp__demo__add", {"a": 1}), "invalid_tool_input")
    assert e["details"]["parse_error"] == "missing field `b`"
    e = err(mrt.call("mcp__demo__add", {"a": 1, "b": 2, "c": 3}), "invalid_tool_input")
    assert e["details"]["parse_error"] == "unknown field `c`"
    e = err(mrt.call("mcp__demo__add", {"a": "one", "b": 2}), "invalid_tool_input")
    assert "`a`" in e["details"]["parse_error"] and "integer" in e["details"]["parse_error"]
    e = err(mrt.call("mcp__demo__add", "{not json"), "invalid_tool_input")


def test_a_schema_whose_refs_form_a_cycle_is_followed_without_recursing_for_ever(mrt: Runtime) -> None:
    ok(mrt.call("mcp__demo__add", {"a": 0, "b": 0}))  # started: before that its tools are pending, schema-less
    schema = mrt.registry.get("mcp__demo__tree").schema  # type: ignore[union-attr]
    assert "$defs" in json.dumps(schema) or "$ref" in json.dumps(schema)
    deep: dict = {"value": 1}
    for _ in range(20):
        deep = {"value": 1, "children": [deep]}
    assert ok(mrt.call("mcp__demo__tree", {"root": deep}))["content"] == [{"type": "text", "text": "21"}]
    e = err(mrt.call("mcp__demo__tree", {"root": {"value": 1, "children": [{"value": "x"}]}}), "invalid_tool_input")
    assert "root.children[0].value" in e["details"]["parse_error"]
    from holon_nb.runtime.mcp._schema import schema_problems

    assert schema_problems({"a": 1}, {"$ref": "#"}) == ["`$ref` # goes round a cycle"]
    loop = {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}
    assert "cycle" in schema_problems({}, loop)[0]


def test_a_tool_name_with_path_characters_is_namespaced_safely(mrt: Runtime) -> None:
    assert public_name("demo", "files/read..me") == "mcp__demo__files_read_me"
    assert public_name("../etc", "x") == "mcp__etc__x"
    assert public_name("s", "a/b", {"mcp__s__a_b"}) == "mcp__s__a_b_2"
    assert len(public_name("s" * 80, "t" * 80)) == 64
    assert ok(mrt.call("mcp__demo__files_read_me", {}))["content"] == [{"type": "text", "text": "read me"}]


def test_an_error_result_is_an_error_envelope(mrt: Runtime) -> None:
    e = err(mrt.call("mcp__demo__fail", {"reason": "nope"}), "mcp_tool_error")
    assert e["details"] == {"server": "demo", "tool": "fail"}


def test_unknown_tool_of_a_known_server(mrt: Runtime) -> None:
    err(mrt.call("mcp__demo__nope", {}), "unknown_tool")


def test_a_private_child_is_refused_mcp_tools(mrt: Runtime) -> None:
    mrt.store.ensure_agent("kid", Profile.PRIVATE_CHILD.value, name="kid")
    err(mrt.call("mcp__demo__add", {"a": 1, "b": 2}, agent="kid"), "unsupported_agent_profile_capability")


def test_a_crashed_server_restarts_on_the_next_call(tmp_path: Path) -> None:
    settings = RuntimeSettings(mcp_servers={"demo": stdio_entry()})
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as rt:
        ok(rt.call("mcp__demo__add", {"a": 1, "b": 1}))
        err(rt.call("mcp__demo__crash", {}), "mcp_server_unavailable")
        assert rt.mcp.status()[0]["state"] == "crashed"
        assert ok(rt.call("mcp__demo__add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"
        assert rt.mcp.status()[0]["restarts"] == 1


def test_a_streamable_http_server(tmp_path: Path) -> None:
    with demo_http() as url:
        settings = RuntimeSettings(mcp_servers={"web": {"url": url, "headers": {"X-Test": "1"}}})
        with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as rt:
            assert ok(rt.call("mcp__web__echo", {"text": "over http"}))["content"][0]["text"] == "over http"
            assert rt.mcp.status()[0]["transport"] == "http"


def test_configuration_files_and_their_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}))
    (tmp_path / "pyproject.toml").write_text('[tool.holon_nb.mcpServers.b]\nurl = "http://127.0.0.1:1/mcp"\n')
    extra = tmp_path / "more.json"
    extra.write_text(json.dumps({"mcpServers": {"c": {"command": "z", "args": ["1"], "tool_timeout_sec": 9}}}))
    monkeypatch.setenv("HOLON_NB_MCP_CONFIG", str(extra))
    servers = load_servers(tmp_path, {"a": {"command": "override"}})
    assert servers["a"].command == "override" and servers["b"].transport == "http"
    assert servers["c"].args == ("1",) and servers["c"].tool_timeout_s == 9
    for bad in ({}, {"command": "x", "url": "http://h"}, {"command": "x", "bogus": 1}, {"url": "ftp://x"}, 3):
        with pytest.raises(McpConfigError):
            parse_server("s", bad)


def test_a_server_that_cannot_start_gives_a_clear_receipt(tmp_path: Path) -> None:
    settings = RuntimeSettings(mcp_servers={"nope": {"command": str(tmp_path / "missing-binary")}})
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as rt:
        e = err(rt.call("mcp__nope__x", {}), "mcp_server_unavailable")
        assert "could not start" in e["message"]
        assert rt.mcp.status()[0]["state"] == "failed"


def test_cassette_records_then_replays_without_the_server(tmp_path: Path) -> None:
    cassette = tmp_path / "calls.mcp.jsonl"
    entry = {"demo": stdio_entry()}
    with Runtime(
        home=tmp_path / "h1",
        workspace=tmp_path,
        settings=RuntimeSettings(mcp_servers=entry, mcp_cassette=str(cassette), mcp_cassette_mode="record"),
    ) as rt:
        assert ok(rt.call("mcp__demo__add", {"a": 3, "b": 4}))["content"][0]["text"] == "7"
    broken = {"demo": {"command": str(tmp_path / "no-such-server")}}  # replay never starts it
    with Runtime(
        home=tmp_path / "h2",
        workspace=tmp_path,
        settings=RuntimeSettings(mcp_servers=broken, mcp_cassette="calls.mcp.jsonl", mcp_cassette_mode="replay"),
    ) as rt:
        result = ok(rt.call("mcp__demo__add", {"b": 4, "a": 3}))
        assert result["content"][0]["text"] == "7" and result["replayed"] is True
        assert "mcp__demo__add" in rt.registry
        e = err(rt.call("mcp__demo__add", {"a": 3, "b": 5}), "mcp_server_unavailable")
        assert "cassette" in e["message"]
        assert rt.mcp.status()[0]["state"] == "replayed"


def test_mcp_tools_are_asked_for_under_approval_on_request(mrt: Runtime) -> None:
    from holon_nb.runtime.agents._approvals import approval_reason

    spec = mrt.registry.get("mcp__demo__add")
    assert spec is not None
    args = spec.input_model.model_validate({"a": 1, "b": 2})
    assert approval_reason(spec, args, None, "on_request") == "mcp__demo__add is in the mcp family"
    assert approval_reason(spec, args, None, "never") is None


def test_an_agent_turn_is_offered_the_servers_tools_and_calls_one(tmp_path: Path) -> None:
    from holon_nb.providers.scripted import ScriptedProvider, Step

    settings = RuntimeSettings(mcp_servers={"demo": stdio_entry()})
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as rt:
        provider = ScriptedProvider([Step.tool_use("call_1", "mcp__demo__add", {"a": 20, "b": 22}), Step.text("42")])
        rt.providers.register("scripted@default/scripted", provider)
        r = rt.run_turn("add them", model="scripted@default/scripted")  # the turn starts the server first
        assert r.terminal == "completed"
        [tool] = [t for t in provider.requests()[0].tools if t.name == "mcp__demo__add"]
        assert tool.input_schema["required"] == ["a", "b"] and "Add two integers" in tool.description
        call = r.rounds[0].tool_calls[0]
        assert call.envelope["status"] == "success" and call.receipt == "42"


def test_a_server_configured_for_private_children_is_offered_to_them(tmp_path: Path) -> None:
    settings = RuntimeSettings(mcp_servers={"shared": stdio_entry(private_children=True)})
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as rt:
        rt.store.ensure_agent("kid", Profile.PRIVATE_CHILD.value, name="kid")
        assert ok(rt.call("mcp__shared__add", {"a": 1, "b": 2}, agent="kid"))["content"][0]["text"] == "3"
        spec = rt.registry.get("mcp__shared__add")
        assert spec is not None and spec.family is Family.MCP_SHARED
        assert spec in rt.registry.model_facing(Profile.PRIVATE_CHILD)
