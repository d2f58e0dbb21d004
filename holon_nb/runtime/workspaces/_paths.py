"""Workspace path rules: lexical normalisation, containment, discovery and ids (workspace spec §1.1, §1.3, §2.2).

Everything here is pure or reads only small files (``.git`` markers, ``HEAD``);
nothing runs git. Paths travel as ``str`` (absolute, normalised).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "path_labels",
    "CANONICAL_ROOT",
    "GIT_WORKTREE_ROOT",
    "SHARED_READ",
    "EXCLUSIVE_WRITE",
    "AGENT_HOME_ALIAS",
    "Discovery",
    "normalize",
    "contains",
    "real_contains",
    "same_path",
    "discover",
    "workspace_id_for",
    "agent_home_id",
    "canonical_root_id",
    "worktree_root_id",
    "worktree_identity",
    "admin_dir_points_to",
    "real_dir",
]

CANONICAL_ROOT = "canonical_root"
GIT_WORKTREE_ROOT = "git_worktree_root"
SHARED_READ = "shared_read"
EXCLUSIVE_WRITE = "exclusive_write"
#: The bare alias every agent may use for its own home (workspace spec §1.1).
AGENT_HOME_ALIAS = "agent_home"


def normalize(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """Normalise a path lexically (workspace spec §2.2): absolute, no ``.``, ``..`` pops one component, never above ``/``.

    Args:
        path: The path; relative paths are joined to ``base``.
        base: Absolute base for relative paths (default: the process cwd).

    Returns:
        An absolute path string without symlink resolution (``/../etc`` → ``/etc``).
    """
    text = os.fspath(path)
    if not os.path.isabs(text):
        text = os.path.join(os.fspath(base) if base is not None else os.getcwd(), text)
    out = os.path.normpath(text)
    if out.startswith("//"):  # POSIX keeps a leading "//"; the spec has one root
        out = "/" + out.lstrip("/")
    return out


def contains(root: str, path: str) -> bool:
    """True when normalised ``path`` equals ``root`` or lies below it (component-wise prefix, workspace spec §2.2)."""
    root_parts = [p for p in root.split("/") if p]
    path_parts = [p for p in path.split("/") if p]
    return path_parts[: len(root_parts)] == root_parts


def _real(path: str) -> str:
    """``realpath`` of the longest existing prefix, with the missing rest appended (symlink hardening)."""
    return os.path.realpath(path)


def real_contains(root: str, path: str) -> bool:
    """True when ``path`` stays inside ``root`` after resolving symlinks (workspace spec §2.3 hardening)."""
    return contains(_real(root), _real(path))


def real_dir(path: str | os.PathLike[str]) -> str:
    """``realpath`` of a normalised path: the one spelling of a directory that anchors, ids and cwds use.

    A repository reached through a symlink is the same workspace as the repository
    itself (``workspace_id_for`` hashes this spelling). For a path without symlinks
    it equals :func:`normalize`, so ids of such paths are unchanged.
    """
    return normalize(os.path.realpath(normalize(path)))


def same_path(a: str, b: str) -> bool:
    """True when two paths name the same location (lexically, or once symlinks are resolved)."""
    return normalize(a) == normalize(b) or _real(a) == _real(b)


@dataclass(frozen=True)
class Discovery:
    """What :func:`discover` found for a directory (workspace spec §1.3).

    Attributes:
        anchor: The workspace anchor (repository root, or the directory itself).
        execution_root: The execution root (a linked worktree root, else the anchor).
        projection_kind: ``canonical_root`` or ``git_worktree_root``.
        cwd: The discovered default cwd: the path itself.
    """

    anchor: str
    execution_root: str
    projection_kind: str
    cwd: str


def _read_text(path: str, limit: int = 4096) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


def _linked_worktree_anchor(directory: str) -> str | None:
    """The origin anchor when ``directory/.git`` is a file ``gitdir: <anchor>/.git/worktrees/<name>``."""
    marker = os.path.join(directory, ".git")
    if not os.path.isfile(marker):
        return None
    text = _read_text(marker)
    if not text or not text.startswith("gitdir:"):
        return None
    target = text.splitlines()[0][len("gitdir:") :].strip()
    if not target:
        return None
    parts = normalize(target, directory).split("/")
    if len(parts) >= 4 and parts[-2] == "worktrees" and parts[-3] == ".git" and parts[-1]:
        return "/".join(parts[:-3]) or "/"
    return None


def _parents(path: str) -> list[str]:
    out = [path]
    while True:
        parent = os.path.dirname(out[-1])
        if parent == out[-1]:
            return out
        out.append(parent)


def discover(path: str) -> Discovery:
    """Discover the workspace of an existing directory (workspace spec §1.3).

    1. Walking up, a directory holding a *file* ``.git`` that points at
       ``<anchor>/.git/worktrees/<name>`` makes it a linked worktree root.
    2. Otherwise, walking up, a directory holding a *directory* ``.git`` is a
       canonical repository root.
    3. Otherwise the directory is its own anchor. The cwd is always ``path``.

    Args:
        path: An absolute, normalised directory path.
    """
    chain = _parents(path)
    for directory in chain:
        anchor = _linked_worktree_anchor(directory)
        if anchor is not None:
            return Discovery(anchor, directory, GIT_WORKTREE_ROOT, path)
    for directory in chain:
        if os.path.isdir(os.path.join(directory, ".git")):
            return Discovery(directory, directory, CANONICAL_ROOT, path)
    return Discovery(path, path, CANONICAL_ROOT, path)


def workspace_id_for(anchor: str) -> str:
    """``ws_`` + the first 15 hex digits of SHA-256 of the normalised anchor (workspace spec §1.1).

    Callers pass the anchor through :func:`real_dir` first, so a symlinked
    spelling of an attached repository yields the same id.
    """
    return "ws_" + hashlib.sha256(anchor.encode("utf-8")).hexdigest()[:15]


def agent_home_id(agent_id: str) -> str:
    """The agent-home workspace id ``agent_home:<agent_id>`` (workspace spec §1.1)."""
    return f"{AGENT_HOME_ALIAS}:{agent_id}"


def canonical_root_id(workspace_id: str) -> str:
    """``canonical_root:<workspace_id>`` (workspace spec §1.1)."""
    return f"{CANONICAL_ROOT}:{workspace_id}"


def worktree_root_id(workspace_id: str, path: str) -> str:
    """Base id of a linked worktree root: ``git_worktree_root:<workspace_id>:<path>`` (workspace spec §1.1)."""
    return f"{GIT_WORKTREE_ROOT}:{workspace_id}:{normalize(path)}"


def worktree_identity(root: str) -> dict[str, object]:
    """Read a linked worktree's identity from its files, without running git.

    Used where no git call can be awaited (the first projection of an agent whose
    notebook directory lies in a linked worktree).

    Returns:
        ``{git_dir, git_common_dir, branch_ref, branch, head_commit, detached}``;
        values are None when a file is missing.
    """
    text = (_read_text(os.path.join(root, ".git")) or "").split("\n", 1)[0]
    git_dir = normalize(text[len("gitdir:") :].strip(), root) if text.startswith("gitdir:") else None
    common = None
    head = None
    if git_dir:
        rel = (_read_text(os.path.join(git_dir, "commondir")) or "").strip()
        common = normalize(rel, git_dir) if rel else None
        head = (_read_text(os.path.join(git_dir, "HEAD")) or "").strip() or None
    branch_ref = head[5:].strip() if head and head.startswith("ref: ") else None
    return {
        "git_dir": git_dir,
        "git_common_dir": common,
        "branch_ref": branch_ref,
        "branch": branch_ref[len("refs/heads/") :] if branch_ref and branch_ref.startswith("refs/heads/") else None,
        "head_commit": head if head and branch_ref is None else None,
        "detached": bool(head) and branch_ref is None,
    }


def admin_dir_points_to(git_dir: str, path: str) -> bool:
    """True when the worktree administrative directory ``git_dir`` (``<common>/worktrees/<name>``)
    still belongs to the worktree at ``path``: its ``gitdir`` file names ``<path>/.git``.

    Reads one small file (no git); used to check a worktree's generation when its
    folder is gone and ``git rev-parse`` cannot run inside it (workspace spec §8 rule 7).
    """
    text = (_read_text(os.path.join(git_dir, "gitdir")) or "").strip()
    return bool(text) and same_path(normalize(text, git_dir), os.path.join(path, ".git"))


def path_labels(home: Path, workspace: Path, rows: Iterable[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """``(path, label)`` pairs that receipts show in place of absolute paths (issue 12).

    The holon home is ``<holon home>``, the default workspace the empty label, and each other workspace row
    (``workspace_anchor``, ``repo_name``) outside both ``<workspace NAME>``, its worktrees' folder
    ``<worktrees of NAME>`` and, for a clone inside a scratch directory, that directory ``<workspace NAME>/..``.
    """
    labels = [(str(home), "<holon home>"), (str(workspace), "")]
    for row in rows:
        anchor = Path(row["workspace_anchor"])
        name = row.get("repo_name") or anchor.name
        if anchor == workspace or workspace in anchor.parents or home in anchor.parents or anchor == home:
            continue
        labels += [
            (str(anchor), f"<workspace {name}>"),
            (str(anchor.parent / f".holon-worktrees-{anchor.name}"), f"<worktrees of {name}>"),
        ]
        if Path(tempfile.gettempdir()) in anchor.parent.parents:  # a scratch directory around a clone
            labels.append((str(anchor.parent), f"<workspace {name}>/.."))
    return tuple(labels)
