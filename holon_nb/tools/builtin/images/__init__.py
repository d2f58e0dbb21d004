"""Image tools: ViewImage and GenerateImage (workspace spec §12, §13).

:mod:`.declarations` holds the input models, normalisation, handlers and ``SPECS``; the text receipts
are there too. The work lives in the runtime's image plane (``ctx.images``).
"""

from ._declarations import (
    ENUMS,
    SPECS,
    GenerateImageInput,
    ViewImageInput,
    render_generate_image_receipt,
    render_view_image_receipt,
)

__all__ = [
    "ENUMS",
    "SPECS",
    "GenerateImageInput",
    "ViewImageInput",
    "render_generate_image_receipt",
    "render_view_image_receipt",
]
