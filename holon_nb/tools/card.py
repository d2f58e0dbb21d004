"""The HTML card of a receipt (pure string building; no Jupyter import).

``render_card`` turns a (scrubbed) envelope into a readable card: tool,
status, duration, key fields and the output with truncation marked.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["render_card"]


def render_card(env: dict[str, Any], receipt: str, duration_ms: int | None = None) -> str:
    """Render a readable HTML card.

    Args:
        env: The scrubbed envelope.
        receipt: The scrubbed text receipt.
        duration_ms: Call duration in milliseconds, if known.
    """
    status = env.get("status", "")
    colour = {"success": "#1a7f37", "error": "#cf222e", "deferred": "#9a6700"}.get(status, "#57606a")
    head = (
        f"<b>{html.escape(env.get('tool_name', ''))}</b> "
        f"<span style='color:{colour};font-weight:600'>{html.escape(status)}</span>"
    )
    if duration_ms is not None:
        head += f" <span style='color:#57606a'>{duration_ms} ms</span>"
    summary = env.get("summary_text")
    if summary:
        head += f" — {html.escape(summary)}"
    return (
        "<div class='holon-receipt' style='border-left:3px solid " + colour + ";padding:4px 8px;margin:2px 0'>"
        f"<div>{head}</div>"
        f"<pre style='margin:4px 0 0 0;white-space:pre-wrap'>{html.escape(receipt)}</pre></div>"
    )
