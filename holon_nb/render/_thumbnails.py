"""Image thumbnails of a tool result, as HTML figures (pure string building; no Jupyter import).

A call that viewed or wrote images (ViewImage, GenerateImage) carries thumbnails in ``ToolResult.previews``,
``{mime, data (bytes), width, height, label}`` (made by :mod:`holon_nb.runtime.images._preview`). They are
never sent to a model nor stored: a notebook shows them below the card (:func:`holon_nb.render.mimebundle`),
and the agent view beside the tool call.
"""

from __future__ import annotations

import base64
import html
from typing import Any

__all__ = ["preview_html"]


def preview_html(preview: dict[str, Any]) -> str:
    """An ``<img>`` figure of one thumbnail (``{mime, data, width, height, label}``), its label as caption."""
    src = f"data:{preview['mime']};base64,{base64.b64encode(preview['data']).decode('ascii')}"
    label = html.escape(str(preview.get("label") or ""))
    return (
        f'<figure class="holon-image" style="margin:4px 0"><img src="{src}" width="{preview["width"]}" '
        f'height="{preview["height"]}" alt="{label}"/><figcaption style="font-size:smaller">{label}'
        f"</figcaption></figure>"
    )
