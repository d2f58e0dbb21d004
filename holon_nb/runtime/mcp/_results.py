"""An MCP ``CallToolResult`` as the payload of :class:`~holon_nb.tools.builtin.external._mcp.McpCallResult`,
bounded: content past ``max_result_chars`` characters is cut (issue 29: a server answering 50 MB gives a
truncated receipt, not a 50 MB record)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["payload_of", "error_text"]


def _dump(block: Any) -> dict[str, Any]:
    if isinstance(block, dict):
        return dict(block)
    out: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return out


def _size(block: dict[str, Any]) -> int:
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v, default=str)) for v in block.values())


def payload_of(server: str, tool: str, result: Any, max_chars: int) -> dict[str, Any]:
    """The bounded result payload: ``{server, tool, content, structured_content?, truncated?, original_chars?}``."""
    blocks = [_dump(b) for b in (result.get("content") if isinstance(result, dict) else result.content) or []]
    structured = result.get("structured_content") if isinstance(result, dict) else result.structured_content
    total = sum(_size(b) for b in blocks)
    structured_text = json.dumps(structured, default=str) if structured is not None else ""
    total_all = total + len(structured_text)
    out: dict[str, Any] = {"server": server, "tool": tool}
    if total_all <= max_chars:
        out["content"] = blocks
        if structured is not None:
            out["structured_content"] = structured
        return out
    kept: list[dict[str, Any]] = []
    room = max_chars
    for block in blocks:
        size = _size(block)
        if size <= room:
            kept.append(block)
            room -= size
        elif block.get("type") == "text" and room > 0:
            kept.append({**block, "text": str(block.get("text", ""))[:room]})
            room = 0
        else:
            kept.append({"type": "text", "text": f"[{block.get('type')} block of {size} characters left out]"})
            room = max(0, room - 80)
    out["content"] = kept
    if structured is not None and len(structured_text) <= room:
        out["structured_content"] = structured
    out["truncated"] = True
    out["original_chars"] = total_all
    return out


def error_text(payload: dict[str, Any]) -> str:
    """The text of an ``isError`` result (its text blocks), for the error envelope's message."""
    texts = [str(b.get("text", "")) for b in payload.get("content") or [] if b.get("type") == "text"]
    return " ".join(t.strip() for t in texts if t.strip())[:500] or "the tool reported an error"
