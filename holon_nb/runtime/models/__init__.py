"""Models: the provider catalog as the tools see it and the registry turns resolve providers from.

Owns: :mod:`.catalog` (``ModelCatalogService``: ListModelProviders, ListProviderModels, provider
configuration) and :mod:`.providers` (``ProviderRegistry``: a model ref to a provider instance, with
fallbacks).

May use: ``runtime.core``, ``holon_nb.providers``, ``holon_nb.tools``.

Consumes: the settings of :mod:`.ports`, given by the runtime's composition root.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
