"""The layer contracts of ``pyproject.toml`` hold (import-linter's ``lint-imports``; issue 15)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_contracts_cover_layers_jupyter_and_planes() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    kinds = sorted(c["type"] for c in config["contracts"])
    assert kinds == ["forbidden", "layers", "layers", "layers", "table_ownership"]
    forbidden = next(c for c in config["contracts"] if c["type"] == "forbidden")
    assert {"IPython", "ipykernel", "ipywidgets", "nbclient"} <= set(forbidden["forbidden_modules"])


def test_lint_imports_passes() -> None:
    exe = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is not installed: pip install '.[test]' installs import-linter")
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout
