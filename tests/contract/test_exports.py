"""Every ``__all__`` names something that exists (style.md: explicit exports, checked)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import holon_nb

ROOT = Path(holon_nb.__file__).parent


def _packages() -> list[str]:
    """``holon_nb`` and each of its subpackages that has an ``__init__.py``."""
    names = ["holon_nb"]
    for info in pkgutil.iter_modules([str(ROOT)], "holon_nb."):
        if info.ispkg and (ROOT / info.name.rsplit(".", 1)[1] / "__init__.py").exists():
            names.append(info.name)
    return names


def _modules() -> list[str]:
    """Every module of the packages above (``holon_nb.cli`` included)."""
    names = []
    for pkg in _packages():
        path = ROOT if pkg == "holon_nb" else ROOT / pkg.rsplit(".", 1)[1]
        names += [i.name for i in pkgutil.iter_modules([str(path)], pkg + ".") if not i.ispkg]
    return sorted(names)


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
    missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
