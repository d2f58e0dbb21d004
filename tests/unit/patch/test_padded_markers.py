"""Whitespace around Codex markers and file headers, and padded unified-diff names (issue 9 item 8).

Codex's own parser trims the ``*** Begin Patch`` / ``*** End Patch`` lines and the
file-header lines; these cases are its scenarios 017, 018 and 020. Only marker and
header positions are trimmed: body lines keep every character.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import err, ok

from holon_nb.tools.patching import parse_patch
from holon_nb.tools.patching._detect import CODEX_SURFACE

UPDATE = "@@\n-two\n+2\n"


@pytest.mark.parametrize(
    "begin, header, end",
    [
        ("*** Begin Patch", "  *** Update File: a.txt", "*** End Patch"),  # codex 017
        (" *** Begin Patch", "*** Update File: a.txt", "*** End Patch "),  # codex 018
        ("*** Begin Patch ", "*** Update File: a.txt", " *** End Patch"),  # codex 020
        ("\t*** Begin Patch\t", "*** Update File: a.txt  ", "\t*** End Patch\t"),
    ],
)
def test_padded_markers_and_headers_apply(rt, workspace: Path, begin: str, header: str, end: str) -> None:
    patch = f"{begin}\n{header}\n{UPDATE}{end}\n"
    result = ok(rt.call("ApplyPatch", {"patch": patch}))
    assert (workspace / "a.txt").read_text() == "one\n2\nthree\n"
    assert result["changed_paths"] == [str(workspace / "a.txt")]


def test_padded_add_and_delete_headers(rt, workspace: Path) -> None:
    patch = (
        "*** Begin Patch\n   *** Add File: new.txt   \n+  keep my spaces  \n *** Delete File: a.txt\n*** End Patch\n"
    )
    ok(rt.call("ApplyPatch", {"patch": patch}))
    assert (workspace / "new.txt").read_text() == "  keep my spaces  \n"  # the body is never trimmed
    assert not (workspace / "a.txt").exists()


def test_padded_move_to_name(rt, workspace: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt  \n*** End Patch\n"
    ok(rt.call("ApplyPatch", {"patch": patch}))
    assert (workspace / "b.txt").read_text() == "one\ntwo\nthree\n"


def test_padded_header_inside_a_chunk_is_a_context_line() -> None:
    """Where a body line is valid, a space-led line is context (as in Codex), not a trimmed header."""
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n *** Update File: b.txt\n-x\n+y\n*** End Patch\n"
    parsed = parse_patch(patch, CODEX_SURFACE)
    assert [fp.new_path for fp in parsed.patches] == ["a.txt"]
    assert parsed.patches[0].hunks[0].lines[0] == (" ", "*** Update File: b.txt")


def test_context_lines_keep_their_whitespace(rt, workspace: Path) -> None:
    (workspace / "s.txt").write_text("  x  \ny\n")
    patch = "*** Begin Patch \n *** Update File: s.txt \n@@\n   x  \n-y\n+z\n *** End Patch \n"
    ok(rt.call("ApplyPatch", {"patch": patch}))
    assert (workspace / "s.txt").read_text() == "  x  \nz\n"


def test_padded_markers_still_need_the_end_marker(rt) -> None:
    e = err(
        rt.call("ApplyPatch", {"patch": " *** Begin Patch \n*** Update File: a.txt\n@@\n-two\n+2\n"}),
        "invalid_patch_syntax",
    )
    assert "End Patch" in e["recovery_hint"] or "End Patch" in e["message"]


class TestPaddedUnifiedNames:
    """``--- name.txt     ``: trailing whitespace after the name is dropped when the exact name does not exist."""

    def test_update_with_padded_names(self, rt, workspace: Path) -> None:
        patch = "--- a.txt     \n+++ a.txt     \n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
        result = ok(rt.call("ApplyPatch", {"patch": patch}))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
        assert result["changed_paths"] == [str(workspace / "a.txt")]
        assert not list(workspace.glob("a.txt *"))

    def test_add_with_padded_name(self, rt, workspace: Path) -> None:
        ok(rt.call("ApplyPatch", {"patch": "--- /dev/null\n+++ b/new.txt  \n@@ -0,0 +1 @@\n+n\n"}))
        assert (workspace / "new.txt").read_text() == "n\n"

    def test_exact_padded_name_wins_when_it_exists(self, rt, workspace: Path) -> None:
        (workspace / "odd.txt  ").write_text("one\n")
        (workspace / "odd.txt").write_text("one\n")
        ok(rt.call("ApplyPatch", {"patch": "--- odd.txt  \n+++ odd.txt  \n@@ -1 +1 @@\n-one\n+ONE\n"}))
        assert (workspace / "odd.txt  ").read_text() == "ONE\n"
        assert (workspace / "odd.txt").read_text() == "one\n"
