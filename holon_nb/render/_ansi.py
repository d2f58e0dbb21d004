"""ANSI escape sequences in command output, turned into HTML for cards and live views.

Programs that colour their output (pytest, git, ls) write SGR sequences
(``ESC [ … m``). Jupyter renders them in stream outputs, but inside an HTML
card they would show as ``[32m`` noise. ``ansi_to_html`` escapes the text and
keeps the common SGR attributes (bold, the 16 foreground colours, reset) as
``<span>`` styles; every other escape sequence is dropped. The model-visible
receipt is not changed.

Example::

    ansi_to_html("\\x1b[32m2 passed\\x1b[0m")  # "<span style='color:var(--holon-ansi-32, #1a7f37)'>2 passed</span>"
"""

from __future__ import annotations

import html
import re
from typing import Any

from ._palette import ANSI, fg

__all__ = ["ansi_to_html", "strip_ansi", "terminal_cells", "terminal_text", "without_escapes"]

# CSI sequences (ESC [ params final), OSC sequences (ESC ] … BEL or ESC \), and lone two-byte escapes
_ESCAPE = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]")
_COLOURS = {code: fg(f"ansi-{code}") for code in ANSI}


def strip_ansi(text: str) -> str:
    """``text`` without any escape sequence."""
    return _ESCAPE.sub("", text)


_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_CONTROL = re.compile(r"[\r\b]")


def _overwrite(line: str) -> str:
    """One line as a terminal leaves it: ``\r`` returns to column 0, ``\b`` steps one column back,
    later characters overwrite earlier ones (a line ending in ``\r`` keeps what it shows)."""
    cells: list[str] = []
    col = 0
    for ch in line:
        if ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(col - 1, 0)
        else:
            if col < len(cells):
                cells[col] = ch
            else:
                cells.append(ch)
            col += 1
    return "".join(cells)


def terminal_text(text: str, keep_colour: bool = False) -> str:
    """``text`` as a terminal shows it: escape sequences removed, ``\r`` and ``\b`` applied per line.

    A progress line drawn as ``0%\r50%\r100%`` becomes ``100%``; ``\r\n`` line ends
    become ``\n``. With ``keep_colour``, SGR colour sequences (``ESC [ … m``) stay in
    lines without ``\r``/``\b`` (for an HTML card); every other escape goes.

    Args:
        text: Decoded command output.
        keep_colour: Keep SGR sequences where no overwrite happens.

    Returns:
        The rendered text; its length is what a reader sees (plus any kept SGR bytes).
    """
    if "\x1b" not in text and "\r" not in text and "\b" not in text:
        return text
    out = []
    for line in text.split("\n"):
        if "\x1b" in line:
            line = _ESCAPE.sub(
                lambda m: m.group(0) if keep_colour and m.group(2) == "m" and m.group(0)[1] == "[" else "", line
            )
        if _CONTROL.search(line):
            line = _overwrite(_SGR.sub("", line) if keep_colour else line)
        out.append(line)
    return "\n".join(out)


def terminal_cells(line: str) -> tuple[str, list[int]]:
    """One line as :func:`terminal_text` shows it, and where in ``line`` each shown character came from.

    Escape sequences are removed, ``\r`` returns to column 0 and ``\b`` steps one column back; a later
    character overwrites the cell it lands on. Used to map a secret found in the shown text back to the
    raw characters (escapes between them included) that drew it.

    Args:
        line: One line of decoded output, without ``\n``.

    Returns:
        ``(shown, where)``: ``shown == terminal_text(line)`` and ``shown[i] == line[where[i]]``.
    """
    chars: list[int] = []  # indices of the characters that are not part of an escape sequence
    pos = 0
    for m in _ESCAPE.finditer(line):
        chars.extend(range(pos, m.start()))
        pos = m.end()
    chars.extend(range(pos, len(line)))
    cells: list[str] = []
    where: list[int] = []
    col = 0
    for i in chars:
        ch = line[i]
        if ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(col - 1, 0)
        else:
            if col < len(cells):
                cells[col], where[col] = ch, i
            else:
                cells.append(ch)
                where.append(i)
            col += 1
    return "".join(cells), where


def without_escapes(value: Any) -> Any:
    """A JSON value with escape sequences removed from every string; ``value`` itself when it has none."""
    if isinstance(value, str):
        return strip_ansi(value) if "\x1b" in value else value
    if isinstance(value, dict):
        new = {k: without_escapes(v) for k, v in value.items()}
        return value if all(new[k] is value[k] for k in value) else new
    if isinstance(value, list):
        items = [without_escapes(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=False)) else items
    return value


def _style(colour: str | None, bold: bool) -> str:
    parts = ([f"color:{colour}"] if colour else []) + (["font-weight:bold"] if bold else [])
    return ";".join(parts)


def ansi_to_html(text: str) -> str:
    """HTML-escape ``text``, rendering SGR bold and foreground colours as spans (nothing else survives)."""
    out: list[str] = []
    colour: str | None = None
    bold = False
    open_span = False
    pos = 0
    for m in _ESCAPE.finditer(text):
        out.append(html.escape(text[pos : m.start()], quote=True))
        pos = m.end()
        if m.group(2) != "m":
            continue
        for code in [int(c) if c.isdigit() else 0 for c in (m.group(1) or "0").split(";")]:
            if code == 0:
                colour, bold = None, False
            elif code == 1:
                bold = True
            elif code == 22:
                bold = False
            elif code == 39:
                colour = None
            elif code in _COLOURS:
                colour = _COLOURS[code]
        if open_span:
            out.append("</span>")
            open_span = False
        style = _style(colour, bold)
        if style:
            out.append(f"<span style='{style}'>")
            open_span = True
    out.append(html.escape(text[pos:], quote=True))
    if open_span:
        out.append("</span>")
    return "".join(out)
