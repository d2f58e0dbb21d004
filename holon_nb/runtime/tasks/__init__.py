"""Commands and background tasks (commands spec §3-§9): processes, promotion, output, input, stop.

Owns: :mod:`.launch` (starting a command in its own process group, on pipes or a pty),
:mod:`.processes` (reading its output, input, exit and stop on the loop),
:mod:`.service` (``TaskService``: the task records, lifecycle, restart reconciliation) and
:mod:`.agent` (``AgentTasks``: the task service as one calling agent sees it, ``ctx.commands``),
:mod:`.homes` (``AgentHomes``: the agent homes under the holon home).

Consumes: the ports of :mod:`.ports` (settings, an event sink, the task group, the D6 scrubber, where task
results go, the disk budget, an agent's extra environment), given by the runtime's composition root.

May use: ``runtime.core``, ``holon_nb.tools``.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
