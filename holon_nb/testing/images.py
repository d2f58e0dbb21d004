"""Raster images compared by content, with tolerances that survive renderer jitter (issue 24, B3).

Two images are the same when their sizes agree within a relative tolerance and, once the fresh
image is scaled to the saved one's size, at most a fraction of the pixels differ by more than a
per-pixel threshold (the largest difference over the R, G, B and A channels, as a fraction of 255).
Pillow decodes PNG, JPEG, GIF, WebP and BMP; data it cannot decode is compared byte for byte.

Example::

    a, b = ImageValue.from_base64("image/png", saved), ImageValue.from_base64("image/png", fresh)
    a == b                 # within the default tolerances
    a.difference(b)        # "3.10% of pixels differ by more than 10% (tolerated: 1.00%)" or None
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ImageTolerance", "ImageValue"]


@dataclass(frozen=True)
class ImageTolerance:
    """How different two images may be and still compare equal.

    Attributes:
        pixel: A pixel differs when a channel differs by more than this fraction of 255 (default 0.1).
        fraction: The images differ when more than this fraction of pixels differ (default 0.01).
        size: Width and height may differ by this fraction (at least 2 pixels; default 0.02).
    """

    pixel: float = 0.1
    fraction: float = 0.01
    size: float = 0.02


@functools.lru_cache(maxsize=64)
def _decode(data: str) -> Any:
    """The image as RGBA (a PIL image), or None when Pillow cannot decode it."""
    from PIL import Image, UnidentifiedImageError

    try:
        raw = base64.b64decode(data)
        with Image.open(io.BytesIO(raw)) as img:
            return img.convert("RGBA")
    except (binascii.Error, ValueError, OSError, UnidentifiedImageError):
        return None


@dataclass(frozen=True, eq=False)
class ImageValue:
    """A raster image in a display bundle; ``==`` compares content within :attr:`tolerance`.

    ``str()`` describes it (``png image, 40x30 pixels``), the text a diff shows when only one side has it.
    """

    fmt: str
    data: str = field(repr=False)
    tolerance: ImageTolerance = ImageTolerance()

    @classmethod
    def from_base64(cls, mime: str, data: Any, tolerance: ImageTolerance | None = None) -> ImageValue:
        """An image of ``mime`` from a bundle's value (base64 text, or a list of lines)."""
        text = "".join(data) if isinstance(data, list) else str(data)
        return cls(mime.split("/")[-1], "".join(text.split()), tolerance or ImageTolerance())

    @property
    def size(self) -> tuple[int, int] | None:
        """``(width, height)``, or None when the data does not decode."""
        img = _decode(self.data)
        return None if img is None else img.size

    def __str__(self) -> str:
        size = self.size
        return f"{self.fmt} image, {size[0]}x{size[1]} pixels" if size else f"{self.fmt} image that does not decode"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ImageValue) and self.difference(other) is None

    def __hash__(self) -> int:
        return hash(self.fmt)

    def difference(self, other: ImageValue) -> str | None:
        """Why ``other`` (the fresh image) differs from this one (the saved), or None when it does not."""
        if self.data == other.data:
            return None
        if self.fmt != other.fmt:
            return f"saved {self}, this run {other}"
        mine, theirs = _decode(self.data), _decode(other.data)
        if mine is None or theirs is None:
            return f"the image data differ (saved {self}, this run {other}; compared byte for byte)"
        tol = self.tolerance
        (w, h), (w2, h2) = mine.size, theirs.size
        if abs(w - w2) > max(2, tol.size * w) or abs(h - h2) > max(2, tol.size * h):
            return f"saved {w}x{h} pixels, this run {w2}x{h2} (size tolerance {tol.size:.0%})"
        share = _differing_share(mine, theirs.resize((w, h)) if (w2, h2) != (w, h) else theirs, tol.pixel)
        if share <= tol.fraction:
            return None
        size = f"{w}x{h}" if (w, h) == (w2, h2) else f"saved {w}x{h}, this run {w2}x{h2}"
        return (
            f"{share:.2%} of pixels differ by more than {tol.pixel:.0%} (tolerated: {tol.fraction:.2%}); {size} pixels"
        )


def _differing_share(a: Any, b: Any, pixel: float) -> float:
    """The fraction of pixels of two same-size RGBA images whose largest channel difference exceeds ``pixel``."""
    from PIL import ImageChops

    diff = ImageChops.difference(a, b)
    bands = diff.split()
    worst = bands[0]
    for band in bands[1:]:
        worst = ImageChops.lighter(worst, band)
    limit = int(pixel * 255)
    histogram = worst.histogram()
    total = a.size[0] * a.size[1]
    return sum(histogram[limit + 1 :]) / total if total else 0.0
