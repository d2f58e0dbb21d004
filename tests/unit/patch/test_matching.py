"""Hunk placement and application (commands spec §10.6 steps 3-5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools._errors import ToolFailure
from holon_nb.tools.patching._match import find_block

CODEX_ROUTE = "openai-codex@responses/gpt-5"


def _write(workspace: Path, name: str, lines: list[str]) -> Path:
    path = workspace / name
    path.write_text("".join(f"{ln}\n" for ln in lines))
    return path


def test_window_picks_the_copy_near_the_header() -> None:
    lines = ["x", "y"] + [f"f{i}" for i in range(100)] + ["x", "y"]
    assert find_block("f", lines, ["x", "y"], 101) == (102, 0)
    assert find_block("f", lines, ["x", "y"], 0) == (0, 0)
    with pytest.raises(ToolFailure) as info:
        find_block("f", lines, ["x", "y"], 50)  # far from both: whole file has two
    assert info.value.error.kind == "ambiguous_context"


def test_whole_file_when_header_is_wrong() -> None:
    lines = [f"f{i}" for i in range(200)]
    assert find_block("f", lines, ["f150", "f151"], 3) == (150, 0)
    assert find_block("f", lines, ["f150", "f151"], None) == (150, 0)
    assert find_block("f", lines, ["f150", "f151"], 10_000) == (150, 0)


@pytest.mark.parametrize(
    "file_line, patch_line, level",
    [
        ("value = 1   ", "value = 1", 1),
        ("    value = 1", "value = 1", 2),
        ("value  =\t1", "value = 1", 3),
    ],
)
def test_relaxed_levels(file_line: str, patch_line: str, level: int) -> None:
    lines = ["a", file_line, "b"]
    assert find_block("f", lines, ["a", patch_line, "b"], 1) == (0, level)


def test_relaxed_match_keeps_file_whitespace(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "py.txt").write_text("def f():\n\tif x:   \n\t\treturn 1\n")
    ok(apply("--- a/py.txt\n+++ b/py.txt\n@@ -1,3 +1,3 @@\n def f():\n     if x:\n-        return 1\n+\t\treturn 2\n"))
    assert (workspace / "py.txt").read_text() == "def f():\n\tif x:   \n\t\treturn 2\n"


def test_relaxed_level_needs_a_unique_match() -> None:
    lines = ["a ", "a\t", "b"]
    with pytest.raises(ToolFailure) as info:
        find_block("f", lines, ["a"], 1)
    assert info.value.error.kind == "ambiguous_context"
    assert info.value.error.details["candidate_count"] == 2


def test_ambiguous_candidates_are_capped() -> None:
    lines = ["dup"] * 15
    with pytest.raises(ToolFailure) as info:
        find_block("f", lines, ["dup"], None)
    d = info.value.error.details
    assert d["candidate_count"] == 15 and d["reported_count"] == 10 and d["truncated"] is True
    assert len(d["candidates"]) == 10
    assert "Showing first 10 of 15" in info.value.error.recovery_hint


def test_block_longer_than_file() -> None:
    with pytest.raises(ToolFailure) as info:
        find_block("f", ["a"], ["a", "b"], 1)
    assert info.value.error.kind == "context_not_found"


def test_later_hunks_follow_earlier_line_count_changes(rt: Runtime, workspace: Path, apply) -> None:
    lines = ["same"] * 3 + [f"u{i}" for i in range(30)] + ["same"] * 3 + [f"v{i}" for i in range(30)]
    _write(workspace, "d.txt", lines)
    # hunk 1 adds 40 lines; hunk 2's header counts in original coordinates
    added = "".join(f"+n{i}\n" for i in range(40))
    patch = (
        "--- a/d.txt\n+++ b/d.txt\n@@ -4,1 +4,41 @@\n u0\n"
        + added
        + "@@ -34,4 +74,4 @@\n same\n same\n-same\n+SAME\n v0\n"
    )
    ok(apply(patch))
    out = (workspace / "d.txt").read_text().splitlines()
    assert out[75] == "SAME" and out[74] == "same" and out[:3] == ["same"] * 3


def test_pure_insertion_goes_after_line_k(rt: Runtime, workspace: Path, apply) -> None:
    _write(workspace, "i.txt", ["a", "b", "c"])
    ok(apply("--- a/i.txt\n+++ b/i.txt\n@@ -2,0 +3 @@\n+inserted\n"))
    assert (workspace / "i.txt").read_text() == "a\nb\ninserted\nc\n"
    ok(apply("--- a/i.txt\n+++ b/i.txt\n@@ -0,0 +1 @@\n+top\n"))
    assert (workspace / "i.txt").read_text().splitlines()[0] == "top"


def test_zero_context_hunks_in_sequence(rt: Runtime, workspace: Path, apply) -> None:
    _write(workspace, "z.txt", ["a", "b", "c", "d"])
    ok(apply("--- a/z.txt\n+++ b/z.txt\n@@ -1,0 +2,2 @@\n+x\n+y\n@@ -3 +5 @@\n-c\n+C\n@@ -4,0 +7 @@\n+e\n"))
    assert (workspace / "z.txt").read_text() == "a\nx\ny\nb\nC\nd\ne\n"


def test_markdown_list_prefix_suspected(rt: Runtime, workspace: Path, apply) -> None:
    _write(workspace, "list.md", ["# Title", "- first", "- second"])
    e = err(apply("--- a/list.md\n+++ b/list.md\n@@ -1,2 +1,2 @@\n # Title\n-nothing\n"), "context_not_found")
    assert "suspected_issue" not in e["details"]
    e = err(apply("--- a/list.md\n+++ b/list.md\n@@ -1,3 +1,3 @@\n # Title\n  first\n-- nope\n"), "context_not_found")
    assert e["details"]["suspected_issue"] == "markdown_list_diff_prefix"
    assert "` - item`" in e["recovery_hint"]


def test_replacement_character(rt: Runtime, workspace: Path, apply) -> None:
    r = apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+tw\ufffd\n three\n")
    res = ok(r)
    assert res["diagnostics"][0]["kind"] == "replacement_character_in_input"
    assert "replacement_character_in_input on unknown path" in r.envelope["summary_text"]
    e = err(
        apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-tw\ufffd\ufffd\n+x\n three\n"), "context_not_found"
    )
    assert "U+FFFD" in e["recovery_hint"] and e["recovery_hint"].startswith("read the exact target region")
    e = err(apply("--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-\ufffd\n+x\n"), "missing_file")
    assert "do not retry context lines that contain U+FFFD" in e["recovery_hint"]
    assert (
        "U+FFFD"
        not in err(apply("--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-a\n+x\n"), "missing_file")["recovery_hint"]
    )


def test_consecutive_file_patches_on_one_file(rt: Runtime, workspace: Path, apply) -> None:
    hunk1 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    hunk2 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+2\n three\n"
    res = ok(apply(hunk1 + hunk2))
    assert (workspace / "a.txt").read_text() == "one\n2\nthree\n"
    assert [f["action"] for f in res["changed_files"]] == ["modify", "modify"]
    assert res["changed_file_count"] == 1


def test_rename_then_modify_target(rt: Runtime, workspace: Path, apply) -> None:
    patch = (
        "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n"
        "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    )
    res = ok(apply(patch))
    assert (workspace / "b.txt").read_text() == "one\nTWO\nthree\n" and not (workspace / "a.txt").exists()
    assert res["changed_paths"] == [str(workspace / "a.txt"), str(workspace / "b.txt")]


def test_add_then_delete_contributes_nothing(rt: Runtime, workspace: Path, apply) -> None:
    res = ok(apply("--- /dev/null\n+++ b/t.txt\n@@ -0,0 +1 @@\n+x\n--- a/t.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"))
    assert res["changed_paths"] == [] and res["changed_file_count"] == 0
    assert [f["action"] for f in res["changed_files"]] == ["add", "delete"]
    assert not (workspace / "t.txt").exists()


class TestCodexSurface:
    def test_update_add_delete_move(self, rt: Runtime, workspace: Path, call_as) -> None:
        (workspace / "old.txt").write_text("keep\nchange\n")
        (workspace / "del.txt").write_text("bye\n")
        patch = (
            "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Delete File: del.txt\n"
            "*** Update File: old.txt\n*** Move to: moved.txt\n@@\n keep\n-change\n+changed\n"
            "*** Update File: a.txt\n@@ def\n one\n-two\n+2\n*** End Patch\n"
        )
        r = call_as(patch, model_route=CODEX_ROUTE)
        res = ok(r)
        assert (workspace / "new.txt").read_text() == "hello\nworld\n"
        assert not (workspace / "del.txt").exists() and not (workspace / "old.txt").exists()
        assert (workspace / "moved.txt").read_text() == "keep\nchanged\n"
        assert (workspace / "a.txt").read_text() == "one\n2\nthree\n"
        assert [f["action"] for f in res["changed_files"]] == ["add", "delete", "move", "modify"]
        assert "diagnostics" not in res

    def test_pure_addition_chunk_is_appended(self, rt: Runtime, workspace: Path, call_as) -> None:
        ok(call_as("*** Begin Patch\n*** Update File: a.txt\n+four\n*** End Patch", model_route=CODEX_ROUTE))
        assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"

    def test_end_of_file_anchors_and_keeps_newline(self, rt: Runtime, workspace: Path, call_as) -> None:
        (workspace / "e.txt").write_text("x\nend\nx\nend\n")
        ok(
            call_as(
                "*** Begin Patch\n*** Update File: e.txt\n x\n-end\n+END\n*** End of File\n*** End Patch",
                model_route=CODEX_ROUTE,
            )
        )
        assert (workspace / "e.txt").read_text() == "x\nend\nx\nEND\n"

    def test_heredoc_wrapper(self, rt: Runtime, workspace: Path, call_as) -> None:
        ok(
            call_as(
                {"input": "<<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** End Patch\nEOF\n"},
                model_route=CODEX_ROUTE,
            )
        )
        assert (workspace / "a.txt").read_text().startswith("ONE\n")

    def test_move_keeps_mode(self, rt: Runtime, workspace: Path, call_as) -> None:
        script = workspace / "s.sh"
        script.write_text("echo\n")
        script.chmod(0o750)
        ok(call_as("*** Begin Patch\n*** Update File: s.sh\n*** Move to: t.sh\n*** End Patch", model_route=CODEX_ROUTE))
        assert (workspace / "t.sh").stat().st_mode & 0o777 == 0o750
