"""The table-ownership contract (issue 27 item 2) reads the SQL in the code as a person would: ``lint-imports`` runs
it (tests/contract/test_import_contracts.py); these tests pin what it counts as an access."""

from __future__ import annotations

from pathlib import Path

import pytest
from contract.table_ownership import accesses, foreign, sql_strings


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pkg"
    for name, source in {"__init__.py": "", **files}.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return pkg


def test_statements_are_read_from_literals_and_f_strings_not_prose() -> None:
    source = '''
"""Reads the rows from tasks and UPDATE notes: prose, not SQL."""
A = "SELECT id FROM messages m JOIN waits w ON w.trigger_message_id = m.id"
B = f"SELECT * FROM tasks WHERE {where}"
C = ("UPDATE tool_executions SET status='success'"
     " WHERE id=?")
D = "select lowercase from nothing"
'''
    assert [text for _, text in sql_strings(source)] == [
        "SELECT id FROM messages m JOIN waits w ON w.trigger_message_id = m.id",
        "SELECT * FROM tasks WHERE ?",
        "UPDATE tool_executions SET status='success' WHERE id=?",
    ]


def test_the_creating_package_owns_a_table_and_another_packages_access_is_foreign(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "runtime/__init__.py": "",
            "runtime/work/_records.py": 'S = "CREATE TABLE IF NOT EXISTS waits (id TEXT)"\nR = "SELECT * FROM waits"\n',
            "runtime/turns/_follow.py": 'Q = "SELECT COUNT(*) FROM waits WHERE agent_id = ?"\n',
            "notebook/_magics.py": 'Q = "INSERT INTO waits(id) VALUES (?)"\nU = "DELETE FROM unknown_table"\n',
        },
    )
    owned, found = accesses(pkg)
    assert owned == {"waits": "pkg.runtime.work"}
    assert len(found) == 5
    bad = foreign(pkg)
    assert sorted(bad) == ["pkg.notebook -> waits", "pkg.runtime.turns -> waits"]
    assert [(a.module, a.line) for a in bad["pkg.runtime.turns -> waits"]] == [("pkg.runtime.turns._follow", 1)]


def test_two_packages_creating_one_table_is_an_error(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"a.py": 'S = "CREATE TABLE t (x)"\n', "b/c.py": 'S = "CREATE TABLE t (y)"\n'})
    with pytest.raises(ValueError, match="table t is created by both"):
        accesses(pkg)
