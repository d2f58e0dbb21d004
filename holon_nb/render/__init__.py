"""One rendering package: a tool result turned into what a model reads and what a person sees.

A tool call ends in an envelope (``{tool_name, status, summary_text, result | error}``, commands spec §3;
:mod:`holon_nb.tools._envelope` builds it); ``holon_nb.runtime.ToolResult`` carries it with its receipt. Every
text or HTML made from it is made here, by pure functions with no Jupyter import:

==============================  ====================================================  ==========================
output                          what it is                                            who calls it
==============================  ====================================================  ==========================
model receipt                   the text a model reads: the tool's own text receipt   the runtime's call path
:func:`model_receipt`           or canonical JSON, the uniform error receipt,         (``Runtime._finish_call``),
(:mod:`.receipt`)               secrets scrubbed (:mod:`.scrubbing`, D6), and a       the turn loop's synthetic
                                stand-in when over the tool-output budget             errors
human text :func:`human_text`   a notebook's ``text/plain``: headline, key fields,    ``ToolResult.display_text``,
(:mod:`.human`)                 command output as a terminal shows it                 the agent view
HTML card :func:`card_html`     a notebook's ``text/html``: status pill, facts,       ``ToolResult``'s mimebundle,
(:mod:`.card`)                  output with colours (:mod:`.ansi`), diffs, errors     the agent view
thumbnails :func:`preview_html` the pictures a call viewed or wrote, below the card   the mimebundle, agent view
the mimebundle                  all of the above plus the scrubbed envelope as        ``ToolResult._repr_mimebundle_``
:func:`mimebundle`              :data:`RESULT_MIMETYPE` (made UTF-8 encodable there)
failure check                   the commands of a successful call that ran and        ``%exec --raise``
:func:`command_failures`        failed (non-zero exit, signal, failed batch item)
==============================  ====================================================  ==========================

Rules and their sources: model receipts, commands spec §3.4 (rules 1-5) and D6 (scrubbing); human receipts,
:mod:`.human`'s docstring; cards and live views, :mod:`.card` and :mod:`.palette` (WCAG AA colours in light and
dark themes); ANSI handling, :mod:`.ansi` (command output as a terminal shows it); trigger tokens never reach a
notebook, workspace spec §14.

Building blocks other packages compose are in submodules: tool declarations build their human body renderers
(``ToolSpec.human``) from :mod:`.human`; live views reuse :func:`.card.card_root`, :mod:`.palette` and
:mod:`.ansi`. The functions that take a result take a :class:`ShownResult` (``ToolResult`` is one), so a typed
result can be passed the same way.

Layer: below ``holon_nb.tools`` (whose declarations use :mod:`.human`), so it imports nothing of holon_nb:
a tool's declaration is read through the :class:`Specs` protocol (``holon_nb.tools.Registry`` is one).
"""

from ._failures import command_failures
from ._output import RESULT_MIMETYPE, ShownResult, card_html, human_text, mimebundle
from ._receipt import (
    DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS,
    ModelReceipt,
    ReceiptContext,
    ReceiptSpec,
    Specs,
    dumps_envelope,
    estimate_tokens,
    model_receipt,
    project_receipt,
    receipt_text,
    render_error_receipt,
    render_json_receipt,
)
from ._scrubbing import REDACTED, Scrubber, StreamScrubber, redact_tokens
from ._thumbnails import preview_html
from .human._commands import OUTPUT_SHOWN_BELOW

__all__ = [
    # the model receipt
    "model_receipt",
    "receipt_text",
    "render_error_receipt",
    "render_json_receipt",
    "project_receipt",
    "estimate_tokens",
    "dumps_envelope",
    "DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS",
    "ModelReceipt",
    "ReceiptContext",
    "ReceiptSpec",
    "Specs",
    # secrets
    "Scrubber",
    "StreamScrubber",
    "REDACTED",
    "redact_tokens",
    # what a notebook shows
    "human_text",
    "card_html",
    "preview_html",
    "mimebundle",
    "ShownResult",
    "RESULT_MIMETYPE",
    "OUTPUT_SHOWN_BELOW",
    # the failure check
    "command_failures",
]
