"""The kernel side of the opt-in Notebook tool family (issue 28): :class:`._port.KernelNotebook` implements
:class:`holon_nb.tools.builtin.notebook._port.NotebookPort` over the IPython shell; :mod:`._values` summarises
variables with bounded cost, :mod:`._runner` runs an agent's code in the user namespace, :mod:`._document`
reads and edits the notebook document."""

# internal (docs/api.md)
__all__: list[str] = []
