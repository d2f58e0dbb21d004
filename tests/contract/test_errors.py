"""One exception tree (issue 27 item 4): every exception class holon_nb defines derives from ``HolonNBError``, and
every public one is importable from ``holon_nb.errors``, which exports exactly those."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import holon_nb
import holon_nb.errors as errors
from holon_nb.errors import HolonNBError


def _defined_exceptions() -> dict[str, type[BaseException]]:
    """``{"module:Name": class}`` of every exception class defined in a module of holon_nb."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(holon_nb.__path__, "holon_nb."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{module.__name__}:{name}"] = obj
    return found


def test_every_exception_holon_nb_defines_is_a_holon_nb_error() -> None:
    found = _defined_exceptions()
    assert len(found) >= 40  # the walk saw the whole package
    outside = sorted(where for where, cls in found.items() if not issubclass(cls, HolonNBError))
    assert outside == [], f"exceptions outside the HolonNBError tree: {outside}"


def test_holon_nb_errors_exports_exactly_the_public_exceptions() -> None:
    public = {cls.__name__: cls for cls in _defined_exceptions().values() if not cls.__name__.startswith("_")}
    assert sorted(errors.__all__) == sorted(public), set(errors.__all__) ^ set(public)
    for name, cls in public.items():
        assert getattr(errors, name) is cls, name


def _nested_exception_classes(known: set[str]) -> list[str]:
    """Classes defined inside a function or class body (which the import walk above cannot see) whose bases name
    an exception: a built-in one, one of holon_nb's, or any ``…Error``/``…Exception``."""
    builtin = {n for n, v in vars(builtins).items() if inspect.isclass(v) and issubclass(v, BaseException)}
    root = Path(holon_nb.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for outer in ast.walk(tree):
            if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for node in ast.walk(outer):
                if node is outer or not isinstance(node, ast.ClassDef):
                    continue
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                if bases & (builtin | known) or any(b.endswith(("Error", "Exception")) for b in bases):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}:{node.name}")
    return sorted(set(found))


def test_no_exception_class_hides_inside_a_function_or_class() -> None:
    # an exception class defined in a function or class body escapes the walk above (and holon_nb.errors)
    known = {cls.__name__ for cls in _defined_exceptions().values()}
    assert _nested_exception_classes(known) == []


def test_the_docstring_tree_names_every_exported_error() -> None:
    drawn = set(re.findall(r"\b[A-Z][A-Za-z]+\b", errors.__doc__ or ""))
    assert sorted(set(errors.__all__) - drawn) == []


def test_a_builtin_kind_is_kept_beside_the_root() -> None:
    # code that caught the built-in kind before the tree existed still catches it
    import sqlite3

    assert issubclass(errors.StoreBusy, sqlite3.OperationalError)
    assert issubclass(errors.SwappedPath, OSError) and issubclass(errors.ModelRefError, ValueError)
    assert issubclass(errors.ScriptExpectationError, AssertionError)


def test_importing_holon_nb_errors_loads_no_plane() -> None:
    def loaded(statement: str) -> set[str]:
        code = f"import sys; {statement}; print(sorted(m for m in sys.modules if m.startswith('holon_nb')))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        return set(eval(out))

    assert loaded("import holon_nb.errors") - loaded("import holon_nb") == {"holon_nb.errors"}
