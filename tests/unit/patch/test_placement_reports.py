"""Relaxed matches are reported, and the header position settles repeated context (review findings 6, 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools._errors import ToolFailure
from holon_nb.tools.patching._match import find_block


class TestRelaxedMatchDiagnostic:
    def test_tabs_file_spaces_patch(self, rt: Runtime, workspace: Path, apply) -> None:
        (workspace / "t.py").write_text("def f():\n\tif x:\n\t\treturn 1\n")
        r = apply("--- a/t.py\n+++ b/t.py\n@@ -1,3 +1,4 @@\n def f():\n     if x:\n         return 1\n+    y = 2\n")
        res = ok(r)
        # added lines are written as given (spaces), context keeps the file's tabs
        assert (workspace / "t.py").read_text() == "def f():\n\tif x:\n\t\treturn 1\n    y = 2\n"
        [diag] = res["diagnostics"]
        assert diag["kind"] == "relaxed_context_match" and diag["path"] == "t.py"
        assert "level 2" in diag["message"] and "first differing line 2" in diag["message"]
        assert "'    if x:'" in diag["message"] and "'\\tif x:'" in diag["message"]
        assert r.receipt.startswith("Success with diagnostics.") and "relaxed_context_match on t.py" in r.receipt
        assert "relaxed_context_match on t.py" in r.envelope["summary_text"]
        # the preview shows what was written: the file's own context text
        assert res["changed_files"][0]["diff_preview"].split("\n")[2:] == [
            "@@ -1,3 +1,4 @@",
            " def f():",
            " \tif x:",
            " \t\treturn 1",
            "+    y = 2",
        ]

    @pytest.mark.parametrize("file_line, level", [("value = 1   ", 1), ("    value = 1", 2), ("value  =\t1", 3)])
    def test_each_level_is_named(self, rt: Runtime, workspace: Path, apply, file_line: str, level: int) -> None:
        (workspace / "v.txt").write_text(f"a\n{file_line}\nb\n")
        res = ok(apply("--- a/v.txt\n+++ b/v.txt\n@@ -1,3 +1,3 @@\n a\n-value = 1\n+value = 2\n b\n"))
        assert (workspace / "v.txt").read_text() == "a\nvalue = 2\nb\n"
        [diag] = res["diagnostics"]
        assert f"level {level}" in diag["message"] and "line 2" in diag["message"]
        preview = res["changed_files"][0]["diff_preview"].split("\n")
        assert f"-{file_line}" in preview  # the removed text is the file's, not the patch's

    def test_exact_match_has_no_diagnostic(self, rt: Runtime, apply) -> None:
        assert "diagnostics" not in ok(apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"))


class TestHeaderPositionSettlesRepeats:
    def test_repetitive_file(self, rt: Runtime, workspace: Path, apply) -> None:
        block = ["}", "", "func() {", "    return nil", "}"]
        (workspace / "r.go").write_text("\n".join(block * 4) + "\n")
        res = ok(apply("--- a/r.go\n+++ b/r.go\n@@ -8,3 +8,3 @@\n func() {\n-    return nil\n+    return err\n }\n"))
        lines = (workspace / "r.go").read_text().split("\n")
        assert lines[8] == "    return err" and lines.count("    return err") == 1
        assert "diagnostics" not in res

    def test_shifted_by_earlier_hunks(self, rt: Runtime, workspace: Path, apply) -> None:
        (workspace / "d.txt").write_text("head\n" + "x\ny\n" * 3)
        ok(apply("--- a/d.txt\n+++ b/d.txt\n@@ -1 +1,3 @@\n head\n+n1\n+n2\n@@ -4,2 +6,2 @@\n x\n-y\n+Y\n"))
        assert (workspace / "d.txt").read_text() == "head\nn1\nn2\nx\ny\nx\nY\nx\ny\n"

    def test_no_copy_at_the_header_is_still_ambiguous(self) -> None:
        with pytest.raises(ToolFailure) as info:
            find_block("f", ["x", "y", "x", "y", "z"], ["x", "y"], 1)
        assert info.value.error.kind == "ambiguous_context"

    def test_candidate_previews_keep_indentation(self, rt: Runtime, workspace: Path, apply) -> None:
        (workspace / "p.py").write_text("if a:\n    pass   \nif b:\n    pass\n")
        e = err(apply("--- a/p.py\n+++ b/p.py\n@@ -40 +40 @@\n-pass\n+return\n"), "ambiguous_context")
        assert e["details"]["candidates"][0]["preview"][1] == "    pass"
        assert "    pass" in e["recovery_hint"]
