"""Issue 12: a spawn execs the shell's file found on the PATH once, not each PATH candidate in turn.

Real runtimes, real shells and real PATH directories; nothing is mocked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from _support import ok

import holon_nb.runtime.tasks._launch as launch
import holon_nb.runtime.tasks._service as service
from holon_nb.runtime import Runtime


def _fake_shell(directory: Path, name: str, says: str) -> Path:
    """An executable ``name`` in ``directory`` that prints ``says`` and then runs sh with its arguments."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f'#!/bin/sh\necho {says}\nexec sh "$@"\n')
    path.chmod(0o755)
    return path


def test_dollar_zero_is_the_name_given(rt: Runtime) -> None:
    out = ok(rt.call("ExecCommand", {"cmd": 'echo "$0"', "shell": "sh", "login": False}))["stdout_preview"]
    assert out == "sh"  # not /usr/bin/sh: the file is found for exec, argv[0] stays as given
    assert launch._executable("sh", os.environ) == shutil.which("sh")


def test_a_shell_that_moved_on_the_path_is_found_again(
    rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _fake_shell(first, "holon-test-sh", "from-first")
    monkeypatch.setenv("PATH", f"{first}:{second}:{os.environ['PATH']}")
    args = {"cmd": "echo ran", "shell": "holon-test-sh", "login": False}
    assert ok(rt.call("ExecCommand", args))["stdout_preview"] == "from-first\nran"
    # the file found a moment ago is gone, another PATH directory has one: that one runs, no spawn error
    (first / "holon-test-sh").unlink()
    _fake_shell(second, "holon-test-sh", "from-second")
    assert ok(rt.call("ExecCommand", args))["stdout_preview"] == "from-second\nran"


def test_a_changed_path_is_a_new_lookup(rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _fake_shell(one, "holon-test-sh2", "one")
    _fake_shell(two, "holon-test-sh2", "two")
    args = {"cmd": "true", "shell": "holon-test-sh2", "login": False}
    monkeypatch.setenv("PATH", f"{one}:{os.environ['PATH']}")
    assert ok(rt.call("ExecCommand", args))["stdout_preview"] == "one"
    monkeypatch.setenv("PATH", f"{two}:{os.environ['PATH']}")
    assert ok(rt.call("ExecCommand", args))["stdout_preview"] == "two"


# ---------------------------------------------------------------- the leader's start time (issue 27 item 7)


def _child() -> tuple[subprocess.Popen[bytes], tuple[int, int]]:
    before = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    child = subprocess.Popen(["sh", "-c", "sleep 5"], start_new_session=True)
    return child, (before, time.clock_gettime_ns(time.CLOCK_BOOTTIME))


def test_the_journaled_start_time_is_what_proc_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """The start time a command's group is journaled with (the next runtime compares it with /proc before it
    ends a group whose runtime died) is /proc's, whether read there or taken from the boot clock window."""
    monkeypatch.setattr(service, "_BOOT_CLOCK_CHECKS", [0])
    taken = 0
    for _ in range(12):
        child, window = _child()
        try:
            assert service.leader_start(child.pid, window) == service._proc_start(child.pid)
            taken += window[0] // service._TICK_NS == window[1] // service._TICK_NS
        finally:
            child.kill()
            child.wait()
    assert service._BOOT_CLOCK_CHECKS[0] == min(taken, service._CHECKS_NEEDED)  # checked, never contradicted


def test_a_boot_clock_that_disagrees_with_proc_is_not_used_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "_BOOT_CLOCK_CHECKS", [0])
    child, _ = _child()
    try:
        wrong = (0, 1)  # a window in tick 0: not this child's start
        assert service.leader_start(child.pid, wrong) == service._proc_start(child.pid)
        assert service._BOOT_CLOCK_CHECKS == [-1]
        assert service.leader_start(child.pid, wrong) == service._proc_start(child.pid)  # /proc from now on
        straddling = (service._TICK_NS - 1, service._TICK_NS)
        monkeypatch.setattr(service, "_BOOT_CLOCK_CHECKS", [service._CHECKS_NEEDED])
        assert service.leader_start(child.pid, straddling) == service._proc_start(child.pid)  # two ticks: read
        assert service.leader_start(child.pid, (0, 1)) == "0"  # confirmed and within one tick: not read
    finally:
        child.kill()
        child.wait()


def test_the_encoded_environment_follows_each_change(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 27 item 7: the encoding of a command's environment is reused while it is unchanged
    env = {"A": "1", "PATH": os.environ["PATH"]}
    assert launch._encoded(env) is launch._encoded(dict(env)) == {b"A": b"1", b"PATH": os.fsencode(env["PATH"])}
    assert launch._encoded({**env, "A": "2"})[b"A"] == b"2"
    args = {"cmd": 'echo "$HOLON_TEST_VAR"', "shell": "sh", "login": False}
    for value in ("one", "two", "one", "\u00e9t\u00e9"):
        monkeypatch.setenv("HOLON_TEST_VAR", value)
        assert ok(rt.call("ExecCommand", args))["stdout_preview"] == value


def test_a_commands_environment_is_one_read_only_object_while_nothing_changes(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 27 item 7: the launch and the shell snapshot recognise it by identity, so it must never change
    first = rt.tasks.command_env("default")
    assert isinstance(first, launch.CommandEnv) and first["HOLON_AGENT_ID"] == "default"
    assert rt.tasks.command_env("default") is first
    assert launch._encoded(first) is launch._encoded(first)
    with pytest.raises(TypeError, match="read-only"):
        first["X"] = "1"
    with pytest.raises(TypeError, match="read-only"):
        first.update(X="1")
    assert {**first, "X": "1"}["X"] == "1" and "X" not in first  # a copy is a plain dict
    other = rt.tasks.command_env("other-agent")
    assert other is not first and other["HOLON_AGENT_ID"] == "other-agent"
    monkeypatch.setenv("HOLON_TEST_VAR", "changed")  # a cell sets a variable: a new environment carries it
    changed = rt.tasks.command_env("default")
    assert changed is not first and changed["HOLON_TEST_VAR"] == "changed" and "HOLON_TEST_VAR" not in first
    assert launch._encoded(changed)[b"HOLON_TEST_VAR"] == b"changed"
    rt.settings = rt.settings.replace(command_env_unset=("HOLON_TEST_VAR",))  # settings are frozen: new ones
    assert "HOLON_TEST_VAR" not in rt.tasks.command_env("default")


def test_a_snapshot_wrapped_environment_is_reused_while_unchanged(rt: Runtime) -> None:
    from holon_nb.runtime.tasks._snapshot import _env_digest, wrap

    env = rt.tasks.command_env("default")
    argv, wrapped = wrap("bash", "/bin/bash", "true", "/tmp/snap.sh", env)
    assert argv == ("/bin/bash", "-c", "true") and wrapped["BASH_ENV"] == "/tmp/snap.sh" and "BASH_ENV" not in env
    assert wrap("bash", "/bin/bash", "other", "/tmp/snap.sh", env)[1] is wrapped
    assert wrap("bash", "/bin/bash", "true", "/tmp/other.sh", env)[1]["BASH_ENV"] == "/tmp/other.sh"
    assert _env_digest(env) == _env_digest(dict(env))  # by identity or by items: one digest
