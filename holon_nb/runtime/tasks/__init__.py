"""Commands and background tasks (commands spec §3-§9): processes, promotion, output, input, stop.

Owns: :mod:`.launch` (starting a command in its own process group, on pipes or a pty),
:mod:`.processes` (reading its output, input, exit and stop on the loop),
:mod:`.service` (``TaskService``: the task records, lifecycle, restart reconciliation) and
:mod:`.agent` (``AgentTasks``: the task service as one calling agent sees it, ``ctx.commands``).

May use: ``runtime.core``, ``holon_nb.tools``.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
