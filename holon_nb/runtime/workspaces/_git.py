"""Git plumbing for workspaces and worktrees: real ``git`` subprocesses run with anyio (workspace spec §6-§8).

Every call passes an argument vector (no shell), never ``--force``, and runs
off the loop thread's critical path (``anyio.run_process``). Callers refuse
user values starting with ``-`` before they reach git. Git only ever runs in a
directory that exists: :func:`run_git` refuses a missing ``cwd`` with a clear
message, and callers inspect a worktree whose folder vanished from its
repository's anchor (a ``prunable`` record) instead of from inside it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

import anyio

from ._paths import normalize

__all__ = [
    "GitOutput",
    "WorktreeRecord",
    "run_git",
    "worktree_records",
    "parse_worktree_porcelain",
    "changed_files",
    "rev_parse_commit",
    "check_branch_name",
    "git_dirs",
    "short_branch",
    "sanitize_label",
    "repository_toplevel",
    "GIT_TIMEOUT_S",
]

#: Longest a single git command may run (seconds) before it counts as failed.
GIT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class GitOutput:
    """Outcome of one git command: ``success`` (exit 0), ``returncode``, trimmed ``stdout``/``stderr``."""

    success: bool
    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class WorktreeRecord:
    """One entry of ``git worktree list --porcelain``.

    Attributes:
        path: Normalised absolute worktree path.
        head: HEAD commit, or None (an unborn branch).
        branch_ref: ``refs/heads/<name>``, or None when detached.
        detached: True for a detached HEAD.
        locked: The lock reason (``""`` when locked without one), or None when not locked.
        prunable: Why git would prune it (its folder is gone: ``"gitdir file points to
            non-existent location"``), or None when it is not prunable.
    """

    path: str
    head: str | None = None
    branch_ref: str | None = None
    detached: bool = False
    locked: str | None = None
    prunable: str | None = None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    return env


async def run_git(args: list[str], cwd: str) -> GitOutput:
    """Run ``git <args>`` in ``cwd`` and capture its output (never raises for a git failure).

    Args:
        args: Arguments after ``git``; values from users were already checked not to start with ``-``.
        cwd: Directory to run in.

    Returns:
        The :class:`GitOutput`; a missing git, a missing ``cwd`` (git is then not
        started: ``"directory <cwd> does not exist"``) or a timeout of
        :data:`GIT_TIMEOUT_S` seconds is a failed output (returncode -1) whose stderr says why.
    """
    if not os.path.isdir(cwd):
        return GitOutput(False, -1, "", f"directory {cwd} does not exist; git was not run there")
    try:
        with anyio.fail_after(GIT_TIMEOUT_S):
            proc = await anyio.run_process(["git", *args], cwd=cwd, env=_env(), check=False, stdin=subprocess.DEVNULL)
    except TimeoutError:
        return GitOutput(False, -1, "", f"git {' '.join(args[:2])} timed out after {GIT_TIMEOUT_S:g} s")
    except OSError as exc:
        return GitOutput(False, -1, "", f"could not run git in {cwd}: {exc.strerror or exc}")
    return GitOutput(
        proc.returncode == 0,
        proc.returncode,
        # only the end is trimmed: porcelain lines begin with a meaningful space
        proc.stdout.decode("utf-8", "replace").rstrip(),
        proc.stderr.decode("utf-8", "replace").strip(),
    )


def parse_worktree_porcelain(text: str) -> list[WorktreeRecord]:
    """Parse ``git worktree list --porcelain`` output into records (blank-line separated blocks)."""
    records: list[WorktreeRecord] = []
    fields: dict[str, object] = {}
    for line in [*text.splitlines(), ""]:
        if not line:
            if fields.get("path"):
                records.append(WorktreeRecord(**fields))  # type: ignore[arg-type]
            fields = {}
        elif line.startswith("worktree "):
            fields["path"] = normalize(line[len("worktree ") :])
        elif line.startswith("HEAD "):
            fields["head"] = line[len("HEAD ") :]
        elif line.startswith("branch "):
            fields["branch_ref"] = line[len("branch ") :]
        elif line == "detached":
            fields["detached"] = True
        elif line == "locked" or line.startswith("locked "):
            fields["locked"] = line[len("locked") :].strip()
        elif line == "prunable" or line.startswith("prunable "):
            fields["prunable"] = line[len("prunable") :].strip()
    return records


async def worktree_records(anchor: str) -> tuple[list[WorktreeRecord] | None, str]:
    """Live worktrees of the repository at ``anchor``.

    Returns:
        ``(records, "")``, or ``(None, stderr)`` when git fails (not a repository, …).
    """
    out = await run_git(["worktree", "list", "--porcelain"], anchor)
    if not out.success:
        return None, out.stderr or f"git worktree list failed in {anchor}"
    return parse_worktree_porcelain(out.stdout), ""


async def changed_files(path: str) -> tuple[list[str] | None, str]:
    """Sorted unique paths of ``git status --porcelain=v1 --untracked-files=all`` in ``path``.

    Returns:
        ``(files, "")``, or ``(None, stderr)`` when git fails.
    """
    out = await run_git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], path)
    if not out.success:
        return None, out.stderr or f"git status failed in {path}"
    return parse_status_z(out.stdout), ""


def parse_status_z(text: str) -> list[str]:
    """Sorted unique paths of ``git status --porcelain=v1 -z`` output (``XY path`` entries, NUL-separated;
    a rename or copy entry is followed by its source path, which is listed too)."""
    files: set[str] = set()
    entries = text.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        files.add(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:
            if i < len(entries) and entries[i]:
                files.add(entries[i])
            i += 1
    return sorted(files)


async def rev_parse_commit(ref: str, cwd: str) -> str | None:
    """``git rev-parse --verify <ref>^{commit}``: the commit id, or None when it does not resolve."""
    out = await run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    return out.stdout.splitlines()[0] if out.success and out.stdout else None


async def check_branch_name(branch: str, cwd: str) -> bool:
    """True when ``git check-ref-format --branch`` accepts ``branch`` literally (no ``@{-N}`` expansion)."""
    out = await run_git(["check-ref-format", "--branch", branch], cwd)
    return out.success and out.stdout == branch


async def git_dirs(path: str) -> tuple[tuple[str, str] | None, str]:
    """Live ``(git_common_dir, git_dir)`` of the worktree at ``path``, normalised absolute.

    Returns:
        ``((common, git_dir), "")``, or ``(None, stderr)`` when git fails.
    """
    common = await run_git(["rev-parse", "--git-common-dir"], path)
    git_dir = await run_git(["rev-parse", "--git-dir"], path)
    if not (common.success and git_dir.success):
        return None, (common.stderr or git_dir.stderr or f"git rev-parse failed in {path}")
    return (normalize(common.stdout, path), normalize(git_dir.stdout, path)), ""


async def repository_toplevel(path: str) -> tuple[str | None, str]:
    """``git rev-parse --show-toplevel`` in ``path``: the normalised work-tree root, or ``(None, stderr)``."""
    out = await run_git(["rev-parse", "--show-toplevel"], path)
    if not out.success or not out.stdout:
        return None, out.stderr or f"git rev-parse --show-toplevel failed in {path}"
    return normalize(out.stdout.splitlines()[0], path), ""


def short_branch(branch_ref: str | None) -> str | None:
    """``refs/heads/x`` → ``x``; anything else → None."""
    if branch_ref and branch_ref.startswith("refs/heads/"):
        return branch_ref[len("refs/heads/") :]
    return None


def sanitize_label(label: str) -> str:
    """Worktree directory stem (workspace spec §7 rule 12).

    Every character outside ``[A-Za-z0-9_-]`` becomes ``-``, runs of ``--`` collapse,
    ``-`` is trimmed at both ends, the result is capped at 64 characters, and an
    empty result becomes ``worktree``. ``"feature/issue 1224"`` → ``"feature-issue-1224"``.
    """
    value = "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "-" for c in label)
    while "--" in value:
        value = value.replace("--", "-")
    value = value.strip("-")
    return value[:64] if value else "worktree"
