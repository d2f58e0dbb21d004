"""The browser tier's shared pieces: one JupyterLab server and one chromium per pytest worker, for every test
of tests/browser (starting them per test cost 5-10 s each under load)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _browser import _CHROMIUM, Chromium, LabServer, jupyter_server, require


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 (Notebook 7's pages too) serving a folder of this worker's. Kernels keep their
    default holon home, ``.holon/`` beside their notebook, so tests in their own folders never share one.
    ``HOLON_NB_HEADLESS`` is set as ``holon-nb run`` sets it: tutorial 03 then sets its timer to 10 s instead of
    the two minutes it gives a person to restart the kernel by hand."""
    require("playwright", "jupyterlab")
    root = tmp_path_factory.mktemp("lab-root")
    with jupyter_server(root, None, HOLON_NB_HEADLESS="1") as base:
        yield LabServer(base, root)


@pytest.fixture(scope="session", autouse=True)
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    """This worker's chromium, which every ``chromium_page`` connects to; ended when the session ends."""
    require("playwright")
    browser = Chromium(tmp_path_factory.mktemp("chromium-profile"))
    _CHROMIUM.append(browser)
    try:
        yield browser
    finally:
        _CHROMIUM.remove(browser)
        browser.close()


@pytest.fixture
def lab_folder(lab_server: LabServer, request: pytest.FixtureRequest) -> Iterator[tuple[LabServer, Path, str]]:
    """A folder of this test's own under the server's root, as ``(server, path, relative path)``; every kernel
    on the server is ended afterwards."""
    path, rel = lab_server.folder(request.node.name)
    try:
        yield lab_server, path, rel
    finally:
        lab_server.end_sessions()
