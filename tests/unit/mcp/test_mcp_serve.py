"""holon_nb as an MCP server (issue 29): the mcp SDK's own client against ``holon-nb mcp serve``, over stdio and
over streamable HTTP on 127.0.0.1 with a bearer token."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _mcp_support import free_port, http_process
from _support import eventually
from mcp import ClientSession, StdioServerParameters, stdio_client

HOLON_NB = str(Path(sys.executable).with_name("holon-nb"))


def _stdio(home: Path, workspace: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=HOLON_NB,
        args=["mcp", "serve", "--home", str(home), "--workspace", str(workspace), *extra],
        env={**os.environ, "SHELL": "/bin/sh"},
    )


async def _session_run(params: StdioServerParameters, log: Path, body: Any) -> Any:
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await body(s)


def test_the_sdk_client_lists_and_calls_the_contract_tools_over_stdio(tmp_path: Path, workspace: Path) -> None:
    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["tools"] = {t.name: t for t in (await s.list_tools()).tools}
        out["exec"] = await s.call_tool("ExecCommand", {"cmd": "echo hello from mcp"})
        out["task"] = await s.call_tool("ExecCommand", {"cmd": "sleep 30", "yield_time_ms": 50})
        handle = out["task"].structured_content["result"]["task_handle"]["task_id"]
        out["stop"] = await s.call_tool("TaskStop", {"task_id": handle})
        patch = "*** Begin Patch\n*** Add File: made.txt\n+made over MCP\n*** End Patch\n"
        out["patch"] = await s.call_tool("ApplyPatch", {"patch": patch})
        out["bad"] = await s.call_tool("ExecCommand", {"cmd": "true", "bogus": 1})
        out["hidden"] = await s.call_tool("CreateExternalTrigger", {"delivery_mode": "wake_hint"})
        return out

    out = anyio.run(_session_run, _stdio(tmp_path / "home", workspace), tmp_path / "err.log", body)
    tools = out["tools"]
    assert {"ExecCommand", "ApplyPatch", "TaskStatus", "CreateWorkItem", "MemorySearch"} <= set(tools)
    assert "CreateExternalTrigger" not in tools and "TaskList" not in tools  # hidden tools stay hidden
    assert tools["ExecCommand"].input_schema["additionalProperties"] is False
    assert not out["exec"].is_error and "hello from mcp" in out["exec"].content[0].text
    assert out["exec"].structured_content["tool_name"] == "ExecCommand"
    assert not out["task"].is_error and not out["stop"].is_error
    assert not out["patch"].is_error and (workspace / "made.txt").read_text() == "made over MCP\n"
    bad = out["bad"]  # a schema error is a tool error, not a protocol failure
    assert bad.is_error and bad.structured_content["error"]["kind"] == "invalid_tool_input"
    assert "unknown field `bogus`" in bad.content[0].text


def test_a_private_child_profile_is_served_only_its_families(tmp_path: Path, workspace: Path) -> None:
    async def body(s: ClientSession) -> Any:
        names = {t.name for t in (await s.list_tools()).tools}
        return names, await s.call_tool("CreateAgent", {"name": "x"})

    params = _stdio(tmp_path / "home", workspace, "--profile", "private_child")
    names, refused = anyio.run(_session_run, params, tmp_path / "err.log", body)
    assert "ExecCommand" in names and "CreateAgent" not in names and "WebFetch" in names
    assert refused.is_error


def _serve_http(home: Path, workspace: Path, port: int, token: str) -> Any:
    argv = [HOLON_NB, "mcp", "serve", "--http", "--port", str(port), "--home", str(home), "--workspace", str(workspace)]
    return http_process(argv, port, env={**os.environ, "HOLON_NB_MCP_TOKEN": token, "SHELL": "/bin/sh"})


def test_streamable_http_needs_this_runtimes_bearer_token(tmp_path: Path, workspace: Path) -> None:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    port_a, port_b = free_port(), free_port()
    token_a, token_b = "token-of-runtime-a", "token-of-runtime-b"
    with (
        _serve_http(tmp_path / "ha", workspace, port_a, token_a),
        _serve_http(tmp_path / "hb", workspace, port_b, token_b),
    ):
        url_a = f"http://127.0.0.1:{port_a}/mcp"
        ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(url_a, json=ping, headers=headers).status_code == 401  # no token
        wrong = {**headers, "Authorization": f"Bearer {token_b}"}  # the other runtime's token
        assert httpx.post(url_a, json=ping, headers=wrong).status_code == 401
        assert (tmp_path / "ha" / "mcp-serve.json").stat().st_mode & 0o077 == 0

        async def call() -> Any:
            auth = {"Authorization": f"Bearer {token_a}"}
            async with (
                create_mcp_http_client(headers=auth) as client,
                streamable_http_client(url_a, http_client=client) as (r, w),
                ClientSession(r, w) as s,
            ):
                await s.initialize()
                return await s.call_tool("ExecCommand", {"cmd": "echo over http"})

        result = anyio.run(call)
        assert not result.is_error and "over http" in result.content[0].text

        async def refused() -> None:
            auth = {"Authorization": f"Bearer {token_b}"}
            async with (
                create_mcp_http_client(headers=auth) as client,
                streamable_http_client(url_a, http_client=client) as (r, w),
                ClientSession(r, w) as s,
            ):
                await s.initialize()

        with pytest.raises(BaseException):  # noqa: B017 - the SDK raises its transport error inside a group
            with anyio.fail_after(30):
                anyio.run(refused)


def test_a_served_call_is_stopped_by_the_notebooks_stop(rt: Any, tmp_path: Path) -> None:
    """``%holon mcp serve``'s Stop of a running call: the server's ``on_call`` start event carries ``stop``, which
    stops the command (its process ends) and answers the client with a tool error."""
    from mcp import Client

    from holon_nb.runtime.mcp._serve import build_server

    events: list[dict[str, Any]] = []
    server = build_server(rt, on_call=events.append)
    pid_file = tmp_path / "pid"
    cmd = f"echo $$ > {pid_file}; exec sleep 120"

    async def body() -> Any:
        async with Client(server) as client:
            answer: dict[str, Any] = {}

            async def call() -> None:
                answer["result"] = await client.call_tool("ExecCommand", {"cmd": cmd, "yield_time_ms": 600_000})

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(60):
                    while not (pid_file.exists() and pid_file.read_text().strip() and events):
                        await anyio.sleep(0.02)
                [start] = [e for e in events if e["phase"] == "start"]
                assert start["tool"] == "ExecCommand" and start["call"] == 1
                start["stop"]()
            return answer["result"]

    result = anyio.run(body)
    assert result.is_error and "stopped from the notebook" in result.content[0].text
    assert [e["phase"] for e in events] == ["start", "stopped"]
    pid = int(pid_file.read_text())

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"  # a zombie awaiting its reaper is gone too

    eventually(gone, timeout=30)
