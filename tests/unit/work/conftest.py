"""Fixtures of the work-plane tests: a runtime whose registry has the message tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from work_helpers import open_runtime

from holon_nb.runtime import Runtime


@pytest.fixture
def rt(tmp_path: Path, workspace: Path) -> Iterator[Runtime]:
    """A runtime with the message tools registered (overrides the shared fixture)."""
    runtime = open_runtime(tmp_path / "home", workspace)
    try:
        yield runtime
    finally:
        runtime.close()
