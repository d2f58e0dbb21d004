"""Magic-line parsing helpers: options and positionals first, verbatim text after.

``magic_arguments`` splits a whole line like a shell would, which would strip
the quotes out of JSON and shell text. :func:`split_verbatim` therefore cuts
the line in two: a head of known options and a fixed number of positionals
(parsed afterwards with the magic's own ``magic_arguments`` parser, so help
and usage errors stay IPython's), and the rest, kept byte for byte.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from IPython.core.error import UsageError

__all__ = ["interpret_escapes", "parse_line", "parse_quoted", "split_verbatim", "strip_comment", "unquote"]

# one shell-like word: runs of double-quoted, single-quoted or plain segments
_WORD = re.compile(r"""\s*((?:"(?:[^"\\]|\\.)*"?|'[^']*'?|[^\s"']+)+)""")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[nrt0e\\])")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "e": "\x1b", "\\": "\\"}


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _option(parser: argparse.ArgumentParser, word: str) -> argparse.Action | None:
    name = word.split("=", 1)[0]
    return parser._option_string_actions.get(name)


def split_verbatim(line: str, parser: argparse.ArgumentParser, positionals: int = 0) -> tuple[str, str]:
    """Split a magic line into ``(head, rest)``.

    The head holds the known options of ``parser`` (with their values) and the
    first ``positionals`` other words; the rest starts at the first word after
    those, or after a ``--`` word, and is returned verbatim (only stripped of
    surrounding whitespace).

    Args:
        line: The magic's line, unexpanded.
        parser: The magic's ``magic_arguments`` parser (``fn.parser``).
        positionals: How many positional words the head takes (``NAME``, ``ID``).

    Returns:
        ``(head, rest)``; parse ``head`` with ``parse_argstring``.

    Raises:
        UsageError: for an unknown ``--option`` before the verbatim text, or
            an option missing its value.
    """
    pos, taken, head_end = 0, 0, None
    while head_end is None:
        m = _WORD.match(line, pos)
        if m is None or not m.group(1):
            return line.strip(), ""
        word = m.group(1)
        if word == "--":
            return line[: m.start(1)].strip(), line[m.end() :].strip()
        action = _option(parser, word) if word.startswith("-") else None
        if action is not None:
            pos = m.end()
            if _takes_value(action) and "=" not in word:
                value = _WORD.match(line, pos)
                if value is None or not value.group(1):
                    raise UsageError(f"option {word} needs a value")
                pos = value.end()
        elif word.startswith("--") and len(word) > 2:
            raise UsageError(f"unknown option {word.split('=', 1)[0]}; put text that starts with a dash after --")
        elif taken < positionals:
            taken += 1
            pos = m.end()
        else:
            head_end = m.start(1)
    return line[:head_end].strip(), line[head_end:].strip()


def strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment``, as Python and a shell would read it.

    A comment starts at an unquoted ``#`` that begins a word and is followed by a
    space or the end of the line (``%tasks  # the active ones``); a ``#`` inside
    quotes or inside a word (``"#1"``, ``a#b``) and ``#12`` (an issue number) are
    kept. A line whose quotes do not close is returned unchanged, so the parser
    reports the quote.

    Example::

        strip_comment('--summary "see #3"  # why')  ->  '--summary "see #3"'
    """
    quote, i = "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1  # an escaped character inside double quotes
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()) and (i + 1 == len(line) or line[i + 1].isspace()):
            return line[:i].rstrip()
        i += 1
    return line


def parse_line(func: Any, line: str) -> argparse.Namespace:
    """``parse_argstring(func, line)`` after :func:`strip_comment`: an option-parsing magic's line.

    Raises:
        UsageError: for an argparse error (IPython's parser raises it).
    """
    from IPython.core.magic_arguments import parse_argstring

    return parse_argstring(func, strip_comment(line))


def interpret_escapes(text: str) -> str:
    r"""Replace ``\n``, ``\r``, ``\t``, ``\0``, ``\e`` (ESC), ``\\``, ``\xHH`` and ``\uHHHH`` escapes.

    Other backslashes are kept as typed; non-ASCII text is untouched.
    """

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xu":
            return chr(int(code[1:], 16))
        return _SIMPLE[code]

    return _ESCAPE.sub(one, text)


def unquote(text: str) -> str:
    """``text`` without one pair of matching outer quotes (``"a b"`` → ``a b``)."""
    return _unquote(text)


def _unquote(value: Any) -> Any:
    if isinstance(value, list):
        return [_unquote(v) for v in value]
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_quoted(func: Any, line: str) -> argparse.Namespace:
    """``parse_argstring`` with positionals allowed after options, plus quote removal:
    ``--summary "check the build"`` gives ``check the build``; a trailing ``# comment``
    is dropped first (:func:`strip_comment`).

    Raises:
        UsageError: for an unbalanced quote or an argparse error.

    IPython splits magic lines without POSIX quote removal, so a quoted
    option value keeps its quotes; this strips one pair of matching outer
    quotes from every string value (and from every item of a list value).
    """
    from IPython.utils.process import arg_split

    try:
        argv = arg_split(strip_comment(line), strict=True)
    except ValueError as exc:  # shlex: "No closing quotation"
        raise UsageError(f"cannot read the line: {exc}; close the quote or escape it") from None
    # intermixed: words may follow options (%timer create --in 5m "check CI"); the parser's error() raises UsageError
    args = func.parser.parse_intermixed_args(argv)
    for key, value in vars(args).items():
        setattr(args, key, _unquote(value))
    return args
