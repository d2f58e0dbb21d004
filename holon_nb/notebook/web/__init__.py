"""The web and external-trigger magics (``%web``, ``%xsearch``, ``%trigger``) and their views."""

from ._magics import WebMagics

__all__ = ["WebMagics"]
