"""Notebook suites beyond one process and one machine (issue 30): the plugin's recorded durations, the
longest-first order and ``--holon-nb-shard`` (:mod:`._order`), and kernels on a Jupyter Kernel or Enterprise
Gateway (:mod:`._gateway`). Internal: the options are the public surface (docs/large-suites.md)."""

__all__: list[str] = []
