"""Misusing the Python API raises from the HolonNBError tree (also a RuntimeError, as before): ``NotLoaded``
before ``%load_ext``, ``WrongThread`` for a blocking call on the runtime's own thread."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import holon_nb
from holon_nb.errors import HolonNBError, NotLoaded, WrongThread
from holon_nb.runtime import Runtime
from holon_nb.runtime._current import current, set_current


def test_get_runtime_before_load_ext_is_not_loaded() -> None:
    before = current()  # another test's kernel runtime, if any: put back afterwards
    set_current(None)
    try:
        with pytest.raises(NotLoaded, match="run %load_ext holon_nb first") as caught:
            holon_nb.get_runtime()
    finally:
        set_current(before)
    assert isinstance(caught.value, HolonNBError) and isinstance(caught.value, RuntimeError)


def test_a_blocking_call_on_the_runtime_thread_is_wrong_thread(tmp_path: Path) -> None:
    rt = Runtime(home=tmp_path / "home", workspace=tmp_path)
    try:

        async def nested() -> BaseException | None:
            try:
                rt._loop.call(asyncio.sleep, 0)
            except BaseException as exc:  # what the loop thread saw
                return exc
            return None

        seen = rt._loop.call(nested)
        assert isinstance(seen, WrongThread) and isinstance(seen, HolonNBError) and isinstance(seen, RuntimeError)
        assert "cannot run on the runtime thread itself" in str(seen)
    finally:
        rt.close()
