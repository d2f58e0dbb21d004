"""ApplyPatch acceptance cases AC-09 and AC-40…AC-55 (commands spec §11), through ``Runtime.call``."""

from __future__ import annotations

import json
import os
import re
import stat
import uuid
from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.runtime.core._settings import RuntimeSettings

AC40 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"


def test_ac40_modify(rt: Runtime, workspace: Path, apply) -> None:
    r = apply(AC40)
    res = ok(r)
    assert (workspace / "a.txt").read_bytes() == b"one\nTWO\nthree\n"
    assert res["changed_paths"] == [str(workspace / "a.txt")]
    assert os.path.isabs(res["changed_paths"][0])
    assert res["changed_file_count"] == 1
    assert r.receipt.splitlines() == ["Success. Updated the following files:", "M a.txt"]
    assert r.envelope["summary_text"] == "patched M:a.txt"
    entry = res["changed_files"][0]
    assert entry["action"] == "modify" and entry["path"] == "a.txt" and "from_path" not in entry
    assert entry["hunks"] == [
        {"old_start": 1, "old_count": 3, "new_start": 1, "new_count": 3, "added_count": 1, "removed_count": 1}
    ]
    assert entry["diff_preview"].startswith("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@")
    assert "diff_truncated" not in entry and "diagnostics" not in res and "ignored_metadata" not in res


def test_ac41_add_delete_rename(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "b.txt").write_text("bee\n")
    patch = (
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
        "--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"
        "diff --git a/b.txt b/c.txt\nsimilarity index 100%\nrename from b.txt\nrename to c.txt\n"
    )
    r = apply(patch)
    res = ok(r)
    assert r.receipt.splitlines()[1:] == ["A new.txt", "D a.txt", "R b.txt -> c.txt"]
    assert res["changed_file_count"] == 4
    assert res["changed_paths"] == sorted(str(workspace / n) for n in ("new.txt", "a.txt", "b.txt", "c.txt"))
    assert res["ignored_metadata"][0] == {"path": "c.txt", "kind": "similarity index", "value": "100%"}
    assert (workspace / "new.txt").read_text() == "hello\nworld\n"
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert (workspace / "c.txt").read_text() == "bee\n"
    move = res["changed_files"][2]
    assert move["action"] == "move" and move["path"] == "c.txt" and move["from_path"] == "b.txt"
    assert r.envelope["summary_text"] == "patched A:new.txt, D:a.txt, R:b.txt->c.txt"


