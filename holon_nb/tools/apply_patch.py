"""Placeholder: this plane's tools are being built (see the module's owner)."""

from __future__ import annotations

SPECS: tuple = ()
