"""Commands see the kernel's environment as it is when they start, not as it was at load time."""

from __future__ import annotations

import pytest
from _support import ok


def test_variable_set_after_start_reaches_next_command(rt, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOLON_LATE_VARIABLE", "set-after-start")
    r = ok(rt.call("ExecCommand", {"cmd": "echo value=$HOLON_LATE_VARIABLE", "login": False}))
    assert "value=set-after-start" in r["stdout_preview"]
    monkeypatch.setenv("HOLON_LATE_VARIABLE", "changed")  # same name, new value: the cached copy is remade
    r = ok(rt.call("ExecCommand", {"cmd": "echo value=$HOLON_LATE_VARIABLE", "login": False}))
    assert "value=changed" in r["stdout_preview"]
    monkeypatch.delenv("HOLON_LATE_VARIABLE")
    r = ok(rt.call("ExecCommand", {"cmd": "echo value=$HOLON_LATE_VARIABLE", "login": False}))
    assert "set-after-start" not in r["stdout_preview"]


def test_agent_ids_are_checked_and_new_ones_recorded(rt) -> None:
    for bad in ("../evil", "a/b", "", "x" * 65, "-x", "a..b"):
        with pytest.raises(ValueError, match="not an agent id"):
            rt.call("GetAgent", {}, agent=bad)
    assert not (rt.home / "evil").exists()
    assert rt.store.agent("helper-2") is None
    me = ok(rt.call("GetAgent", {}, agent="helper-2"))
    assert me["agent"]["identity"]["agent_id"] == "helper-2"
    assert rt.store.agent("helper-2")["profile"] == "public_named"
    assert ok(rt.call("GetAgent", {"agent_id": "helper-2"}))["agent"]["identity"]["agent_id"] == "helper-2"
