"""Fixtures for the image plane: a clean model environment and image files written by Pillow."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from unit.providers.servers import WireServer

_KEYS = [k for k in os.environ if k.endswith(("_API_KEY", "_AUTH_TOKEN", "_TOKEN"))] + [
    "HOLON_MODEL",
    "HOLON_MODEL_FALLBACKS",
    "HOLON_NB_PROVIDERS",
    "HOLON_VISION_MODEL",
    "HOLON_IMAGE_GENERATION_MODEL",
]


@pytest.fixture(autouse=True)
def clean_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credential, no model lineage, no ~/.claude settings: selection sees only what a test configures."""
    for key in _KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "fake-home"))


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A scripted HTTP server on 127.0.0.1."""
    with WireServer() as srv:
        yield srv


def configure(monkeypatch: pytest.MonkeyPatch, srv: WireServer, transport: str, **capabilities: bool) -> None:
    """Point provider ``local`` (keyless) at ``srv`` with one model ``eye`` advertising ``capabilities``."""
    base = srv.base_url + ("/v1" if transport != "anthropic_messages" else "")
    monkeypatch.setenv(
        "HOLON_NB_PROVIDERS",
        json.dumps(
            {
                "local": {
                    "transport": transport,
                    "base_url": base,
                    "auth": {"source": "none"},
                    "models": [{"id": "eye", **capabilities}],
                }
            }
        ),
    )


def image_bytes(fmt: str, size: tuple[int, int] = (40, 30), mode: str = "RGB") -> bytes:
    """A real image of ``fmt`` (PNG, JPEG, GIF, WEBP) drawn by Pillow."""
    from PIL import Image, ImageDraw

    im = Image.new(mode, size, "white")
    ImageDraw.Draw(im).rectangle((2, 2, size[0] // 2, size[1] // 2), fill="red")
    out = io.BytesIO()
    im.save(out, fmt)
    return out.getvalue()


def png_header(width: int, height: int) -> bytes:
    """A PNG signature and IHDR declaring ``width``×``height`` (valid CRC), then an end: a bomb's header."""
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    iend = struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    return b"\x89PNG\r\n\x1a\n" + chunk + iend
