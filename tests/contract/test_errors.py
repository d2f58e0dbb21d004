"""One exception tree (issue 27 item 4): every exception class holon_nb defines derives from ``HolonNBError``, and
every public one is importable from ``holon_nb.errors``, which exports exactly those."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

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
