"""Shared fixtures: a temporary workspace W and a runtime opened on it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from holon_nb import Runtime

# _leaks: the session fails when a process a test started outlives it (see its docstring)
pytest_plugins = ["_leaks", "pytester"]

# Commands run as `<$SHELL> -lc`, and on this project's machines a login bash
# sources ~/.bashrc, which runs `pyenv init` (~185 ms) and `pyenv rehash`.
# Tests stop commands within milliseconds of starting them; killing bash in
# the middle of `pyenv rehash` leaves pyenv's lock file behind, and every later
# login bash then waits 60 s for it. The shell is not what these tests are
# about, so they run commands with `sh` (whose login profile does not source
# ~/.bashrc). Kernels started by the notebook tests inherit this too.
os.environ["SHELL"] = "/bin/sh"

# Typed results (issue 27 item 3): every success payload must fit its tool's output model exactly, or the test
# fails (see _no_result_drift); kernels and subprocesses the tests start inherit strict mode.
os.environ["HOLON_NB_STRICT_RESULTS"] = "1"


# Tiers (README "Run the tests"): `browser` (tests/browser, marked there), `kernel` (starts a real Jupyter
# kernel: every test under tests/notebooks and these unit modules) and `slow` (marked on the test: nested
# pytest runs, long lock contention). `-m "not browser and not kernel"` is the quick local tier.
KERNEL_MODULES = {"test_cli.py", "test_harness.py", "test_hostile_notebook.py", "test_workdir.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        if (
            "notebooks" in path.parts
            and "tests" in path.parts
            or (path.parent.name == "testing" and path.name in KERNEL_MODULES)
        ):
            item.add_marker(pytest.mark.kernel)
    # Longest first, so that under xdist the quick unit tests fill the workers at the end instead of one kernel
    # or browser test running alone on the last busy worker: the modules with a browser test, then those with a
    # kernel or slow test, then the rest; each module stays whole and in its own order (its module-scoped
    # fixtures run once), and the order is otherwise collection order (a stable sort).
    weight: dict[str, int] = {}
    for item in items:
        rank = 0 if item.get_closest_marker("browser") else 1 if item.get_closest_marker("kernel") else 2
        if rank == 2 and item.get_closest_marker("slow"):
            rank = 1
        module = item.nodeid.split("::", 1)[0]
        weight[module] = min(weight.get(module, 2), rank)
    items.sort(key=lambda item: weight[item.nodeid.split("::", 1)[0]])


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers a core up to four cores, then one more a core (at most four more). The tests
    spend much of their time waiting on Jupyter kernels, subprocesses and the browser; on this project's 2-core
    machines 4 workers ran the suite in 6.7 minutes where 2 took 8.3."""
    cores = os.cpu_count() or 1
    return cores * 2 if cores <= 4 else cores + 4


@pytest.fixture
def own_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook run of its own: no holon home and no cassette mode inherited from the environment
    (each run makes a temporary home; use with ``pytestmark = pytest.mark.usefixtures("own_home")``)."""
    monkeypatch.delenv("HOLON_NB_HOME", raising=False)
    monkeypatch.delenv("HOLON_NB_CASSETTE_MODE", raising=False)


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
    # the login-shell snapshot is captured on a background thread at start; tests that patch os.replace or
    # os.unlink process-wide to inject failures must not see that thread's file operations
    runtime.tasks.snapshots.wait_captures(30)
    try:
        yield runtime
    finally:
        runtime.close()


@pytest.fixture(autouse=True)
def _no_result_drift() -> Iterator[None]:
    """Strict typed results: a handler whose payload does not fit its ``output_model`` (or whose JSON form
    validation would change) fails the test that made it, even when the test never looks at that result."""
    import importlib

    dispatch = importlib.import_module("holon_nb.tools._dispatch")  # the module (holon_nb.tools exports a function)
    dispatch.STRICT_RESULTS = True
    dispatch.RESULT_DRIFTS.clear()
    yield
    drifts, dispatch.RESULT_DRIFTS[:] = list(dispatch.RESULT_DRIFTS), []
    assert not drifts, f"tool results that do not fit their output_model: {drifts}"


@pytest.fixture(autouse=True)
def _no_network_guard_leaks() -> Iterator[None]:
    """A replay cassette's network guard is process-wide until the cassette is closed (or collected): a test
    that leaves one open must not make every later test's local servers unreachable."""
    yield
    from holon_nb.providers.cassettes import _guard as cassette_guard

    for guard in list(cassette_guard._active):
        guard.stop()
