"""Every ``__all__`` names something that exists (style.md: explicit exports, checked)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import holon_nb

ROOT = Path(holon_nb.__file__).parent


def _packages() -> list[str]:
    """``holon_nb`` and every package under it at any depth (each must declare ``__all__``; an internal one
    declares it empty, docs/api.md)."""
    return ["holon_nb", *(info.name for info in pkgutil.walk_packages([str(ROOT)], "holon_nb.") if info.ispkg)]


def _modules() -> list[str]:
    """Every module and package of holon_nb, at any depth (``holon_nb.cli`` and ``holon_nb.runtime.turns`` included)."""
    return sorted(info.name for info in pkgutil.walk_packages([str(ROOT)], "holon_nb."))


def test_the_walk_sees_nested_modules() -> None:
    modules = _modules()
    assert len(modules) >= 200 and "holon_nb.runtime.turns._loop" in modules and "holon_nb.errors" in modules


def test_the_walk_sees_nested_packages() -> None:
    nested = {"holon_nb.runtime.turns", "holon_nb.tools.builtin.external", "holon_nb.providers.cassettes"}
    assert nested <= set(_packages())


@pytest.mark.parametrize("name", _packages())
def test_package_declares_all_and_every_name_exists(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"


@pytest.mark.parametrize("name", _modules())
def test_module_all_names_exist(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(getattr(module, "__all__", ()))
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
