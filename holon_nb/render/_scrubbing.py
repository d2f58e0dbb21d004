"""Secret scrubbing (D6, D12): secret values become ``[redacted]`` in what is shown and what is stored.

A secret is looked for twice: in the raw text, and in the text as a terminal shows it (escape
sequences removed, ``\\r`` and ``\\b`` applied per line, :func:`~holon_nb.render._ansi.terminal_cells`).
A program that colours its output (``grep --color=always`` puts escape codes inside the value) or
draws over a line can show a secret that the raw text holds only in pieces; such a match is mapped
back to the raw characters that drew it, and that whole raw span, escapes between them included, is
replaced. Capability tokens of external triggers (``cb_`` + 64 hex digits) are secrets whoever minted
them (they become ``cb_[redacted]``). Text cut from a longer stream can begin or end inside a secret:
:meth:`Scrubber.edges` replaces such a partial value as well.

Example::

    scrub = Scrubber({"MY_TOKEN": "Zq9Xw7Vt3Ru5"})
    scrub.text("key=Zq9Xw7\\x1b[31mVt3Ru\\x1b[m5 end")  # "key=[redacted] end"
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ._ansi import terminal_cells, terminal_text

__all__ = ["REDACTED", "TOKEN_PATTERN", "Scrubber", "StreamScrubber", "redact_tokens"]

REDACTED = "[redacted]"
#: A capability token of an external trigger (``cb_`` + 64 hex digits, workspace spec §14.1).
TOKEN_PATTERN = re.compile(r"cb_[0-9a-f]{64}")
_TOKEN_LEN = 67
_TOKEN_BODY = r"(?<=cb_)[0-9a-f]{64}"  # replaced after its prefix: ``cb_[redacted]``
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_MIN_SECRET_LEN = 8
#: A partial secret at a cut edge is replaced from this many characters on (fewer tell nothing of it,
#: and would blank ordinary text that happens to end like a secret).
_MIN_EDGE = 4
#: Lines whose shown text differs from their raw text (an escape sequence, ``\r`` or ``\b`` in them).
_DRAWN = re.compile(r"[^\n]*[\x1b\r\b][^\n]*")
#: The shown end of a stream that may be the start of a trigger token.
_TOKEN_START = re.compile(r"c(?:b(?:_[0-9a-f]{0,63})?)?\Z")
#: An escape sequence the next chunk may finish (held back, so a secret around it is still found).
_OPEN_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[ -/]*)\Z")

Span = tuple[int, int]


def redact_tokens(value: Any) -> Any:
    """``value`` (text, or JSON-like dicts and lists) with every capability token replaced by ``cb_[redacted]``."""
    if isinstance(value, str):
        return TOKEN_PATTERN.sub("cb_[redacted]", value) if "cb_" in value else value
    if isinstance(value, dict):
        return {k: redact_tokens(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_tokens(v) for v in value]
    return value


def _merge(spans: list[Span]) -> list[Span]:
    """Sorted, overlapping spans joined."""
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _apply(text: str, spans: list[Span]) -> str:
    """``text`` with each (merged, sorted) span replaced by ``[redacted]``."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for a, b in spans:
        out.append(text[pos:a])
        out.append(REDACTED)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _has_drawing(text: str) -> bool:
    return "\x1b" in text or "\r" in text or "\b" in text


