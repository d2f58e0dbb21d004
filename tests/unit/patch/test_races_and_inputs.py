"""Concurrent writers, raw patch text, and a file where a directory is needed (review findings 8, 9, 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools._errors import ToolFailure
from holon_nb.tools.patching import PathPolicy
from holon_nb.tools.patching._engine import commit_plan, prepare

AC40 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
ADD_B = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n"


def _append(path: Path, text: bytes) -> None:
    with open(path, "ab") as fh:  # what a background logger does: append in place
        fh.write(text)


class TestConcurrentWriter:
    """A file changed by another process between its read and its commit fails the patch, writing nothing."""

    def _expect_changed(self, workspace: Path, patch: str, meddle) -> ToolFailure:
        _, plan = prepare(patch, PathPolicy(execution_root=str(workspace)))
        meddle()
        with pytest.raises(ToolFailure) as info:
            commit_plan(plan)
        e = info.value.error
        assert e.kind == "io_error" and e.retryable is True
        assert e.details["reason"] == "file_changed_during_patch"
        return info.value

    def test_appended_lines_are_not_lost(self, workspace: Path) -> None:
        f = self._expect_changed(workspace, AC40, lambda: _append(workspace / "a.txt", b"four\n"))
        assert f.error.details["path"] == "a.txt"
        assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\nfour\n"

    def test_earlier_files_are_rolled_back(self, workspace: Path) -> None:
        (workspace / "b.txt").write_text("b\n")
        patch = AC40 + "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
        f = self._expect_changed(workspace, patch, lambda: _append(workspace / "b.txt", b"more\n"))
        assert f.error.details["path"] == "b.txt"
        assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\n"
        assert (workspace / "b.txt").read_bytes() == b"b\nmore\n"

    def test_a_file_that_appears_is_not_overwritten(self, workspace: Path) -> None:
        self._expect_changed(workspace, AC40 + ADD_B, lambda: (workspace / "new.txt").write_bytes(b"theirs\n"))
        assert (workspace / "new.txt").read_bytes() == b"theirs\n"
        assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\n"

    def test_a_file_replaced_before_its_deletion_is_kept(self, workspace: Path) -> None:
        (workspace / "d.txt").write_text("d\n")

        def replace() -> None:
            (workspace / "d.txt").unlink()
            (workspace / "d.txt").write_text("d\n")  # same content, new inode

        self._expect_changed(workspace, "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n", replace)
        assert (workspace / "d.txt").read_text() == "d\n"

    def test_untouched_file_commits(self, workspace: Path) -> None:
        _, plan = prepare(AC40, PathPolicy(execution_root=str(workspace)))
        assert commit_plan(plan) == [str(workspace / "a.txt")]
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"

    def test_through_the_tool(self, rt: Runtime, workspace: Path, apply, monkeypatch: pytest.MonkeyPatch) -> None:
        """The same check runs in a real call: the writer strikes after the hunks were applied in memory."""
        from holon_nb.tools.patching import _plan as plan_module

        real_changes = plan_module.Plan.changes

        def changes_then_append(self):  # type: ignore[no-untyped-def]
            _append(workspace / "a.txt", b"four\n")
            return real_changes(self)

        monkeypatch.setattr(plan_module.Plan, "changes", changes_then_append)
        e = err(apply(AC40), "io_error")
        assert e["retryable"] is True and e["details"]["reason"] == "file_changed_during_patch"
        assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\nfour\n"


class TestRawText:
    """Non-JSON text (dispatch's ``{"_raw": text}``) is the patch on both surfaces (review finding 9)."""

    def test_unified_surface(self, rt: Runtime, workspace: Path) -> None:
        ok(rt.call("ApplyPatch", AC40))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"

    def test_codex_surface(self, rt: Runtime, workspace: Path, call_as) -> None:
        ok(call_as(AC40, model_route="openai-codex/gpt-5"))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"

    def test_raw_wrapper_object(self, rt: Runtime, workspace: Path, call_as) -> None:
        ok(call_as({"_raw": AC40}))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"

    def test_broken_json_object_is_still_a_json_error(self, rt: Runtime, workspace: Path) -> None:
        e = err(rt.call("ApplyPatch", '{"patch": "--- a/a.txt'), "invalid_tool_input")
        assert "not valid JSON" in e["details"]["parse_error"] and "_raw" not in json.dumps(e)
        assert '{"patch": ' in e["recovery_hint"]

    def test_no_internal_name_in_errors(self, rt: Runtime) -> None:
        e = err(rt.call("ApplyPatch", "please fix the bug in a.txt"), "invalid_patch_syntax")
        assert "_raw" not in json.dumps(e)


class TestFileInTheWay:
    """``afile/x.txt`` where ``afile`` is a file: refused at path resolution, naming ``afile`` (finding 10)."""

    @pytest.mark.parametrize(
        "patch",
        [
            "--- /dev/null\n+++ b/afile/x.txt\n@@ -0,0 +1 @@\n+x\n",
            "--- a/afile/x.txt\n+++ b/afile/x.txt\n@@ -1 +1 @@\n-x\n+y\n",
            "--- a/afile/deeper/x.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
            "diff --git a/a.txt b/afile/x.txt\nrename from a.txt\nrename to afile/x.txt\n",
        ],
    )
    def test_refused_before_writing(self, rt: Runtime, workspace: Path, apply, tree, patch: str) -> None:
        (workspace / "afile").write_text("i am a file\n")
        before = tree(workspace)
        e = err(apply(AC40 + patch), "io_error")
        assert e["details"]["reason"] == "not_a_directory" and e["details"]["blocking_path"] == "afile"
        assert "afile is a file, not a directory" in e["message"]
        assert tree(workspace) == before

    def test_absolute_path_names_the_absolute_blocker(self, rt: Runtime, workspace: Path, apply) -> None:
        (workspace / "afile").write_text("f\n")
        e = err(apply(f"--- /dev/null\n+++ {workspace}/afile/x.txt\n@@ -0,0 +1 @@\n+x\n"), "io_error")
        assert e["details"]["blocking_path"] == str(workspace / "afile")
