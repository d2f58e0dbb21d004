"""Typed ApplyPatch failures (commands spec §10.8).

Each helper returns a :class:`~holon_nb.tools._errors.ToolFailure` for the
caller to raise. ``invalid_patch_syntax`` always carries ``details.rule``
(plus ``path`` and ``line`` when known); the rule, not the kind, says which
syntax rule failed.
"""

from __future__ import annotations

import errno as _errno
from typing import Any

from .._envelope import ToolError
from .._errors import ToolFailure

__all__ = [
    "SYNTAX_RULES",
    "absolute_prefix_hint",
    "changed_during_patch",
    "existing_file",
    "io_failure",
    "missing_file",
    "missing_git_header",
    "path_escape",
    "rename_path_mismatch",
    "syntax_error",
    "unsupported_feature",
]

#: Every ``details.rule`` of ``invalid_patch_syntax`` (commands spec §10.8).
SYNTAX_RULES = frozenset(
    {
        "missing_file_header",
        "invalid_hunk_header",
        "invalid_hunk_line",
        "invalid_hunk_empty_line",
        "missing_hunk",
        "wrong_patch_format",
        "unknown_patch_format",
        "unexpected_git_metadata",
        "invalid_git_header",
        "path_header_mismatch",
        "missing_rename_header",
        "missing_end_patch",
        "invalid_codex_add_line",
        "invalid_codex_change_line",
        "invalid_codex_hunk",
    }
)

_RETRYABLE_ERRNOS = {_errno.EINTR, _errno.ETIMEDOUT, _errno.EAGAIN, _errno.EWOULDBLOCK}


def syntax_error(rule: str, message: str, path: str | None, hint: str, line: int | None = None) -> ToolFailure:
    """``invalid_patch_syntax`` with ``details {rule, path?, line?}``."""
    assert rule in SYNTAX_RULES, rule
    details: dict[str, Any] = {"rule": rule}
    if path is not None:
        details["path"] = path
    if line is not None:
        details["line"] = line
    return ToolFailure(ToolError(kind="invalid_patch_syntax", message=message, details=details, recovery_hint=hint))


def unsupported_feature(line: str, path: str | None = None) -> ToolFailure:
    """``unsupported_git_patch_feature`` for binary, copy and submodule patches."""
    details: dict[str, Any] = {"line": line}
    if path is not None:
        details["path"] = path
    return ToolFailure(
        ToolError(
            kind="unsupported_git_patch_feature",
            message=f"unsupported git patch feature: {line}",
            details=details,
            recovery_hint="submit a text-only unified diff without binary, copy, or submodule patch features",
        )
    )


def rename_path_mismatch(rename_from: str, rename_to: str) -> ToolFailure:
    """``rename_path_mismatch``: rename headers disagree with ``diff --git`` or ``---``/``+++``."""
    return ToolFailure(
        ToolError(
            kind="rename_path_mismatch",
            message="rename headers disagree with diff path headers",
            details={"rename_from": rename_from, "rename_to": rename_to},
            recovery_hint="make rename from/to agree with diff --git and ---/+++ paths",
        )
    )


def missing_git_header(rename_from: str, rename_to: str) -> ToolFailure:
    """``missing_git_header``: rename headers without ``diff --git``."""
    return ToolFailure(
        ToolError(
            kind="missing_git_header",
            message="rename patches must include a diff --git header",
            details={"rename_from": rename_from, "rename_to": rename_to},
            recovery_hint="start rename patches with diff --git a/old_path b/new_path",
        )
    )


def path_escape(requested: str, normalized: str, resolved: str, root: str, cwd: str, absolute: bool) -> ToolFailure:
    """``path_escape`` (per D3) with ``details {requested_path, path, resolved_path, active_workspace_root, cwd}``."""
    where = "every bound workspace root and the agent home" if absolute else "the workspace execution root"
    return ToolFailure(
        ToolError(
            kind="path_escape",
            message=f"patch path escapes the workspace: {requested}",
            details={
                "requested_path": requested,
                "path": normalized,
                "resolved_path": resolved,
                "active_workspace_root": root,
                "cwd": cwd,
            },
            recovery_hint=(
                f"the path resolves (symlinks followed) outside {where}; use a relative path inside "
                "the current workspace, or an absolute path inside an attached workspace or the agent home"
            ),
        )
    )


def missing_file(action: str, requested: str, resolved: str, root: str) -> ToolFailure:
    """``missing_file`` with ``details.action`` ∈ ``delete``, ``update``, ``rename``."""
    extra = (
        f" If {requested} is meant to be a new file, use --- /dev/null + +++ b/{requested} headers."
        if action == "update"
        else ""
    )
    return ToolFailure(
        ToolError(
            kind="missing_file",
            message=f"cannot {action} missing file {requested}",
            details={
                "action": action,
                "requested_path": requested,
                "path": requested,
                "resolved_path": resolved,
                "active_workspace_root": root,
            },
            recovery_hint=(
                f"read {requested} first or adjust the patch so it targets an existing file. If it was meant "
                f"for another workspace, switch workspace first or give the intended absolute path.{extra}"
            ),
        )
    )


def existing_file(requested: str, resolved: str) -> ToolFailure:
    """``existing_file``: add onto a non-empty file, or move onto any existing file."""
    return ToolFailure(
        ToolError(
            kind="existing_file",
            message=f"target file already exists: {requested}",
            details={"path": requested, "resolved_path": resolved},
            recovery_hint=f"use a modify hunk for {requested}, or choose a new add/rename target",
        )
    )


def io_failure(message: str, path: str, exc: BaseException | None = None, **extra: Any) -> ToolFailure:
    """``io_error`` (domain ``io``); retryable only for EINTR, ETIMEDOUT and EAGAIN."""
    err_no = getattr(exc, "errno", None)
    details: dict[str, Any] = {"path": path, **extra}
    if err_no is not None:
        details["errno"] = err_no
    if exc is not None:
        details["error"] = f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"[:300]
    return ToolFailure(
        ToolError(
            kind="io_error",
            message=message,
            details=details,
            recovery_hint="check the file and its directory (existence, permissions, encoding), then retry the patch",
            retryable=err_no in _RETRYABLE_ERRNOS,
        )
    )


def absolute_prefix_hint(requested: str, root: str) -> ToolFailure:
    """``tool_execution_failed``: ``a/home/x`` was meant as ``/home/x`` (commands spec §10.5)."""
    return ToolFailure(
        ToolError(
            kind="tool_execution_failed",
            message=(
                f"Path `{requested}` not found in workspace `{root}`. This looks like an absolute path that was "
                f"prefixed with `a/` and stripped to a relative path."
            ),
            details={"requested_path": requested, "suggested_path": "/" + requested},
            recovery_hint=f"write it as `/{requested}` (no `a/` prefix) in the diff header",
        )
    )


def changed_during_patch(requested: str, resolved: str) -> ToolFailure:
    """``io_error`` (retryable) with ``details.reason="file_changed_during_patch"``: another process changed
    a file between its read and its commit, so nothing was written."""
    return ToolFailure(
        ToolError(
            kind="io_error",
            message=f"{requested} changed on disk while the patch was being applied; no file was changed",
            details={"path": requested, "resolved_path": resolved, "reason": "file_changed_during_patch"},
            recovery_hint=(
                f"another process is writing {requested}: wait until it is done, re-read the file, then retry the patch"
            ),
            retryable=True,
        )
    )
