"""The built-in registry loads a tool's module only when that tool is asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys

from holon_nb.tools import _registry as registry


def test_declared_names_match_each_modules_specs() -> None:
    for module, attr, names in registry._BUILTIN:
        specs = getattr(importlib.import_module(f"holon_nb.tools.builtin.{module}"), attr)
        assert tuple(s.name for s in specs) == names, module
    assert registry.REGISTRY.names() == [n for _, _, names in registry._BUILTIN for n in names]
    assert registry.REGISTRY.get("NoSuchTool") is None and "NoSuchTool" not in registry.REGISTRY


def test_import_and_one_lookup_load_only_what_they_need() -> None:
    code = (
        "import sys, holon_nb\n"
        "assert 'holon_nb.runtime._facade' not in sys.modules and 'pydantic' not in sys.modules\n"
        "from holon_nb import Runtime\n"
        "assert 'pydantic' not in sys.modules, 'the runtime imported a tool model'\n"
        "from holon_nb.tools._registry import REGISTRY\n"
        "assert REGISTRY.get('ExecCommand').name == 'ExecCommand'\n"
        "loaded = sorted(m for m in sys.modules if m in {'holon_nb.tools.builtin._commands', 'holon_nb.tools.builtin._work_items',"
        " 'holon_nb.tools.builtin._apply_patch', 'holon_nb.tools.builtin._memory'})\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['holon_nb.tools.builtin._commands']"
