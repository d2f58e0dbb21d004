"""A small MCP server for tests, the MCP tutorial and the benchmark (issue 29), built on the ``mcp`` SDK.

Run it as ``python -m holon_nb.runtime.mcp._demo`` (stdio) or ``python -m holon_nb.runtime.mcp._demo --http
PORT`` (streamable HTTP on 127.0.0.1). Its tools: ``add``, ``echo``, ``pixel`` (a 1×1 PNG), ``link`` (a resource
link), ``tree`` (a recursive input schema: its ``$ref`` forms a cycle), ``big`` (``n`` characters), ``hang``
(sleeps), ``crash`` (exits the process), ``fail`` (an ``isError`` result), and ``files/read..me`` (a name with
path characters).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, ResourceLink, TextContent
from pydantic import BaseModel

#: A 1×1 PNG (one red pixel).
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)

__all__ = ["app", "main", "PIXEL"]

app = MCPServer("holon-demo")


class Node(BaseModel):
    """A tree node: its value and children (a recursive model: its schema's ``$ref`` forms a cycle)."""

    value: int
    children: list[Node] = []


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    print(f"add {a} {b}", file=sys.stderr, flush=True)
    return a + b


@app.tool()
def echo(text: str) -> str:
    """Return the text as given."""
    return text


@app.tool()
def pixel() -> list[ImageContent | TextContent]:
    """A 1x1 red PNG and a caption."""
    data = base64.b64encode(PIXEL).decode()
    return [
        TextContent(type="text", text="one red pixel"),
        ImageContent(type="image", data=data, mime_type="image/png"),
    ]


@app.tool()
def link() -> list[ResourceLink]:
    """A link to a resource."""
    return [ResourceLink(type="resource_link", uri="https://example.com/reports/report.txt", name="report.txt")]


@app.tool()
def tree(root: Node) -> int:
    """Sum the values of a tree."""

    def total(node: Node) -> int:
        return node.value + sum(total(c) for c in node.children)

    return total(root)


@app.tool()
def big(n: int) -> str:
    """Return n characters."""
    return "x" * n


@app.tool()
def hang(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "woke"


@app.tool()
def crash() -> str:
    """Exit the server process at once."""
    os._exit(3)


@app.tool()
def fail(reason: str) -> str:
    """Fail with the reason."""
    raise ValueError(reason)


@app.tool(name="files/read..me")
def read_me() -> str:
    """A tool whose name has path characters."""
    return "read me"


def main(argv: list[str] | None = None) -> None:
    """Serve over stdio, or over streamable HTTP with ``--http PORT``."""
    parser = argparse.ArgumentParser(prog="holon_nb.runtime.mcp._demo")
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument("--hang-on-start", action="store_true")
    args = parser.parse_args(argv)
    if args.hang_on_start:
        time.sleep(3600)
    if args.http is not None:
        import uvicorn

        uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=args.http, log_level="warning")
    else:
        app.run("stdio")


if __name__ == "__main__":
    main()
