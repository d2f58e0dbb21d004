"""Commands see the kernel's environment as it is when they start, not as it was at load time."""

from __future__ import annotations

import pytest

from _support import ok


def test_variable_set_after_start_reaches_next_command(rt, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOLON_LATE_VARIABLE", "set-after-start")
    r = ok(rt.call("ExecCommand", {"cmd": "echo value=$HOLON_LATE_VARIABLE", "login": False}))
    assert "value=set-after-start" in r["stdout_preview"]
    monkeypatch.delenv("HOLON_LATE_VARIABLE")
    r = ok(rt.call("ExecCommand", {"cmd": "echo value=$HOLON_LATE_VARIABLE", "login": False}))
    assert "set-after-start" not in r["stdout_preview"]
