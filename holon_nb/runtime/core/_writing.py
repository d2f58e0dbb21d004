"""One tool call on the runtime's loop, through :func:`~holon_nb.tools._dispatch.dispatch`, without blocking
the loop while another process holds the home's write lock.

A tool whose declaration says ``writes_store`` writes the store in its handler's first step (before it
first awaits: CreateWorkItem, CreateTimer, WaitFor, ...). That step is synchronous, so a write lock taken by
another process (a second kernel on the home) used to be waited for right there, on the loop thread, and
every other call and background job waited with it (issue 25). :func:`dispatch_call` waits for the lock
first, asynchronously (:meth:`Store.write <holon_nb.runtime.core._store.Store.write>`), then runs that first
step holding it; the rest of the call runs as usual. Other tools are dispatched as they are.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Coroutine, Generator
from typing import Any

from ...tools._dispatch import classify_exception, dispatch
from ...tools._envelope import error_envelope
from ...tools._registry import Registry
from ._store import Store, StoreBusy

__all__ = ["dispatch_call", "first_step_writing"]

log = logging.getLogger("holon_nb.dispatch")


async def dispatch_call(
    store: Store, name: str, args: Any, ctx: Any, registry: Registry, admitted: Any = None
) -> dict[str, Any]:
    """``dispatch(name, args, ctx, registry=registry, admitted=admitted)``, its first step run once this process
    holds the home's write lock when the tool ``writes_store`` (see the module docstring).

    Returns:
        The call's envelope; a ``runtime_db_busy`` error envelope when the lock stayed taken past the
        store's ``busy_timeout_s`` (the tool did not run). Never raises for a tool's failure.
    """
    spec = registry.get(name)
    call = dispatch(name, args, ctx, registry=registry, admitted=admitted)
    if spec is None or not spec.writes_store:
        return await call
    try:
        return await first_step_writing(store, call)
    except StoreBusy as exc:  # the lock never came: the tool did not run, as a busy write inside it would say
        log.warning("tool %s: %s", name, exc)
        return error_envelope(name, classify_exception(name, exc))


async def first_step_writing(store: Store, coro: Coroutine[Any, Any, Any]) -> Any:
    """Await ``coro``, its first step (up to its first suspension) run inside :meth:`Store.write`.

    Raises:
        StoreBusy: the lock stayed taken past the bound; ``coro`` was closed without running.
        Whatever ``coro`` raises.
    """
    first: list[tuple[bool, Any]] = []

    def step() -> None:
        try:
            first.append((False, coro.send(None)))
        except StopIteration as stop:
            first.append((True, stop.value))

    try:
        await store.write(step)
    except BaseException:
        if not first:
            coro.close()  # never started (the lock never came, or a cancellation): nothing of it ran
        raise
    done, value = first[0]
    return value if done else await _resume(coro, value)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], yielded: Any) -> Generator[Any, Any, Any]:
    """Go on with a coroutine that suspended on ``yielded``: what the event loop sends or throws is passed to it."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # a cancellation (or another exception thrown in by the loop)
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration as stop:
                return stop.value
