"""File content as lines with their own terminators (commands spec §10.6 step 1, per D1).

A leading UTF-8 BOM is removed on load and put back on encode. The text is
split on ``\\n`` only: each line keeps its terminator (``\\n`` or ``\\r\\n``;
a ``\\r`` not followed by ``\\n`` is ordinary text), and the last line may
have none. Lines compare without terminators. The newline style is the first
terminator's (``\\n`` when there is none).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

__all__ = ["BOM", "FileContent"]

BOM = "\ufeff"


@dataclass
class FileContent:
    """Mutable line view of one file.

    Attributes:
        texts: Line texts without terminators.
        terms: Each line's terminator: ``"\\n"``, ``"\\r\\n"`` or ``""`` (only the last line).
        bom: Whether the file started with a UTF-8 BOM.
        style: The newline style added lines take.
    """

    texts: list[str]
    terms: list[str]
    bom: bool = False
    style: str = "\n"

    @classmethod
    def empty(cls) -> FileContent:
        """An empty (new) file: no lines, ``\\n`` style."""
        return cls([], [])

    @classmethod
    def parse(cls, text: str) -> FileContent:
        """Split decoded file text (commands spec §10.6 step 1)."""
        bom = text.startswith(BOM)
        if bom:
            text = text[1:]
        newlines = text.count("\n")
        crlfs = text.count("\r\n") if "\r" in text else 0
        if crlfs in (0, newlines):  # uniform endings: split in C
            sep = "\r\n" if crlfs else "\n"
            texts = text.split(sep)
            last = texts.pop()
            terms = [sep] * len(texts)
            if last:
                texts.append(last)
                terms.append("")
            return cls(texts, terms, bom, sep if newlines else "\n")
        pieces = text.split("\n")
        last = pieces.pop()
        texts, terms = [], []
        for piece in pieces:
            if piece.endswith("\r"):
                texts.append(piece[:-1])
                terms.append("\r\n")
            else:
                texts.append(piece)
                terms.append("\n")
        if last:
            texts.append(last)
            terms.append("")
        return cls(texts, terms, bom, terms[0])

    def copy(self) -> FileContent:
        """An independent copy (line lists are copied)."""
        return FileContent(list(self.texts), list(self.terms), self.bom, self.style)

    def render(self) -> str:
        """The file text, BOM included."""
        texts, terms = self.texts, self.terms
        n = len(terms)
        common = terms[0] if n else ""
        same = terms.count(common) if n else 0
        if n and same == n:
            body = common.join(texts) + common
        elif n and same == n - 1 and terms[-1] == "":
            body = common.join(texts)
        else:
            body = "".join(map(operator.add, texts, terms))
        return BOM + body if self.bom else body

    def encode(self) -> bytes:
        """The file bytes (UTF-8)."""
        return self.render().encode("utf-8")

    def is_empty(self) -> bool:
        """True when the file has no content (a BOM alone counts as content)."""
        return not self.texts and not self.bom
