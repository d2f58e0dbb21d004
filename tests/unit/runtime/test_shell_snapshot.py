"""Login commands run through a snapshot of the login profile and see what ``<shell> -lc`` would give them.

Every profile here lives in a fake HOME (never the machine's own, whose login bash runs
``pyenv init``); each profile appends a line to ``runs.log`` when it runs, so a test can
tell how often the login profile itself ran.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from _support import ok

from holon_nb import Runtime

BASH_PROFILE = """\
echo profile >> "$HOME/runs.log"
export HOLON_SNAP_VAR='two words "quoted" $not_expanded'
export PATH="$HOME/bin:$PATH"
unset HOLON_SNAP_REMOVED
[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"
"""
BASHRC = """\
greet() { echo "hello $1"; }
helper_fn() { return 0; }
alias ll='ls -l'
alias say='echo said'
shopt -s expand_aliases
"""

# what both runs print: the environment (sorted), aliases, function names, where python comes from
PROBE = "env | LC_ALL=C sort; echo ---; alias; echo ---; declare -F | cut -d' ' -f3; echo ---; type -a python"


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "fakehome"
    (home / "bin").mkdir(parents=True)
    python = home / "bin" / "python"
    python.write_text("#!/bin/sh\necho fake python\n")
    python.chmod(0o755)
    (home / ".bash_profile").write_text(BASH_PROFILE)
    (home / ".bashrc").write_text(BASHRC)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HOLON_SNAP_REMOVED", "present before the profile")
    return home


@pytest.fixture
def brt(tmp_path: Path, workspace: Path, fake_home: Path) -> Runtime:
    runtime = Runtime(home=tmp_path / "holon", workspace=workspace)
    runtime.tasks.snapshots.wait_s = 60.0  # a loaded machine must not turn the test into a fallback
    try:
        yield runtime
    finally:
        runtime.close()


def _runs(home: Path) -> int:
    path = home / "runs.log"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _exec(rt: Runtime, cmd: str, **extra: object) -> dict:
    return ok(rt.call("ExecCommand", {"cmd": cmd, "shell": "bash", **extra}))


def test_snapshot_gives_the_login_shell_environment(brt: Runtime, fake_home: Path) -> None:
    through_snapshot = _exec(brt, PROBE)
    runs_after_capture = _runs(fake_home)
    again = _exec(brt, PROBE)
    assert _runs(fake_home) == runs_after_capture == 1  # the profile ran once: the capture

    brt.settings = brt.settings.replace(shell_snapshot=False)
    login = _exec(brt, PROBE)
    assert _runs(fake_home) == 2  # the plain login shell ran the profile

    assert through_snapshot["stdout_preview"] == login["stdout_preview"] == again["stdout_preview"]
    out = through_snapshot["stdout_preview"]
    assert 'HOLON_SNAP_VAR=two words "quoted" $not_expanded\n' in out
    assert "HOLON_SNAP_REMOVED" not in out
    assert "BASH_ENV" not in out
    assert "alias ll='ls -l'" in out and "greet\nhelper_fn\n" in out
    assert f"python is {fake_home}/bin/python" in out
    assert through_snapshot["exit_status"] == login["exit_status"] == 0


def test_functions_aliases_and_errors_behave_as_in_a_login_shell(brt: Runtime, fake_home: Path) -> None:
    r = _exec(brt, "greet world; say it")
    assert r["stdout_preview"] == "hello world\nsaid it"
    bad = _exec(brt, "no_such_command_xyz")
    assert _runs(fake_home) == 1
    assert bad["exit_status"] == 127
    assert "line 1: no_such_command_xyz: command not found" in bad["stderr_preview"]  # line numbers unchanged


def test_snapshot_is_refreshed_when_a_startup_file_changes(brt: Runtime, fake_home: Path) -> None:
    assert _exec(brt, "echo ${HOLON_SNAP_LATE:-unset}")["stdout_preview"] == "unset"
    rc = fake_home / ".bashrc"
    rc.write_text(BASHRC + "export HOLON_SNAP_LATE=now\n")
    later = time.time() + 5
    os.utime(rc, (later, later))
    assert _exec(brt, "echo ${HOLON_SNAP_LATE:-unset}")["stdout_preview"] == "now"
    assert _exec(brt, "echo ${HOLON_SNAP_LATE:-unset}")["stdout_preview"] == "now"
    assert _runs(fake_home) == 2  # captured again once, then reused


def test_a_profile_that_depends_on_the_directory_is_captured_per_directory(
    brt: Runtime, fake_home: Path, workspace: Path
) -> None:
    (fake_home / ".bash_profile").write_text(BASH_PROFILE + 'export HOLON_SNAP_WHERE="$(pwd)"\n')
    here = _exec(brt, "echo $HOLON_SNAP_WHERE")["stdout_preview"]
    sub = _exec(brt, "echo $HOLON_SNAP_WHERE", workdir="sub")["stdout_preview"]
    assert here == f"{workspace}"
    assert sub == f"{workspace / 'sub'}"
    assert _exec(brt, "echo $HOLON_SNAP_WHERE", workdir="sub")["stdout_preview"] == sub
    assert _runs(fake_home) == 2


# over 1 KiB of definitions: loaded when first called, not by every command. `late` is defined before the
# alias `say` exists, so a login shell runs its `say` as a command (not found), and so must the snapshot.
LONG_FUNCTIONS = (
    "long_fn() {\n"
    + "".join(f"    : padding line {i} so that the definitions pass the deferral threshold\n" for i in range(20))
    + '    echo "long $# [$1] [$2]"; helper_fn; return 7\n}\n'
    + "late() { say inside; }\n"
)


def test_long_definitions_are_loaded_on_first_call_and_behave_as_in_a_login_shell(
    brt: Runtime, fake_home: Path
) -> None:
    (fake_home / ".bashrc").write_text(LONG_FUNCTIONS + BASHRC)
    probe = "long_fn 'a b' c; echo status $?; late; echo status $?; greet x; declare -F | cut -d' ' -f3"
    lazy = _exec(brt, probe)
    redefined = _exec(brt, "greet() { echo mine; }; long_fn >/dev/null; greet")
    snapshot = next(brt.home.glob("shell-snapshots/bash-*.sh")).read_text()
    brt.settings = brt.settings.replace(shell_snapshot=False)
    login = _exec(brt, probe)

    assert "padding line" not in snapshot and "long_fn () { unset -f long_fn;" in snapshot
    assert lazy["stdout_preview"] == login["stdout_preview"]
    assert lazy["stdout_preview"].startswith("long 2 [a b] [c]\nstatus 7\nstatus 127\nhello x\n")
    # the alias did not expand into the definition; the message names the file it came from, as inline ones do
    assert lazy["stderr_preview"].endswith("/late: line 5: say: command not found")
    assert login["stderr_preview"].endswith("/.bashrc: line 24: say: command not found")
    assert redefined["stdout_preview"] == "mine"  # loading one definition leaves the others as the command set them
    definitions = next(brt.home.glob("shell-snapshots/functions-*"))
    assert sorted(p.name for p in definitions.iterdir()) == ["greet", "helper_fn", "late", "long_fn"]


def test_definitions_no_snapshot_names_are_removed_at_start(brt: Runtime, fake_home: Path, workspace: Path) -> None:
    (fake_home / ".bashrc").write_text(LONG_FUNCTIONS + BASHRC)
    _exec(brt, "true")
    snaps = brt.home / "shell-snapshots"
    (used,) = snaps.glob("functions-*")
    unused = snaps / "functions-0123456789abcdef"
    unused.mkdir()
    (unused / "f").write_text("f() { :; }\n")
    long_ago = time.time() - 2 * 3600
    for path in (used, unused):
        os.utime(path, (long_ago, long_ago))
    brt.close()
    with Runtime(home=brt.home, workspace=workspace) as again:
        again.tasks.snapshots.wait_s = 60.0
        assert used.is_dir() and not unused.exists()
        assert _exec(again, "long_fn x")["stdout_preview"] == "long 1 [x] []"


def test_a_failed_capture_falls_back_to_the_login_shell(brt: Runtime, fake_home: Path) -> None:
    (fake_home / ".bash_profile").write_text(BASH_PROFILE + "echo leaving >&2\nexit 3\n")
    first = ok(brt.call("ExecCommand", {"cmd": "echo never", "shell": "bash"}))
    second = ok(brt.call("ExecCommand", {"cmd": "echo never", "shell": "bash"}))
    # the profile exits before any command: no snapshot, and each command is what `bash -lc` gives
    assert _runs(fake_home) == 3  # the capture and two login shells
    for r in (first, second):
        assert r["exit_status"] == 3 and "never" not in (r.get("stdout_preview") or "")
        assert "leaving" in r["stderr_preview"]
    entry = next(e for e in brt.tasks.snapshots._entries.values() if e.shell == "bash")
    assert entry.done.is_set() and not entry.ok and "status 3" in entry.error


def test_sh_snapshot_and_sh_profile_with_functions(tmp_path: Path, workspace: Path, fake_home: Path) -> None:
    (fake_home / ".profile").write_text(
        'echo profile >> "$HOME/runs.log"\nexport HOLON_SNAP_SH=yes\nPATH="$HOME/bin:$PATH"\nalias hi="echo hi"\n'
    )
    probe = "env | LC_ALL=C sort; echo ---; alias; echo ---; command -v python"
    with Runtime(home=tmp_path / "holon-sh", workspace=workspace) as rt:
        rt.tasks.snapshots.wait_s = 60.0
        snap = ok(rt.call("ExecCommand", {"cmd": probe, "shell": "sh"}))
        hi = ok(rt.call("ExecCommand", {"cmd": "hi", "shell": "sh"}))
        runs = _runs(fake_home)
        rt.settings = rt.settings.replace(shell_snapshot=False)
        login = ok(rt.call("ExecCommand", {"cmd": probe, "shell": "sh"}))
    assert runs == 1  # the runtime's start-up capture (SHELL=/bin/sh is the same slot), nothing per command
    assert snap["stdout_preview"] == login["stdout_preview"]
    assert "HOLON_SNAP_SH=yes" in snap["stdout_preview"] and f"{fake_home}/bin/python" in snap["stdout_preview"]
    assert hi["stdout_preview"] == "hi"

    (fake_home / ".profile").write_text('echo profile >> "$HOME/runs.log"\nhello() { echo hi; }\n')
    before = _runs(fake_home)
    with Runtime(home=tmp_path / "holon-sh2", workspace=workspace) as rt:
        rt.tasks.snapshots.wait_s = 60.0
        assert ok(rt.call("ExecCommand", {"cmd": "hello", "shell": "sh"}))["stdout_preview"] == "hi"
        ok(rt.call("ExecCommand", {"cmd": "hello", "shell": "sh"}))
    assert _runs(fake_home) - before == 2  # sh cannot list functions: no snapshot, each command ran the profile


def test_stale_snapshot_files_are_removed_at_start(tmp_path: Path, workspace: Path, fake_home: Path) -> None:
    snaps = tmp_path / "holon" / "shell-snapshots"
    snaps.mkdir(parents=True)
    old, leftover = snaps / "bash-0123456789abcdef.sh", snaps / "bash-x.sh.99.tmp"
    old.write_text("true\n")
    leftover.write_text("partial")
    long_ago = time.time() - 30 * 24 * 3600
    for path in (old, leftover):
        os.utime(path, (long_ago, long_ago))
    with Runtime(home=tmp_path / "holon", workspace=workspace):
        assert not old.exists() and not leftover.exists()


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_snapshot_gives_the_login_shell_environment(tmp_path: Path, workspace: Path, fake_home: Path) -> None:
    (fake_home / ".zprofile").write_text(
        'echo profile >> "$HOME/runs.log"\nexport HOLON_SNAP_Z=zed\npath=("$HOME/bin" $path)\n'
        "greet() { echo \"hello $1\"; }\nalias hi='echo hi'\nsetopt extendedglob\n"
    )
    # the option `login` says how the shell started: the one line a non-login shell cannot match
    probe = (
        "env | LC_ALL=C sort; echo ---; alias; echo ---; print -l ${(ok)functions}; echo ---;"
        " setopt | grep -vx login; whence -a python"
    )
    with Runtime(home=tmp_path / "holon-zsh", workspace=workspace) as rt:
        rt.tasks.snapshots.wait_s = 60.0
        snap = ok(rt.call("ExecCommand", {"cmd": probe, "shell": "zsh"}))
        used = ok(rt.call("ExecCommand", {"cmd": "greet you; hi; no_such_cmd_z", "shell": "zsh"}))
        runs = _runs(fake_home)
        rt.settings = rt.settings.replace(shell_snapshot=False)
        login = ok(rt.call("ExecCommand", {"cmd": probe, "shell": "zsh"}))
        plain = ok(rt.call("ExecCommand", {"cmd": "greet you; hi; no_such_cmd_z", "shell": "zsh"}))
    assert runs == 1
    assert snap["stdout_preview"] == login["stdout_preview"]
    assert "HOLON_SNAP_Z=zed" in snap["stdout_preview"] and "ZDOTDIR" not in snap["stdout_preview"]
    assert (used["stdout_preview"], used["stderr_preview"]) == (plain["stdout_preview"], plain["stderr_preview"])
    assert used["stdout_preview"] == "hello you\nhi"


def test_snapshot_files_are_private(brt: Runtime, fake_home: Path) -> None:
    _exec(brt, "true")
    snaps = brt.home / "shell-snapshots"
    files = list(snaps.glob("bash-*.sh"))
    assert files and all(f.stat().st_mode & 0o777 == 0o600 for f in files)
    assert snaps.stat().st_mode & 0o777 == 0o700


def test_paths_under_home_do_not_make_the_snapshot_per_directory(tmp_path: Path, fake_home: Path) -> None:
    # the notebook sits in HOME and the profile puts $HOME/bin on PATH: one snapshot serves every directory
    (fake_home / "sub").mkdir()
    with Runtime(home=tmp_path / "holon-h", workspace=fake_home) as rt:
        rt.tasks.snapshots.wait_s = 60.0
        _exec(rt, "true")
        _exec(rt, "true", workdir="sub")
    assert _runs(fake_home) == 1
