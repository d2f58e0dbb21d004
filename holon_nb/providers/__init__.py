"""Model providers: the provider boundary (``base``), transports, lineage, schema lowering, scripted providers.

No Jupyter import here (design.md layering).
"""

__all__: list[str] = []
