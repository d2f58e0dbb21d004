"""A stdio transport for MCP client sessions whose reads are linear and bounded (issue 29).

The SDK's ``stdio_client`` joins its read buffer with each 64 KiB chunk before splitting lines, which is
quadratic in the length of one line: a server answering 50 MB took 84 s to read. This transport keeps the
chunks of the line being read in a list (linear), and a line longer than ``max_line_bytes`` is not kept: its
bytes are counted and dropped, and the request it answered (its ``id``, read from the line's start) gets a
JSON-RPC error naming the size, so the call ends with a receipt instead of holding the whole answer.

The server runs in a session of its own (its process group is ended on exit: SIGTERM, then SIGKILL);
its stderr goes to ``errlog``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import AsyncIterator
from typing import IO, Any

import anyio

__all__ = ["bounded_stdio", "DEFAULT_MAX_LINE_BYTES"]

#: Longest JSON-RPC message read from a server (bytes); longer ones answer their request with an error.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})')


def _message(line: bytes) -> Any:
    from mcp import types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc  # the session reports it; the request it meant to answer then times out


def _too_large(head: bytes, size: int, limit: int) -> Any:
    from mcp import types
    from mcp.shared.message import SessionMessage

    match = _ID.search(head)
    if match is None:
        return ValueError(f"a message of {size} bytes without an id was dropped (over {limit} bytes)")
    raw = match.group(1)
    msg_id: Any = raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)
    error = types.ErrorData(code=-32603, message=f"the server's answer of {size} bytes is over the {limit} byte limit")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=msg_id, error=error))


@contextlib.asynccontextmanager
async def bounded_stdio(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    errlog: IO[str],
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server; yield ``(read_stream, write_stream)`` for ``mcp.ClientSession``; end it on exit.

    Raises:
        OSError: the command cannot be started.
    """
    process = await anyio.open_process([command, *args], env=env, cwd=cwd, stderr=errlog, start_new_session=True)
    read_send, read_recv = anyio.create_memory_object_stream[Any](0)
    write_send, write_recv = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        assert process.stdout is not None
        parts: list[bytes] = []
        size, head = 0, b""
        async with read_send:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in process.stdout:
                    start = 0
                    while True:
                        end = chunk.find(b"\n", start)
                        piece = chunk[start:] if end < 0 else chunk[start:end]
                        if len(head) < 512:
                            head = (head + piece)[:512]
                        size += len(piece)
                        if size <= max_line_bytes:
                            parts.append(piece)
                        else:
                            parts = []  # over the limit: only counted from here on
                        if end < 0:
                            break
                        start = end + 1
                        if size > max_line_bytes:
                            message = _too_large(head, size, max_line_bytes)
                        else:
                            line = b"".join(parts)
                            message = _message(line) if line.strip() else None
                        parts, size, head = [], 0, b""
                        if message is not None:
                            await read_send.send(message)

    async def writer() -> None:
        assert process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_recv:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
        with contextlib.suppress(Exception):
            await read_send.aclose()  # the server stopped reading: the session sees the connection end

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_recv, write_send
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
            tg.cancel_scope.cancel()


async def _stop(process: Any) -> None:
    """Close the server's stdin, give it 2 s to exit, then SIGTERM its process group, then SIGKILL."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        with anyio.move_on_after(2.0):
            await process.wait()
        if process.returncode is not None:
            break
    for stream in (process.stdout, process.stdin):
        with contextlib.suppress(Exception):
            await stream.aclose()
