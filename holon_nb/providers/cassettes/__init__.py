"""Record/replay cassettes for model calls: file format, canonical requests, normalisation,
drift reports, the replay clock, the network guard and tool-outcome replay (turn-loop spec §4).

May use: the rest of ``holon_nb.providers`` and ``holon_nb.tools``.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
