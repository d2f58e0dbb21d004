"""Every ``§`` reference in the package points at a section of a document in this repository (issue 27 item 6).

The code cites the contracts it implements as ``<name> spec §<section>`` (``commands spec §4.6``,
``agents spec §5.6 rule 3``); ``docs/spec/README.md`` maps each name to its file under ``docs/spec/``.
A section is a numbered heading of that file (``### 4.6 ExecCommand``) or, one level below a heading,
an item of its numbered list (``notebook-tests spec §3.2``: item 2 of ``## 3.``). A reference right
after another one (``§4.1, §4.2``, ``§2.10–§2.11``) cites the same document. ``docs/style.md §N`` and an
IETF ``RFC <number> §N`` are the other documents cited. A bare ``§N`` that names no document fails: a
reader of the module could not tell which contract it means.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

import holon_nb

PKG = Path(holon_nb.__file__).resolve().parent
DOCS = PKG.parent / "docs"

#: The names the code cites, and the files they name (``docs/spec/README.md`` lists the same).
SPECS = {
    "commands": "spec/commands-and-tasks.md",
    "agents": "spec/agents-work-items-and-waiting.md",
    "workspace": "spec/workspace-web-and-images.md",
    "turn-loop": "spec/turn-loop-and-providers.md",
    "notebook-tests": "spec/notebook-tests.md",
    "style.md": "style.md",
}
_NAMES = "|".join(re.escape(n) for n in SPECS)
#: ``<name> spec §``, ``<name>.md §`` or ``RFC 3339 §``; a line break with a comment marker may come before ``§``.
_NAMED = re.compile(rf"(?:(?P<name>{_NAMES})(?: spec)?|(?P<rfc>RFC \d+)),?\s*(?:#:?\s*)?\(?$", re.IGNORECASE)
_REF = re.compile(r"§(?P<section>\d+(?:\.\d+)*)?")
#: What may stand between a reference and the next one that cites the same document.
_CONTINUED = re.compile(r"^(?:[,;]?\s*(?:and|or|to)?\s*|\s*[-–/]\s*|\s*\(?(?:rule|step)s? [\d, -–]+\)?,?\s*)$")


@cache
def _sections(doc: str) -> frozenset[str]:
    """The section numbers of ``docs/<doc>``: its numbered headings, and under each heading its numbered list items."""
    found: set[str] = set()
    current: str | None = None
    for line in (DOCS / doc).read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#+\s+(\d+(?:\.\d+)*)\.?\s", line)
        if heading:
            current = heading.group(1)
            found.add(current)
            continue
        item = re.match(r"(\d+)\.\s", line)
        if item and current is not None:
            found.add(f"{current}.{item.group(1)}")
    return frozenset(found)


def references() -> list[tuple[str, int, str | None, str | None, str]]:
    """``(module path, line, document name or None, section or None, text before)`` for each ``§`` in the package."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name: str | None = None
        end = -1
        for ref in _REF.finditer(text):
            before = text[max(0, ref.start() - 40) : ref.start()]
            named = _NAMED.search(before)
            if named:
                name = "rfc" if named.group("rfc") else named.group("name").lower()
            elif not (end >= 0 and _CONTINUED.match(text[end : ref.start()])):
                name = None
            end = ref.end()
            line = text.count("\n", 0, ref.start()) + 1
            out.append((str(path.relative_to(PKG.parent)), line, name, ref.group("section"), before))
    return out


def test_the_cited_documents_are_in_the_repository() -> None:
    for doc in SPECS.values():
        assert (DOCS / doc).is_file(), doc
        assert _sections(doc), f"{doc} has no numbered sections"
    listed = (DOCS / "spec" / "README.md").read_text(encoding="utf-8")
    for name, doc in SPECS.items():
        if doc.startswith("spec/"):
            assert f"`{name} spec`" in listed and Path(doc).name in listed, name


def test_every_section_reference_names_a_document_and_a_section_it_has() -> None:
    refs = references()
    assert len(refs) > 500  # the scan saw the package's references
    wrong = []
    for module, line, name, section, before in refs:
        where = f"{module}:{line}: …{before[-30:]!r}"
        if name is None:
            wrong.append(f"{where} names no document (write '<name> spec §N'; docs/spec/README.md)")
        elif section is None:
            wrong.append(f"{where} gives no section number")
        elif name != "rfc" and section not in _sections(SPECS[name]):
            wrong.append(f"{where} cites {name} §{section}, which docs/{SPECS[name]} does not have")
    assert not wrong, f"{len(wrong)} reference(s):\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(commands spec §4.6)", [("commands", "4.6")]),
        ("(agents spec §5.6 rule 3, §5.7)", [("agents", "5.6"), ("agents", "5.7")]),
        ("(§5.6)", [(None, "5.6")]),
        ("style.md §2.10–§2.11", [("style.md", "2.10"), ("style.md", "2.11")]),
        ("turn-loop spec\n#: §2.2 model refs", [("turn-loop", "2.2")]),
        ("RFC 3339 §5.6, then §4.6", [("rfc", "5.6"), (None, "4.6")]),
    ],
)
def test_the_resolver_reads_references_as_a_person_would(
    text: str, expected: list[tuple[str | None, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "m.py").write_text(f'"""{text}"""\n', encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.PKG", tmp_path)
    assert [(name, section) for _, _, name, section, _ in references()] == expected
