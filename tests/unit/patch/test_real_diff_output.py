"""Real ``git diff``, ``diff -u``/``diff -ruN`` and svn output applies as printed (review findings 2, 4, 5).

Each git case builds the before/after states in a scratch repository, takes ``git diff --cached -M HEAD``
exactly as git prints it, applies it to the same before state in W and checks W now holds the after
state. DIVERGENCE/QUIRK fixed: the spec's subset kept ``\\t<timestamp>`` in ``---``/``+++`` paths,
refused ``diff --git`` names with spaces, hunkless git blocks and quoted names, and read a
``--- x``/``+++ y`` pair of body lines as the next file's headers.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools.patching import parse_patch


def _diff(
    tmp_path: Path,
    before: dict[str, bytes],
    after: dict[str, bytes | None],
    *flags: str,
    env: dict[str, str] | None = None,
) -> str:
    """``diff <flags> a b`` run in ``tmp_path`` (directories named ``a`` and ``b``), as printed."""
    for side, files in (("a", before), ("b", {**before, **after})):
        for name, data in files.items():
            if data is not None:
                (tmp_path / side / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / side / name).write_bytes(data)
    done = subprocess.run(
        ["diff", *flags, "a", "b"], check=False, cwd=tmp_path, capture_output=True, env={**os.environ, **(env or {})}
    )
    assert done.returncode == 1, done.stderr
    return done.stdout.decode()


class TestDiffU:
    def test_timestamps_after_a_tab(self, rt: Runtime, workspace: Path, apply) -> None:
        patch = (
            "--- a.txt\t2026-11-30 05:27:24.650000000 +0000\n+++ a.txt\t2026-11-30 05:28:00.000000000 +0000\n"
            "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
        )
        res = ok(apply(patch))
        assert res["changed_files"][0]["path"] == "a.txt"
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"

    def test_delete_with_a_timestamped_dev_null(self, rt: Runtime, workspace: Path, apply) -> None:
        ok(
            apply(
                "--- a.txt\t2026-11-30 05:27:24.65 +0000\n+++ /dev/null\t1970-01-01 00:00:00 +0000\n"
                "@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"
            )
        )
        assert not (workspace / "a.txt").exists()

    @pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Kolkata"])
    def test_real_diff_ruN(self, rt: Runtime, workspace: Path, tmp_path: Path, apply, tz: str) -> None:
        """``diff -ruN a b``: command lines before each file, timestamps, and the epoch for absent files."""
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        patch = _diff(
            scratch,
            {"a.txt": b"one\ntwo\nthree\n", "gone.txt": b"g\n"},
            {"a.txt": b"one\nTWO\nthree\n", "gone.txt": None, "sub/new.txt": b"n\n"},
            "-ruN",
            env={"TZ": tz},
        )
        assert patch.startswith("diff -ruN a/a.txt b/a.txt\n") and "\t" in patch
        (workspace / "gone.txt").write_bytes(b"g\n")
        res = ok(apply(patch))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
        assert not (workspace / "gone.txt").exists() and (workspace / "sub" / "new.txt").read_bytes() == b"n\n"
        assert [f["action"] for f in res["changed_files"]] == ["modify", "delete", "add"]
        assert {m["kind"] for m in res["ignored_metadata"]} == {"diff"}

    def test_a_real_epoch_file_with_content_stays_a_file(self) -> None:
        """The epoch only means "absent" when that side of every hunk is empty."""
        parsed = parse_patch(
            "--- a/x.txt\t1970-01-01 00:00:00 +0000\n+++ b/x.txt\t2026-01-01 00:00:00 +0000\n@@ -1 +1 @@\n-a\n+b\n"
        )
        assert parsed.patches[0].operation() == ("modify", "x.txt")

    def test_svn_index_lines(self, rt: Runtime, workspace: Path, apply) -> None:
        patch = (
            "Index: a.txt\n===================================================================\n"
            "--- a.txt\t(revision 12)\n+++ a.txt\t(working copy)\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
            "Index: sub/n.txt\n===================================================================\n"
            "--- sub/n.txt\t(nonexistent)\n+++ sub/n.txt\t(working copy)\n@@ -0,0 +1 @@\n+n\n"
        )
        (workspace / "sub" / "n.txt").write_bytes(b"")
        res = ok(apply(patch))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
        assert (workspace / "sub" / "n.txt").read_text() == "n\n"
        assert [(m["kind"], m["value"], m["path"]) for m in res["ignored_metadata"]] == [
            ("Index", "a.txt", "a.txt"),
            ("Index", "sub/n.txt", "sub/n.txt"),
        ]

    def test_prose_starting_with_diff_is_still_refused(self, rt: Runtime, apply) -> None:
        e = err(apply("diff of the files:\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n"), "invalid_patch_syntax")
        assert e["details"]["rule"] == "unexpected_git_metadata"


class TestGitOutput:
    def test_name_with_a_space(self, rt: Runtime, git_roundtrip) -> None:
        res, diff = git_roundtrip({"new file.txt": b"x\n"}, {"new file.txt": b"X\n"})
        assert "+++ b/new file.txt\t\n" in diff
        assert res["changed_files"][0]["path"] == "new file.txt"

    def test_add_and_rename_with_spaces(self, rt: Runtime, git_roundtrip) -> None:
        _, diff = git_roundtrip(
            {"old name.txt": b"same\n" * 5},
            {"old name.txt": None, "new name.txt": b"same\n" * 5, "fresh file.txt": b"f\n"},
        )
        assert "diff --git a/old name.txt b/new name.txt\n" in diff and "rename to new name.txt" in diff

    def test_rename_with_edit_and_spaces(self, rt: Runtime, git_roundtrip) -> None:
        body = b"".join(b"line %d\n" % i for i in range(10))
        _, diff = git_roundtrip({"a b.txt": body}, {"a b.txt": None, "c d.txt": body.replace(b"line 5", b"LINE 5")})
        assert "rename from a b.txt" in diff and "--- a/a b.txt\t" in diff

    def test_quoted_names(self, rt: Runtime, workspace: Path, git_roundtrip) -> None:
        res, diff = git_roundtrip(
            {"été.txt": "é\n".encode(), "tab\there.txt": b"t\n", 'q"uote.txt': b"q\n"},
            {"été.txt": "É\n".encode(), "tab\there.txt": b"T\n", 'q"uote.txt': None, "ren\\é.txt": "é\n".encode()},
        )
        assert '"a/\\303\\251t\\303\\251.txt"' in diff and '"a/tab\\there.txt"' in diff
        assert sorted(f["path"] for f in res["changed_files"]) == [
            'q"uote.txt',
            "ren\\é.txt",
            "tab\there.txt",
            "été.txt",
        ]

    def test_quoted_rename_lines(self, rt: Runtime, git_roundtrip) -> None:
        _, diff = git_roundtrip({"é1.txt": b"same\n" * 5}, {"é1.txt": None, "é2.txt": b"same\n" * 5})
        assert 'rename from "\\303\\2511.txt"' in diff

    def test_mode_only_change_is_ignored(self, rt: Runtime, workspace: Path, git_diff) -> None:
        diff = git_diff(
            {"run.sh": b"echo\n", "a.txt": b"one\ntwo\nthree\n"},
            {"run.sh": ("mode", b"echo\n", 0o755), "a.txt": b"one\nTWO\nthree\n"},
        )
        assert "old mode 100644\nnew mode 100755\n" in diff
        (workspace / "run.sh").write_bytes(b"echo\n")
        (workspace / "run.sh").chmod(0o644)
        res = ok(apply_(rt, diff))
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"  # the other file still applies
        assert (workspace / "run.sh").stat().st_mode & 0o777 == 0o644  # never chmod
        assert [f["path"] for f in res["changed_files"]] == ["a.txt"]
        assert {"path": "run.sh", "kind": "new mode", "value": "100755"} in res["ignored_metadata"]

    def test_mode_only_patch_alone(self, rt: Runtime, workspace: Path, apply) -> None:
        r = apply("diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n")
        res = ok(r)
        assert res["changed_files"] == [] and res["changed_file_count"] == 0
        assert r.receipt == "Success. Updated the following files:\n(no file changes recorded)"

    def test_new_and_deleted_empty_files(self, rt: Runtime, workspace: Path, git_roundtrip) -> None:
        res, diff = git_roundtrip(
            {"empty": b"", "keep.txt": b"k\n"},
            {"empty": None, "fresh": b"", "with space": b"", "keep.txt": b"K\n"},
            "--no-renames",
        )
        assert "new file mode 100644\nindex 0000000..e69de29\n" in diff
        assert "deleted file mode 100644\nindex e69de29..0000000\n" in diff
        assert sorted((f["action"], f["path"]) for f in res["changed_files"]) == [
            ("add", "fresh"),
            ("add", "with space"),
            ("delete", "empty"),
            ("modify", "keep.txt"),
        ]

    def test_deleting_a_nonempty_file_as_empty_is_refused(self, rt: Runtime, workspace: Path, apply, tree) -> None:
        before = tree(workspace)
        e = err(
            apply("diff --git a/a.txt b/a.txt\ndeleted file mode 100644\nindex e69de29..0000000\n"), "context_not_found"
        )
        assert "empty file" in e["message"]
        assert tree(workspace) == before

    def test_dev_null_header_without_a_hunk_creates_an_empty_file(self, rt: Runtime, workspace: Path, apply) -> None:
        res = ok(apply("--- /dev/null\n+++ b/e/empty.txt\n"))
        assert (workspace / "e" / "empty.txt").read_bytes() == b""
        assert res["changed_files"][0]["action"] == "add"
        err(apply("--- /dev/null\n+++ b/a.txt\n"), "existing_file")

    def test_dashed_body_lines_are_not_headers(self, rt: Runtime, workspace: Path, git_roundtrip) -> None:
        """Review finding 5: ``-- comment`` removed and ``++ weird`` added read as ``--- ``/``+++ `` lines."""
        res, diff = git_roundtrip(
            {"sql.txt": b"select 1;\n-- comment\nselect 2;\n"}, {"sql.txt": b"select 1;\n++ weird\nselect 2;\n"}
        )
        assert "\n--- comment\n+++ weird\n" in diff
        assert res["changed_files"][0]["hunks"][0]["removed_count"] == 1

    def test_dashed_body_lines_ending_a_hunk(self, rt: Runtime, workspace: Path, apply) -> None:
        (workspace / "s.txt").write_text("a\n-- x\n")
        (workspace / "t.txt").write_text("t\n")
        ok(
            apply(
                "--- a/s.txt\n+++ b/s.txt\n@@ -1,2 +1,2 @@\n a\n--- x\n+++ y\n"
                "--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-t\n+T\n"
            )
        )
        assert (workspace / "s.txt").read_text() == "a\n++ y\n" and (workspace / "t.txt").read_text() == "T\n"

    def test_inflated_counts_do_not_swallow_the_next_file(self, rt: Runtime, workspace: Path, apply) -> None:
        (workspace / "t.txt").write_text("t\n")
        res = ok(
            apply(
                "--- a/a.txt\n+++ b/a.txt\n@@ -1,9 +1,9 @@\n one\n-two\n+TWO\n three\n"
                "--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-t\n+T\n"
            )
        )
        assert (workspace / "t.txt").read_text() == "T\n" and (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
        assert res["diagnostics"][0]["kind"] == "hunk_count_mismatch"


def apply_(rt: Runtime, text: str):
    return rt.call("ApplyPatch", {"patch": text})
