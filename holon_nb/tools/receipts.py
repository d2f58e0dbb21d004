"""Model-visible receipts: rendering by tool, secret scrubbing (D6), projection guard.

``render_receipt`` picks the tool's text receipt or the canonical JSON one
(commands spec §3.4 rules 1–3); :class:`Scrubber` replaces secret values by
``[redacted]`` (rule 5, D6, D12).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .envelope import DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS, render_error_receipt, render_json_receipt
from .registry import REGISTRY, Registry
from .spec import Rendering

__all__ = ["render_receipt", "ReceiptContext", "Scrubber", "StreamScrubber", "REDACTED"]

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_MIN_SECRET_LEN = 8


@dataclass(frozen=True)
class ReceiptContext:
    """What a custom text receipt may need besides the envelope.

    Attributes:
        execution_id: The tool execution id (``tool_…``), for an ``output_ref``; ``"unknown"``
            when an envelope is rendered again outside its call.
        budget_tokens: The turn's tool-output budget in estimated tokens (``(chars + 3) // 4``).
    """

    execution_id: str = "unknown"
    budget_tokens: int = DEFAULT_TOOL_OUTPUT_BUDGET_TOKENS


def render_receipt(env: dict[str, Any], registry: Registry | None = None, context: ReceiptContext | None = None) -> str:
    """Render the model-visible text of an envelope (before scrubbing and projection).

    Custom text renderers are called as ``spec.render_receipt(env, context)``.
    """
    if env.get("status") == "error":
        return render_error_receipt(env)
    spec = (REGISTRY if registry is None else registry).get(env["tool_name"])
    if spec is not None and spec.rendering is Rendering.CUSTOM_TEXT and spec.render_receipt:
        return spec.render_receipt(env, context or ReceiptContext())
    return render_json_receipt(env)


class Scrubber:
    """Replace secret values with ``[redacted]`` in text and JSON values (D6).

    Secret values are the values of environment variables whose names contain
    ``KEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD`` (case-insensitive) plus any
    extra values given (provider API keys); values shorter than 8 characters
    are ignored.

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
        self._pattern = re.compile("|".join(re.escape(v) for v in self._values)) if self._values else None
        # every value is written as itself inside a JSON string (no quote, backslash, control or non-ASCII)
        self._json_verbatim = all(json.dumps(v)[1:-1] == v for v in self._values)

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values replaced, longest first."""
        return tuple(self._values)

    def text(self, text: str) -> str:
        """Return ``text`` with every secret value replaced."""
        pattern = self._pattern
        window = self._window(text) if pattern is not None and text else None
        if pattern is None or window is None:
            return text
        lo, hi = window
        return text[:lo] + pattern.sub(REDACTED, text[lo:hi]) + text[hi:]

    def _window(self, text: str) -> tuple[int, int] | None:
        """``(lo, hi)``: from the first start to the last end of any secret in ``text`` (None: no secret).

        Found by substring search, so the (much slower) regex only runs where a secret is: every match
        of the pattern lies inside this window, and the pattern holds only literals, so matching the
        window alone gives the same result as matching the whole text.
        """
        lo, hi = len(text), -1
        for v in self._values:
            first = text.find(v)
            if first >= 0:
                lo = min(lo, first)
                hi = max(hi, text.rfind(v) + len(v))
        return (lo, hi) if hi >= 0 else None

    def absent_from_json(self, text: str) -> bool:
        """True when ``text``, JSON as ``json.dumps`` writes it, certainly holds no secret value: no value
        occurs in it, and every value would occur verbatim if its data held it. False means: scrub the data."""
        return self._pattern is None or (self._json_verbatim and not self.present(text))

    def present(self, text: str) -> bool:
        """Whether any secret value occurs in ``text`` (substring search: much faster than the regex)."""
        return any(v in text for v in self._values)

    def stream(self) -> StreamScrubber:
        """A :class:`StreamScrubber` for one stream of text written in chunks (a task log, a spool)."""
        return StreamScrubber(self)

    def pieces(self, texts: list[str]) -> list[str]:
        """Scrub consecutive pieces of one text (adjacent stream outputs) as if they were joined.

        A secret split across pieces is replaced whole: ``[redacted]`` goes into the piece where the
        secret starts, and the rest of it is removed from the pieces after. The pieces keep their number.
        """
        if self._pattern is None or len(texts) < 2:
            return [self.text(t) for t in texts]
        joined = "".join(texts)
        matches = [(m.start(), m.end()) for m in self._pattern.finditer(joined)]
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

    def value(self, value: Any) -> Any:
        """Return a deep copy of a JSON value with secrets replaced in every string (keys too)."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


class StreamScrubber:
    """Scrub a text stream written in chunks, catching a secret split across chunk boundaries (D6).

    :meth:`feed` returns the scrubbed text that is safe to write now and holds back the last
    ``len(longest secret) - 1`` characters, which could be the start of a secret that the next
    chunk completes; :meth:`flush` returns what is held at the end of the stream. Joined, the
    outputs equal :meth:`Scrubber.text` of the joined input.

    Args:
        scrubber: The secrets to replace (its values as of now).
    """

    def __init__(self, scrubber: Scrubber):
        self._scrubber = scrubber
        self._pattern = scrubber._pattern
        self._hold = max((len(v) for v in scrubber.values), default=1) - 1
        self._buf = ""

    def feed(self, text: str) -> str:
        """Add a chunk; return the scrubbed text that can be written now (possibly empty)."""
        if self._pattern is None:
            return text
        buf = self._buf + text
        cut = max(len(buf) - self._hold, 0)
        window = self._scrubber._window(buf)
        if window is None:  # the common case: no secret at all, nothing to replace
            self._buf = buf[cut:]
            return buf[:cut]
        out: list[str] = []
        pos = 0
        for m in self._pattern.finditer(buf, window[0], window[1]):
            if m.start() >= cut:
                break
            out.append(buf[pos : m.start()])
            out.append(REDACTED)
            pos = m.end()
            cut = max(cut, pos)  # a match that crosses the cut is written whole
        out.append(buf[pos:cut])
        self._buf = buf[cut:]
        return "".join(out)

    def flush(self) -> str:
        """Return the held-back end of the stream, scrubbed; the scrubber can then be fed again."""
        rest, self._buf = self._buf, ""
        return self._pattern.sub(REDACTED, rest) if self._pattern is not None and rest else rest
