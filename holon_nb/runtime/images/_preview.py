"""Thumbnails for the notebook: the picture a receipt carries beside its text (issue 14, part 3).

A thumbnail's longest side is at most :data:`THUMBNAIL_MAX_SIDE` pixels (aspect kept, never enlarged),
encoded as ``image/jpeg`` (quality 80) for a JPEG source and ``image/png`` for the others (transparency
kept); an animated GIF or WebP shows its first frame. So a saved notebook grows by tens of kilobytes per
image, not by the image. Decoding is bounded: the file already passed the size and pixel limits, a JPEG is
decoded at a reduced scale (``Image.draft``), and a non-JPEG image over :data:`PREVIEW_MAX_PIXELS` gets no
thumbnail (the receipt text still describes it). Any decoding error (a truncated body behind a valid header)
means no thumbnail, never a failed call.
"""

from __future__ import annotations

import io
from typing import Any

from ._probe import ImageFacts

__all__ = ["THUMBNAIL_MAX_SIDE", "PREVIEW_MAX_PIXELS", "make_preview"]

#: Longest side of a notebook thumbnail (pixels).
THUMBNAIL_MAX_SIDE = 384
#: Non-JPEG images above this many pixels are not decoded for a thumbnail.
PREVIEW_MAX_PIXELS = 16_000_000


def make_preview(facts: ImageFacts) -> dict[str, Any] | None:
    """A thumbnail of ``facts`` as ``{mime, data (bytes), width, height}``, or None (see the module docstring)."""
    if facts.mime != "image/jpeg" and facts.width * facts.height > PREVIEW_MAX_PIXELS:
        return None
    try:
        from PIL import Image

        with Image.open(io.BytesIO(facts.data), formats=[facts.mime.split("/")[1].upper()]) as im:
            if facts.mime == "image/jpeg":
                im.draft("RGB", (THUMBNAIL_MAX_SIDE, THUMBNAIL_MAX_SIDE))
            im.seek(0)
            im.thumbnail((THUMBNAIL_MAX_SIDE, THUMBNAIL_MAX_SIDE))
            out = io.BytesIO()
            if facts.mime == "image/jpeg":
                im.convert("RGB").save(out, "JPEG", quality=80)
                mime = "image/jpeg"
            else:
                keep = im.mode if im.mode in ("RGB", "RGBA", "L", "LA") else "RGBA"
                im.convert(keep).save(out, "PNG", optimize=True)
                mime = "image/png"
            return {"mime": mime, "data": out.getvalue(), "width": im.width, "height": im.height}
    except Exception:  # a damaged body behind a valid header: no thumbnail
        return None
