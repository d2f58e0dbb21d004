"""Deleting and moving a symlink acts on the link itself, as ``git apply`` does (commands spec §10.5).

Review finding 1: a delete of ``link.txt -> real.txt`` used to delete ``real.txt`` and leave the link
dangling; a rename turned the link into a regular file and deleted ``real.txt``. A modify through an
in-root link still updates its target (``test_paths.test_symlink_inside_root_stays_a_symlink``).
"""

from __future__ import annotations

import os
from pathlib import Path

from _support import err, ok

from holon_nb import Runtime

REAL = b"real\n"


def _setup(workspace: Path) -> None:
    (workspace / "real.txt").write_bytes(REAL)
    (workspace / "link.txt").symlink_to("real.txt")


def test_delete_patch_removes_the_link_not_its_target(rt: Runtime, workspace: Path, apply) -> None:
    _setup(workspace)
    res = ok(apply("--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-real\n"))
    assert not os.path.lexists(workspace / "link.txt")
    assert (workspace / "real.txt").read_bytes() == REAL
    assert res["changed_paths"] == [str(workspace / "link.txt")]
    assert res["changed_files"][0] == {**res["changed_files"][0], "action": "delete", "path": "link.txt"}


def test_delete_patch_is_checked_against_the_links_own_text(rt: Runtime, workspace: Path, apply) -> None:
    """The content of a symlink is its target text (as in git): a hunk of the target's lines is stale."""
    _setup(workspace)
    ok(apply("--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-real.txt\n\\ No newline at end of file\n"))
    assert not os.path.lexists(workspace / "link.txt") and (workspace / "real.txt").read_bytes() == REAL


def test_rename_moves_the_link(rt: Runtime, workspace: Path, apply) -> None:
    _setup(workspace)
    res = ok(
        apply("diff --git a/link.txt b/moved.txt\nsimilarity index 100%\nrename from link.txt\nrename to moved.txt\n")
    )
    assert not os.path.lexists(workspace / "link.txt")
    assert os.path.islink(workspace / "moved.txt") and os.readlink(workspace / "moved.txt") == "real.txt"
    assert (workspace / "real.txt").read_bytes() == REAL
    assert res["changed_paths"] == [str(workspace / "link.txt"), str(workspace / "moved.txt")]


def test_codex_delete_and_move_of_links(rt: Runtime, workspace: Path, call_as) -> None:
    _setup(workspace)
    (workspace / "other.txt").symlink_to("a.txt")
    ok(
        call_as(
            "*** Begin Patch\n*** Delete File: link.txt\n*** Update File: other.txt\n*** Move to: o2.txt\n"
            "*** End Patch",
            model_route="openai-codex/gpt-5",
        )
    )
    assert not os.path.lexists(workspace / "link.txt") and (workspace / "real.txt").read_bytes() == REAL
    assert os.readlink(workspace / "o2.txt") == "a.txt" and (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_dangling_and_directory_links_can_be_deleted(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "dangling").symlink_to("nowhere")
    (workspace / "dirlink").symlink_to("sub")
    ok(
        apply(
            "--- a/dangling\n+++ /dev/null\n@@ -1 +0,0 @@\n-nowhere\n"
            "--- a/dirlink\n+++ /dev/null\n@@ -1 +0,0 @@\n-sub\n"
        )
    )
    assert not os.path.lexists(workspace / "dangling") and not os.path.lexists(workspace / "dirlink")
    assert (workspace / "sub").is_dir()


def test_link_pointing_outside_is_confined_on_its_own_location(
    rt: Runtime, workspace: Path, tmp_path: Path, apply
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep\n")
    (workspace / "out.txt").symlink_to(outside)
    ok(apply("--- a/out.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-keep\n"))
    assert not os.path.lexists(workspace / "out.txt") and outside.read_bytes() == b"keep\n"
    # a modify through the same kind of link still writes outside, so it stays refused
    (workspace / "out2.txt").symlink_to(outside)
    err(apply("--- a/out2.txt\n+++ b/out2.txt\n@@ -1 +1 @@\n-keep\n+gone\n"), "path_escape")
    assert outside.read_bytes() == b"keep\n"


def test_link_in_a_linked_directory_outside_is_refused(rt: Runtime, workspace: Path, tmp_path: Path, apply) -> None:
    """The link's own location is realpath(parent) + name: a link reached through a directory link that
    leaves the root is outside."""
    out_dir = tmp_path / "outdir"
    out_dir.mkdir()
    (out_dir / "l.txt").symlink_to("x")
    (workspace / "d").symlink_to(out_dir)
    e = err(apply("--- a/d/l.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"), "path_escape")
    assert e["details"]["resolved_path"] == str(out_dir / "l.txt")
    assert os.path.islink(out_dir / "l.txt")


def test_delete_then_add_replaces_the_link_with_a_file(rt: Runtime, workspace: Path, apply) -> None:
    _setup(workspace)
    ok(
        apply(
            "--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-real\n--- /dev/null\n+++ b/link.txt\n@@ -0,0 +1 @@\n+own\n"
        )
    )
    assert not os.path.islink(workspace / "link.txt") and (workspace / "link.txt").read_bytes() == b"own\n"
    assert (workspace / "real.txt").read_bytes() == REAL


def test_failed_patch_restores_a_deleted_link(rt: Runtime, workspace: Path, apply, tree) -> None:
    _setup(workspace)
    before = tree(workspace)
    err(
        apply(
            "--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-real\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-stale\n+x\n"
        ),
        "context_not_found",
    )
    assert tree(workspace) == before


def test_real_git_rm_of_a_link(rt: Runtime, workspace: Path, git_roundtrip) -> None:
    res, diff = git_roundtrip({"real.txt": REAL, "link.txt": ("link", "real.txt")}, {"link.txt": None})
    assert "deleted file mode 120000" in diff and "-real.txt" in diff
    assert res["changed_paths"] == [str(workspace / "link.txt")]


def test_real_git_mv_of_a_link(rt: Runtime, workspace: Path, git_roundtrip) -> None:
    _, diff = git_roundtrip(
        {"real.txt": REAL, "link.txt": ("link", "real.txt")}, {"link.txt": None, "moved.txt": ("link", "real.txt")}
    )
    assert "rename from link.txt" in diff


def test_stale_delete_hunk_of_a_link_to_a_fifo_fails_without_blocking(rt: Runtime, workspace: Path, apply) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "p.txt").symlink_to("pipe")
    e = err(apply("--- a/p.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-something\n"), "context_not_found")
    assert e["details"]["nearby_lines"] == [{"line_number": 1, "text": "pipe"}]  # the link's own text
    assert os.path.islink(workspace / "p.txt")
