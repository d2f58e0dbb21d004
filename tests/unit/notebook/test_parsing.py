"""``split_verbatim`` and ``interpret_escapes``: options first, text verbatim."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from holon_nb.notebook._magics import HolonMagics
from holon_nb.notebook._parsing import interpret_escapes, split_verbatim, strip_comment

EXEC = HolonMagics.exec_line.parser
TOOL = HolonMagics.tool_line.parser
INPUT = HolonMagics.task_input.parser


@pytest.mark.parametrize(
    "line,head,rest",
    [
        ("echo hi", "", "echo hi"),
        ("--yield-ms 0 -- pytest -q", "--yield-ms 0", "pytest -q"),
        ("--yield-ms=0 --tty ls -la", "--yield-ms=0 --tty", "ls -la"),
        ("--workdir 'my dir' echo \"$HOME\"  ", "--workdir 'my dir'", 'echo "$HOME"'),
        ("-- --yield-ms 5", "", "--yield-ms 5"),
        ("echo --tty", "", "echo --tty"),
        ("", "", ""),
        ("  --stdin  ", "--stdin", ""),
    ],
)
def test_exec_lines(line: str, head: str, rest: str) -> None:
    assert split_verbatim(line, EXEC) == (head, rest)


def test_tool_line_keeps_json_verbatim() -> None:
    line = 'ExecCommand --raise {"cmd": "echo \'a  b\' $X", "yield_time_ms": 0}'
    assert split_verbatim(line, TOOL, positionals=1) == (
        "ExecCommand --raise",
        '{"cmd": "echo \'a  b\' $X", "yield_time_ms": 0}',
    )
    assert split_verbatim("ListTasks", TOOL, positionals=1) == ("ListTasks", "")


def test_task_input_text_may_start_with_a_dash() -> None:
    assert split_verbatim("T --no-newline -5  x ", INPUT, positionals=1) == ("T --no-newline", "-5  x")


def test_unknown_long_option_and_missing_value_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        split_verbatim("--yeld-ms 0 ls", EXEC)
    with pytest.raises(UsageError):
        split_verbatim("--workdir", EXEC)


@pytest.mark.parametrize(
    "text,expected",
    [
        (r"a\nb", "a\nb"),
        (r"tab\there", "tab\there"),
        (r"\\n", "\\n"),
        (r"\x41\u00e9", "Aé"),
        (r"\e[0m", "\x1b[0m"),
        ("héllo", "héllo"),
        (r"keep \q", r"keep \q"),
    ],
)
def test_escapes(text: str, expected: str) -> None:
    assert interpret_escapes(text) == expected


@pytest.mark.parametrize(
    "line,expected",
    [
        ("wait   # wait for it", "wait"),
        ("# only a comment", ""),
        ("#", ""),
        ("a#b # c", "a#b"),  # inside a word: kept
        ('--summary "see # 3"  # why', '--summary "see # 3"'),  # inside quotes: kept
        ("--summary 'a # b' # c", "--summary 'a # b'"),
        (r'"a\" # b" # c', r'"a\" # b"'),  # an escaped quote does not end the quoted text
        ("Fix bug #12", "Fix bug #12"),  # an issue number, not a comment
        ('unclosed "a # b', 'unclosed "a # b'),  # the parser reports the quote
        ('--todo "[>] collect changes" --todo "draft"', '--todo "[>] collect changes" --todo "draft"'),
    ],
)
def test_strip_comment(line: str, expected: str) -> None:
    assert strip_comment(line) == expected
