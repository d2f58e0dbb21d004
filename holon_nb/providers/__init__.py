"""Model providers: the provider boundary (``base``), transports, lineage, schema lowering, scripted providers,
image calls (``media``: vision observations and the Images API) and cassettes.

No Jupyter import here (design.md layering).
"""

__all__: list[str] = []
