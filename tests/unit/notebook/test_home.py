"""Which holon home a kernel opens (issue 26 item 2): the notebook's own by default, and clear_home."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from holon_nb import clear_home
from holon_nb.runtime.core._settings import kernel_home, notebook_name
from holon_nb.runtime.housekeeping._prune import home_bytes


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HOLON_NB_HOME", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_kernel_that_knows_its_notebook_gets_a_home_of_its_own(tmp_path: Path, no_env) -> None:
    no_env.setenv("JPY_SESSION_NAME", "notebooks/03-work-items-waits-timers.ipynb")
    assert kernel_home(None, tmp_path) == (tmp_path / ".holon" / "notebooks" / "03-work-items-waits-timers", "notebook")
    no_env.delenv("JPY_SESSION_NAME")
    vscode = SimpleNamespace(user_ns={"__vsc_ipynb_file__": "/x/y/analysis.ipynb"})
    assert kernel_home(vscode.user_ns, tmp_path)[0] == tmp_path / ".holon" / "notebooks" / "analysis"
    assert notebook_name({"__session__": "a.ipynb"}) == "a.ipynb"


def test_explicit_and_unknown_notebooks_keep_their_homes(tmp_path: Path, no_env) -> None:
    assert kernel_home({}, tmp_path) == (tmp_path / ".holon", "folder")
    for odd in ("", "   ", ".hidden.ipynb", "..ipynb"):
        assert kernel_home({"__session__": odd}, tmp_path)[1] == "folder", odd
    no_env.setenv("HOLON_NB_HOME", str(tmp_path / "mine"))
    no_env.setenv("JPY_SESSION_NAME", "a.ipynb")
    assert kernel_home(None, tmp_path) == (tmp_path / "mine", "env")


def test_clear_home_empties_only_the_notebooks_own_home(tmp_path: Path, no_env) -> None:
    no_env.chdir(tmp_path)
    shared = tmp_path / ".holon"
    (shared / "notebooks" / "a").mkdir(parents=True)
    (shared / "notebooks" / "a" / "state").write_text("x")
    (shared / "keep").write_text("x")
    ip = SimpleNamespace(user_ns={"__session__": "a.ipynb"}, extension_manager=SimpleNamespace(loaded=set()))
    assert clear_home(ip) == shared / "notebooks" / "a"
    assert not (shared / "notebooks" / "a").exists() and (shared / "keep").exists()
    assert clear_home(SimpleNamespace(user_ns={}, extension_manager=SimpleNamespace(loaded=set()))) is None
    no_env.setenv("HOLON_NB_HOME", str(shared))
    assert clear_home(ip) is None and (shared / "keep").exists()


def test_a_nested_home_does_not_count_toward_the_shared_homes_cap(tmp_path: Path) -> None:
    shared = tmp_path / ".holon"
    nested = shared / "notebooks" / "a"
    nested.mkdir(parents=True)
    (shared / "holon.sqlite3").write_bytes(b"x" * 10)
    (nested / "holon.sqlite3").write_bytes(b"x" * 1000)
    (nested / "log").write_bytes(b"x" * 1000)
    assert home_bytes(shared) == 10
    assert home_bytes(nested) == 2000
