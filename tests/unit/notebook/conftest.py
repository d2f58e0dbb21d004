"""Fixtures for the notebook layer: one in-process IPython shell, the extension loaded per test."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.utils.capture import capture_output


@pytest.fixture(scope="session")
def shell() -> Any:
    """IPython's own test shell (in-memory history), created once per session."""
    from IPython.testing.globalipapp import start_ipython

    return start_ipython()


@pytest.fixture
def ip(shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The shell with ``holon_nb`` loaded on a fresh holon home and workspace (``tmp_path``)."""
    monkeypatch.setenv("HOLON_NB_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("load_ext", "holon_nb")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "holon_nb")
        shell.config.pop("HolonNB", None)


RESULT = "application/vnd.holon.tool-result+json"


def _run(ip: Any, name: str, line: str = "", cell: str | None = None) -> list[dict[str, Any]]:
    with capture_output() as cap:
        if cell is None:
            ip.run_line_magic(name, line)
        else:
            ip.run_cell_magic(name, line, cell)
    return [o.data for o in cap.outputs]


@pytest.fixture
def run(ip: Any) -> Callable[..., list[dict[str, Any]]]:
    """``run(name, line="", cell=None)``: run a magic, return the mimebundles it displayed, in order."""
    return lambda name, line="", cell=None: _run(ip, name, line, cell)


@pytest.fixture
def receipts() -> Callable[..., list[dict[str, Any]]]:
    """``receipts(bundles, tool=None)``: the receipt envelopes among displayed bundles."""

    def pick(bundles: list[dict[str, Any]], tool: str | None = None) -> list[dict[str, Any]]:
        return [b[RESULT] for b in bundles if RESULT in b and (tool is None or b[RESULT]["tool_name"] == tool)]

    return pick


def threads_named(name: str) -> int:
    """How many live threads are called ``name``."""
    return sum(1 for t in threading.enumerate() if t.name == name)


@pytest.fixture
def thread_count() -> Callable[[str], int]:
    """``thread_count(name)``: how many live threads are called ``name``."""
    return threads_named