class Scrubber:
    """Replace secret values with ``[redacted]`` in text and JSON values (D6).

    Secret values are the values of environment variables whose names contain
    ``KEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD`` (case-insensitive) plus any
    extra values given (provider API keys); values shorter than 8 characters
    are ignored. Trigger capability tokens are always secrets. A value is found
    in the raw text and in the text as a terminal shows it (module docstring).

    Args:
        environ: The environment to read (default ``os.environ`` at call time).
        extra: Additional secret values.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, extra: Iterable[str] = ()):
        env = os.environ if environ is None else environ
        values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET_LEN}
        values |= {v for v in extra if v and len(v) >= _MIN_SECRET_LEN}
        # longest first, so a secret containing another is replaced whole
        self._values = sorted(values, key=len, reverse=True)
        self._pattern = re.compile("|".join([*(re.escape(v) for v in self._values), _TOKEN_BODY]))
        # every value is written as itself inside a JSON string (no quote, backslash, control or non-ASCII)
        self._json_verbatim = all(json.dumps(v)[1:-1] == v for v in self._values)
        longest = max((len(v) for v in self._values), default=0)
        #: characters a stream holds back: the start of a value (or token) the next chunk may complete
        self.hold = max(longest, _TOKEN_LEN) - 1
        self._edge_window = longest * 8 + 256  # a partial value at a cut edge lies within this
        # no text shorter than this holds a value or a token as it is (issue 27 item 7: most texts of a call's
        # record are short, its ids, names and status; as a terminal shows them is another matter: _has_drawing)
        self._shortest = min([*(len(v) for v in self._values), _TOKEN_LEN])

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values replaced, longest first (trigger tokens are found by their pattern)."""
        return tuple(self._values)

    def text(self, text: str) -> str:
        """Return ``text`` with every secret value replaced, as stored and as a terminal shows it."""
        if len(text) < self._shortest and not _has_drawing(text):
            return text
        return _apply(text, self._spans(text))

    def edges(self, text: str, start: bool = False, end: bool = False) -> str:
        """Scrub ``text`` cut from a longer one: also replace a partial secret where it was cut.

        A cut can fall inside a secret, leaving only its end at the start of the text (or its start at
        the end); :meth:`text` cannot recognise such a piece. With ``start`` (``end``), the longest end
        (start) of a secret value of at least 4 characters that the text, as shown, begins (ends) with is
        replaced, with any escape sequences before (after) it.

        Args:
            text: The cut text.
            start: The text begins where a cut fell (a tail).
            end: The text ends where a cut fell (a head).

        Returns:
            The scrubbed text.
        """
        if not text:
            return text
        spans = self._spans(text)
        if start and (edge := self._start_fragment(text)) is not None:
            spans.append(edge)
        if end and (edge := self._end_fragment(text)) is not None:
            spans.append(edge)
        return _apply(text, _merge(spans))

    def _spans(self, text: str) -> list[Span]:
        """Merged raw spans to replace: values found in the raw text and in the text as shown."""
        spans = self._raw_spans(text)
        if _has_drawing(text):
            spans += self._drawn_spans(text)
        return _merge(spans) if spans else spans

    def _raw_spans(self, text: str) -> list[Span]:
        window = self._window(text)
        if window is None:
            return []
        return [m.span() for m in self._pattern.finditer(text, window[0], window[1])]

    def _drawn_spans(self, text: str) -> list[Span]:
        """Spans of values a terminal shows in lines drawn with escapes or ``\\r``/``\\b``, in raw positions."""
        if not self.present(terminal_text(text)):  # one pass over the whole text: the common answer is no
            return []
        spans: list[Span] = []
        for line in _DRAWN.finditer(text):
            shown, where = terminal_cells(line.group())
            for a, b in self._raw_spans(shown):
                drawn_by = where[a:b]
                spans.append((line.start() + min(drawn_by), line.start() + max(drawn_by) + 1))
        return spans

    def _window(self, text: str) -> tuple[int, int] | None:
        """``(lo, hi)``: from the first start to the last end of any secret in ``text`` (None: no secret).

        Found by substring search, so the (much slower) regex only runs where a secret is: every match
        of the pattern lies inside this window, and the pattern holds only literals and the token's
        fixed shape, so matching the window alone gives the same result as matching the whole text.
        """
        lo, hi = len(text), -1
        for v in self._values:
            first = text.find(v)
            if first >= 0:
                lo = min(lo, first)
                hi = max(hi, text.rfind(v) + len(v))
        first = text.find("cb_")
        if first >= 0:
            lo = min(lo, first)
            hi = max(hi, min(len(text), text.rfind("cb_") + _TOKEN_LEN))
        return (lo, hi) if hi >= 0 else None

    def _start_fragment(self, text: str) -> Span | None:
        """The raw span of the longest proper end of a value that ``text`` begins with, as shown."""
        line = text[: self._edge_window].split("\n", 1)[0]
        shown, where = terminal_cells(line)
        best = 0
        for v in self._values:
            for k in range(min(len(v) - 1, len(shown)), max(best, _MIN_EDGE - 1), -1):
                if shown.startswith(v[-k:]):
                    best = k
                    break
        return (0, max(where[:best]) + 1) if best else None

    def _end_fragment(self, text: str) -> Span | None:
        """The raw span of the longest proper start of a value that ``text`` ends with, as shown."""
        tail = text[-self._edge_window :]
        line = tail.rsplit("\n", 1)[-1]
        offset = len(text) - len(line)
        shown, where = terminal_cells(line)
        best = 0
        for v in self._values:
            for k in range(min(len(v) - 1, len(shown)), max(best, _MIN_EDGE - 1), -1):
                if shown.endswith(v[:k]):
                    best = k
                    break
        return (offset + min(where[-best:]), len(text)) if best else None

    def absent_from_json(self, text: str) -> bool:
        """True when ``text``, JSON as ``json.dumps`` writes it, certainly holds no secret value: no value
        occurs in it, every value would occur verbatim if its data held it, and no string of it is drawn
        with escapes or ``\\r``/``\\b``. False means: scrub the data."""
        if "\\u001b" in text or "\\r" in text or "\\b" in text:
            return False
        return self._json_verbatim and not self.present(text)

    def present(self, text: str) -> bool:
        """Whether any secret value (or trigger token) occurs in ``text`` as it is (substring search)."""
        return any(v in text for v in self._values) or ("cb_" in text and TOKEN_PATTERN.search(text) is not None)

    def stream(self) -> StreamScrubber:
        """A :class:`StreamScrubber` for one stream of text written in chunks (a task log, a spool)."""
        return StreamScrubber(self)

    def pieces(self, texts: list[str]) -> list[str]:
        """Scrub consecutive pieces of one text (adjacent stream outputs) as if they were joined.

        A secret split across pieces is replaced whole: ``[redacted]`` goes into the piece where the
        secret starts, and the rest of it is removed from the pieces after. The pieces keep their number.
        """
        if len(texts) < 2:
            return [self.text(t) for t in texts]
        joined = "".join(texts)
        matches = self._spans(joined)
        if not matches:
            return list(texts)
        out: list[str] = []
        pos, k = 0, 0
        for piece in texts:
            end = pos + len(piece)
            parts: list[str] = []
            cur = pos
            while cur < end:
                while k < len(matches) and matches[k][1] <= cur:
                    k += 1
                if k < len(matches) and matches[k][0] <= cur:  # inside a match started earlier (or here)
                    if matches[k][0] == cur:
                        parts.append(REDACTED)
                    cur = min(matches[k][1], end)
                    continue
                nxt = matches[k][0] if k < len(matches) and matches[k][0] < end else end
                parts.append(joined[cur:nxt])
                cur = nxt
            out.append("".join(parts))
            pos = end
        return out

    def pair(self, first: str, second: str) -> tuple[str, str]:
        """Scrub the two streams of one command where they are shown apart (stdout, stderr).

        A program can print half of a secret to each stream; shown in two sections, neither half is a
        secret to :meth:`text`. Here a secret the two complete as one text, in either order, is replaced
        as by :meth:`pieces` (issue 25 item 1c).

        Returns:
            ``(first, second)`` scrubbed.
        """
        a, b = self.pieces([first, second])
        b, a = self.pieces([b, a])
        return a, b

    def value(self, value: Any) -> Any:
        """Return a deep copy of a JSON value with secrets replaced in every string (keys too)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


class StreamScrubber:
    """Scrub a text stream written in chunks, catching a secret split across chunk boundaries (D6).

    :meth:`feed` returns the scrubbed text that is safe to write now and holds back the end that
    could be the start of a secret the next chunk completes: the longest end that, as a terminal
    shows it, begins a secret value or a trigger token, with the escape sequences among it, and an
    escape sequence not finished yet. Text that cannot begin a secret is written at once (a task log
    follows its command). :meth:`flush` returns what is held at the end of the stream. Joined, the
    outputs equal :meth:`Scrubber.text` of the joined input (for a line drawn over with ``\\r`` that
    a chunk boundary splits, what a terminal shows is judged from the held part on).

    Args:
        scrubber: The secrets to replace (its values as of now).
    """

    def __init__(self, scrubber: Scrubber):
        self._scrubber = scrubber
        self._values = scrubber.values
        self._window = 8 * scrubber.hold + 512  # raw characters of the last line that can hold a secret's start
        self._buf = ""

    def _held_start(self, buf: str) -> int:
        """Where the held-back end of ``buf`` starts (``len(buf)``: nothing to hold)."""
        end = len(buf)
        lo = max(buf.rfind("\n") + 1, end - self._window)
        line = buf[lo:]
        start = end
        if (open_escape := _OPEN_ESCAPE.search(line)) is not None:
            start, line = lo + open_escape.start(), line[: open_escape.start()]
        shown, where = terminal_cells(line)
        best = 0
        for v in self._values:
            for k in range(min(len(v) - 1, len(shown)), best, -1):
                if shown.endswith(v[:k]):
                    best = k
                    break
        if (token := _TOKEN_START.search(shown)) is not None:
            best = max(best, len(shown) - token.start())
        return min(start, lo + min(where[-best:])) if best else start

    def feed(self, text: str) -> str:
        """Add a chunk; return the scrubbed text that can be written now (possibly empty)."""
        buf = self._buf + text
        cut = self._held_start(buf)
        spans = self._scrubber._spans(buf)
        if not spans:  # the common case: no secret at all, nothing to replace
            self._buf = buf[cut:]
            return buf[:cut]
        out: list[str] = []
        pos = 0
        for a, b in spans:
            if a >= cut:
                break
            out.append(buf[pos:a])
            out.append(REDACTED)
            pos = b
            cut = max(cut, pos)  # a match that crosses the cut is written whole
        out.append(buf[pos:cut])
        self._buf = buf[cut:]
        return "".join(out)

    def flush(self) -> str:
        """Return the held-back end of the stream, scrubbed; the scrubber can then be fed again."""
        rest, self._buf = self._buf, ""
        return self._scrubber.text(rest)
