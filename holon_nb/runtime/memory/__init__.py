"""Memory: the FTS5 index over the home's records, MemorySearch and MemoryGet (agents spec §6).

Owns: :mod:`.service` (``MemoryService``), :mod:`.index` (tokenising and the FTS5 tables) and
:mod:`.sources` (what is indexed: tool executions, task output, work items, messages).

May use: ``runtime.tasks`` (task output as a source), ``runtime.core``, ``holon_nb.tools``.

Consumes: the ports of :mod:`.ports` (the settings, the loop thread, the D6 scrub, the workspace plane's stored
state), given by the runtime's composition root.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
