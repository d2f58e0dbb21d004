"""Fixtures for provider tests: a local wire server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from unit.providers.servers import WireServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A scripted HTTP server on 127.0.0.1 (closed after the test)."""
    with WireServer() as srv:
        yield srv


@pytest.fixture
async def made():
    """A list to put providers in; each is closed (``aclose``) on the test's event loop at teardown.

    The SDK clients keep pooled connections bound to the loop they ran on; closing them there keeps a later
    test's loop from inheriting their cleanup.
    """
    providers: list = []
    yield providers
    for provider in providers:
        await provider.aclose()
