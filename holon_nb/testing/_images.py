"""Raster images compared by content, with tolerances that survive renderer jitter (issue 24, B3).

Two images of the same size are the same when no pixel differs by more than a per-pixel threshold
(the largest difference over the R, G, B and A channels, as a fraction of 255), or at most the
configured fraction of them (default none: a small mark in a large plot is a real change). Sizes may
differ within a relative tolerance: the fresh image is then scaled to the saved one's size, and the
edge noise of that scaling is tolerated on a small share of the pixels (``resampled``, 1 %).
Pillow decodes PNG, JPEG, GIF, WebP and BMP; data it cannot decode is compared byte for byte.

An image names the software that wrote it when its encoder records it (a PNG ``Software`` text chunk:
``Matplotlib version3.11.2, https://matplotlib.org/``). When the saved and the fresh image name
different software, their pixels say nothing about the notebook (another renderer draws other pixels
from the same data): :meth:`ImageValue.other_renderer` says so, and the comparison reports the image
as not compared instead of failing or passing it (unless ``ImageTolerance.strict``).

Example::

    a, b = ImageValue.from_base64("image/png", saved), ImageValue.from_base64("image/png", fresh)
    a == b                 # within the default tolerances
    a.difference(b)        # "0.80% of pixels differ by more than 10% (tolerated: 0.00%); 128x128 pixels" or None
    a.other_renderer(b)    # "saved by matplotlib version 2.2.2, …; this run by Matplotlib version3.11.2, …" or None
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
        fraction: The images differ when more than this fraction of pixels differ (default 0: any).
        size: Width and height may differ by this fraction (at least 2 pixels; default 0.02).
        resampled: When the sizes differ (within ``size``), the fresh image is scaled to the saved size and
            this fraction of pixels may differ (at least ``fraction``; default 0.01): scaling moves edges.
        strict: Compare also an image whose saved copy names other software than the fresh one
            (:meth:`ImageValue.other_renderer`); by default it is not compared.
    """

    pixel: float = 0.1
    fraction: float = 0.0
    size: float = 0.02
    resampled: float = 0.01
    strict: bool = False


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

    @property
    def software(self) -> str | None:
        """The software the image names as its writer (a PNG ``Software`` text chunk), or None."""
        return _software(self.data)

    def other_renderer(self, other: ImageValue) -> str | None:
        """Why ``other`` (the fresh image) cannot be compared with this one (the saved): both name the software
        that wrote them, and it differs (``saved by …; this run by …``); None when comparable."""
        if self.data == other.data:
            return None
        mine, theirs = self.software, other.software
        if mine and theirs and mine != theirs:
            return f"saved by {mine}; this run by {theirs}"
        return None

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
        if not self.tolerance.strict and self.other_renderer(other):
            return None  # not comparable: the comparison lists it as not compared (compare.py)
        mine, theirs = _decode(self.data), _decode(other.data)
        if mine is None or theirs is None:
            return f"the image data differ (saved {self}, this run {other}; compared byte for byte)"
        tol = self.tolerance
        (w, h), (w2, h2) = mine.size, theirs.size
        if abs(w - w2) > max(2, tol.size * w) or abs(h - h2) > max(2, tol.size * h):
            return f"saved {w}x{h} pixels, this run {w2}x{h2} (size tolerance {tol.size:.0%})"
        scaled = (w2, h2) != (w, h)
        share = _differing_share(mine, theirs.resize((w, h)) if scaled else theirs, tol.pixel)
        allowed = max(tol.fraction, tol.resampled) if scaled else tol.fraction
        if share <= allowed:
            return None
        size = f"saved {w}x{h}, this run {w2}x{h2}" if scaled else f"{w}x{h}"
        return f"{share:.2%} of pixels differ by more than {tol.pixel:.0%} (tolerated: {allowed:.2%}); {size} pixels"


@functools.lru_cache(maxsize=64)
def _software(data: str) -> str | None:
    """The ``Software`` text an image records (PNG tEXt/iTXt), whitespace collapsed; None without one."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(base64.b64decode(data))) as img:
            value = img.info.get("Software")
    except (binascii.Error, ValueError, OSError, UnidentifiedImageError):
        return None
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


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
