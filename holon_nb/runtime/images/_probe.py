"""The file checks of ViewImage (workspace spec §12 rules 2–6), shared by GenerateImage's re-validation (§13 rule 6).

Order (each step before the next, so a hostile file costs as little as possible):

1. ``stat`` (symlinks followed): failure → ``invalid_tool_input`` (``field: "path"``, ``io_error``); not a
   regular file (directory, FIFO, device, symlink to one) → ``validation_error: "not a regular file"``.
2. Size over :data:`MAX_BYTES` → ``invalid_tool_input`` (``byte_count``, ``max_byte_count``) **before any
   read** (a 1 GB sparse file is never opened). Then at most ``MAX_BYTES + 1`` bytes are read (a file that
   grew since ``stat`` gets the same error); open/read failure → ``image_read_failed``.
3. Content sniffing (the extension is ignored): PNG signature, ``FFD8FF``, ``GIF87a``/``GIF89a``,
   ``RIFF…WEBP``. No match → ``validation_error: "unsupported image header"`` with ``supported_media_types``.
4. A PNG's chunks are counted first (a walk over the lengths, no chunk parsed) and one with more than
   :data:`MAX_PNG_CHUNKS` → ``invalid_tool_input`` (``validation_error: "too many PNG chunks"``,
   ``chunks_seen``, ``max_chunk_count``): Pillow parses every chunk before the image data in Python, and a
   20 MB file of 1.4 M tiny text chunks took 18 s (issue 25 item 2c). Real encoders write image data in
   chunks of 8 KiB or more, so a 20 MiB PNG has a few thousand.
5. Dimensions from the header through Pillow's format plugins (``PngImageFile``, ``JpegImageFile`` — the SOF
   marker walk —, ``GifImageFile``, ``WebPImageFile``), instantiated directly: that parses headers only and
   decodes no pixel, and it skips ``Image.open``'s global ``MAX_IMAGE_PIXELS`` check, which would refuse a
   bomb without telling its size and would make the limit depend on a process-wide setting. A sniffed file
   whose header Pillow cannot parse (truncated, corrupt) is refused as ``"unsupported image header"`` too,
   with ``details.header_error`` (designed here: an image of unknown size is not passed on).
6. ``width × height`` over :data:`MAX_PIXELS` → ``invalid_tool_input`` (``width``, ``height``,
   ``pixel_count``, ``max_pixel_count``).
"""

from __future__ import annotations

import hashlib
import io
import os
import stat as stat_mod
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure

__all__ = [
    "MAX_BYTES",
    "MAX_PIXELS",
    "MAX_PNG_CHUNKS",
    "png_chunks_seen",
    "SUPPORTED_MEDIA_TYPES",
    "ImageFacts",
    "sniff_mime",
    "probe_image",
    "probe_bytes",
]

#: File size limit (bytes; workspace spec §12 "Limits": 20 MiB).
MAX_BYTES = 20 * 1024 * 1024
#: Decoded pixel limit (width × height; workspace spec §12).
MAX_PIXELS = 50_000_000
#: Chunks a PNG may have (its IEND included); more is refused before Pillow parses any (20 MiB / 65,536 is
#: 320 bytes a chunk on average).
MAX_PNG_CHUNKS = 65_536
#: Media types ViewImage accepts, by content (workspace spec §12).
SUPPORTED_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class ImageFacts:
    """What the checks established about one image file.

    Attributes:
        path: The absolute path checked.
        data: The file's bytes (≤ :data:`MAX_BYTES`).
        sha256: Hex digest of ``data``.
        mime: The sniffed media type (one of :data:`SUPPORTED_MEDIA_TYPES`).
        width, height: Pixel dimensions from the header.
    """

    path: Path
    data: bytes
    sha256: str
    mime: str
    width: int
    height: int

    @property
    def byte_count(self) -> int:
        """Size of the file in bytes."""
        return len(self.data)


def _invalid(tool: str, problem: str, message: str, hint: str, **details: Any) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=message,
            recovery_hint=hint,
            details={"tool_name": tool, "field": "path", "validation_error": problem, **details},
        )
    )


def sniff_mime(head: bytes) -> str | None:
    """The media type the first bytes announce (workspace spec §12 rule 5 signatures), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def png_chunks_seen(data: bytes, limit: int = MAX_PNG_CHUNKS) -> int:
    """Count the chunks of the PNG ``data`` up to its IEND or its end, stopping once past ``limit``.

    Only the chunk lengths are read (no chunk is parsed or CRC-checked), so the walk costs at most
    ``limit + 1`` steps.

    Returns:
        The chunks seen: the PNG's chunk count when it is at most ``limit``, else ``limit + 1``.
    """
    pos, seen, end = 8, 0, len(data)
    while pos + 8 <= end and seen <= limit:
        length, kind = struct.unpack_from(">I4s", data, pos)
        seen += 1
        if kind == b"IEND":
            break
        pos += 12 + length
    return seen


def _header_size(data: bytes, mime: str) -> tuple[int, int]:
    """(width, height) from the header, through Pillow's plugin for ``mime`` (no pixel decoded)."""
    if mime == "image/png":
        from PIL.PngImagePlugin import PngImageFile as cls
    elif mime == "image/jpeg":
        from PIL.JpegImagePlugin import JpegImageFile as cls  # type: ignore[assignment]
    elif mime == "image/gif":
        from PIL.GifImagePlugin import GifImageFile as cls  # type: ignore[assignment]
    else:
        from PIL.WebPImagePlugin import WebPImageFile as cls  # type: ignore[assignment]
    im = cls(io.BytesIO(data))
    try:
        width, height = im.size
    finally:
        im.close()
    return int(width), int(height)


