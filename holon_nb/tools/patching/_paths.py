"""Patch path resolution and confinement (commands spec §10.5; workspace spec §2.2-§2.3; per D3).

Relative paths join the active execution root; absolute ones stand alone.
Both are normalised lexically (``..`` never climbs above ``/``), then resolved
with symlinks followed (``realpath`` of the longest existing prefix, the rest
appended). A relative target must stay inside ``realpath(execution root)``; an
absolute one inside ``realpath`` of a bound root (agent home, workspace anchors
and live execution roots) unless ``patch_outside_workspace`` is on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ._failures import absolute_prefix_hint, io_failure, path_escape, syntax_error

__all__ = ["PathPolicy", "inside", "normalize", "resolve_link", "resolve_path"]


def normalize(path: str) -> str:
    """Lexically normalise an absolute POSIX path: drop ``.`` and empty parts; ``..`` pops one
    normal component and never climbs above ``/`` (``/../etc`` → ``/etc``)."""
    parts: list[str] = []
    for comp in path.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if parts:
                parts.pop()
            continue
        parts.append(comp)
    return "/" + "/".join(parts)


def inside(path: str, root: str) -> bool:
    """Component-wise containment of normalised absolute paths."""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


@dataclass(frozen=True)
class PathPolicy:
    """Where a patch may write.

    Attributes:
        execution_root: The active execution root (relative paths join it).
        bound_roots: The agent's bound roots (agent home, attached workspaces' anchors and live roots).
        allow_outside: ``HolonNB.patch_outside_workspace``: absolute paths go anywhere.
        cwd: The active cwd (reported in ``path_escape`` details).
    """

    execution_root: str
    bound_roots: tuple[str, ...] = ()
    allow_outside: bool = False
    cwd: str = ""
    _real_root: str = field(default="", init=False, repr=False, compare=False)
    _real_bound: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_real_root", os.path.realpath(str(self.execution_root)))
        object.__setattr__(self, "_real_bound", tuple(os.path.realpath(str(r)) for r in self.bound_roots))

    @property
    def real_root(self) -> str:
        """``realpath(execution_root)``."""
        return self._real_root

    def allows_absolute(self, resolved: str) -> bool:
        """Whether an absolute target that resolved to ``resolved`` may be written."""
        return self.allow_outside or any(inside(resolved, root) for root in self._real_bound)


def _realpath(path: str, requested: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError) as exc:  # NUL bytes, over-long names
        raise io_failure(f"cannot resolve patch path {requested[:200]}", requested, exc) from None


def _blocking_file(normalized: str, requested: str, policy: PathPolicy, absolute: bool) -> None:
    """Refuse a path one of whose existing ancestors is not a directory (``afile/x.txt``).

    Raises:
        ToolFailure: ``io_error`` (``details.reason="not_a_directory"``, ``blocking_path`` as written).
    """
    parts = normalized.strip("/").split("/")
    prefix = ""
    for comp in parts[:-1]:
        prefix = f"{prefix}/{comp}"
        if os.path.isdir(prefix):
            continue
        if not os.path.lexists(prefix):
            return
        shown = prefix if absolute else os.path.relpath(prefix, normalize(str(policy.execution_root)))
        what = "a file, not a directory" if os.path.isfile(prefix) else "not a directory"
        raise io_failure(
            f"cannot use {requested}: {shown} is {what}",
            requested,
            None,
            reason="not_a_directory",
            blocking_path=shown,
            resolved_blocking_path=os.path.realpath(prefix),
        )


def _check(requested: str, policy: PathPolicy) -> tuple[bool, str]:
    if not requested.strip():
        raise syntax_error(
            "missing_file_header", "a file header names an empty path", None, "write a file path in every file header"
        )
    if "\0" in requested:
        raise io_failure("patch path contains a NUL character", requested.replace("\0", "\\0"))
    absolute = requested.startswith("/")
    return absolute, normalize(requested if absolute else f"{policy.execution_root}/{requested}")


def _confine(requested: str, normalized: str, resolved: str, policy: PathPolicy, absolute: bool) -> None:
    allowed = policy.allows_absolute(resolved) if absolute else inside(resolved, policy.real_root)
    if not allowed:
        raise path_escape(requested, normalized, resolved, str(policy.execution_root), str(policy.cwd), absolute)


def resolve_path(requested: str, policy: PathPolicy) -> str:
    """Resolve one patch path (as written, prefix-stripped) to the absolute path to read and write.

    Returns:
        The symlink-resolved absolute path.

    Raises:
        ToolFailure: ``path_escape`` when it leaves its allowed roots; ``tool_execution_failed`` when a
            missing relative path names an existing writable file as ``/<path>`` (an ``a/``-prefixed
            absolute path); ``invalid_patch_syntax`` (``missing_file_header``) for an empty path;
            ``io_error`` for a path the OS cannot represent (NUL byte), or whose existing ancestor is
            not a directory (``details.reason="not_a_directory"``).
    """
    absolute, normalized = _check(requested, policy)
    resolved = _realpath(normalized, requested)
    _confine(requested, normalized, resolved, policy, absolute)
    _blocking_file(normalized, requested, policy, absolute)
    if not absolute and not os.path.lexists(resolved):
        guess = "/" + requested
        if os.path.isfile(guess):
            guess_resolved = _realpath(normalize(guess), guess)
            if policy.allows_absolute(guess_resolved):
                raise absolute_prefix_hint(requested, str(policy.execution_root))
    return resolved


def resolve_link(requested: str, policy: PathPolicy) -> str | None:
    """The location of the symlink ``requested`` names, when it names one (commands spec §10.5).

    A symlink being deleted or moved is acted on itself, as ``git apply`` does, so it is located
    without following it: ``realpath`` of its parent plus its own name, confined like any target.

    Returns:
        That absolute location, or None when ``requested`` is not a symlink (resolve it with
        :func:`resolve_path`).

    Raises:
        ToolFailure: ``path_escape`` when the link itself lies outside the allowed roots; the
            :func:`resolve_path` input errors.
    """
    absolute, normalized = _check(requested, policy)
    if normalized == "/":
        return None
    parent, name = os.path.split(normalized)
    own = os.path.join(_realpath(parent, requested), name)
    if not os.path.islink(own):
        return None
    _confine(requested, normalized, own, policy, absolute)
    return own
