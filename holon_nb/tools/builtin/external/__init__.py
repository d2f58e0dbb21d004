"""Tools that reach outside the runtime: the Web family (WebFetch, WebSearch, XSearch) and the hidden
external-trigger pair (CreateExternalTrigger, CancelExternalTrigger)."""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
