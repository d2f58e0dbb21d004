"""The opt-in Notebook tool family (issue 28), beside the contract's families: :mod:`._tools` declares it,
:mod:`._port` the kernel port it reaches the kernel through (the notebook layer implements it)."""

# internal (docs/api.md): the package exports no names itself; the registry imports its modules
__all__: list[str] = []
