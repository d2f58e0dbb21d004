"""Line endings, BOM and final newlines (per D1; commands spec §10.6 steps 1, 4, 5; case C07)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import ok

from holon_nb import Runtime
from holon_nb.tools.patching._content import FileContent

C07_PATCH = "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"


@pytest.mark.parametrize("crlf_patch", [False, True], ids=["lf-diff", "crlf-diff"])
def test_c07_crlf_and_bom_survive(rt: Runtime, workspace: Path, apply, crlf_patch: bool) -> None:
    (workspace / "crlf.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    (workspace / "bom.txt").write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma\r\n")
    patch = C07_PATCH + C07_PATCH.replace("crlf.txt", "bom.txt")
    if crlf_patch:
        patch = patch.replace("\n", "\r\n")
    ok(apply(patch))
    assert (workspace / "crlf.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma\r\n"
    assert (workspace / "bom.txt").read_bytes() == b"\xef\xbb\xbfalpha\r\nBETA\r\ngamma\r\n"


def test_mixed_endings_keep_their_own(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "m.txt").write_bytes(b"a\nb\r\nc\nd\r\n")
    ok(apply("--- a/m.txt\n+++ b/m.txt\n@@ -1,4 +1,5 @@\n a\n b\n+new\n c\n-d\n+D\n"))
    assert (workspace / "m.txt").read_bytes() == b"a\nb\r\nnew\nc\nD\n"  # style = first terminator (\n)


def test_style_is_the_first_terminator(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "m.txt").write_bytes(b"a\r\nb\nc\n")
    ok(apply("--- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,4 @@\n a\n b\n+x\n c\n"))
    assert (workspace / "m.txt").read_bytes() == b"a\r\nb\nx\r\nc\n"


def test_lone_cr_is_text(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "cr.txt").write_bytes(b"a\rb\nc\n")
    ok(apply("--- a/cr.txt\n+++ b/cr.txt\n@@ -1,2 +1,2 @@\n a\rb\n-c\n+C\n"))
    assert (workspace / "cr.txt").read_bytes() == b"a\rb\nC\n"


def test_bom_only_file_counts_as_content(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "bom.txt").write_bytes(b"\xef\xbb\xbf")
    r = apply("--- /dev/null\n+++ b/bom.txt\n@@ -0,0 +1 @@\n+x\n")
    assert r.envelope["error"]["kind"] == "existing_file"


def test_final_newline_gained_when_hunk_reaches_end(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "n.txt").write_bytes(b"a\nb")
    ok(apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"))
    assert (workspace / "n.txt").read_bytes() == b"a\nB\n"


def test_final_newline_untouched_by_a_hunk_far_from_the_end(rt: Runtime, workspace: Path, apply) -> None:
    lines = [f"l{i}" for i in range(20)]
    (workspace / "n.txt").write_bytes("\n".join(lines).encode())  # no final newline
    ok(apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,3 +1,3 @@\n-l0\n+L0\n l1\n l2\n"))
    assert (workspace / "n.txt").read_bytes() == ("\n".join(["L0", *lines[1:]])).encode()


def test_context_marker_keeps_missing_newline(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "n.txt").write_bytes(b"a\nb\nc")
    ok(apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n"))
    assert (workspace / "n.txt").read_bytes() == b"A\nb\nc"


def test_appending_after_a_last_line_without_newline(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "n.txt").write_bytes(b"a\r\nb")
    ok(apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,3 @@\n a\n b\n+c\n"))
    assert (workspace / "n.txt").read_bytes() == b"a\r\nb\r\nc\r\n"


def test_remove_last_lines_leaves_previous_terminated(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "n.txt").write_bytes(b"a\nb")
    ok(apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1 @@\n a\n-b\n\\ No newline at end of file\n"))
    assert (workspace / "n.txt").read_bytes() == b"a\n"


def test_new_file_without_final_newline(rt: Runtime, workspace: Path, apply) -> None:
    ok(apply("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"))
    assert (workspace / "n.txt").read_bytes() == b"a\nb"


def test_delete_all_content_keeps_empty_file(rt: Runtime, workspace: Path, apply) -> None:
    ok(apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"))
    assert (workspace / "a.txt").read_bytes() == b""


@pytest.mark.parametrize("data", [b"", b"x", b"x\n", b"a\r\nb", b"\xef\xbb\xbf", b"a\rb\r\n\n", "é\r\n".encode()])
def test_content_roundtrip(data: bytes) -> None:
    assert FileContent.parse(data.decode("utf-8")).encode() == data
