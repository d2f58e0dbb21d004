"""All-or-nothing commit and rollback (per D2; commands spec §10.6 step 6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools.patching import PathPolicy, apply_patch
from holon_nb.tools.patching import _commit as commit_module
from holon_nb.tools.patching._commit import Change, CommitError, commit, current_umask

AC40 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"


def _add(path: str, text: str = "x") -> str:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{text}\n"


def _delete(path: str, text: str) -> str:
    return f"--- a/{path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-{text}\n"


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, name: str, n: int, exc: BaseException | None = None) -> list:
    """Make ``os.<name>`` (as the commit module calls it) raise on its ``n``-th call."""
    real = getattr(commit_module.os, name)
    calls: list = []

    def wrapper(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise exc or OSError(5, "Input/output error")
        return real(*args, **kwargs)

    monkeypatch.setattr(commit_module.os, name, wrapper)
    return calls


def test_removal_failure_restores_everything(
    rt: Runtime, workspace: Path, apply, tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "d1.txt").write_text("d1\n")
    (workspace / "d2.txt").write_text("d2\n")
    before = tree(workspace)
    _fail_on_call(monkeypatch, "unlink", 2)
    r = apply(AC40 + _delete("d1.txt", "d1") + _delete("d2.txt", "d2") + _add("new/n.txt"))
    monkeypatch.undo()
    e = err(r, "io_error")
    assert e["details"]["operation"] == "remove" and e["details"]["path"] == str(workspace / "d2.txt")
    assert e["details"]["rolled_back"] is True and e["retryable"] is False
    assert tree(workspace) == before  # d1 restored, a.txt restored, new/ and new/n.txt removed


def test_write_failure_leaves_no_temp_file(
    rt: Runtime, workspace: Path, apply, tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(workspace)
    _fail_on_call(monkeypatch, "write", 2, OSError(28, "No space left on device"))
    r = apply(AC40 + _add("sub/n.txt"))
    monkeypatch.undo()
    e = err(r, "io_error")
    assert e["details"]["operation"] == "write" and e["details"]["errno"] == 28
    assert tree(workspace) == before


def _small_disk(monkeypatch: pytest.MonkeyPatch, root: Path, budget: int) -> None:
    """A disk that holds ``budget`` bytes of the commit's temporary files under ``root`` at a time:
    ``os.write`` raises ENOSPC past it (the originals and the placed files are not counted)."""
    real = commit_module.os.write

    def held() -> int:
        return sum(p.stat().st_size for p in root.rglob(f"*{commit_module.TEMP_SUFFIX}"))

    def write(fd, data):
        if held() + len(data) > budget:
            raise OSError(28, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(commit_module.os, "write", write)


def test_a_full_disk_fails_before_any_file_is_replaced(
    rt: Runtime, workspace: Path, apply, tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "c.txt").write_text("c\n")
    before = tree(workspace)
    renames = _fail_on_call(monkeypatch, "replace", 0)  # (never raises: counts the renames)
    _small_disk(monkeypatch, workspace, 1000)
    r = apply(AC40 + _delete("c.txt", "c") + _add("big.txt", "x" * 5000))
    monkeypatch.undo()
    e = err(r, "io_error")
    assert e["details"]["operation"] == "write" and e["details"]["path"] == str(workspace / "big.txt")
    assert e["details"]["rolled_back"] is True and renames == []  # every new content is written first
    assert tree(workspace) == before


def test_the_rollback_frees_unplaced_temporaries_before_it_restores(
    rt: Runtime, workspace: Path, apply, tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a.txt is replaced by a shorter text, then b.txt's rename fails: restoring a.txt's longer original
    # fits on the disk only once the temporaries of b.txt and n.txt are gone
    (workspace / "a.txt").write_text("one\n" + "two" * 100 + "\nthree\n")
    (workspace / "b.txt").write_text("b\n")
    before = tree(workspace)
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-" + "two" * 100 + "\n+2\n three\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n" + _add("n.txt", "n" * 200)
    )
    original = (workspace / "a.txt").stat().st_size  # 310 bytes: the new contents (217) fit, and so does
    _small_disk(monkeypatch, workspace, original)  # the restore, but not beside b's and n's temporaries
    _fail_on_call(monkeypatch, "replace", 2, OSError(5, "Input/output error"))
    r = apply(patch)
    monkeypatch.undo()
    e = err(r, "io_error")
    assert e["details"]["operation"] == "rename" and e["details"]["path"] == str(workspace / "b.txt")
    assert e["details"]["rolled_back"] is True, e
    assert tree(workspace) == before


def test_retryable_errno(rt: Runtime, workspace: Path, apply, monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_on_call(monkeypatch, "replace", 1, OSError(11, "Resource temporarily unavailable"))
    r = apply(AC40)
    monkeypatch.undo()
    assert err(r, "io_error")["retryable"] is True
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_parent_is_a_file(rt: Runtime, workspace: Path, apply, tree) -> None:
    before = tree(workspace)
    """Found at path resolution, naming the file in the way (review finding 10), before anything is written."""
    e = err(apply(AC40 + _add("a.txt/child.txt")), "io_error")
    assert e["details"]["reason"] == "not_a_directory" and e["details"]["blocking_path"] == "a.txt"
    assert "a.txt is a file, not a directory" in e["message"] and "operation" not in e["details"]
    assert tree(workspace) == before


def test_created_directories_are_removed(
    rt: Runtime, workspace: Path, apply, tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(workspace)
    _fail_on_call(monkeypatch, "replace", 3)
    r = apply(_add("x/y/one.txt") + _add("x/z/two.txt") + AC40)
    monkeypatch.undo()
    err(r, "io_error")
    assert tree(workspace) == before and not (workspace / "x").exists()


def test_interrupt_rolls_back_and_propagates(workspace: Path, tree, monkeypatch: pytest.MonkeyPatch) -> None:
    (workspace / "b.txt").write_text("b\n")
    before = tree(workspace)
    _fail_on_call(monkeypatch, "replace", 2, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        apply_patch(
            AC40 + "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n",
            PathPolicy(execution_root=str(workspace), bound_roots=(str(workspace),)),
        )
    monkeypatch.undo()
    assert tree(workspace) == before


def test_new_files_follow_the_umask(workspace: Path) -> None:
    old = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        apply_patch(_add("m.txt") + _add("deep/d.txt"), PathPolicy(execution_root=str(workspace)))
    finally:
        os.umask(old)
    assert stat.S_IMODE((workspace / "m.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE((workspace / "deep").stat().st_mode) == 0o750


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o755, 0o4755 & 0o7777])
def test_modes_are_kept(rt: Runtime, workspace: Path, apply, mode: int) -> None:
    (workspace / "a.txt").chmod(mode)
    ok(apply(AC40))
    assert stat.S_IMODE((workspace / "a.txt").stat().st_mode) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_is_kept_as_root(rt: Runtime, workspace: Path, apply) -> None:
    os.chown(workspace / "a.txt", 4321, 4321)
    ok(apply(AC40))
    st = (workspace / "a.txt").stat()
    assert (st.st_uid, st.st_gid) == (4321, 4321)


def test_unchanged_content_is_not_rewritten(rt: Runtime, workspace: Path, apply) -> None:
    inode = (workspace / "a.txt").stat().st_ino
    res = ok(apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+two\n three\n"))
    assert (workspace / "a.txt").stat().st_ino == inode
    assert res["changed_paths"] == [str(workspace / "a.txt")]  # it was written by the patch


def test_commit_is_a_rename(rt: Runtime, workspace: Path, apply) -> None:
    inode = (workspace / "a.txt").stat().st_ino
    ok(apply(AC40))
    assert (workspace / "a.txt").stat().st_ino != inode  # a new file renamed into place, not an in-place write


def test_commit_directly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_bytes(b"orig")
    gone = tmp_path / "gone.txt"
    gone.write_bytes(b"bye")
    changes = [
        Change(str(keep), b"orig", b"new", 0o644, None, 0o644),
        Change(str(tmp_path / "made" / "f.txt"), None, b"f"),
        Change(str(gone), b"bye", None, 0o644, None, 0o644),
    ]
    _fail_on_call(monkeypatch, "unlink", 1, PermissionError(13, "Permission denied"))
    with pytest.raises(CommitError) as info:
        commit(changes)
    monkeypatch.undo()
    assert info.value.operation == "remove" and info.value.rollback_errors == []
    assert keep.read_bytes() == b"orig" and gone.read_bytes() == b"bye"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gone.txt", "keep.txt"]
    commit(changes)
    assert keep.read_bytes() == b"new" and not gone.exists() and (tmp_path / "made" / "f.txt").read_bytes() == b"f"
