"""Real MCP servers for the MCP tests (issue 29): the demo server over stdio, or over streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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
