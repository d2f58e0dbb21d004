"""ANSI escapes in command output become HTML colour spans in cards (and nothing else survives)."""

from __future__ import annotations

from holon_nb.render._ansi import ansi_to_html, strip_ansi
from holon_nb.render._card import render_card


def test_pytest_colours_become_spans_and_text_is_escaped() -> None:
    out = ansi_to_html("\x1b[32m\x1b[1m2 passed\x1b[0m in 0.5s <b>&")
    assert "<span style='color:var(--holon-ansi-32, #1a7f37);font-weight:bold'>2 passed</span>" in out
    assert out.endswith(" in 0.5s &lt;b&gt;&amp;") and "\x1b" not in out


def test_other_sequences_are_dropped() -> None:
    text = "\x1b]0;window title\x07a\x1b[2Kb\x1b(Bc\x1b[?25ld\x1b[38;5;208me\x1b[0m"
    assert strip_ansi(text) == "abcde"
    assert "\x1b" not in ansi_to_html(text) and "window title" not in ansi_to_html(text)


def test_card_renders_coloured_stdout() -> None:
    env = {
        "tool_name": "ExecCommand",
        "status": "success",
        "result": {"disposition": "completed", "exit_status": 0, "stdout_preview": "\x1b[31mFAILED\x1b[0m x"},
    }
    html = render_card(env, "receipt")
    assert "<span style='color:var(--holon-ansi-31, #cf222e)'>FAILED</span> x" in html and "[31m" not in html
