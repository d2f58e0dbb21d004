"""Every `details.rule` of `invalid_patch_syntax` and the other parse-time kinds (commands spec §10.3-§10.8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools.patching import SYNTAX_RULES, parse_patch

U, C = "unified", "codex"
CODEX_ROUTE = "openai-codex/gpt-5"
GOOD_HUNK = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"

#: rule -> (surface, patch, expected details.path or None, expected details.line or None)
RULES: dict[str, list[tuple[str, str, str | None, int | None]]] = {
    "missing_file_header": [
        (U, "--- a/a.txt\n", "a.txt", 1),
        (U, "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n", None, None),
        (U, "diff --git a/a.txt b/a.txt\nindex 1234567..89abcde 100644\n", None, 2),
        (U, "--- a/a.txt\nfoo\n@@ -1 +1 @@\n-a\n+b\n", None, 2),
        (U, "--- \n+++ \n" + GOOD_HUNK, None, 1),
    ],
    "invalid_hunk_header": [
        (U, "--- a/a.txt\n+++ b/a.txt\n@@ -x,3 +1,3 @@\n one\n", "a.txt", 3),
        (U, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3\n one\n", "a.txt", 3),
        (U, "--- a/a.txt\n+++ b/a.txt\nnot a hunk\n", "a.txt", 3),
        (U, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n@@ -2 +2 @@\n-two\n+2\n", "a.txt", 3),
    ],
    "invalid_hunk_line": [
        (U, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n*two\n", "a.txt", 5),
        (U, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n\tthree\n", "a.txt", 5),
    ],
    "invalid_hunk_empty_line": [(U, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n\n-two\n", "a.txt", 5)],
    "missing_hunk": [
        (U, "--- a/a.txt\n+++ b/a.txt\n", "a.txt", None),
        (U, "--- a/a.txt\n+++ b/a.txt\n--- a/b.txt\n+++ b/b.txt\n" + GOOD_HUNK, "a.txt", None),
        (C, "*** Begin Patch\n*** Add File: n.txt\n*** End Patch", "n.txt", None),
        (C, "*** Begin Patch\n*** Update File: a.txt\n*** End Patch", "a.txt", None),
        (C, "*** Begin Patch\n*** End Patch", None, None),
    ],
    "wrong_patch_format": [
        (U, "*** Begin Patch\n*** Frobnicate: a.txt\n*** End Patch", None, None),
        (C, "please apply\n--- a/a.txt\nsomething", None, None),
    ],
    "unknown_patch_format": [
        (U, "please change two to TWO in a.txt", None, None),
        (C, "please change two to TWO in a.txt", None, None),
    ],
    "unexpected_git_metadata": [
        (U, "Here is the patch:\n--- a/a.txt\n+++ b/a.txt\n" + GOOD_HUNK, None, 1),
        (U, "diff --git a/a.txt b/a.txt\nmode change 100644\n--- a/a.txt\n+++ b/a.txt\n" + GOOD_HUNK, None, 2),
    ],
    "invalid_git_header": [
        (U, "diff --git a/a.txt\n--- a/a.txt\n+++ b/a.txt\n" + GOOD_HUNK, None, 1),
        # names with spaces that differ, and no ---/+++ or rename lines to read them from
        (U, "diff --git a/my file.txt b/your file.txt\nold mode 100644\nnew mode 100755\n", None, 1),
        (U, 'diff --git "a/unterminated b/x\n--- a/x\n+++ b/x\n' + GOOD_HUNK, None, 1),
    ],
    "path_header_mismatch": [
        (U, "diff --git a/a.txt b/a.txt\n--- a/b.txt\n+++ b/b.txt\n" + GOOD_HUNK, "b.txt", None),
        (U, "diff --git a/my file.txt b/my file.txt\n--- a/a.txt\n+++ b/a.txt\n" + GOOD_HUNK, "a.txt", None),
    ],
    "missing_rename_header": [(U, "--- a/a.txt\n+++ b/z.txt\n" + GOOD_HUNK, "z.txt", None)],
    "missing_end_patch": [(C, "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n", None, None)],
    "invalid_codex_add_line": [(C, "*** Begin Patch\n*** Add File: n.txt\n+ok\nnot added\n*** End Patch", "n.txt", 4)],
    "invalid_codex_change_line": [
        (C, "*** Begin Patch\n*** Update File: a.txt\n one\n\n-two\n+2\n*** End Patch", "a.txt", 4),
        (C, "*** Begin Patch\n*** Update File: a.txt\n one\n~two\n*** End Patch", "a.txt", 4),
    ],
    "invalid_codex_hunk": [(C, "*** Begin Patch\n*** Rename File: a.txt\n*** End Patch", None, 2)],
}

CASES = [(rule, *case) for rule, cases in RULES.items() for case in cases]


def test_every_rule_is_covered() -> None:
    assert set(RULES) == SYNTAX_RULES


@pytest.mark.parametrize("rule, surface, patch, path, line", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(
    rt: Runtime, workspace: Path, call_as, tree, rule: str, surface: str, patch: str, path: str | None, line: int | None
) -> None:
    before = tree(workspace)
    route = CODEX_ROUTE if surface == C else None
    e = err(call_as({"patch": patch}, model_route=route), "invalid_patch_syntax")
    assert e["details"]["rule"] == rule, e
    assert e["details"].get("path") == path
    assert e["details"].get("line") == line
    assert e["recovery_hint"]
    assert tree(workspace) == before


def test_engine_raises_the_same_rules_without_a_runtime() -> None:
    from holon_nb.tools._errors import ToolFailure

    for rule, surface, patch, _, _ in CASES:
        with pytest.raises(ToolFailure) as info:
            parsed = parse_patch(patch, "codex_dsl_freeform" if surface == C else "unified_diff_json")
            for fp in parsed.patches:
                fp.operation()
        assert info.value.error.details["rule"] == rule


def test_rename_path_mismatch(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_text("b\n")
    e = err(apply("diff --git a/b.txt b/c.txt\nrename from b.txt\nrename to d.txt\n"), "rename_path_mismatch")
    assert e["details"] == {"rename_from": "b.txt", "rename_to": "d.txt"}
    with_hunk = (
        "diff --git a/b.txt b/c.txt\nrename from b.txt\nrename to c.txt\n--- a/b.txt\n+++ b/d.txt\n"
        "@@ -1 +1 @@\n-b\n+B\n"
    )
    err(apply(with_hunk), "rename_path_mismatch")
    assert (workspace / "b.txt").read_text() == "b\n" and not (workspace / "c.txt").exists()


def test_missing_git_header(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_text("b\n")
    e = err(apply("rename from b.txt\nrename to c.txt\n"), "missing_git_header")
    assert e["details"] == {"rename_from": "b.txt", "rename_to": "c.txt"}
    err(
        apply("rename from b.txt\nrename to c.txt\n--- a/b.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-b\n+B\n"),
        "missing_git_header",
    )
    assert (workspace / "b.txt").exists()


def test_rename_with_edit_and_metadata(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_text("b\nkeep\n")
    res = apply(
        "diff --git a/b.txt b/c.txt\nsimilarity index 80%\nrename from b.txt\nrename to c.txt\n"
        "index 111..222 100644\n--- a/b.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n-b\n+B\n keep\n"
    ).envelope["result"]
    assert (workspace / "c.txt").read_text() == "B\nkeep\n" and not (workspace / "b.txt").exists()
    assert [m["kind"] for m in res["ignored_metadata"]] == ["similarity index", "index"]
    assert res["changed_files"][0]["from_path"] == "b.txt"


def test_metadata_is_recorded_not_applied(rt: Runtime, workspace: Path, apply) -> None:
    r = apply("diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n--- a/a.txt\n+++ b/a.txt\n" + GOOD_HUNK)
    res = r.envelope["result"]
    assert res["ignored_metadata"] == [
        {"path": "a.txt", "kind": "old mode", "value": "100644"},
        {"path": "a.txt", "kind": "new mode", "value": "100755"},
    ]
    assert (workspace / "a.txt").stat().st_mode & 0o111 == 0  # never chmod-ed


def test_new_file_mode_and_deleted_file_mode(rt: Runtime, workspace: Path, apply) -> None:
    res = apply(
        "diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
        "+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n"
        "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n"
        "@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"
    ).envelope["result"]
    assert [m["kind"] for m in res["ignored_metadata"]] == ["new file mode", "index", "deleted file mode"]
    assert (workspace / "n.txt").read_text() == "n\n" and not (workspace / "a.txt").exists()


@pytest.mark.parametrize(
    "patch, action",
    [
        ("--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", "delete"),
        ("--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-x\n+y\n", "update"),
        ("diff --git a/gone.txt b/new.txt\nrename from gone.txt\nrename to new.txt\n", "rename"),
    ],
)
def test_missing_file(rt: Runtime, workspace: Path, apply, patch: str, action: str) -> None:
    e = err(apply(patch), "missing_file")
    assert e["details"]["action"] == action and e["details"]["requested_path"] == "gone.txt"
    assert e["details"]["resolved_path"] == str(workspace / "gone.txt")
    assert not (workspace / "new.txt").exists()


def test_move_onto_existing_even_empty(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "empty.txt").write_bytes(b"")
    e = err(apply("diff --git a/a.txt b/empty.txt\nrename from a.txt\nrename to empty.txt\n"), "existing_file")
    assert e["details"]["path"] == "empty.txt"
    assert (workspace / "a.txt").exists()


def test_delete_hunks_are_validated(rt: Runtime, workspace: Path, apply) -> None:
    err(apply("--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-TWO\n-three\n"), "context_not_found")
    assert (workspace / "a.txt").exists()
    ok_env = apply("--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n").envelope
    assert ok_env["status"] == "success" and not (workspace / "a.txt").exists()  # removed regardless


def test_io_error_for_directory_and_fifo(rt: Runtime, workspace: Path, apply) -> None:
    e = err(apply("--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-x\n+y\n"), "io_error")
    assert "not a regular file" in e["message"]
    import os

    os.mkfifo(workspace / "pipe")
    err(apply("--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-x\n+y\n"), "io_error")  # never opened, so never blocks


def test_nul_in_path_is_a_typed_error(rt: Runtime, apply) -> None:
    err(apply("--- /dev/null\n+++ b/a\0b.txt\n@@ -0,0 +1 @@\n+x\n"), "io_error")


def test_blank_separator_lines_between_file_patches(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_text("b\n")
    r = apply("--- a/a.txt\n+++ b/a.txt\n" + GOOD_HUNK + "\n\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n\n\n")
    assert r.envelope["status"] == "success", r.envelope
    assert (workspace / "b.txt").read_text() == "B\n"


def test_header_text_after_a_tab_is_not_part_of_the_path(rt: Runtime, workspace: Path, apply) -> None:
    """QUIRK fixed (review finding 2): the spec kept ``\\t<timestamp>`` in the path, as upstream did."""
    res = ok(apply("--- a/a.txt\t2024-01-01\n+++ b/a.txt\t2024-01-01\n" + GOOD_HUNK))
    assert res["changed_files"][0]["path"] == "a.txt"
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
