"""Each SQLite table is read and written by the package that owns it (issue 27 item 2): an import-linter contract.

A table is owned by the package whose module creates it (``CREATE TABLE``): ``runtime.work`` owns
``waits`` because ``runtime/work/_records.py`` creates it. Every other package reads and writes it
through the owner's records API. The check parses the SQL written in the code (string literals and
f-strings whose text starts with an SQL verb) and finds each table a statement names after ``FROM``,
``JOIN``, ``INTO``, ``UPDATE`` or ``TABLE``.

``allowed`` lists the accesses still made from another package, as ``"<package> -> <table>"``: the
contract fails on an access not listed, and on a listed one no longer made, so the list only shrinks.

Configured in ``pyproject.toml`` (``[tool.importlinter]``, ``contract_types``); ``lint-imports`` runs it
from the repository root, which it puts on ``sys.path``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from importlinter import Contract, ContractCheck, fields, output

__all__ = ["Access", "TableOwnershipContract", "accesses", "owners", "sql_strings"]

_VERB = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|REPLACE|WITH|ALTER)\b")
_TABLE = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE(?:\s+IF\s+NOT\s+EXISTS)?|VIRTUAL\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?)"
    r"\s+([A-Za-z_]\w*)"
)
_CREATE = re.compile(r"\bCREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Access:
    """One statement naming a table: the package and module that hold it, its line, the table."""

    package: str
    module: str
    line: int
    table: str


def sql_strings(source: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of each string literal or f-string of ``source`` that starts with an SQL verb.

    An f-string's replacement fields read as ``?`` (``f"SELECT * FROM tasks WHERE {where}"``).
    """
    seen: set[tuple[int, str]] = set()
    inner: set[int] = set()  # the literal parts of an f-string are read with it, not again on their own
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            inner.update(id(v) for v in node.values)
        if isinstance(node, ast.Constant) and id(node) in inner:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "?" for v in node.values)
        else:
            continue
        if _VERB.match(text) and (node.lineno, text) not in seen:
            seen.add((node.lineno, text))
            yield node.lineno, text


def package_of(module: str) -> str:
    """The package a module belongs to for ownership: a plane of ``runtime`` (``holon_nb.runtime.work``), else
    the top-level subpackage (``holon_nb.notebook``), else the module itself (``holon_nb.cli``)."""
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "runtime":
        return ".".join(parts[:3])
    return ".".join(parts[:2]) if len(parts) > 2 else module


def _modules(root: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def accesses(root: Path) -> tuple[dict[str, str], list[Access]]:
    """``(owners, accesses)`` of the package at ``root``: ``{table: owning package}`` and every statement's access.

    Raises:
        ValueError: when two packages create the same table.
    """
    owned: dict[str, str] = {}
    found: list[Access] = []
    for module, path in _modules(root):
        package = package_of(module)
        for line, text in sql_strings(path.read_text(encoding="utf-8")):
            for table in _CREATE.findall(text):
                if owned.setdefault(table, package) != package:
                    raise ValueError(f"table {table} is created by both {owned[table]} and {package}")
            found.extend(Access(package, module, line, table) for table in sorted(set(_TABLE.findall(text))))
    return owned, found


def owners(root: Path) -> dict[str, str]:
    """``{table: owning package}`` of the package at ``root``."""
    return accesses(root)[0]


def foreign(root: Path) -> dict[str, list[Access]]:
    """The accesses from a package to a table another package owns, by ``"<package> -> <table>"``."""
    owned, found = accesses(root)
    out: dict[str, list[Access]] = {}
    for access in found:
        owner = owned.get(access.table)
        if owner is not None and owner != access.package:
            out.setdefault(f"{access.package} -> {access.table}", []).append(access)
    return out


class TableOwnershipContract(Contract):
    """import-linter contract: no package reads or writes a table another package creates, beyond ``allowed``.

    Options:
        root_package: The package whose modules are checked (``holon_nb``).
        allowed: ``"<package> -> <table>"`` accesses still made across packages; each must still be made.
    """

    root_package = fields.StringField()
    allowed = fields.ListField(subfield=fields.StringField(), required=False, default=[])

    def check(self, graph: object, verbose: bool) -> ContractCheck:
        import importlib.util

        spec = importlib.util.find_spec(str(self.root_package))
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"{self.root_package} is not an importable package")
        made = foreign(Path(next(iter(spec.submodule_search_locations))))
        allowed = set(self.allowed or [])
        unlisted = {key: found for key, found in made.items() if key not in allowed}
        stale = sorted(allowed - set(made))
        return ContractCheck(kept=not unlisted and not stale, metadata={"unlisted": unlisted, "stale": stale})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for key, found in sorted(check.metadata["unlisted"].items()):
            output.print_error(f"{key}: the table belongs to another package; call its records API", bold=True)
            for access in found:
                output.print(f"  {access.module}:{access.line}")
        for key in check.metadata["stale"]:
            output.print_error(f"{key}: listed in 'allowed' but no longer made; remove it from pyproject.toml")
