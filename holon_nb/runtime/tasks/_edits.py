"""Files this runtime's own tools changed, in order: what a running command may have read stale.

ExecCommand's ``reuse_running`` (commands spec §4.6 step 2) returns an identical command that is still
running instead of starting it again. That is right for a server or a watcher, and wrong for a command
that reads files which changed after it started: a test run started before a fix, asked for again after
``ApplyPatch``, would answer with the old run (issue 26 item 1). DIVERGENCE from upstream: a running
command is not reused when a file under its working directory, or under the execution root it runs in,
was changed by ApplyPatch after it started; the call starts a new instance and says which task it did
not reuse. Edits made outside the runtime (an editor, a cell writing a file) are not seen here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from pathlib import Path

__all__ = ["FileEdits"]

_KEEP = 4096  # edits remembered; a mark older than all of them counts as "changed"


class FileEdits:
    """An ordered, bounded log of the files ApplyPatch changed, each with the execution root it ran in.

    A command takes :meth:`mark` when it starts; :meth:`changed_since` later lists the files changed
    after that mark that the command could read. Used on the runtime's loop thread only.
    """

    def __init__(self) -> None:
        self._seq = 0
        self._log: deque[tuple[int, Path, tuple[Path, ...]]] = deque(maxlen=_KEEP)

    def mark(self) -> int:
        """The position of the latest edit (0 before any): what :meth:`changed_since` compares with."""
        return self._seq

    def record(self, root: str, paths: Iterable[str]) -> None:
        """Remember that ApplyPatch, run in execution root ``root``, changed ``paths`` (absolute)."""
        changed = tuple(Path(p) for p in paths)
        if changed:
            self._seq += 1
            self._log.append((self._seq, Path(root), changed))

    def changed_since(self, mark: int, workdir: str) -> list[str]:
        """Files changed after ``mark`` that a command running in ``workdir`` may read: those under
        ``workdir``, and every file of an edit whose execution root contains ``workdir``.

        Returns:
            The changed paths, oldest first (``["(edits no longer remembered)"]`` when ``mark`` is older
            than the log keeps, so that the caller does not reuse what it cannot vouch for).
        """
        if mark >= self._seq:
            return []
        if self._log and mark < self._log[0][0] - 1:
            return ["(edits no longer remembered)"]
        where = Path(workdir)
        out: list[str] = []
        for seq, root, paths in self._log:
            if seq <= mark:
                continue
            inside_root = where == root or root in where.parents
            out += [str(p) for p in paths if inside_root or where in p.parents]
        return out
