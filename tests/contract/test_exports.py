"""Every ``__all__`` names something that exists (style.md: explicit exports, checked)."""

from __future__ import annotations

import importlib
import pkgutil
import re
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


def _plain_leaf_modules() -> list[str]:
    """Modules (not packages) of holon_nb whose own name has no leading underscore."""
    return sorted(
        info.name
        for info in pkgutil.walk_packages([str(ROOT)], "holon_nb.")
        if not info.ispkg and not info.name.rpartition(".")[2].startswith("_")
    )


#: The plain-named modules: docs/api.md's sections and the two entry points in pyproject.toml.
PUBLIC_MODULES = {
    "holon_nb.errors",
    "holon_nb.cli",  # console script holon-nb = holon_nb.cli:main
    "holon_nb.testing.plugin",  # pytest11 entry point
    "holon_nb.testing.check",
    "holon_nb.testing.normalize",
    "holon_nb.providers.scripted",
    "holon_nb.providers.base",
    "holon_nb.providers.cassettes.media",
}


def test_internal_modules_are_named_private() -> None:
    """Issue 27 item 4: a module outside the public list is ``_name`` (httpx-style), so an import of it says it
    reaches into internals. A new public module is added here and to docs/api.md."""
    plain = set(_plain_leaf_modules())
    assert plain == PUBLIC_MODULES, (
        f"plain-named modules not on the public list (rename them _name): {sorted(plain - PUBLIC_MODULES)}; "
        f"public modules missing: {sorted(PUBLIC_MODULES - plain)}"
    )


def test_the_public_list_matches_the_api_page() -> None:
    page = (ROOT.parent / "docs" / "api.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^### `(holon_nb(?:\.\w+)*)`\s*$", page, re.M))
    leaf_sections = {name for name in sections if name not in _packages()}
    assert leaf_sections == PUBLIC_MODULES - {"holon_nb.cli", "holon_nb.testing.plugin"}
