"""The turn loop (turn-loop spec §1): one agent turn, its rounds, calls, prompts, recap and follow-up.

Owns: :mod:`.service` (``TurnService``, ``rt.turns``), :mod:`.loop` (``TurnLoop``), :mod:`.calls`,
:mod:`.tools` (running a model's tool calls), :mod:`.prompts`, :mod:`.recap` (the turn-local recap),
:mod:`.records` (``TurnResult`` and round records), :mod:`.state` (``TurnState``, what changes while a turn
runs), :mod:`.requests` (each round's request) and :mod:`.follow` (``TurnFollower``, ``--follow``).

May use: every plane below it (agents, work, memory, tasks, models, workspaces), ``runtime.core``,
``holon_nb.providers``, ``holon_nb.tools``. Nothing but the facade uses it.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
