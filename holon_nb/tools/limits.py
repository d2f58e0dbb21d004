"""Size limits on text inputs (issue 9: a 16 MB work-item objective held the home's write lock 21 s).

Every string in a tool's validated input is at most :data:`MAX_TEXT_FIELD_CHARS` characters,
except the fields listed in :data:`UNLIMITED_FIELDS` (content that is written to a file or a
process, never stored as a record or indexed). A longer one is refused before the handler runs
with ``invalid_tool_input`` naming the field, its length and the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from .envelope import ToolError
from .errors import ToolFailure

__all__ = ["MAX_TEXT_FIELD_CHARS", "UNLIMITED_FIELDS", "check_text_sizes"]

#: Longest text accepted in one input field (characters; 1 Mi). Records, messages and memory
#: documents hold text this long without slowing the store; the memory index keeps the first
#: 32,000 characters of each document searchable.
MAX_TEXT_FIELD_CHARS = 1024 * 1024

#: ``(tool, top-level field)`` pairs whose text goes to a file or a process, not to a record.
UNLIMITED_FIELDS = frozenset({("ApplyPatch", "patch"), ("ApplyPatch", "input"), ("TaskInput", "input")})


def _strings(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 64:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _strings(getattr(value, name), f"{path}.{name}" if path else name, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]", depth + 1)


def check_text_sizes(tool: str, args: BaseModel) -> None:
    """Refuse an input whose text fields exceed :data:`MAX_TEXT_FIELD_CHARS`.

    Raises:
        ToolFailure: ``invalid_tool_input`` with ``details {tool_name, field, validation_error,
            length, max_chars}``.
    """
    for name in type(args).model_fields:
        if (tool, name) in UNLIMITED_FIELDS:
            continue
        for path, text in _strings(getattr(args, name), name):
            if len(text) > MAX_TEXT_FIELD_CHARS:
                error = f"is {len(text)} characters long; the limit is {MAX_TEXT_FIELD_CHARS}"
                raise ToolFailure(ToolError(
                    kind="invalid_tool_input",
                    message=f"invalid `{path}` for {tool}: {error}",
                    details={"tool_name": tool, "field": path, "validation_error": error,
                             "length": len(text), "max_chars": MAX_TEXT_FIELD_CHARS},
                    recovery_hint=f"Keep `{path}` under {MAX_TEXT_FIELD_CHARS} characters: put long text in a file "
                                  "and pass its path, or summarise it.",
                ))
