"""Recognising a Codex ``*** Begin Patch`` text before parsing it (commands spec §10.1).

A leaf module: both the unified parser (which refuses Codex text with rule
``wrong_patch_format``) and format detection ask it, and neither imports the other.
"""

from __future__ import annotations

__all__ = ["HEREDOC_OPENERS", "first_lines", "looks_like_codex"]

#: Heredoc openers a model may wrap a Codex patch in (``<<EOF`` … ``EOF``).
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_HEREDOC_OPENERS = HEREDOC_OPENERS


def first_lines(text: str, count: int) -> list[str]:
    """The first ``count`` lines of ``text``, without their ``\\r``."""
    return [ln.rstrip("\r") for ln in text.split("\n", count)[:count]]


def looks_like_codex(text: str) -> bool:
    """First non-blank line is ``*** Begin Patch``, optionally inside a ``<<EOF`` … ``EOF`` heredoc."""
    trimmed = text.lstrip()
    if trimmed.startswith("*** Begin Patch"):
        return True
    head = [ln for ln in first_lines(trimmed, 3) if ln.strip()]
    if len(head) >= 2 and head[0].strip() in _HEREDOC_OPENERS and head[1].strip() == "*** Begin Patch":
        return text.rstrip().rsplit("\n", 1)[-1].rstrip("\r") == "EOF"
    return False
