"""What a reader of a saved notebook sees in its text: checks shared by the tutorial tests."""

from __future__ import annotations

import re
from typing import Any

#: Text of a live view's display that a saved notebook must no longer hold once its task ended (the live view
#: is replaced by the final receipt or final state), and of the older "running" slot line.
PLACEHOLDERS = ("replaces it when the task ends", "its final receipt will replace this line")


def plain_texts(nb: Any) -> list[str]:
    """Every text a text-only renderer shows: stream text, ``text/plain`` of displays and results."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if o.get("output_type") == "stream":
                out.append(o.get("text", ""))
            elif o.get("output_type") in ("display_data", "execute_result"):
                out.append(o.get("data", {}).get("text/plain", ""))
    return out


def assert_reads_as_text(nb: Any) -> None:
    """No JSON envelope as text, no live task view or "running" placeholder left, no escape codes, no temporary
    path (text or card)."""
    for text in plain_texts(nb):
        assert not text.lstrip().startswith('{"tool_name"'), text[:200]
        assert not any(p in text for p in PLACEHOLDERS), text[:200]
        assert "\x1b" not in text, text[:200]
        assert not re.search(r"/tmp/(holon-nb-|tmp)", text), text[:300]
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            html = o.get("data", {}).get("text/html", "")
            found = re.search(r"/tmp/(holon-nb-|tmp)[^<'\"]*", html)
            assert not found, f"a temporary path in a saved card: {found.group(0) if found else ''}"
