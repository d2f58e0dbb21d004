"""Result payload, summary and text receipt (commands spec §10.7, §10.9)."""

from __future__ import annotations

from pathlib import Path

from _support import ok

from holon_nb import Runtime
from holon_nb.tools.patching import render_receipt
from holon_nb.tools.patching._model import Diagnostic
from holon_nb.tools.patching._result import build_result, sanitize


def test_diff_preview_is_cut_at_80_lines(rt: Runtime, workspace: Path, apply) -> None:
    body = "".join(f"+line {i}\n" for i in range(100))
    res = ok(apply(f"--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,100 @@\n{body}"))
    entry = res["changed_files"][0]
    lines = entry["diff_preview"].split("\n")
    assert len(lines) == 81 and lines[-1] == "... diff truncated: showing 80 of 103 lines"
    assert lines[:3] == ["--- /dev/null", "+++ b/big.txt", "@@ -0,0 +1,100 @@"]
    assert entry["diff_truncated"] is True


def test_diff_preview_normalises_headers_and_marker(rt: Runtime, workspace: Path, apply) -> None:
    res = ok(apply("--- a.txt\n+++ a.txt\n@@ -3 +3 @@\n-three\n+3\n\\ No newline at end of file\n"))
    assert res["changed_files"][0]["diff_preview"] == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -3,1 +3,1 @@\n-three\n+3\n\\ No newline at end of file"
    )
    assert (workspace / "a.txt").read_bytes() == b"one\ntwo\n3"


def _env(result: dict) -> dict:
    result = dict(result)
    summary = result.pop("summary_text")
    return {"tool_name": "ApplyPatch", "status": "success", "summary_text": summary, "result": result}


def test_many_diagnostics() -> None:
    diags = [Diagnostic("hunk_count_mismatch", f"diagnostic {i}", f"src/f{i}.py") for i in range(11)]
    result = build_result([{"action": "modify", "path": "src/f0.py", "hunks": []}], ["/w/src/f0.py"], [], diags)
    assert result["summary_text"] == (
        "patched M:src/f0.py (diagnostics: hunk_count_mismatch on src/f0.py, "
        "hunk_count_mismatch on src/f1.py, hunk_count_mismatch on src/f2.py, +8 more)"
    )
    receipt = render_receipt(_env(result))
    assert "- hunk_count_mismatch on src/f7.py: diagnostic 7" in receipt
    assert "diagnostic 8" not in receipt
    assert "- omitted 3 additional diagnostics" in receipt


def test_no_changes_recorded() -> None:
    result = build_result([], [], [], [])
    assert result["summary_text"] == "patched no files"
    assert render_receipt(_env(result)) == "Success. Updated the following files:\n(no file changes recorded)"


def test_sanitize() -> None:
    assert sanitize("ok " + "x" * 97 + " end") == "ok [long token omitted] end"
    assert sanitize("a\n" + "y" * 96) == "a\n" + "y" * 96
    long = sanitize("word " * 300)
    assert len(long) == 700 and long.endswith("…")


def test_unknown_path_in_receipt() -> None:
    result = build_result(
        [{"action": "add", "path": "n.txt", "hunks": []}],
        ["/w/n.txt"],
        [],
        [Diagnostic("apply_patch_compatibility_fallback", "m " + "z" * 200)],
    )
    receipt = render_receipt(_env(result))
    assert "- apply_patch_compatibility_fallback on unknown path: m [long token omitted]" in receipt
    assert receipt.startswith("Success with diagnostics. Updated the following files:\nA n.txt\n")


def test_receipt_of_a_move_and_delete(rt: Runtime, workspace: Path, apply) -> None:
    r = apply("diff --git a/a.txt b/moved.txt\nrename from a.txt\nrename to moved.txt\n")
    assert r.receipt == "Success. Updated the following files:\nR a.txt -> moved.txt"
    assert r.envelope["summary_text"] == "patched R:a.txt->moved.txt"
    assert r.envelope["result"]["changed_files"][0]["hunks"] == []
