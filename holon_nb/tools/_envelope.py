"""The shared result envelope and ``ToolError``.

Rules come from commands spec §3 (envelope, error object, error-kind
catalogue) and the spec README's consistency notes. An envelope is a plain
``dict`` with keys in the order ``tool_name``, ``status``, ``summary_text``,
``result``, ``error``; absent optionals are omitted. Its serialisation and the
model-visible receipts made from it are :mod:`holon_nb.render._receipt`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ERROR_KINDS", "ToolError", "success_envelope", "error_envelope"]

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
    # --- the opt-in Notebook family (issue 28; beyond the contract)
    "notebook_tools_disabled": ("policy", False),
    "notebook_unavailable": ("runtime", False),
    "variable_not_found": ("not_found", False),
    "cell_not_found": ("not_found", False),
    "notebook_edit_unsupported": ("policy", False),
    # --- MCP servers' tools (issue 29)
    "mcp_server_unavailable": ("mcp", True),
    "mcp_timeout": ("mcp", True),
    "mcp_tool_error": ("mcp", False),
}

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
