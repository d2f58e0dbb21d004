"""Path resolution and confinement (commands spec §10.5; workspace spec §2.2-§2.3, case 49; case C08; per D3)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.runtime.core._settings import RuntimeSettings
from holon_nb.tools._errors import ToolFailure
from holon_nb.tools.patching import PathPolicy, apply_patch
from holon_nb.tools.patching._paths import normalize

AC40 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"


def _add(path: str, text: str = "x") -> str:
    return f"--- /dev/null\n+++ {path}\n@@ -0,0 +1 @@\n+{text}\n"


@pytest.fixture
def outside_file():
    path = Path("/tmp") / f"holon-patch-{uuid.uuid4().hex}.txt"
    path.write_text("old\n")
    yield path
    path.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("/a/b/../c", "/a/c"),
        ("/../etc", "/etc"),
        ("//x//./y/", "/x/y"),
        ("/a/../../..", "/"),
        ("/", "/"),
    ],
)
def test_lexical_normalization(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


class TestCaseC08:
    """One patch modifying a file and adding an escaping target: refused whole, nothing created."""

    def test_dotdot(self, rt: Runtime, workspace: Path, tmp_path: Path, apply, tree) -> None:
        before = tree(tmp_path)
        e = err(apply(AC40 + _add("b/../../outside.txt")), "path_escape")
        assert e["details"]["requested_path"] == "../../outside.txt"
        assert tree(tmp_path) == before

    def test_absolute_outside(self, rt: Runtime, workspace: Path, tmp_path: Path, apply, tree) -> None:
        target = tmp_path / "outside-abs.txt"
        before = tree(tmp_path)
        e = err(apply(AC40 + _add(str(target))), "path_escape")
        assert e["details"]["requested_path"] == str(target)
        assert tree(tmp_path) == before

    def test_symlink_out(self, rt: Runtime, workspace: Path, tmp_path: Path, apply, tree) -> None:
        (tmp_path / "out").mkdir()
        (workspace / "repo-link").symlink_to(tmp_path / "out")
        before = tree(tmp_path)
        e = err(apply(AC40 + _add("b/repo-link/x.txt")), "path_escape")
        assert e["details"]["requested_path"] == "repo-link/x.txt"
        assert e["details"]["resolved_path"] == str(tmp_path / "out" / "x.txt")
        assert tree(tmp_path) == before
        assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_case49_tmp_targets(rt: Runtime, workspace: Path, outside_file: Path, apply, tmp_path: Path) -> None:
    err(apply(_add("b/../escape.txt")), "path_escape")
    (workspace / "tmplink").symlink_to("/tmp")
    name = f"holon-49-{uuid.uuid4().hex}.txt"
    err(apply(_add(f"b/tmplink/{name}")), "path_escape")
    assert not (Path("/tmp") / name).exists()
    err(apply(f"--- {outside_file}\n+++ {outside_file}\n@@ -1 +1 @@\n-old\n+new\n"), "path_escape")
    assert outside_file.read_text() == "old\n"


def test_case49_linked_worktree_is_a_bound_root(workspace: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "W-feature"
    worktree.mkdir()
    (worktree / "f.txt").write_text("a\n")
    policy = PathPolicy(
        execution_root=str(workspace), bound_roots=(str(tmp_path / "home"), str(workspace), str(worktree))
    )
    res = apply_patch(f"--- {worktree}/f.txt\n+++ {worktree}/f.txt\n@@ -1 +1 @@\n-a\n+b\n", policy)
    assert res["changed_paths"] == [str(worktree / "f.txt")]
    assert (worktree / "f.txt").read_text() == "b\n"
    # not bound: refused
    with pytest.raises(ToolFailure) as info:
        apply_patch(
            f"--- {worktree}/f.txt\n+++ {worktree}/f.txt\n@@ -1 +1 @@\n-b\n+c\n",
            PathPolicy(execution_root=str(workspace), bound_roots=(str(workspace),)),
        )
    assert info.value.error.kind == "path_escape"


def test_relative_symlink_into_agent_home_is_refused(rt: Runtime, workspace: Path, apply) -> None:
    home = rt.tasks.agent_home("default")
    (workspace / "homelink").symlink_to(home)
    err(apply(_add("b/homelink/x.txt")), "path_escape")  # relative targets stay in the execution root
    ok(apply(_add(str(home / "x.txt"))))  # the absolute spelling is inside a bound root


def test_symlink_inside_root_stays_a_symlink(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "alias.txt").symlink_to("a.txt")
    res = ok(apply(AC40.replace("a.txt", "alias.txt")))
    assert os.path.islink(workspace / "alias.txt")
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert res["changed_paths"] == [str(workspace / "a.txt")]
    assert res["changed_files"][0]["path"] == "alias.txt"


def test_bound_root_through_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "f.txt").write_text("a\n")
    (tmp_path / "via").symlink_to(real)
    policy = PathPolicy(execution_root=str(tmp_path / "via"), bound_roots=(str(tmp_path / "via"),))
    apply_patch("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n", policy)
    apply_patch(f"--- {real}/f.txt\n+++ {real}/f.txt\n@@ -1 +1 @@\n-b\n+c\n", policy)
    assert (real / "f.txt").read_text() == "c\n"


def test_relative_paths_join_the_execution_root_not_cwd(rt: Runtime, workspace: Path, apply) -> None:
    ok(apply(_add("b/sub/inner.txt", "in")))
    assert (workspace / "sub" / "inner.txt").read_text() == "in\n"
    ok(apply(_add("b/sub/../top.txt", "top")))
    assert (workspace / "top.txt").read_text() == "top\n"


def test_a_prefixed_absolute_path_hint(rt: Runtime, workspace: Path, apply) -> None:
    stripped = str(workspace / "a.txt").lstrip("/")
    e = err(
        apply(AC40.replace("a/a.txt", f"a/{stripped}").replace("b/a.txt", f"b/{stripped}")), "tool_execution_failed"
    )
    assert e["domain"] == "unknown"
    assert e["details"]["suggested_path"] == str(workspace / "a.txt")
    assert f"/{stripped}" in e["recovery_hint"]
    e = err(apply(_add(f"b/{stripped}")), "tool_execution_failed")  # add targets too
    assert not (workspace / stripped).exists()


def test_a_prefixed_path_outside_bound_roots_is_relative(
    rt: Runtime, workspace: Path, outside_file: Path, apply
) -> None:
    rel = str(outside_file).lstrip("/")
    ok(apply(_add(f"b/{rel}", "inside")))
    assert (workspace / rel).read_text() == "inside\n"
    assert outside_file.read_text() == "old\n"


def test_a_prefixed_path_with_outside_option(tmp_path: Path, workspace: Path, outside_file: Path) -> None:
    settings = RuntimeSettings(patch_outside_workspace=True)
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as rt:
        rel = str(outside_file).lstrip("/")
        err(rt.call("ApplyPatch", {"patch": _add(f"b/{rel}")}), "tool_execution_failed")


def test_all_paths_resolved_before_any_read(rt: Runtime, workspace: Path, apply) -> None:
    (workspace / "bin.txt").write_bytes(b"\xff")
    patch = "--- a/bin.txt\n+++ b/bin.txt\n@@ -1 +1 @@\n-x\n+y\n" + _add("b/../late-escape.txt")
    err(apply(patch), "path_escape")  # not io_error: paths are checked first


def test_path_escape_details(rt: Runtime, workspace: Path, apply) -> None:
    e = err(apply(_add("b/../../../x.txt")), "path_escape")
    assert e["details"]["cwd"] == str(workspace)
    assert e["details"]["path"] == normalize(f"{workspace}/../../../x.txt")
    assert e["details"]["resolved_path"] == os.path.realpath(e["details"]["path"])


def test_new_directories_are_created(rt: Runtime, workspace: Path, apply) -> None:
    res = ok(apply(_add("b/deep/er/new.txt", "n")))
    assert (workspace / "deep" / "er" / "new.txt").read_text() == "n\n"
    assert res["changed_paths"] == [str(workspace / "deep" / "er" / "new.txt")]
