"""docs/api.md lists exactly what is public (issue 27 item 4).

The page's rule: public = the names in the ``__all__`` of the modules it has a section for (a heading
``### `holon_nb.…` ``, then one ``- `Name`: …`` item per name). This test fails when a name of such an
``__all__`` is missing from the page, when the page lists a name the module does not export, or when a
module the README and docs promise loses its section.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"

#: Modules the README and docs promise; the page must keep a section for each.
PROMISED = {
    "holon_nb",
    "holon_nb.errors",
    "holon_nb.runtime",
    "holon_nb.tools",
    "holon_nb.testing",
    "holon_nb.testing.check",
    "holon_nb.testing.normalize",
    "holon_nb.providers.scripted",
}

_HEADING = re.compile(r"^### `(holon_nb(?:\.\w+)*)`\s*$")
_ITEM = re.compile(r"^- `(\w+)`:")


def sections(text: str) -> dict[str, list[str]]:
    """Each module section of the page and the names its items list, in page order."""
    found: dict[str, list[str]] = {}
    module = None
    for line in text.splitlines():
        if line.startswith("#"):
            heading = _HEADING.match(line)
            module = heading.group(1) if heading else None
            if module is not None:
                assert module not in found, f"docs/api.md has two sections for {module}"
                found[module] = []
        elif module is not None and (item := _ITEM.match(line)):
            found[module].append(item.group(1))
    return found


SECTIONS = sections(PAGE.read_text(encoding="utf-8"))


def test_the_page_keeps_a_section_for_every_promised_module() -> None:
    assert PROMISED <= set(SECTIONS), f"docs/api.md lost the section of {sorted(PROMISED - set(SECTIONS))}"


def test_public_modules_have_no_private_part() -> None:
    private = [m for m in SECTIONS if any(part.startswith("_") for part in m.split("."))]
    assert not private, f"docs/api.md lists private modules as public: {private}"


@pytest.mark.parametrize("module", sorted(SECTIONS))
def test_the_page_lists_exactly_the_modules_all(module: str) -> None:
    exported = getattr(importlib.import_module(module), "__all__", None)
    assert exported is not None, f"{module} is public (docs/api.md) but has no __all__"
    listed = SECTIONS[module]
    assert len(set(listed)) == len(listed), f"docs/api.md lists a name of {module} twice"
    missing = sorted(set(exported) - set(listed))
    extra = sorted(set(listed) - set(exported))
    assert not missing, f"{module} exports {missing}, which docs/api.md does not list"
    assert not extra, f"docs/api.md lists {extra} under {module}, which its __all__ does not name"


def test_the_parser_reads_sections_and_items() -> None:
    text = "### `holon_nb.x`\n\nProse `y`.\n\n- `A`: one.\n- `b`: two.\n\n## Other\n\n- `C`: not in a section.\n"
    assert sections(text) == {"holon_nb.x": ["A", "b"]}
