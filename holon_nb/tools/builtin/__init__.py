"""The built-in tools of the contract: one module per tool family, each declaring its tools
(input model, handler, receipt) as :class:`~holon_nb.tools._spec.ToolSpec` values.

May use: the tools framework (``spec``, ``envelope``, ``errors``, ``context``, ``text``, ``receipts``,
``patching``...). Never the runtime: handlers reach it through ``ToolContext`` (style.md §2.1).
The registry (:mod:`holon_nb.tools._registry`) assembles them.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
