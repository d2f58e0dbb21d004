"""Text helpers shared by the command/task plane: truncation, previews, diagnostics.

Rules from commands spec §4.3 (``cut``) and commands spec §4.5 (command preview, redaction,
diagnostics).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "TRUNCATION_MARKER",
    "cut",
    "cut_head_tail",
    "kept_chars",
    "command_preview",
    "redact_command",
    "command_diagnostics",
]

#: The exact 66-character marker (commands spec §4.3).
TRUNCATION_MARKER = "\n...\n[output truncated: showing leading and trailing context]\n...\n"
assert len(TRUNCATION_MARKER) == 66


def cut(text: str, budget: int) -> tuple[str, bool]:
    """Cut ``text`` to ``budget`` characters keeping head and tail.

    Args:
        text: Any text (lengths are Unicode code points).
        budget: Character budget (≥ 0).

    Returns:
        ``(preview, truncated)``; ``len(preview) == budget`` when truncated.
    """
    if len(text) <= budget:
        return text, False
    return cut_head_tail(text, text, budget), True


def cut_head_tail(head: str, tail: str, budget: int) -> str:
    """``cut`` of a text longer than ``budget`` that is known only by its head and its tail.

    Args:
        head: The text's first characters (at least ``budget`` of them, or all there are).
        tail: Its last characters (at least ``budget`` of them, or all there are).
        budget: Character budget (≥ 0).

    Returns:
        The truncated preview: head part + marker + tail part, ``budget`` characters.
    """
    m = len(TRUNCATION_MARKER)
    if budget <= m:
        return head[:budget]
    room = budget - m
    keep_tail = room - room // 2
    return head[: room // 2] + TRUNCATION_MARKER + (tail[-keep_tail:] if keep_tail else "")


def kept_chars(total: int, budget: int) -> int:
    """How many characters of a ``total``-char text survive ``cut`` (marker excluded)."""
    if total <= budget:
        return total
    m = len(TRUNCATION_MARKER)
    return budget if budget <= m else budget - m


_INLINE = ("python -", "python3 -", "node -", "ruby -", "perl -", "bash -c", "sh -c", "zsh -c")
_SECRET_KEY_PARTS = ("TOKEN", "SECRET", "PASSWORD", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL")
_SECRET_FLAGS = {
    "TOKEN",
    "ACCESS_TOKEN",
    "AUTH_TOKEN",
    "PASSWORD",
    "PASS",
    "SECRET",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
    "CREDENTIALS",
}
# The scheme is bounded (≤ 32 chars) so a long token without "://" cannot make the search quadratic.
_URL_CRED = re.compile(r"((?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://)[^/@\s]+:[^/@\s]*@")


def _norm_key(key: str) -> str:
    return key.lstrip("-").replace("-", "_").upper()


def _secret_key(key: str) -> bool:
    k = _norm_key(key)
    return k == "PASS" or any(part in k for part in _SECRET_KEY_PARTS)


def redact_command(cmd: str) -> str:
    """Redact secrets in a command line (commands spec §4.5)."""
    tokens = cmd.split()
    out: list[str] = []
    changed = False
    redact_next = False
    for tok in tokens:
        new = tok
        if redact_next:
            new, redact_next = "[redacted]", False
        elif "=" in tok and _secret_key(tok.split("=", 1)[0]):
            new = tok.split("=", 1)[0] + "=[redacted]"
        elif tok.startswith("-") and _norm_key(tok) in _SECRET_FLAGS:
            redact_next = True
        if "://" in new and "@" in new:
            new = _URL_CRED.sub(r"\1[redacted]@", new)
        changed |= new != tok
        out.append(new)
    return " ".join(out) if changed else cmd


def command_preview(cmd: str, scrub: Callable[[str], str] | None = None) -> str:
    """Model-safe one-line preview of ``cmd``: heredocs/inline scripts omitted, secrets redacted, ≤240 chars.

    ``scrub`` (the runtime's D6 scrubber) runs before the cut, so a secret value straddling
    character 240 leaves no prefix behind.
    """
    if scrub is not None:
        cmd = scrub(cmd)
    low = cmd.lower()
    if "<<" in cmd or any(p in low for p in _INLINE):
        return "[omitted: command contains heredoc or inline script]"
    red = redact_command(cmd)
    return red if len(red) <= 240 else red[:240] + "..."


def command_diagnostics(cmd: str, effective_tokens: int, scrub: Callable[[str], str] | None = None) -> dict[str, Any]:
    """The ``command_diagnostics`` object of ExecCommand results (commands spec §4.5); ``scrub`` as
    :func:`command_preview` (counts are of the command as given)."""
    low = cmd.lower()
    n = len(cmd)
    return {
        "cmd_preview": command_preview(cmd, scrub),
        "cmd_char_count": n,
        "cmd_estimated_tokens": (n + 3) // 4,
        "contains_heredoc": "<<" in cmd,
        "contains_inline_script": any(p in low for p in _INLINE),
        "exceeds_soft_threshold": n > 4000,
        "effective_max_output_tokens": effective_tokens,
        "output_char_budget": effective_tokens * 4,
    }


# ---------------------------------------------------------------- lone surrogates (issue 9)

#: A lone UTF-16 surrogate code point, which no UTF-8 file, SQLite text or notebook output can encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate code point (U+D800–U+DFFF), which UTF-8 cannot encode."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def encodable(text: str) -> str:
    """``text`` with each lone surrogate written as a ``\\udXXX`` escape, so it encodes as UTF-8."""
    if not has_surrogate(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def encodable_value(value: Any) -> Any:
    """A JSON value with :func:`encodable` applied to every string (keys too); other values as given."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(k) if isinstance(k, str) else k: encodable_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable_value(v) for v in value]
    return value
