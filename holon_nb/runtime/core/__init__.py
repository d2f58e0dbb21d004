"""The runtime's foundation: the loop thread, the SQLite store, events, the clock, settings, results.

Owns: :class:`~.loop.LoopThread` (the runtime thread and its anyio portal), :class:`~.store.Store`
(one SQLite database under the holon home: its read connections in :mod:`.readers`, its waits for the write
lock in :mod:`.locking`, tool calls that wait for that lock without blocking the loop in :mod:`.writing`),
the :class:`~.events.EventBus`, the clock, ``RuntimeSettings``,
``ToolResult``, agent ids and the ``ToolContext`` a call sees (:mod:`.context`, built from the plane
services the composition root gathers in its ``ToolPlanes``).

May use: ``holon_nb.tools`` only. Imports no plane and not the facade.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
