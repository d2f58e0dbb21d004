"""SDK-free wire helpers: SSE decoding across chunk boundaries, idle timeout, argument normalization (§1.6)."""

from __future__ import annotations

import anyio
import pytest

from holon_nb.providers._wire import SSEDecoder, SSEEvent, compact_json, iter_sse, looks_like_text_tool_call

pytestmark = pytest.mark.anyio


def test_sse_decoder_handles_split_chunks_crlf_comments_and_multiline_data():
    raw = b': keep-alive\r\nevent: a\r\ndata: {"x":\r\ndata: 1}\r\n\r\ndata: second\n\ndata: tail'
    dec = SSEDecoder()
    events = []
    for i in range(0, len(raw), 3):  # feed in 3-byte pieces, splitting \r\n pairs
        events += dec.feed(raw[i : i + 3])
    events += dec.flush()
    assert events == [SSEEvent("a", '{"x":\n1}'), SSEEvent(None, "second"), SSEEvent(None, "tail")]
    assert events[0].json() == {"x": 1}


async def test_iter_sse_raises_timeout_when_silent():
    async def chunks():
        yield b"data: 1\n\n"
        await anyio.sleep(5)
        yield b"data: 2\n\n"

    seen = []
    with pytest.raises(TimeoutError):
        async for ev in iter_sse(chunks(), 0.1):
            seen.append(ev.data)
    assert seen == ["1"]


def test_compact_json_is_sorted_and_unescaped():
    assert compact_json({"b": [1, {"d": 1, "c": 2}], "a": "é"}) == '{"a":"é","b":[1,{"c":2,"d":1}]}'


@pytest.mark.parametrize(
    "text, hit",
    [
        ("<tool_call>{}</tool_call>", True),
        ("<function=GetAgent>", True),
        ('<function name="x">', True),
        ("&lt;tool_call&gt;", True),
        ("<｜DSML｜function_calls>", True),
        ("plain answer about functions", False),
    ],
)
def test_text_form_tool_call_detector(text, hit):
    assert looks_like_text_tool_call([text]) is hit
