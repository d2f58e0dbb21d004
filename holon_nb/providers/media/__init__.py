"""Image calls to model providers through the official SDKs: vision observations and image generation
(workspace spec §12–§13). The calls live in :mod:`.calls`; their names are re-exported here.

May use: the rest of ``holon_nb.providers`` (catalog, SDK client glue) and ``holon_nb.tools``.
"""

from ._calls import (
    OPENAI_COMPATIBLE,
    VISION_SYSTEM_PROMPT,
    VISION_TRANSPORTS,
    GeneratedImage,
    MediaCallError,
    generate_images,
    observe_image,
)

__all__ = [
    "GeneratedImage",
    "MediaCallError",
    "OPENAI_COMPATIBLE",
    "VISION_SYSTEM_PROMPT",
    "VISION_TRANSPORTS",
    "generate_images",
    "observe_image",
]
