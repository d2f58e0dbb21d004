"""The model receipt: the text a model reads for one tool call, and the envelope's byte-stable JSON.

Rules (commands spec §3.4): an error envelope renders as the uniform JSON error receipt (rule 1,
:func:`render_error_receipt`); a success one as the tool's own text receipt when its declaration says
``custom_text_receipt`` (rules 2-3), else as the compact canonical envelope (:func:`render_json_receipt`);
secret values are then scrubbed (rule 5, D6: :mod:`.scrubbing`), and a receipt over the turn's
tool-output budget is replaced by a compact stand-in (rule 4, :func:`project_receipt`).
:func:`model_receipt` does all of it in that order; :func:`receipt_text` is the first step alone.

Which tool renders how is read from its declaration through :class:`Specs` (a
:class:`holon_nb.tools.Registry` is one): this package sits below ``holon_nb.tools`` and imports none of it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

__all__ = [
    "CUSTOM_TEXT",
    "DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS",
    "ModelReceipt",
    "ReceiptContext",
    "ReceiptSpec",
    "Specs",
    "dumps_envelope",
    "estimate_tokens",
    "model_receipt",
    "project_receipt",
    "receipt_text",
    "render_error_receipt",
    "render_json_receipt",
]

#: The turn's tool-output budget when none is set, in estimated tokens (commands spec §3.4 rule 4).
DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS = 2500
#: ``holon_nb.tools._spec.Rendering.CUSTOM_TEXT``'s value (a ``str`` enum, so the member compares equal to it).
CUSTOM_TEXT = "custom_text_receipt"
_ENVELOPE_ORDER = ("tool_name", "status", "summary_text", "result", "error")
_DETAILS_BUDGET = 1000
_TEXT_CAP = 512  # a stand-in's summary, message and hint (as ``ToolError``'s source chain)


class ReceiptSpec(Protocol):
    """What rendering reads of one tool declaration (:class:`holon_nb.tools.ToolSpec` is one).

    Attributes:
        rendering: ``"custom_text_receipt"`` (:data:`CUSTOM_TEXT`) or ``"canonical_json_envelope"``.
        render_receipt: The tool's text receipt, ``(envelope, ReceiptContext) -> str``, or None.
        human: The body of its human receipt, ``result dict -> lines`` (:mod:`.human`), or None.
    """

    @property
    def rendering(self) -> str: ...
    @property
    def render_receipt(self) -> Callable[..., str] | None: ...
    @property
    def human(self) -> Callable[..., list[str]] | None: ...


class Specs(Protocol):
    """Where a tool's declaration is looked up by name (:class:`holon_nb.tools.Registry` is one)."""

    def get(self, name: str) -> ReceiptSpec | None: ...


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


class ModelReceipt(NamedTuple):
    """What :func:`model_receipt` returns.

    Attributes:
        text: What the model gets: ``full``, or its projection stand-in when over budget.
        full: The rendered receipt with secrets scrubbed, before the projection guard (what is stored).
        projected: True when ``text`` is the stand-in.
    """

    text: str
    full: str
    projected: bool


def receipt_text(env: dict[str, Any], specs: Specs | None, context: ReceiptContext | None = None) -> str:
    """The model-visible text of an envelope, before scrubbing and projection (commands spec §3.4 rules 1-3).

    Args:
        env: The envelope (scrubbed or not: this step does not look for secrets).
        specs: Where the tool's declaration is looked up; None renders every success as canonical JSON.
        context: Passed to a custom text renderer as ``spec.render_receipt(env, context)``; None: a default
            :class:`ReceiptContext`.
    """
    if env.get("status") == "error":
        return render_error_receipt(env)
    spec = specs.get(env["tool_name"]) if specs is not None else None
    if spec is not None and spec.rendering == CUSTOM_TEXT and spec.render_receipt:
        return spec.render_receipt(env, context or ReceiptContext())
    return render_json_receipt(env)


def model_receipt(
    env: dict[str, Any], specs: Specs | None, context: ReceiptContext, scrub: Callable[[str], str]
) -> ModelReceipt:
    """The model receipt of one call: rendered (:func:`receipt_text`), scrubbed, projected.

    Args:
        env: The envelope as the model may see it (escape codes removed, secrets scrubbed).
        specs: Where the tool's declaration is looked up.
        context: The call's execution id and the turn's tool-output budget.
        scrub: The runtime's D6 text scrubber (``Scrubber.text``).
    """
    full = scrub(receipt_text(env, specs, context))
    text, projected = project_receipt(full, env, context.execution_id, context.budget_tokens)
    return ModelReceipt(text, full, projected)


