"""A runtime whose loop died (issue 9): %holon status shows why, the next call says so, %reload_ext recovers."""

from __future__ import annotations

from typing import Any

import pytest
from _support import eventually

import holon_nb
from holon_nb.tools._errors import RuntimeDied


def test_status_shows_the_dead_loop_and_reload_ext_recovers(ip: Any, run, receipts) -> None:
    rt = holon_nb.get_runtime()

    async def fatal() -> None:
        raise RuntimeError("injected loop fault")

    tg = rt._loop.task_group
    rt._loop.portal.call(lambda: tg.start_soon(fatal) and None)  # bypasses supervision: the loop dies
    eventually(lambda: not rt._loop.alive)
    status = run("holon", "status")
    text = "\n".join(b.get("text/plain", "") for b in status)
    assert "loop_error" in text and "injected loop fault" in text
    with pytest.raises(RuntimeDied):
        ip.run_line_magic("exec", "echo hi")
    ip.run_line_magic("reload_ext", "holon_nb")
    again = holon_nb.get_runtime()
    assert again is not rt and again.status()["loop_error"] is None
    env = receipts(run("exec", "echo recovered"), "ExecCommand")[0]
    assert env["status"] == "success" and env["result"]["stdout_preview"] == "recovered"
