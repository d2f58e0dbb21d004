"""Shared fixtures: a temporary workspace W and a runtime opened on it."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from holon_nb import Runtime


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The acceptance fixture W: ``a.txt`` = ``one\\ntwo\\nthree\\n`` and ``sub/``."""
    w = tmp_path / "W"
    (w / "sub").mkdir(parents=True)
    (w / "a.txt").write_text("one\ntwo\nthree\n")
    return w


@pytest.fixture
def rt(tmp_path: Path, workspace: Path) -> Iterator[Runtime]:
    """A runtime whose holon home is separate from W (so bound roots are W and the agent home)."""
    runtime = Runtime(home=tmp_path / "home", workspace=workspace)
    try:
        yield runtime
    finally:
        runtime.close()