def test_ac42_stale_context_and_atomicity(rt: Runtime, workspace: Path, apply, tree) -> None:
    before = tree(workspace)
    e = err(apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+2\n three\n"), "context_not_found")
    assert e["details"]["nearby_lines"][1] == {"line_number": 2, "text": "two"}
    assert e["details"]["expected_lines"] == ["one", "TWO", "three"]
    assert "2: two" in e["recovery_hint"]
    (workspace / "b.txt").write_text("x\ny\n")
    before = tree(workspace)
    two_files = AC40 + "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n x\n-nope\n+Y\n"
    err(apply(two_files), "context_not_found")
    assert tree(workspace) == before
    assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\n"


def test_ac43_ambiguous(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "r.txt").write_text("x\ny\nx\ny\n")
    e = err(apply("--- a/r.txt\n+++ b/r.txt\n@@ -50,2 +50,2 @@\n x\n-y\n+Y\n"), "ambiguous_context")
    assert e["details"]["candidate_count"] == 2
    assert [c["line_number"] for c in e["details"]["candidates"]] == [1, 3]
    assert e["details"]["truncated"] is False
    assert "Line 1:" in e["recovery_hint"] and "Line 3:" in e["recovery_hint"]
    assert (workspace / "r.txt").read_text() == "x\ny\nx\ny\n"


def test_ac44_relative_escape(rt: Runtime, workspace: Path, apply) -> None:
    e = err(apply("--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n"), "path_escape")
    assert e["details"]["requested_path"] == "../escape.txt"
    assert e["details"]["active_workspace_root"] == str(workspace)
    assert set(e["details"]) >= {"requested_path", "path", "resolved_path", "active_workspace_root", "cwd"}
    assert not (workspace.parent / "escape.txt").exists()


def test_ac44_absolute_outside_refused_then_allowed(tmp_path: Path, workspace: Path) -> None:
    outside = Path("/tmp") / f"holon-ac44-{uuid.uuid4().hex}.txt"
    outside.write_text("old\n")
    patch = f"--- {outside}\n+++ {outside}\n@@ -1 +1 @@\n-old\n+new\n"
    try:
        with Runtime(home=tmp_path / "home", workspace=workspace) as rt:
            e = err(rt.call("ApplyPatch", {"patch": patch}), "path_escape")
            assert e["details"]["requested_path"] == str(outside)
            assert outside.read_text() == "old\n"
        settings = RuntimeSettings(patch_outside_workspace=True)
        with Runtime(home=tmp_path / "home2", workspace=workspace, settings=settings) as rt:
            ok(rt.call("ApplyPatch", {"patch": patch}))
            assert outside.read_text() == "new\n"
            # relative paths stay confined even with the option on
            err(rt.call("ApplyPatch", {"patch": "--- /dev/null\n+++ b/../x.txt\n@@ -0,0 +1 @@\n+x\n"}), "path_escape")
    finally:
        outside.unlink()


def test_ac44_absolute_inside_workspace_and_agent_home(rt: Runtime, workspace: Path, apply) -> None:
    target = workspace / "a.txt"
    ok(apply(f"--- {target}\n+++ {target}\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"))
    assert target.read_text() == "one\nTWO\nthree\n"
    home = rt.tasks.agent_home("default")
    note = home / "notes" / "n.md"
    res = ok(apply(f"--- /dev/null\n+++ {note}\n@@ -0,0 +1 @@\n+remember\n"))
    assert note.read_text() == "remember\n"
    assert res["changed_paths"] == [str(note)]


def test_ac44_symlink_out_and_c08(rt: Runtime, workspace: Path, tmp_path: Path, apply, tree) -> None:
    outside_dir = tmp_path / "elsewhere"
    outside_dir.mkdir()
    (workspace / "link").symlink_to(outside_dir)
    e = err(apply("--- /dev/null\n+++ b/link/x.txt\n@@ -0,0 +1 @@\n+x\n"), "path_escape")
    assert e["details"]["resolved_path"] == str(outside_dir / "x.txt")
    assert list(outside_dir.iterdir()) == []
    before = tree(tmp_path)
    e = err(apply(AC40 + "--- /dev/null\n+++ b/../../outside.txt\n@@ -0,0 +1 @@\n+x\n"), "path_escape")
    assert e["details"]["requested_path"] == "../../outside.txt"
    assert tree(tmp_path) == before
    assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\n"


@pytest.mark.parametrize(
    "line",
    ["GIT binary patch", "copy from x", "copy to y", "Binary files a/x and b/x differ", "Subproject commit 0123abcd"],
)
def test_ac45_unsupported_features(rt: Runtime, apply, line: str) -> None:
    patch = f"diff --git a/x b/x\n{line}\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    e = err(apply(patch), "unsupported_git_patch_feature")
    assert e["details"]["line"] == line


def test_ac46_count_mismatch_diagnostic(rt: Runtime, workspace: Path, apply) -> None:
    r = apply(AC40.replace("@@ -1,3 +1,3 @@", "@@ -1,1 +1,1 @@"))
    res = ok(r)
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
    diag = res["diagnostics"][0]
    assert diag["kind"] == "hunk_count_mismatch" and diag["path"] == "a.txt"
    assert diag["message"] == "hunk header declared -1,1 +1,1 but body counted -1,3 +1,3"
    assert r.receipt.startswith("Success with diagnostics.")
    assert "Diagnostics:" in r.receipt
    assert "- hunk_count_mismatch on a.txt: hunk header declared" in r.receipt
    assert r.receipt.endswith("Inspect the affected target region before applying another patch to the same file.")
    assert r.envelope["summary_text"] == "patched M:a.txt (diagnostics: hunk_count_mismatch on a.txt)"


CRLF_PATCH = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n"


@pytest.mark.parametrize(
    "original, patch, expected",
    [
        (b"a\r\nb\r\n", CRLF_PATCH, b"A\r\nb\r\n"),
        (b"a\r\nb\r\n", CRLF_PATCH.replace("\n", "\r\n"), b"A\r\nb\r\n"),
        (b"a\nb\n", CRLF_PATCH.replace("\n", "\r\n"), b"A\nb\n"),
        (b"\xef\xbb\xbfa\nb\n", CRLF_PATCH, b"\xef\xbb\xbfA\nb\n"),
        (b"\xef\xbb\xbfa\r\nb\r\n", CRLF_PATCH, b"\xef\xbb\xbfA\r\nb\r\n"),
    ],
    ids=["crlf-file-lf-patch", "crlf-file-crlf-patch", "lf-file-crlf-patch", "bom", "bom-crlf"],
)
def test_ac47_line_endings_and_bom(
    rt: Runtime, workspace: Path, apply, original: bytes, patch: str, expected: bytes
) -> None:
    (workspace / "f").write_bytes(original)
    ok(apply(patch))
    assert (workspace / "f").read_bytes() == expected


def test_ac48_add_onto_existing(rt: Runtime, workspace: Path, apply, tree) -> None:
    add_a = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+new\n"
    e = err(apply(add_a), "existing_file")
    assert e["details"]["path"] == "a.txt"
    (workspace / "empty.txt").write_bytes(b"")
    ok(apply("--- /dev/null\n+++ b/empty.txt\n@@ -0,0 +1 @@\n+filled\n"))
    assert (workspace / "empty.txt").read_text() == "filled\n"
    delete_a = "--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"
    ok(apply(delete_a + add_a))
    assert (workspace / "a.txt").read_text() == "new\n"
    before = tree(workspace)
    add_n = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n"
    err(apply(add_n + add_n), "existing_file")
    assert tree(workspace) == before


def test_ac49_input_validation(rt: Runtime, workspace: Path) -> None:
    r = rt.call("ApplyPatch", {"patch": "   "})
    e = err(r, "invalid_tool_input")
    assert json.loads(r.full_receipt)["field"] == "patch"
    assert e["details"]["validation_error"] == "must not be empty"
    r = rt.call("ApplyPatch", {"input": AC40})
    e = err(r, "invalid_tool_input")
    assert e["details"] == {"tool_name": "ApplyPatch", "field": "input", "expected_field": "patch"}
    assert '{"patch": ' in e["recovery_hint"]
    e = err(rt.call("ApplyPatch", {"patch": AC40, "mode": "x"}), "invalid_tool_input")
    assert "unknown field `mode`" in e["details"]["parse_error"]
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_ac50_codex_on_unified_surface(rt: Runtime, workspace: Path, apply) -> None:
    r = apply("*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n*** End Patch")
    res = ok(r)
    assert (workspace / "a.txt").read_text() == "one\n2\nthree\n"
    diag = res["diagnostics"][0]
    assert diag["kind"] == "apply_patch_compatibility_fallback"
    for part in (
        "expected_format=unified_diff",
        "detected_format=codex_dsl",
        "surface=unified_diff_json",
        "parser_mode=compatibility",
        "compatibility_fallback_used=true",
        "file_count=1",
        "hunk_count=1",
        "strict_parse_failure_kind=invalid_patch_syntax",
    ):
        assert part in diag["message"]
    assert re.search(r"patch_bytes=\d+", diag["message"])


def test_ac51_unprefixed_blank_line(rt: Runtime, workspace: Path, apply) -> None:
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n one\n\n-two\n+TWO\n three\n"
    e = err(apply(patch), "invalid_patch_syntax")
    assert e["details"]["rule"] == "invalid_hunk_empty_line"
    assert e["details"]["line"] == 5
    assert e["details"]["path"] == "a.txt"
    # line numbers count from the patch as sent, leading blank lines included
    e = err(apply("\n\n" + patch), "invalid_patch_syntax")
    assert e["details"]["line"] == 7
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_ac52_truncated_mutation_guard(rt: Runtime, workspace: Path, call_as, tree) -> None:
    before = tree(workspace)
    r = call_as({"patch": AC40}, stop_reason="max_tokens", round=2)
    e = err(r, "truncated_mutation_tool_call")
    assert e["retryable"] is True
    assert e["details"] == {"tool_name": "ApplyPatch", "stop_reason": "max_tokens", "round": 2}
    assert tree(workspace) == before


def test_ac53_non_utf8_target(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "bin.txt").write_bytes(b"\xff\xfe")
    e = err(apply("--- a/bin.txt\n+++ b/bin.txt\n@@ -1 +1 @@\n-x\n+y\n"), "io_error")
    assert e["domain"] == "io" and e["retryable"] is False
    assert (workspace / "bin.txt").read_bytes() == b"\xff\xfe"


def test_ac54_no_newline_markers(rt: Runtime, workspace: Path, apply) -> None:
    ok(apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n two\n-three\n+THREE\n\\ No newline at end of file\n"))
    assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nTHREE"
    (workspace / "x").write_bytes(b"x")
    ok(apply("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n"))
    assert (workspace / "x").read_bytes() == b"x\n"


def test_ac55_rollback_after_second_rename(
    rt: Runtime, workspace: Path, apply, tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holon_nb.tools.patching import _commit as commit_module

    ro = workspace / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    real_replace = commit_module.os.replace
    calls: list[tuple[str, str]] = []

    def flaky_replace(src, dst, **dir_fds):  # the commit renames by name inside directory descriptors
        calls.append((str(src), str(dst)))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst, **dir_fds)

    before = tree(workspace)
    monkeypatch.setattr(commit_module.os, "replace", flaky_replace)
    r = apply(AC40 + "--- /dev/null\n+++ b/ro/new.txt\n@@ -0,0 +1 @@\n+x\n")
    monkeypatch.undo()
    e = err(r, "io_error")
    assert e["details"]["operation"] == "rename" and e["details"]["rolled_back"] is True
    assert e["details"]["path"] == str(ro / "new.txt")
    assert calls[0][1] == "a.txt" and calls[1][1] == "new.txt"
    assert len(calls) == 3  # the restore of a.txt, also by rename
    assert (workspace / "a.txt").read_bytes() == b"one\ntwo\nthree\n"
    assert not (ro / "new.txt").exists()
    assert tree(workspace) == before  # no temporary files anywhere, modes unchanged
    ro.chmod(0o755)


def test_ac55_executable_keeps_mode(rt: Runtime, workspace: Path, apply) -> None:
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    ok(apply("--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo hi\n+echo bye\n"))
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert script.read_text() == "#!/bin/sh\necho bye\n"


def test_ac09_long_nearby_lines_are_budgeted(rt: Runtime, workspace: Path, apply) -> None:
    lines = [f"{i:03d}" + "x" * 597 for i in range(10)]
    (workspace / "wide.txt").write_text("\n".join(lines) + "\n")
    r = apply("--- a/wide.txt\n+++ b/wide.txt\n@@ -3,2 +3,2 @@\n-nothing like this\n+y\n")
    e = err(r, "context_not_found")
    receipt = json.loads(r.full_receipt)
    assert receipt["details"]["omitted"] is True
    assert re.fullmatch(r"[0-9a-f]{64}", receipt["details"]["sha256"])
    assert len(receipt["details"]["preview"]) <= 1000
    assert len(e["details"]["nearby_lines"]) == 8 and e["details"]["nearby_lines"][0]["text"] == lines[0]
