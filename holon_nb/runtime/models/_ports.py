"""What the model plane consumes: the settings its catalog and provider registry read.

The runtime's composition root (``Runtime._compose``) and the turn service pass them; the model plane sees
nothing else of the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["ProviderSettings"]


class ProviderSettings(Protocol):
    """The runtime options the model plane reads (``RuntimeSettings`` has them), read again at each use."""

    @property
    def providers(self) -> Mapping[str, Any]:
        """Provider configuration by id (``%config HolonNB.providers``)."""
        ...
