"""Names and header lines of real diff output (commands spec §10.3; see :mod:`.unified`).

Git C-quotes unusual names (``"a/\\303\\251t\\303\\251.txt"``) and leaves names with
spaces unquoted in ``diff --git`` lines; ``diff -u`` puts a TAB and a timestamp
after each ``---``/``+++`` name and marks an absent side with the Unix epoch
(``diff -N``); ``diff -ruN …`` command lines and svn ``Index:`` lines start a
file's headers. These helpers read them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

__all__ = [
    "GitHeader",
    "foreign_header",
    "git_tokens",
    "is_epoch",
    "split_equal",
    "split_matching",
    "strip_diff_prefix",
    "unquote_c",
]

_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?: ?([+-])(\d\d):?(\d\d))?\s*$")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def strip_diff_prefix(path: str) -> str:
    """Strip one leading ``a/`` or ``b/`` (``a//abs/p`` → ``/abs/p``; ``a/home/x`` → ``home/x``)."""
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def unquote_c(text: str) -> tuple[str, str]:
    """Read one git C-quoted name at the start of ``text`` (which starts with ``"``).

    Returns:
        ``(name, rest)``: the name (its bytes decoded as UTF-8) and the text after the closing quote.

    Raises:
        ValueError: unterminated quote, unknown escape, or a name that is not UTF-8.
    """
    out = bytearray()
    i, n = 1, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8"), text[i + 1 :]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        if i + 1 >= n:
            break
        esc = text[i + 1]
        if esc in "01234567":
            digits = re.match(r"[0-7]{1,3}", text[i + 1 : i + 4])
            assert digits is not None
            value = int(digits.group(0), 8)
            if value > 255:
                raise ValueError("octal escape out of range")
            out.append(value)
            i += 1 + len(digits.group(0))
        elif esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        else:
            raise ValueError(f"unknown escape \\{esc}")
    raise ValueError("unterminated quoted name")


def git_tokens(rest: str) -> tuple[list[str], bool] | None:
    """Whitespace-separated names of a ``diff --git`` line, unquoting quoted ones; None when malformed."""
    tokens: list[str] = []
    quoted = False
    rest = rest.strip()
    while rest:
        if rest.startswith('"'):
            try:
                name, rest = unquote_c(rest)
            except ValueError:
                return None
            if rest and not rest[0].isspace():
                return None
            quoted = True
        else:
            name, _, rest = rest.partition(" ")
        tokens.append(name)
        rest = rest.lstrip()
    return tokens, quoted


def split_equal(rest: str) -> tuple[str, str] | None:
    """Git's rule for unquoted names with spaces: the split where both names (prefix-stripped) are equal."""
    for k, ch in enumerate(rest):
        if ch == " ":
            left, right = strip_diff_prefix(rest[:k]), strip_diff_prefix(rest[k + 1 :])
            if left and left == right:
                return left, right
    return None


def split_matching(rest: str, first: str, second: str) -> bool:
    """Whether ``rest`` (an unquoted ``diff --git`` tail) is ``<first> <second>``, prefixes aside."""
    for k, ch in enumerate(rest):
        if ch == " " and strip_diff_prefix(rest[:k]) == first and strip_diff_prefix(rest[k + 1 :]) == second:
            return True
    return False


def is_epoch(stamp: str) -> bool:
    """Whether a ``diff -u`` header timestamp is the Unix epoch (``diff -N``'s mark for an absent file)."""
    m = _TIMESTAMP.match(stamp.strip())
    if m is None or (m.group(7) and int(m.group(7)) != 0):
        return False
    offset = timedelta(0)
    if m.group(8):
        offset = timedelta(hours=int(m.group(9)), minutes=int(m.group(10)))
        offset = -offset if m.group(8) == "-" else offset
    try:
        year, month, day, hour, minute, second = (int(m.group(k)) for k in range(1, 7))
        local = datetime(year, month, day, hour, minute, second)
        return local.replace(tzinfo=timezone(offset)) == _EPOCH
    except (ValueError, OverflowError):  # impossible dates and offsets are just text
        return False


_DIFF_COMMAND = re.compile(r"diff (?:-{1,2}[\w=-]+ )+\S")


def foreign_header(line: str) -> bool:
    """A ``diff -u …`` command line or an svn ``Index:`` line: it starts a file patch, never a body line."""
    return line.startswith("Index: ") or (_DIFF_COMMAND.match(line) is not None and not line.startswith("diff --git "))


class GitHeader:
    """A ``diff --git`` line: its names when they can be read, else the raw tail to check later."""

    def __init__(self, rest: str, line: int):
        self.rest = rest
        self.line = line
        self.names: tuple[str, str] | None = None

    def agrees(self, first: str | None, second: str | None) -> bool:
        """Whether the header names ``first``/``second`` (None: that side is absent, so both name the other)."""
        a = first if first is not None else second
        b = second if second is not None else first
        if a is None or b is None:
            return True
        if self.names is not None:
            return (first is None or first == self.names[0]) and (second is None or second == self.names[1])
        return split_matching(self.rest, a, b)
