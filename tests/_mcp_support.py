"""Real MCP servers for the MCP tests (issue 29): the demo server over stdio, or over streamable HTTP."""

from __future__ import annotations

import concurrent.futures
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from _support import eventually

DEMO = [sys.executable, "-m", "holon_nb.runtime.mcp._demo"]


def stdio_entry(**extra: Any) -> dict[str, Any]:
    """The demo server's stdio entry (``mcpServers`` shape)."""
    return {"command": sys.executable, "args": ["-m", "holon_nb.runtime.mcp._demo"], **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def http_process(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv`` (a server listening on 127.0.0.1:``port``); wait until it accepts; stop it after."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        eventually(lambda: _accepts(port) or proc.poll() is not None, timeout=60)
        assert proc.poll() is None, "the server exited"
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def demo_http() -> Iterator[str]:
    """The demo server over streamable HTTP; yields its URL."""
    port = free_port()
    with http_process([*DEMO, "--http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def served_calls(info: dict[str, Any], *calls: dict[str, Any]) -> list[Any]:
    """ExecCommand calls to ``%holon mcp serve`` (``info``: its ``mcp-serve.json``) by the SDK's streamable HTTP
    client with the token, one after the other; their ``CallToolResult``s. Run on a thread of their own (a
    browser test's thread runs playwright's event loop)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def go() -> list[Any]:
        auth = {"Authorization": "Bearer " + info["token"]}
        with anyio.fail_after(60):
            async with (
                create_mcp_http_client(headers=auth) as c,
                streamable_http_client(info["url"], http_client=c) as (r, w),
                ClientSession(r, w) as s,
            ):
                await s.initialize()
                return [await s.call_tool("ExecCommand", args) for args in calls]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, go).result()
