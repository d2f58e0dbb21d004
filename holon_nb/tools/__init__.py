"""The model-facing tool surface: declarations, registry, dispatch, envelopes.

Imports nothing above it and no Jupyter package (design.md, "Layers"). The envelope's JSON, the receipts and
the scrubber are :mod:`holon_nb.render`'s, the layer below; ``dumps_envelope``, ``project_receipt`` and
``Scrubber`` are re-exported here, and :func:`render_receipt` renders by the built-in registry by default.

Example::

    from holon_nb.tools import REGISTRY, dispatch
    spec = REGISTRY.get("ExecCommand")
"""

from ..render._receipt import dumps_envelope, project_receipt
from ..render._scrubbing import Scrubber
from ._context import CallContext, ToolContext
from ._dispatch import dispatch, parse_args
from ._envelope import ERROR_KINDS, ToolError, error_envelope, success_envelope
from ._errors import HolonNBError, RuntimeClosed, RuntimeDied, RuntimeStartupError, ToolCallError, ToolFailure
from ._registry import REGISTRY, Registry, render_receipt
from ._schema import input_schema
from ._spec import Family, Profile, Rendering, Stability, ToolSpec

__all__ = [
    "CallContext",
    "ToolContext",
    "dispatch",
    "parse_args",
    "ERROR_KINDS",
    "ToolError",
    "dumps_envelope",
    "error_envelope",
    "project_receipt",
    "success_envelope",
    "HolonNBError",
    "RuntimeClosed",
    "RuntimeDied",
    "RuntimeStartupError",
    "ToolCallError",
    "ToolFailure",
    "Scrubber",
    "render_receipt",
    "REGISTRY",
    "Registry",
    "input_schema",
    "Family",
    "Profile",
    "Rendering",
    "Stability",
    "ToolSpec",
]
