"""What the image plane consumes: the ports :class:`~.service.ImagePlane` is built with.

The runtime's composition root (``Runtime._compose``) passes the model catalog as :class:`CatalogEnviron` and
the settings as :class:`ImageSettings`; the image plane sees nothing else of the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["CatalogEnviron", "ImageSettings"]


class ImageSettings(Protocol):
    """The runtime options the image plane reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def providers(self) -> Mapping[str, Any]:
        """Provider configuration by id: it decides the vision and generation models."""
        ...


class CatalogEnviron(Protocol):
    """The model catalog's environment (where provider keys and ``HOLON_VISION_MODEL`` are read)."""

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment, read at each call."""
        ...
