"""Bounded disk (D13, issue 9 item 7): command artifacts and ended tasks' logs are pruned by a size cap and
an age; never a live task's log or a file a work item names; records say what was pruned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support import ok

from holon_nb import Runtime
from holon_nb.runtime.housekeeping import PrunePolicy, prune_home
from holon_nb.runtime.housekeeping._prune import StoreReader


def _age(path: str | Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def _artifact(rt: Runtime, n: int = 20000) -> tuple[str, str]:
    """Run a command whose output is truncated; return (artifact path, execution id)."""
    r = rt.call("ExecCommand", {"cmd": f"seq {n}", "max_output_tokens": 100})
    res = ok(r)
    return res["artifacts"][0]["path"], r.execution_id


def _ended_task(rt: Runtime, text: str = "task-out") -> tuple[str, str]:
    r = ok(rt.call("ExecCommand", {"cmd": f"sleep 0.1; seq 5000; echo {text}", "yield_time_ms": 0}))
    task_id = r["task_handle"]["task_id"]
    ok(rt.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 20000}))
    return task_id, rt.store.task(task_id)["detail"]["output_path"]


def test_age_removes_old_files_and_keeps_recent_ones(rt: Runtime) -> None:
    old, _ = _artifact(rt)
    new, _ = _artifact(rt)
    _age(old, 20 * 86400)
    report = rt.prune(max_age_days=14)
    assert [r["path"] for r in report.removed] == [old] and report.removed[0]["reason"] == "age"
    assert not os.path.exists(old) and os.path.exists(new)
    assert "removed 1 file(s)" in report.text() and old in report.text()


def test_size_cap_removes_oldest_first_until_under_the_cap(rt: Runtime) -> None:
    paths = [_artifact(rt)[0] for _ in range(3)]
    for i, p in enumerate(paths):
        _age(p, 3600 * (3 - i))  # paths[0] oldest
    sizes = [os.path.getsize(p) for p in paths]
    home = rt.prune(dry_run=True, max_age_days=0).home_bytes_before
    cap = home - sizes[0] - 1  # removing the oldest two gets under the cap, the oldest alone does not
    dry = rt.prune(dry_run=True, max_home_bytes=cap, max_age_days=0)
    assert [r["path"] for r in dry.removed] == paths[:2] and all(os.path.exists(p) for p in paths)
    report = rt.prune(max_home_bytes=cap, max_age_days=0)
    assert [r["path"] for r in report.removed] == paths[:2]
    assert {r["reason"] for r in report.removed} == {"size"}
    assert not os.path.exists(paths[0]) and not os.path.exists(paths[1]) and os.path.exists(paths[2])
    assert report.home_bytes_after <= cap and not report.over_cap


def test_a_live_tasks_log_and_a_file_a_work_item_names_are_kept(rt: Runtime) -> None:
    r = ok(rt.call("ExecCommand", {"cmd": "seq 3000; sleep 30", "yield_time_ms": 300}))
    live_id = r["task_handle"]["task_id"]
    live_log = rt.store.task(live_id)["detail"]["output_path"]
    named, _ = _artifact(rt)
    ok(rt.call("CreateWorkItem", {"objective": f"compare the output in {named}"}))
    other, _ = _artifact(rt)
    for p in (live_log, named, other):
        _age(p, 30 * 86400)
    report = rt.prune(max_home_bytes=1, max_age_days=1)
    assert [r["path"] for r in report.removed] == [other]
    assert os.path.exists(live_log) and os.path.exists(named)
    assert report.kept_live == 1 and report.kept_referenced == 1 and report.over_cap
    ok(rt.call("TaskStop", {"task_id": live_id}))


def test_a_recent_file_is_removed_by_the_size_cap_but_never_by_age(rt: Runtime) -> None:
    """Issue 25 item 3a: the cap holds during a burst, so the size cap has no grace; age keeps one (GRACE_S)."""
    path, _ = _artifact(rt)
    assert rt.prune(max_age_days=1e-6).removed == []  # older than 0.09 s, written less than a minute ago
    assert os.path.exists(path)
    assert [r["path"] for r in rt.prune(max_home_bytes=1, max_age_days=0).removed] == [path]
    assert not os.path.exists(path)


def test_pruned_outputs_are_said_so_by_task_output_and_memory_get(rt: Runtime) -> None:
    task_id, log = _ended_task(rt)
    art, execution_id = _artifact(rt)
    for p in (log, art):
        _age(p, 30 * 86400)
    removed = {r["path"] for r in rt.prune(max_age_days=1).removed}
    assert removed == {log, art}
    task = ok(rt.call("TaskOutput", {"task_id": task_id, "block": False}))["task"]
    assert task["output_pruned"]["reason"] == "age" and task["output_pruned"]["bytes"] > 0
    assert "artifacts" not in task and "task-out" in (task["result_summary"] or "")
    got = ok(rt.call("MemoryGet", {"source_ref": f"tool_execution:{execution_id}:output"}))["memory"]
    doc = json.loads(got["content"]) if got["content"].lstrip().startswith("{") else None
    text = json.dumps(got)
    assert '\\"pruned\\": true' in text or (doc and doc["artifacts"][0]["pruned"] is True)
    assert "pruned from the holon home" in text


def test_prune_home_on_a_store_without_work_items(tmp_path: Path) -> None:
    from holon_nb.runtime.core._store import Store

    home = tmp_path / "h"
    store = Store(home / "holon.sqlite3")
    art = home / "agents" / "a" / "tool-artifacts" / "exec-command-x-stdout.log"
    art.parent.mkdir(parents=True)
    art.write_bytes(b"x" * 1000)
    _age(art, 10 * 86400)
    try:
        report = prune_home(home, StoreReader(store), PrunePolicy(max_age_s=86400))
    finally:
        store.close()
    assert [r["path"] for r in report.removed] == [str(art)] and not art.exists()


def test_cli_prune_says_what_it_removed(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace) as rt:
        art, _ = _artifact(rt)
    _age(art, 30 * 86400)
    env = {**os.environ, "HOLON_NB_ARTIFACT_MAX_AGE_DAYS": "7"}
    cmd = [sys.executable, "-m", "holon_nb.cli", "prune", "--home", str(home)]
    dry = subprocess.run([*cmd, "--dry-run", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert [r["path"] for r in json.loads(dry.stdout)["removed"]] == [art] and os.path.exists(art)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "removed 1 file(s)" in done.stdout and art in done.stdout
    assert not os.path.exists(art)
    bad = subprocess.run([*cmd[:-2], "--home", str(tmp_path / "nohome")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a holon home" in bad.stderr


def test_settings_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from holon_nb.runtime.core._settings import RuntimeSettings

    monkeypatch.setenv("HOLON_NB_MAX_HOME_BYTES", "12345")
    monkeypatch.setenv("HOLON_NB_ARTIFACT_MAX_AGE_DAYS", "2.5")
    s = RuntimeSettings()
    assert s.max_home_bytes == 12345 and s.artifact_max_age_days == 2.5
    monkeypatch.delenv("HOLON_NB_MAX_HOME_BYTES")
    assert RuntimeSettings().max_home_bytes == 1024**3


def test_a_home_made_in_a_git_repository_is_ignored_by_git(tmp_path: Path) -> None:
    from _git_support import commit, git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    commit(repo, "analysis.ipynb", "{}\n")
    with Runtime(workspace=repo, home=repo / ".holon") as rt:  # where %load_ext puts it by default
        ok(rt.call("ExecCommand", {"cmd": "echo hi > out.txt", "login": False}))
    assert (repo / ".holon" / "holon.sqlite3").is_file()
    assert git(repo, "status", "--porcelain") == "?? out.txt"  # the notebook's own output, not the home
    (repo / ".holon" / ".gitignore").write_text("kept\n")  # an existing home's file is never rewritten
    Runtime(workspace=repo, home=repo / ".holon").close()
    assert (repo / ".holon" / ".gitignore").read_text() == "kept\n"
