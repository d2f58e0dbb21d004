"""The session-end check of tests/_leaks.py: a session whose test leaves a process running fails (issue 23).

Each case runs a small pytest session in a subprocess (pytester) with the plugin loaded (``-p _leaks``) and a
one-second grace period, once plainly and once on a pytest-xdist worker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _support import eventually

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1]

LEAKY = """
import subprocess

def test_leaves_a_child():
    subprocess.Popen(["sleep", "60.125"])

def test_leaves_an_orphan():  # a shell's background child: re-parented to init when the shell exits
    subprocess.run("sleep 60.25 >/dev/null 2>&1 &", shell=True, check=True)
"""

TIDY = """
import subprocess

def test_waits_for_its_child():
    subprocess.run(["sleep", "0.1"], check=True)

def test_a_child_that_ends_within_the_grace_period():
    subprocess.Popen(["sleep", "0.2"])
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("HOLON_TESTS_LEAK_GRACE_S", "1")
    return pytester


def _alive(pattern: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text.startswith(pattern):
            found.append(text)
    return found


@pytest.mark.parametrize("xdist", [[], ["-p", "xdist", "-n", "1"]], ids=["plain", "xdist-worker"])
def test_a_process_left_running_fails_the_session_and_is_named(inner: pytest.Pytester, xdist: list[str]) -> None:
    inner.makepyfile(test_leaky=LEAKY)
    result = inner.runpytest_subprocess("-p", "_leaks", "-p", "no:cacheprovider", *xdist, timeout=120)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    out = result.stdout.str()
    assert "2 process(es) started by this test session still ran 1 s after its last test" in out, out
    assert "sleep 60.125" in out and "sleep 60.25" in out  # by pid and command line
    result.assert_outcomes(passed=2, errors=1)  # an error at the teardown of the session's last test
    # and killed (the inner session waits for them to end; the wait here covers a loaded machine's lag)
    eventually(lambda: _alive("sleep 60.125") == [] and _alive("sleep 60.25") == [], timeout=30)


def test_a_session_that_ends_what_it_starts_passes(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_tidy=TIDY)
    result = inner.runpytest_subprocess("-p", "_leaks", "-p", "no:cacheprovider", timeout=120)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
