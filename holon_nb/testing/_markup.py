"""Normalised markup for comparison: HTML and SVG as canonical text (issue 24, B2 and B3).

:func:`normalize_html` turns an HTML fragment into one line per tag or text run, so two
renderings that differ only in whitespace, attribute order, comments or generated ids compare
equal, and a real change shows as a readable line diff:

- whitespace runs (in text and attribute values) collapse to one space; whitespace-only text goes;
- attributes are sorted by name; comments are dropped;
- generated ids are masked: pandas ``Styler`` ids (``T_`` + 5 hex, as in ``id="T_1a2b3_row0_col0"``
  and ``#T_1a2b3_row0_col0`` in its CSS) become ``T_<id>``.

:func:`normalize_svg` does the same for SVG (it is XML, and HTML's parser reads it tag by tag),
also masking the ids matplotlib derives from a hash (``clip-path="url(#p1a2b3c4d5e)"``).

Example::

    normalize_html('<p  class="a" id="x">Hi\\n  there</p>') == '<p class="a" id="x">\\n  Hi there\\n</p>'
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["PLACEHOLDER_RE", "is_placeholder", "normalize_html", "normalize_svg"]

#: A default repr standing in for a rich object: ``<IPython.core.display.HTML object>``,
#: ``<pandas.io.formats.style.Styler at 0x7f…>``, ``<__main__.Note object at 0x7f…>``.
PLACEHOLDER_RE = re.compile(r"^<[A-Za-z_][\w.]*(?: object)?(?: at 0x[0-9a-fA-F]+)?>$")
_STYLER_ID = re.compile(r"\bT_[0-9a-f]{5}(?![0-9a-zA-Z])")
_SVG_ID = re.compile(r"\b(p|m)[0-9a-f]{10}\b")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def is_placeholder(plain: str | None) -> bool:
    """True when a bundle's ``text/plain`` is absent, empty or only a default repr (:data:`PLACEHOLDER_RE`)."""
    return not plain or not plain.strip() or bool(PLACEHOLDER_RE.match(plain.strip()))


def _space(text: str) -> str:
    return " ".join(text.split())


class _Canonical(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.depth = 0

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], close: str) -> str:
        parts = [tag]
        for name, value in sorted(attrs, key=lambda a: a[0]):
            parts.append(name if value is None else f'{name}="{_space(value)}"')
        return "<" + " ".join(parts) + close

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.lines.append("  " * self.depth + self._tag(tag, attrs, ">"))
        if tag not in _VOID:
            self.depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.lines.append("  " * self.depth + self._tag(tag, attrs, "/>"))

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        self.depth = max(0, self.depth - 1)
        self.lines.append("  " * self.depth + f"</{tag}>")

    def handle_data(self, data: str) -> None:
        text = _space(data)
        if text:
            self.lines.append("  " * self.depth + text)


def normalize_html(text: str) -> str:
    """Canonical text of an HTML fragment (see the module docstring); never raises on bad markup."""
    parser = _Canonical()
    parser.feed(text)
    parser.close()
    return _STYLER_ID.sub("T_<id>", "\n".join(parser.lines))


def normalize_svg(text: str) -> str:
    """Canonical text of an SVG document: :func:`normalize_html`, the XML prolog, doctype and
    ``<metadata>`` (matplotlib writes its creation date there) dropped, matplotlib's hashed ids
    (``p`` or ``m`` + 10 hex) masked."""
    text = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<metadata\b.*?</metadata>", "", text, flags=re.S)
    return _SVG_ID.sub(r"\1<id>", normalize_html(text))
