"""Model-visible receipts: rendering by tool, secret scrubbing (D6), projection guard.

``render_receipt`` picks the tool's text receipt or the canonical JSON one
(commands spec §3.4 rules 1–3); :class:`Scrubber` (from :mod:`holon_nb.tools.terminal.scrubbing`)
replaces secret values by ``[redacted]`` (rule 5, D6, D12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .envelope import DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS, render_error_receipt, render_json_receipt
from .registry import REGISTRY, Registry
from .spec import Rendering
from .terminal.scrubbing import REDACTED, Scrubber, StreamScrubber

__all__ = ["render_receipt", "ReceiptContext", "Scrubber", "StreamScrubber", "REDACTED"]


@dataclass(frozen=True)
class ReceiptContext:
    """What a custom text receipt may need besides the envelope.

    Attributes:
        execution_id: The tool execution id (``tool_…``), for an ``output_ref``; ``"unknown"``
            when an envelope is rendered again outside its call.
        budget_tokens: The turn's tool-output budget in estimated tokens (``(chars + 3) // 4``).
    """

    execution_id: str = "unknown"
    budget_tokens: int = DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS


def render_receipt(env: dict[str, Any], registry: Registry | None = None, context: ReceiptContext | None = None) -> str:
    """Render the model-visible text of an envelope (before scrubbing and projection).

    Custom text renderers are called as ``spec.render_receipt(env, context)``.
    """
    if env.get("status") == "error":
        return render_error_receipt(env)
    spec = (REGISTRY if registry is None else registry).get(env["tool_name"])
    if spec is not None and spec.rendering is Rendering.CUSTOM_TEXT and spec.render_receipt:
        return spec.render_receipt(env, context or ReceiptContext())
    return render_json_receipt(env)
