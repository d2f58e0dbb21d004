"""Helpers of the turn-loop tests (imported by name: conftest puts this directory on sys.path)."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from holon_nb.providers.base import TurnRequest, TurnResponse
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.turns._records import TurnResult

#: The scripted provider's route ref (turn-loop spec §4.2).
REF = "scripted@default/scripted"


def script(rt: Runtime, *steps: Step) -> ScriptedProvider:
    """Install a scripted provider for :data:`REF` and return it."""
    provider = ScriptedProvider(steps)
    rt.providers.register(REF, provider)
    return provider


def turn(rt: Runtime, *steps: Step, message: str = "go", **kwargs: Any) -> tuple[TurnResult, ScriptedProvider]:
    """Run one turn of the default agent against ``steps``; return the result and the provider."""
    provider = script(rt, *steps)
    return rt.run_turn(message, model=REF, **kwargs), provider


def run(rt: Runtime, message: str = "go", **kwargs: Any) -> TurnResult:
    """``rt.turns.run`` with its internal keywords (``work_item_id``, ``provider``, ``hooks``) from the kernel side."""
    kwargs.setdefault("model", REF)
    return rt._loop.call(functools.partial(rt.turns.run, message, **kwargs))


class Hooked:
    """A provider that runs ``before[n](request)`` (async) before answering request ``n`` (1-based) from ``inner``."""

    def __init__(self, inner: ScriptedProvider, before: dict[int, Callable[[TurnRequest], Awaitable[None]]]):
        self.inner = inner
        self.before = before
        self.route_ref = inner.route_ref

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        hook = self.before.get(self.inner.request_count() + 1)
        if hook is not None:
            await hook(req)
        return await self.inner.complete_turn(req)


def hooked(rt: Runtime, *steps: Step, before: dict[int, Callable[[TurnRequest], Awaitable[None]]]) -> ScriptedProvider:
    """Install :class:`Hooked` over a scripted provider for :data:`REF`; return the scripted provider."""
    inner = ScriptedProvider(steps)
    rt.providers.register(REF, Hooked(inner, before))
    return inner


def receipt(call: Any) -> dict[str, Any]:
    """A call record's receipt parsed as JSON."""
    return json.loads(call.receipt)


def count(rt: Runtime, sql: str, params: tuple = ()) -> int:
    """``SELECT COUNT(*) …`` on the runtime's store."""
    return int(rt.store.query(sql, params)[0][0])


def create_item(rt: Runtime, objective: str = "w") -> str:
    """A work item of the default agent (direct call); returns its id."""
    res = rt.call("CreateWorkItem", {"objective": objective})
    assert res.ok, res.envelope
    return res.result["work_item"]["id"]


def execution_status(rt: Runtime, execution_id: str) -> str:
    """The stored status of a tool execution."""
    row = rt.store.execution(execution_id)
    assert row is not None, execution_id
    return row["status"]
