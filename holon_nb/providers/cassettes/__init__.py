"""Record/replay cassettes for model calls: file format, canonical requests, normalisation,
drift reports, the replay clock, the network guard and tool-outcome replay (turn-loop spec §4).

May use: the rest of ``holon_nb.providers`` and ``holon_nb.tools``.
"""
