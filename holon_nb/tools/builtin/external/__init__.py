"""Tools that reach outside the runtime: the Web family (WebFetch, WebSearch, XSearch) and the hidden
external-trigger pair (CreateExternalTrigger, CancelExternalTrigger)."""
