"""Work items, waits, timers and the message queue (agents spec §3-§5).

Owns: :mod:`.service` (``WorkService``, ``rt.work``), :mod:`.agent` (``AgentWork``, ``ctx.work``),
work items (:mod:`.items`, :mod:`.records`, :mod:`.views`, :mod:`.focus`), the waiting plane
(:mod:`.waiting`), timers (:mod:`.timers`) and the message queue (:mod:`.queue`).

May use: ``runtime.tasks`` (a wait on a task), ``runtime.core``, ``holon_nb.tools``.

Consumes: the ports of :mod:`.ports` (the memory index, the active workspace, the D6 scrubber, the event sink,
the loop thread), given by the runtime's composition root.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
