"""A UTF-8 BOM and real ``git diff`` output, which shows the BOM as part of line 1 (per D1; review finding 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import ok

from holon_nb import Runtime

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("nl", [b"\n", b"\r\n"], ids=["lf", "crlf"])
class TestRealGitDiffs:
    def test_change_line_one(self, rt: Runtime, git_roundtrip, nl: bytes) -> None:
        _, diff = git_roundtrip({"b.txt": BOM + b"x" + nl + b"y" + nl}, {"b.txt": BOM + b"X" + nl + b"y" + nl})
        assert "-\ufeffx" in diff

    def test_context_on_line_one(self, rt: Runtime, git_roundtrip, nl: bytes) -> None:
        _, diff = git_roundtrip(
            {"b.txt": BOM + nl.join([b"a", b"b", b"c", b""])}, {"b.txt": BOM + nl.join([b"a", b"B", b"c", b""])}
        )
        assert " \ufeffa" in diff

    def test_insert_before_line_one(self, rt: Runtime, git_roundtrip, nl: bytes) -> None:
        """The BOM moves with the text git shows it on (as ``git apply`` does)."""
        git_roundtrip({"b.txt": BOM + b"x" + nl}, {"b.txt": b"top" + nl + BOM + b"x" + nl})

    def test_remove_the_bom(self, rt: Runtime, git_roundtrip, nl: bytes) -> None:
        git_roundtrip({"b.txt": BOM + b"x" + nl + b"y" + nl}, {"b.txt": b"x" + nl + b"y" + nl})

    def test_add_a_bom(self, rt: Runtime, git_roundtrip, nl: bytes) -> None:
        git_roundtrip({"b.txt": b"x" + nl + b"y" + nl}, {"b.txt": BOM + b"x" + nl + b"y" + nl})

    def test_far_from_line_one(self, rt: Runtime, git_roundtrip, nl: bytes) -> None:
        lines = [b"l%d" % i for i in range(30)]
        after = list(lines)
        after[20] = b"CHANGED"
        git_roundtrip({"b.txt": BOM + nl.join(lines) + nl}, {"b.txt": BOM + nl.join(after) + nl})


def test_hand_written_patch_without_the_bom_keeps_it(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_bytes(BOM + b"x\r\ny\r\n")
    ok(apply("--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-x\n+X\n y\n"))
    assert (workspace / "b.txt").read_bytes() == BOM + b"X\r\ny\r\n"


def test_added_line_one_with_a_bom_gives_one_bom(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_bytes(BOM + b"x\ny\n")
    ok(apply("--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-x\n+\ufeffX\n y\n"))
    assert (workspace / "b.txt").read_bytes() == BOM + b"X\ny\n"
    ok(apply("--- a/b.txt\n+++ b/b.txt\n@@ -0,0 +1 @@\n+\ufefftop\n"))
    assert (workspace / "b.txt").read_bytes() == BOM + b"top\nX\ny\n"


def test_bom_line_only_matches_line_one(rt: Runtime, workspace: Path, apply) -> None:
    """A patch line carrying U+FEFF matches line 1 of a BOM file only, never a later equal line."""
    (workspace / "b.txt").write_bytes(BOM + b"x\nx\n")
    ok(apply("--- a/b.txt\n+++ b/b.txt\n@@ -2 +2 @@\n-\ufeffx\n+\ufeffX\n"))
    assert (workspace / "b.txt").read_bytes() == BOM + b"X\nx\n"


def test_new_file_with_bom(rt: Runtime, git_roundtrip) -> None:
    """(New files take ``\\n`` endings, commands spec §10.6 step 1, so only the LF case round-trips.)"""
    git_roundtrip({}, {"n.txt": BOM + b"x\n"})
