"""Every ``__all__`` names something that exists (style.md: explicit exports, checked)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import holon_nb

ROOT = Path(holon_nb.__file__).parent


def _packages() -> list[str]:
    """``holon_nb`` and each of its top-level subpackages (each must declare ``__all__``)."""
    names = ["holon_nb"]
    for info in pkgutil.iter_modules([str(ROOT)], "holon_nb."):
        if info.ispkg and (ROOT / info.name.rsplit(".", 1)[1] / "__init__.py").exists():
            names.append(info.name)
    return names


def _modules() -> list[str]:
    """Every module and package of holon_nb, at any depth (``holon_nb.cli`` and ``holon_nb.runtime.turns`` included)."""
    return sorted(info.name for info in pkgutil.walk_packages([str(ROOT)], "holon_nb."))


def test_the_walk_sees_nested_modules() -> None:
    modules = _modules()
    assert len(modules) >= 200 and "holon_nb.runtime.turns.loop" in modules and "holon_nb.errors" in modules


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