def probe_bytes(data: bytes, path: Path, tool: str = "ViewImage") -> ImageFacts:
    """Rules 5–6 on bytes already read (size already checked): sniff, parse the header, check the pixels.

    Raises:
        ToolFailure: ``invalid_tool_input`` (unsupported header, too many pixels).
    """
    mime = sniff_mime(data[:16])
    supported = list(SUPPORTED_MEDIA_TYPES)
    if mime is None:
        raise _invalid(
            tool,
            "unsupported image header",
            f"{tool}: {path} is not a PNG, JPEG, GIF or WebP image",
            "Pass a PNG, JPEG, GIF or WebP file (the content decides, not the extension).",
            path=str(path),
            supported_media_types=supported,
        )
    if mime == "image/png":
        seen = png_chunks_seen(data)
        if seen > MAX_PNG_CHUNKS:
            raise _invalid(
                tool,
                "too many PNG chunks",
                f"{tool}: {path} has more than {MAX_PNG_CHUNKS} PNG chunks; it is refused unparsed",
                "Re-encode the image (for example with Pillow or optipng): real encoders write a few "
                "thousand chunks at most.",
                path=str(path),
                chunks_seen=seen,
                max_chunk_count=MAX_PNG_CHUNKS,
            )
    try:
        width, height = _header_size(data, mime)
    except Exception as exc:  # Pillow raises SyntaxError, OSError, ValueError… for a damaged header
        raise _invalid(
            tool,
            "unsupported image header",
            f"{tool}: {path} has a damaged {mime} header",
            "The file starts like an image but its header cannot be read; check it is not truncated.",
            path=str(path),
            supported_media_types=supported,
            detected_media_type=mime,
            header_error=f"{type(exc).__name__}: {exc}"[:300],
        ) from None
    if width * height > MAX_PIXELS:
        raise _invalid(
            tool,
            "image exceeds the pixel limit",
            f"{tool}: {path} is {width}x{height} ({width * height} pixels; the limit is {MAX_PIXELS})",
            "Downscale the image below 50 megapixels first.",
            path=str(path),
            width=width,
            height=height,
            pixel_count=width * height,
            max_pixel_count=MAX_PIXELS,
        )
    return ImageFacts(path, data, hashlib.sha256(data).hexdigest(), mime, width, height)


def probe_image(path: Path, tool: str = "ViewImage") -> ImageFacts:
    """Rules 3–6 on a file: stat, size before reading, bounded read, sniff, header, pixels.

    Args:
        path: Absolute path (symlinks are followed by ``stat``; reads are not confined, workspace spec §2.3).
        tool: The tool name put in error details.

    Raises:
        ToolFailure: ``invalid_tool_input`` (see the module docstring) or ``image_read_failed``.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _invalid(
            tool,
            "cannot stat path",
            f"{tool}: cannot stat {path}: {exc.strerror or exc}",
            "Check the path; relative paths join the active cwd.",
            path=str(path),
            io_error=str(exc),
        ) from None
    if not stat_mod.S_ISREG(st.st_mode):
        raise _invalid(
            tool,
            "not a regular file",
            f"{tool}: {path} is not a regular file",
            "Pass the path of an image file (not a directory, device or FIFO).",
            path=str(path),
        )
    if st.st_size > MAX_BYTES:
        raise _too_big(tool, path, st.st_size)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ToolFailure(
            ToolError(
                kind="image_read_failed",
                message=f"{tool}: cannot read {path}: {exc}",
                details={"tool_name": tool, "path": str(path), "io_error": str(exc)},
                recovery_hint="Check the file's permissions.",
            )
        ) from None
    if len(data) > MAX_BYTES:
        raise _too_big(tool, path, len(data))
    return probe_bytes(data, path, tool)


def _too_big(tool: str, path: Path, size: int) -> ToolFailure:
    return _invalid(
        tool,
        "file exceeds the size limit",
        f"{tool}: {path} is {size} bytes; the limit is {MAX_BYTES} bytes (20 MiB)",
        "Shrink or recompress the image below 20 MiB.",
        path=str(path),
        byte_count=size,
        max_byte_count=MAX_BYTES,
    )
