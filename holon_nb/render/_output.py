"""A tool result as a notebook shows and saves it: the human text, the HTML card, the mimebundle.

Each function takes the result itself (:class:`ShownResult`: ``holon_nb.runtime.ToolResult`` is one), so a
typed result can be passed the same way. Rule: capability tokens of external triggers never reach a saved
notebook (workspace spec §14: :func:`~holon_nb.render._scrubbing.redact_tokens`, applied before the human
rendering cuts long values, since a cut token would survive).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any, Protocol

from ._card import render_card
from ._receipt import Specs
from ._scrubbing import redact_tokens
from ._thumbnails import preview_html
from .human import render_human

__all__ = ["RESULT_MIMETYPE", "ShownResult", "card_html", "human_text", "mimebundle"]

#: Mimetype of the (scrubbed) envelope in a displayed result; what notebook tests compare.
RESULT_MIMETYPE = "application/vnd.holon.tool-result+json"


class ShownResult(Protocol):
    """What the notebook output of a result is made from (:class:`holon_nb.runtime.ToolResult` is one).

    Attributes:
        display_envelope: The envelope with secret values scrubbed (D12).
        receipt: The model-visible text (scrubbed, projected).
        display_text: The human text (:func:`human_text`, which the result may keep once made).
        duration_ms: Wall time of the call in milliseconds.
        ran_ms: For a task's final receipt, how long the task ran; else None.
        projected: True when the model gets a stand-in for the receipt.
        execution_id: The tool execution id (``tool_<15 hex>``).
        previews: Thumbnails, ``{mime, data, width, height, label}`` (:mod:`.thumbnails`).
        paths: ``(absolute path, label)`` pairs shown shorter.
    """

    @property
    def display_envelope(self) -> dict[str, Any]: ...
    @property
    def receipt(self) -> str: ...
    @property
    def display_text(self) -> str: ...
    @property
    def duration_ms(self) -> int: ...
    @property
    def ran_ms(self) -> int | None: ...
    @property
    def projected(self) -> bool: ...
    @property
    def execution_id(self) -> str: ...
    @property
    def previews(self) -> Iterable[dict[str, Any]]: ...
    @property
    def paths(self) -> tuple[tuple[str, str], ...]: ...


def human_text(result: ShownResult, specs: Specs | None) -> str:
    """The text a notebook shows and saves (``text/plain``): the human receipt.

    First line: tool, status, duration, summary; then the result's key fields
    (:func:`holon_nb.render.human.render_human`, the tool's own body renderer from ``specs``). When the
    receipt is over the model's tool-output budget, a last line says that a model gets a stand-in for it.

    Args:
        result: The result (its ``display_text`` is not read).
        specs: Where the tool's declaration (its ``human`` renderer) is looked up; None: the generic one.
    """
    envelope = redact_tokens(result.display_envelope)
    text = render_human(envelope, result.duration_ms, specs, paths=result.paths, ran_ms=result.ran_ms)
    if not result.projected:
        return text
    return (
        f"{text}\n[a model gets a stand-in for this receipt (over its tool-output budget): "
        f"output_ref tool_execution:{result.execution_id}:output]"
    )


def card_html(result: ShownResult) -> str:
    """The HTML card of a result (:func:`holon_nb.render._card.render_card`), tokens redacted, thumbnails not
    included (:func:`mimebundle` adds them)."""
    return _card(result, redact_tokens(result.display_envelope))


def _card(result: ShownResult, envelope: dict[str, Any]) -> str:
    return render_card(
        envelope,
        redact_tokens(result.receipt),
        result.duration_ms,
        redact_tokens(result.display_text),
        result.paths,
        ran_ms=result.ran_ms,
    )


def mimebundle(result: ShownResult) -> dict[str, Any]:
    """A result's notebook output: ``text/plain`` (:func:`human_text`), ``text/html`` (:func:`card_html`, then a
    figure per thumbnail), :data:`RESULT_MIMETYPE` (the scrubbed envelope) and, with thumbnails, the first
    picture as its own representation (JupyterLab prefers the HTML, which shows them all).

    Returns:
        ``{mimetype: data}``. Its strings may still hold lone surrogates (a JSON ``\\ud800`` in a command's
        output), which the kernel cannot send: the caller makes the bundle encodable as UTF-8
        (``ToolResult`` with :func:`holon_nb.tools._text.encodable_value`).
    """
    envelope = redact_tokens(result.display_envelope)
    bundle = {
        "text/plain": redact_tokens(result.display_text),
        "text/html": _card(result, envelope),
        RESULT_MIMETYPE: envelope,
    }
    previews = tuple(result.previews)
    if previews:
        first = previews[0]
        bundle[first["mime"]] = base64.b64encode(first["data"]).decode("ascii")
        bundle["text/html"] += "".join(preview_html(p) for p in previews)
    return bundle
