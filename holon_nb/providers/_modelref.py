"""The shape of a model reference: :class:`ModelRef`, its id grammar and its error (turn-loop spec §2.2).

A leaf module: :mod:`~holon_nb.providers._catalog` and :mod:`~holon_nb.providers._refs` (which parses
refs, with the catalog's legacy aliases) both use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..tools._errors import HolonNBError

__all__ = ["ModelRef", "ModelRefError", "DEFAULT_ENDPOINT"]

#: The endpoint a provider id alone denotes; dropped in compact display.
DEFAULT_ENDPOINT = "default"
_ID = re.compile(r"^[a-z0-9_-]+$")


class ModelRefError(HolonNBError, ValueError):
    """Raised when a model reference is malformed (empty part, bad provider id, no ``/``)."""


@dataclass(frozen=True)
class ModelRef:
    """A parsed route ref.

    Attributes:
        provider: Provider id (lowercase ASCII letters, digits, ``-``, ``_``).
        endpoint: Endpoint id within the provider (``default`` unless named).
        model: Model id as the provider spells it (may contain ``/`` and ``:``).
    """

    provider: str
    endpoint: str
    model: str

    @property
    def canonical(self) -> str:
        """``provider@endpoint/model``."""
        return f"{self.provider}@{self.endpoint}/{self.model}"

    @property
    def compact(self) -> str:
        """Display form: ``provider/model`` when the endpoint is ``default``, else the canonical form."""
        if self.endpoint == DEFAULT_ENDPOINT:
            return f"{self.provider}/{self.model}"
        return self.canonical

    def __str__(self) -> str:
        return self.canonical
