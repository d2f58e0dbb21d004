"""Layering (design.md): tools/, render/ and runtime/ run in a plain Python process with no Jupyter package."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("IPython", "ipykernel", "ipywidgets", "nbclient", "traitlets")


def test_tools_and_runtime_import_no_jupyter_package() -> None:
    code = (
        "import json, sys\n"
        "import holon_nb.tools, holon_nb.render, holon_nb.runtime\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(json.dumps(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == [], f"importing holon_nb.tools, holon_nb.render and holon_nb.runtime loaded {loaded}"


def test_a_tool_call_loads_no_jupyter_package(tmp_path) -> None:
    code = (
        "import json, sys\n"
        "from holon_nb.runtime import Runtime\n"
        f"rt = Runtime(home={str(tmp_path / 'home')!r}, workspace={str(tmp_path)!r})\n"
        "r = rt.call('ExecCommand', {'cmd': 'echo hi'})\n"
        "r._repr_mimebundle_()\n"  # its notebook output, made by holon_nb.render
        "rt.close()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(json.dumps([r.status, bad]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    status, loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == "success" and loaded == [], loaded