def _compact_encoder() -> Any:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, its encoder made once.

    ``json.dumps`` with options builds an encoder at every call, and ``JSONEncoder.encode`` its C
    encoder at every call (issue 12: an envelope is serialised at every call). This keeps CPython's C
    encoder (``json.encoder.c_make_encoder``) itself, without the circular-reference table, so a failed
    call leaves no stale entry behind (a circular value ends in ``RecursionError``, not ``ValueError``);
    the plain encoder where the C one is missing (another Python).
    """
    plain = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return plain.encode
    encode = make(None, plain.default, json.encoder.encode_basestring, None, ":", ",", True, False, True)

    def compact(value: Any) -> str:
        if isinstance(value, str):
            return json.encoder.encode_basestring(value)
        return "".join(encode(value, 0))

    return compact


_compact = _compact_encoder()


_KEY_JSON = {k: json.dumps(k) for k in _ENVELOPE_ORDER}  # the keys every envelope has, written once


def dumps_envelope(env: dict[str, Any], indent: int | None = None) -> str:
    """Serialise an envelope: top-level keys in contract order, nested keys sorted.

    Args:
        env: The envelope dict.
        indent: None for the compact, byte-stable form; an int for a readable form.
    """
    ordered = {k: env[k] for k in _ENVELOPE_ORDER if k in env}
    ordered.update({k: v for k, v in env.items() if k not in ordered})
    if indent is None:
        return "{" + ",".join((_KEY_JSON.get(k) or json.dumps(k)) + ":" + _compact(v) for k, v in ordered.items()) + "}"
    body = ",\n".join(
        " " * indent
        + json.dumps(k)
        + ": "
        + json.dumps(v, sort_keys=True, indent=indent, ensure_ascii=False).replace("\n", "\n" + " " * indent)
        for k, v in ordered.items()
    )
    return "{\n" + body + "\n}"


def _budget_details(details: Any) -> Any:
    text = _compact(details)
    if len(text) <= _DETAILS_BUDGET:
        return details
    return {
        "omitted": True,
        "reason": "details exceeded model-visible budget",
        "char_count": len(text),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "preview": text[:_DETAILS_BUDGET],
    }


def render_error_receipt(env: dict[str, Any]) -> str:
    """Render the uniform JSON error receipt (commands spec §3.4 rule 1)."""
    err = env["error"]
    out: dict[str, Any] = {
        "ok": False,
        "tool_name": env["tool_name"],
        "kind": err["kind"],
        "message": err["message"],
        "retryable": err.get("retryable", False),
    }
    if err.get("domain") is not None:
        out["domain"] = err["domain"]
    if err.get("recovery_hint") is not None:
        out["hint"] = err["recovery_hint"]
    details = err.get("details")
    if isinstance(details, dict) and isinstance(details.get("field"), str):
        out["field"] = details["field"]
    if details is not None:
        out["details"] = _budget_details(details)
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False)


def render_json_receipt(env: dict[str, Any]) -> str:
    """Render a ``canonical_json_envelope`` success receipt (compact envelope JSON)."""
    return dumps_envelope(env)


def estimate_tokens(text: str) -> int:
    """Estimate tokens as ``floor((chars + 3) / 4)`` (commands spec §3.4 rule 4)."""
    return (len(text) + 3) // 4


def _cap(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= _TEXT_CAP else text[: _TEXT_CAP - 1] + "…"


def project_receipt(
    receipt: str,
    env: dict[str, Any],
    execution_id: str,
    budget_tokens: int = DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS,
) -> tuple[str, bool]:
    """Apply the provider-projection guard (commands spec §3.4 rule 4).

    Args:
        receipt: The rendered (and already scrubbed) receipt.
        env: The envelope it was rendered from.
        execution_id: The tool execution id (``tool_…``) for ``output_ref``.
        budget_tokens: The model's tool-output budget in estimated tokens.

    Returns:
        ``(text, projected)``: the receipt itself when within budget, else the
        compact JSON stand-in, and whether the stand-in was used.
    """
    if estimate_tokens(receipt) <= budget_tokens:
        return receipt, False
    out: dict[str, Any] = {
        "tool_name": env["tool_name"],
        "status": env["status"],
        "summary_text": _cap(env.get("summary_text") or ""),
        "output_ref": f"tool_execution:{execution_id}:output",
        "provider_projection_truncated": True,
    }
    if env.get("error"):
        err = env["error"]
        out["error"] = {
            "kind": err["kind"],
            "message": _cap(err["message"]),
            "recovery_hint": _cap(err.get("recovery_hint")),
            "retryable": err.get("retryable", False),
        }
    return _compact(out), True
