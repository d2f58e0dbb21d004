"""A failing ``%%agent --wait`` turn in a real kernel: the view shows the cause, the error is one line.

The cell still fails (``AgentTurnFailed``, so a headless run stops there), but its traceback is the one
line ``AgentTurnFailed: <message>``, not the frames of the magic that raised it.
"""

from __future__ import annotations

from pathlib import Path

from _support import execute, holon_kernel

SCRIPT = """\
format: holon_nb.script/v1
steps:
  - text: all is well
"""
CELL = "%%agent --model scripted/script.yaml --wait\nHow is it going?"


def test_a_failed_agent_turn_ends_the_cell_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    with holon_kernel(tmp_path) as (_, kc):
        first = execute(kc, CELL, timeout=120)
        assert not [m for m in first if m["msg_type"] == "error"]
        again = execute(kc, CELL, timeout=120)  # the one-step script is used up: the turn fails
        (error,) = [m["content"] for m in again if m["msg_type"] == "error"]
        assert error["ename"] == "AgentTurnFailed"
        (line,) = error["traceback"]
        assert line == f"AgentTurnFailed: {error['evalue']}"
        assert "scripted agent provider exhausted" in line and "holon_nb/" not in line
        shown = "".join(str(m["content"].get("data", {}).get("text/plain", "")) for m in again)
        assert "exhausted" in shown  # the view above already said why
