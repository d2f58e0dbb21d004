"""The shared result envelope, ``ToolError``, and receipt rendering.

Rules come from commands spec §3 (envelope, error object, error-kind
catalogue, model-visible rendering) and the spec README's consistency notes.
An envelope is a plain ``dict`` with keys in the order ``tool_name``,
``status``, ``summary_text``, ``result``, ``error``; absent optionals are
omitted. Serialisation sorts every nested object's keys so receipts are
byte-stable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ERROR_KINDS",
    "ToolError",
    "success_envelope",
    "error_envelope",
    "dumps_envelope",
    "render_error_receipt",
    "render_json_receipt",
    "project_receipt",
    "estimate_tokens",
    "DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS",
]

#: Closed catalogue of error kinds with (domain, retryable) defaults (commands spec §3.3).
ERROR_KINDS: dict[str, tuple[str | None, bool]] = {
    "tool_not_exposed_for_round": (None, False),
    "truncated_mutation_tool_call": (None, True),
    "unknown_tool": (None, False),
    "unsupported_agent_profile_capability": (None, False),
    "invalid_tool_input": (None, False),
    "tool_execution_failed": ("unknown", False),
    "internal_error": ("unknown", False),
    "io_error": ("io", False),
    "runtime_db_busy": ("storage", True),
    "workdir_not_found": (None, False),
    "command_spawn_failed": (None, False),
    "command_timed_out": (None, False),
    "task_not_found": ("not_found", False),
    "task_not_running": ("validation", False),
    "task_handle_type_mismatch": ("task", False),
    "task_input_interrupted": ("task", True),
    "task_input_failed": ("task", False),
    "approval_denied": ("policy", False),
    # --- patches (commands spec §10.8)
    "invalid_patch_syntax": (None, False),
    "unsupported_git_patch_feature": (None, False),
    "rename_path_mismatch": (None, False),
    "missing_git_header": (None, False),
    "path_escape": (None, False),
    "missing_file": (None, False),
    "existing_file": (None, False),
    "context_not_found": (None, False),
    "ambiguous_context": (None, False),
    # --- workspaces (workspace spec §1.6, §3-§8)
    "protected_workspace": (None, False),
    # --- work items, waits, timers (agents spec §0.3, §3-§5)
    "revision_conflict": ("conflict", True),
    "same_revision_payload_conflict": ("conflict", False),
    "work_item_not_found": ("not_found", False),
    "unknown_work_item": ("not_found", False),
    "work_item_access_denied": ("policy", False),
    "work_item_not_open": ("validation", False),
    "work_item_completed": ("validation", False),
    "work_item_completion_in_progress": ("conflict", False),
    "work_item_execution_binding_missing": ("policy", False),
    "work_item_execution_binding_mismatch": ("policy", False),
    "work_item_execution_binding_stale": ("conflict", False),
    "work_item_completion_report_binding_mismatch": ("policy", False),
    "missing_completion_report": ("validation", False),
    "completion_report_request_invalidated": ("conflict", False),
    "continuation_conflict": ("conflict", False),
    "task_agent_mismatch": ("policy", False),
    "task_work_item_mismatch": ("validation", False),
    "task_result_evidence_missing": ("task", False),
    "timer_not_found": ("not_found", False),
    "timer_not_active": ("validation", False),
    "timer_completed": ("validation", False),
    "wait_owner_binding_mismatch": ("policy", False),
    "wait_settlement_stale": ("conflict", True),
    "empty_final_brief": ("validation", False),
    "message_not_queued": ("conflict", False),
    "agent_stopped": ("conflict", False),
    "agent_message_not_authorized": ("policy", False),
    # --- agents, messages, memory (agents spec §5.2-§5.4, §5.17-§5.18, §6)
    "agent_not_found": ("not_found", False),
    "agent_deleting": ("conflict", False),
    "agent_deleted": ("not_found", False),
    "memory_source_not_found": ("not_found", False),
    "memory_index_unavailable": ("storage", False),
    # --- turn loop (turn-loop spec §1.5, §1.8.3; agents spec §2)
    "not_executed_after_terminal_transition": (None, False),
    "tool_call_not_allowed": (None, False),
    "empty_completion_report": ("validation", False),
    "turn_cancelled": (None, False),
    # --- agent creation (agents spec §5.5-§5.6)
    "template_requires_new_agent": ("conflict", False),
    "agent_identity_conflict": ("conflict", False),
    "model_request_rejected": ("validation", False),
    "spawn_agent_failed": ("task", False),
    "unsupported_runtime_capability": ("runtime", False),
    # --- images (workspace spec §12-§13)
    "image_read_failed": (None, False),
    "vision_adapter_unavailable": (None, False),
    "vision_observation_failed": (None, False),
    "image_generation_failed": (None, False),
    "generated_media_write_failed": (None, False),
    "generated_image_invalid": (None, False),
    # --- web (workspace spec §9-§11)
    "web_fetch_disabled": ("policy", False),
    "invalid_url": ("validation", False),
    "network_denied": ("policy", False),
    "network_failed": ("network", True),
    "too_many_redirects": ("network", False),
    "redirect_without_location": ("network", False),
    "invalid_redirect_location": ("network", False),
    "provider_unavailable": ("provider", False),
    "rate_limited": ("provider", True),
    "parse_failed": ("provider", False),
    "response_too_large": ("provider", False),
    "x_search_unavailable": ("provider", False),
}

DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS = 2500
_ENVELOPE_ORDER = ("tool_name", "status", "summary_text", "result", "error")
_DETAILS_BUDGET = 1000
_TEXT_CAP = 512


@dataclass
class ToolError:
    """A typed tool error (commands spec §3.2).

    Attributes:
        kind: Stable snake_case kind from :data:`ERROR_KINDS`.
        message: One human sentence.
        details: Structured context; ``details["field"]`` names a bad input field.
        recovery_hint: Actionable next step, or None.
        retryable: Whether retrying the same call may succeed (default False).
        domain: Error domain; defaults from the catalogue when None.
        source_chain: Context messages outermost-first (≤8, ≤512 chars each).
    """

    kind: str
    message: str
    details: Any = None
    recovery_hint: str | None = None
    retryable: bool | None = None
    domain: str | None = None
    source_chain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form; absent optionals omitted."""
        default_domain, default_retry = ERROR_KINDS.get(self.kind, (None, False))
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        domain = self.domain if self.domain is not None else default_domain
        if domain is not None:
            out["domain"] = domain
        if self.details is not None:
            out["details"] = self.details
        if self.recovery_hint is not None:
            out["recovery_hint"] = self.recovery_hint
        out["retryable"] = bool(default_retry if self.retryable is None else self.retryable)
        chain = _clean_chain(self.source_chain)
        if chain:
            out["source_chain"] = chain
        return out


def _clean_chain(chain: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for entry in chain:
        line = str(entry).splitlines()[0] if str(entry) else ""
        line = line[:_TEXT_CAP]
        if line and line not in seen:
            seen.append(line)
        if len(seen) == 8:
            break
    return seen


def success_envelope(tool_name: str, payload: dict[str, Any], status: str = "success") -> dict[str, Any]:
    """Build a success (or deferred) envelope, lifting a top-level ``summary_text``.

    Args:
        tool_name: The public name that was called (``TaskList`` for the alias).
        payload: The tool's typed result as a dict; not modified.
        status: ``"success"`` or ``"deferred"``.
    """
    result = dict(payload)
    env: dict[str, Any] = {"tool_name": tool_name, "status": status}
    summary = result.pop("summary_text", None)
    if summary is not None:
        env["summary_text"] = summary
    env["result"] = result
    return env


def error_envelope(tool_name: str, error: ToolError) -> dict[str, Any]:
    """Build an error envelope; ``summary_text`` equals ``error.message``."""
    return {
        "tool_name": tool_name,
        "status": "error",
        "summary_text": error.message,
        "error": error.to_dict(),
    }


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
