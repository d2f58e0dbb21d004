"""SDK-free wire helpers shared by the transports: argument normalization (turn-loop spec §1.6), key-sorted
compact JSON, an incremental SSE decoder, idle-timeout iteration, prompt text helpers and the text-form
tool-call detector (turn-loop spec §2.7, §2.8).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio

from .base import AssistantBlocks, PromptFrame, TurnRequest, UserBlocks

__all__ = [
    "normalize_arguments",
    "compact_json",
    "SSEEvent",
    "SSEDecoder",
    "iter_sse",
    "system_text",
    "blocks_text",
    "looks_like_text_tool_call",
    "strip_citation_markers",
    "round_index",
    "DeltaListener",
    "emit",
]

#: ``listener(kind, payload)`` for streaming UI deltas: kinds ``text_delta`` ``{text}``,
#: ``tool_call_delta`` ``{index, id, name, arguments}`` (turn-loop spec §1.11).
DeltaListener = Callable[[str, dict[str, Any]], None]


def emit(listener: DeltaListener | None, kind: str, payload: dict[str, Any]) -> None:
    """Call ``listener`` if set; a failing listener never breaks the stream."""
    if listener is None:
        return
    try:
        listener(kind, payload)
    except Exception:  # noqa: BLE001 - a UI listener must not fail the provider call
        pass


def normalize_arguments(value: Any) -> Any:
    """Normalize a function call's ``arguments`` (turn-loop spec §1.6, Responses rules; Chat ⚑ follows them).

    ``None``/empty/blank string → ``{}``; an object → itself (Chat ⚑); a string parsing to an object → that
    object; a string parsing to a non-object → ``{"_raw": <parsed value>}``; an unparseable string →
    ``{"_raw": "<string>"}``; any other non-string value → ``{"_raw": value}``.
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return {"_raw": value}
    if not value.strip():
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {"_raw": value}
    return parsed if isinstance(parsed, dict) else {"_raw": parsed}


def compact_json(value: Any) -> str:
    """Key-sorted compact JSON without ASCII escaping (turn-loop spec §1.7 rule 5; Responses/Chat re-serialized arguments)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: ``event`` name (None when absent) and joined ``data`` lines."""

    event: str | None
    data: str

    def json(self) -> Any:
        """``data`` parsed as JSON (raises ``ValueError``)."""
        return json.loads(self.data)


class SSEDecoder:
    """Incremental SSE decoder: :meth:`feed` bytes, get complete events (blank-line separated; ``\\n``,
    ``\\r\\n`` or ``\\r`` line ends; ``:`` comments ignored)."""

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk``; returns the events it completed."""
        self._buf += chunk
        out: list[SSEEvent] = []
        while True:
            m = re.search(rb"\r\n|\n|\r", self._buf)
            if m is None or (m.group() == b"\r" and m.end() == len(self._buf)):
                break  # a lone trailing \r may be half of \r\n
            line, self._buf = self._buf[: m.start()], self._buf[m.end() :]
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                out.append(event)
        return out

    def flush(self) -> list[SSEEvent]:
        """Events completed by end of stream (a final event without its blank line)."""
        out = self.feed(b"\n") if self._buf else []
        if self._data:
            out.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data = None, []
        return out

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            if not self._data and self._event is None:
                return None
            event = SSEEvent(self._event, "\n".join(self._data))
            self._event, self._data = None, []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None


async def iter_sse(chunks: AsyncIterator[bytes], idle_timeout_s: float) -> AsyncGenerator[SSEEvent, None]:
    """SSE events of a byte stream; raises ``TimeoutError`` when no byte arrives for ``idle_timeout_s``."""
    decoder = SSEDecoder()
    iterator = chunks.__aiter__()
    while True:
        with anyio.fail_after(idle_timeout_s):
            try:
                chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.flush():
        yield event


def system_text(frame: PromptFrame) -> str:
    """The system prompt as one string (the system prompt; structured blocks are a parallel form)."""
    if frame.system_prompt:
        return frame.system_prompt
    return "\n\n".join(b.text for b in frame.system_blocks if b.text)


def blocks_text(msg: UserBlocks) -> str:
    """Context blocks joined by blank lines (Chat user content, turn-loop spec §2.6)."""
    return "\n\n".join(b.text for b in msg.blocks if b.text)


_MARKUP = re.compile(
    r"<tool_call|<function=|<function name=|&lt;tool_call|&lt;function=|&lt;function name=|"
    r"｜DSML｜|\|DSML\|",
    re.IGNORECASE,
)


def looks_like_text_tool_call(texts: Iterable[str]) -> bool:
    """True when assistant text carries tool-call markup (``<tool_call``, ``<function=``, ``<function name=``,
    their HTML-escaped forms, DSML markers) instead of native calls (turn-loop spec §2.7, §2.8)."""
    return any(_MARKUP.search(t or "") for t in texts)


_CITE = re.compile("\ue200[^\ue201]*\ue201")
_PUA = re.compile("[\ue200-\ue2ff]")


def strip_citation_markers(text: str) -> str:
    """Remove private-use citation markers (``\\ue200cite…\\ue201``) from Responses text (turn-loop spec §2.5)."""
    return _PUA.sub("", _CITE.sub("", text))


def round_index(req: TurnRequest) -> int:
    """The round this request opens: completed assistant rounds in the conversation + 1."""
    return 1 + sum(isinstance(m, AssistantBlocks) for m in req.conversation)
