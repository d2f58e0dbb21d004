"""The ApplyPatch engine: parse, resolve, apply in memory, commit (commands spec §10).

Pure and importable without a runtime: callers pass the patch text, the
surface and a :class:`~.paths.PathPolicy`. Every failure is a
:class:`~holon_nb.tools._errors.ToolFailure` carrying the typed error; a
failed call leaves every file byte-for-byte as it was (per D2).
"""

from __future__ import annotations

import os
from typing import Any

from .._errors import ToolFailure
from ._commit import ChangedOnDisk, CommitError, SwappedPath, commit
from ._detect import UNIFIED, UNIFIED_SURFACE, ParsedPatch, parse_patch
from ._failures import changed_during_patch, io_failure
from ._match import FFFD_HINT
from ._model import Diagnostic, FilePatch, IgnoredMetadata
from ._paths import PathPolicy, resolve_link, resolve_path
from ._plan import Plan
from ._result import build_result, changed_file

__all__ = ["apply_patch", "commit_plan", "prepare"]

_FFFD = "\ufffd"


def _resolve(operations: list[tuple[FilePatch, str, Any]], policy: PathPolicy) -> tuple[dict[str, str], set[str]]:
    """Resolve every target before any file is read (commands spec §10.5).

    A path that the patch deletes or moves away and that names a symlink is the link itself
    (:func:`~.paths.resolve_link`) for the whole patch; every other path follows symlinks.

    Returns:
        ``(resolved, links)``: requested path → absolute path, and the requested paths that are links.
    """
    leaving = {
        target if action == "delete" else target[0] for _, action, target in operations if action in ("delete", "move")
    }
    resolved: dict[str, str] = {}
    links: set[str] = set()
    for _, action, target in operations:
        if action == "noop":
            continue
        for path in target if action == "move" else (target,):
            if path in resolved:
                continue
            own = resolve_link(path, policy) if path in leaving else None
            if own is not None:
                links.add(path)
                resolved[path] = own
            else:
                resolved[path] = resolve_path(path, policy)
    return resolved, links


def _exists(path: str, policy: PathPolicy) -> bool:
    try:
        return os.path.lexists(resolve_path(path, policy))
    except ToolFailure:
        return False


def _unpad_names(patches: list[FilePatch], policy: PathPolicy) -> None:
    """Drop trailing whitespace after a unified diff's file name when the exact name does not exist.

    ``--- name.txt     `` (an editor or a model padding the header) names ``name.txt`` unless a file
    called ``"name.txt     "`` exists. Changes the file patches in place.
    """
    names: dict[str, str] = {}
    for fp in patches:
        for path in fp.paths():
            trimmed = path.rstrip()
            if trimmed != path and trimmed and path not in names and not _exists(path, policy):
                names[path] = trimmed
    if not names:
        return
    for fp in patches:
        fp.old_path, fp.new_path, fp.rename_from, fp.rename_to = (
            names.get(p, p) if p is not None else None for p in (fp.old_path, fp.new_path, fp.rename_from, fp.rename_to)
        )


def _apply(patch: str, policy: PathPolicy, surface: str) -> tuple[ParsedPatch, Plan, list[str]]:
    parsed, plan = prepare(patch, policy, surface)
    changed_paths = commit_plan(plan)
    return parsed, plan, changed_paths


def prepare(patch: str, policy: PathPolicy, surface: str = UNIFIED_SURFACE) -> tuple[ParsedPatch, Plan]:
    """Parse, resolve and apply a patch in memory; nothing is written (the first half of :func:`apply_patch`).

    Raises:
        ToolFailure: every commands spec §10.8 kind except a commit's ``io_error``.
    """
    parsed = parse_patch(patch, surface)
    if parsed.detected_format == UNIFIED:
        _unpad_names(parsed.patches, policy)
    operations = [(fp, *fp.operation()) for fp in parsed.patches]
    resolved, links = _resolve(operations, policy)
    plan = Plan(root=str(policy.execution_root), resolved=resolved, links=links)
    for fp, action, target in operations:
        plan.apply(fp, action, target)
    return parsed, plan


def commit_plan(plan: Plan) -> list[str]:
    """Write a prepared plan to disk, all or nothing (per D2); return the changed absolute paths.

    Raises:
        ToolFailure: ``io_error``; ``details.reason="file_changed_during_patch"`` (retryable) when another
            process changed a file after it was read.
    """
    changes, changed_paths = plan.changes()
    try:
        commit(changes)
    except CommitError as exc:
        cause = exc.cause
        if isinstance(cause, (ChangedOnDisk, SwappedPath)) and not exc.rollback_errors:
            requested = {v: k for k, v in plan.resolved.items()}
            raise changed_during_patch(requested.get(exc.path, exc.path), exc.path) from None
        message = f"could not {exc.operation} {exc.path}; no file was changed"
        if exc.rollback_errors:
            message = f"could not {exc.operation} {exc.path}, and restoring the original files failed"
        raise io_failure(
            message,
            exc.path,
            cause if isinstance(cause, OSError) else None,
            operation=exc.operation,
            rolled_back=not exc.rollback_errors,
            rollback_errors=exc.rollback_errors[:5],
        ) from None
    return changed_paths


def apply_patch(patch: str, policy: PathPolicy, surface: str = UNIFIED_SURFACE) -> dict[str, Any]:
    """Apply patch text to the filesystem, all or nothing.

    Args:
        patch: The patch text (unified diff or Codex DSL; trimmed here).
        policy: Where relative paths resolve and which roots may be written (per D3).
        surface: ``unified_diff_json`` (default) or ``codex_dsl_freeform``.

    Returns:
        The ``ApplyPatchResult`` payload: ``changed_files``, ``changed_paths`` (absolute),
        ``changed_file_count``, ``summary_text``, and ``ignored_metadata``/``diagnostics`` when non-empty.

    Raises:
        ToolFailure: the commands spec §10.8 kinds (``invalid_patch_syntax`` with ``details.rule``,
            ``unsupported_git_patch_feature``, ``rename_path_mismatch``, ``missing_git_header``, ``path_escape``,
            ``tool_execution_failed``, ``missing_file``, ``existing_file``, ``context_not_found``,
            ``ambiguous_context``, ``io_error``).
    """
    fffd = _FFFD in patch
    try:
        parsed, plan, changed_paths = _apply(patch, policy, surface)
    except ToolFailure as failure:
        if fffd:  # the hint says not to retry U+FFFD context (commands spec §10.7)
            failure.error.recovery_hint = ((failure.error.recovery_hint or "") + FFFD_HINT).strip()
        raise
    ignored: list[IgnoredMetadata] = [m for fp in parsed.patches for m in fp.ignored_metadata]
    diagnostics: list[Diagnostic] = [d for fp in parsed.patches for d in fp.diagnostics]
    diagnostics += plan.diagnostics
    diagnostics += parsed.diagnostics
    if fffd:
        diagnostics.append(
            Diagnostic(
                kind="replacement_character_in_input",
                message=(
                    "the patch text contains U+FFFD replacement characters, which were written as given; "
                    "check that the patched lines carry the intended characters"
                ),
            )
        )
    files = [changed_file(op.action, op.patch, op.path, op.from_path, op.applied) for op in plan.operations]
    return build_result(files, changed_paths, ignored, diagnostics)
