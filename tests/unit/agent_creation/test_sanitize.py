"""The child's final text is sanitised before it rejoins the caller (agents spec §5.6 rule 3)."""

from __future__ import annotations

from holon_nb.runtime.agents._runs import sanitize_final_text


def test_think_blocks_tool_xml_and_system_lines_are_removed() -> None:
    text = (
        "<think>plan A\nthen B</think>Result: 3 files differ.\n"
        '<tool_call>{"name": "ExecCommand"}</tool_call>\n'
        "[SYSTEM] internal note\n  [SYSTEM] indented too\n"
        '<function_calls><invoke name="x"><parameter name="a">1</parameter></invoke></function_calls>\n'
        "Details follow.\n<THINKING>case</THINKING>"
    )
    assert sanitize_final_text(text) == "Result: 3 files differ.\n\nDetails follow."


def test_unclosed_think_block_is_dropped_to_the_end_and_plain_text_is_kept() -> None:
    assert sanitize_final_text("Answer.\n<think>never closed") == "Answer."
    plain = "Use a <b>bold</b> tag; [SYSTEMS] is a word; a < b."
    assert sanitize_final_text(plain) == plain
    assert sanitize_final_text("  \n\n") == ""
