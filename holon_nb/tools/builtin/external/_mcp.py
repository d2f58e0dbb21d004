"""The tools of configured MCP servers (issue 29): one :class:`McpToolSpec` per server tool.

Specs are built by the runtime's MCP plane (:mod:`holon_nb.runtime.mcp`) from each server's ``tools/list``;
their names are ``mcp__<server>__<tool>`` (:func:`public_name`), their family ``mcp`` (public named agents
only: the profile gate of dispatch refuses them to private children), their description and input schema
the server's own. Dispatch parses the arguments into :class:`McpArguments` (any JSON object); the plane then
checks them against the server's schema with the same rules and phrases as the built-in tools' parser
(unknown fields are denied unless the schema allows them) before the server sees them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..._spec import Family, Rendering, ToolSpec
from ..results._base import Records, ResultModel

__all__ = ["McpArguments", "McpCallResult", "McpToolSpec", "public_name", "mcp_receipt", "mcp_human"]

#: Longest public tool name (the providers' own limit on function names).
MAX_NAME_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def _safe(part: str) -> str:
    return _UNSAFE.sub("_", part).strip("_") or "x"


def public_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """``mcp__<server>__<tool>`` with every character outside ``[A-Za-z0-9_-]`` (``/``, ``.``, spaces,
    ``..``) replaced by ``_``, cut to 64 characters; a name already in ``taken`` gets ``_2``, ``_3``…"""
    base = f"mcp__{_safe(server)}__{_safe(tool)}"[:MAX_NAME_CHARS]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name, n = base[: MAX_NAME_CHARS - len(suffix)] + suffix, n + 1
    return name


class McpArguments(BaseModel):
    """The arguments of an MCP tool as dispatch sees them: any JSON object (the server's schema is checked
    by the MCP plane, which knows it)."""

    model_config = ConfigDict(extra="allow", frozen=True)


class McpCallResult(ResultModel):
    """The ``result`` of an MCP tool call.

    Attributes:
        server: The configured server name.
        tool: The tool's name on the server (before namespacing).
        content: The server's content blocks as JSON (``{"type": "text", "text"}``, ``{"type": "image",
            "mime_type", "data"}`` with ``data`` base64, ``{"type": "resource_link", "uri", "name"}``…); text
            past the plane's cap is cut and ``truncated`` set.
        structured_content: The server's ``structuredContent``, when it sent one (and it fits the cap).
        truncated: Some content was cut to keep the result bounded.
        original_chars: The size of the server's answer before cutting (characters of JSON), when cut.
        replayed: The result came from a cassette, not from the server.
    """

    server: str
    tool: str
    content: Records
    structured_content: dict[str, Any] | None = None
    truncated: bool = False
    original_chars: int | None = None
    replayed: bool | None = None


def _block_line(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "image" or kind == "audio":
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mime_type') or block.get('mimeType') or ''}, {size} bytes]"
    if kind == "resource_link":
        return f"[resource {block.get('name') or ''} {block.get('uri', '')}]".replace("  ", " ")
    if kind == "resource":
        res = block.get("resource") or {}
        text = res.get("text")
        return f"[resource {res.get('uri', '')}]" + (f"\n{text}" if isinstance(text, str) else "")
    return f"[{kind} content]"


def mcp_receipt(env: dict[str, Any], context: Any) -> str:
    """The model-visible text of a successful MCP call: its text blocks, one line per image, audio or
    resource link, then ``(truncated …)`` when the plane cut it."""
    result = env.get("result") or {}
    lines = [_block_line(b) for b in result.get("content") or [] if isinstance(b, dict)]
    if not lines and result.get("structured_content") is not None:
        import json

        lines.append(json.dumps(result["structured_content"], ensure_ascii=False, sort_keys=True))
    if result.get("truncated"):
        lines.append(f"(truncated: the server answered {result.get('original_chars')} characters)")
    return "\n".join(lines) if lines else "(no content)"


def mcp_human(result: dict[str, Any]) -> list[str]:
    """The notebook receipt body of an MCP call: which server tool answered, then its content lines."""
    head = f"{result.get('server')} · {result.get('tool')}" + (" (replayed)" if result.get("replayed") else "")
    return [head, *mcp_receipt({"result": result}, None).splitlines()]


@dataclass(frozen=True)
class McpToolSpec(ToolSpec[McpArguments, McpCallResult]):
    """A :class:`ToolSpec` whose description and input schema are the MCP server's (not a Markdown file).

    Attributes:
        server: The configured server name.
        remote_name: The tool's name on the server.
        text: The server's description of the tool.
        schema: The server's input schema, as sent (``$ref`` included).
    """

    server: str = ""
    remote_name: str = ""
    text: str = ""
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def description(self) -> str:
        """The server's description, prefixed with where the tool comes from."""
        return f"[MCP server {self.server}: {self.remote_name}] {self.text}".strip()


def make_spec(
    name: str,
    server: str,
    remote_name: str,
    text: str,
    schema: dict[str, Any],
    handler: Callable[[McpArguments, Any], Any],
    shared: bool = False,
) -> McpToolSpec:
    """One server tool as a spec of the ``mcp`` family (``mcp_shared`` when its server is configured with
    ``private_children: true``: offered to private children too); custom-text receipt: :func:`mcp_receipt`."""
    return McpToolSpec(
        name=name,
        family=Family.MCP_SHARED if shared else Family.MCP,
        input_model=McpArguments,
        handler=handler,
        result_name="McpCallResult",
        output_model=McpCallResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=mcp_receipt,
        human=mcp_human,
        server=server,
        remote_name=remote_name,
        text=text,
        schema=schema,
    )
