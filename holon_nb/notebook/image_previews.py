"""Thumbnails of the images an agent's ViewImage and GenerateImage calls saw or wrote, for the turn view.

A direct call's ``ToolResult`` carries its thumbnails (``previews``); a model's calls reach the notebook
as ``tool_result`` events holding only the envelope, so the view makes the thumbnails here from the
paths the envelope names: ``visual_reference.path`` (ViewImage's result, or the details of
``vision_adapter_unavailable`` / ``vision_observation_failed``) and each generated image's ``path``
under the agent home. Every file goes through ViewImage's checks first (size, header, pixel limit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..runtime.images.preview import make_preview
from ..runtime.images.probe import probe_image
from ..tools.errors import ToolFailure

__all__ = ["IMAGE_TOOLS", "envelope_paths", "envelope_previews"]

IMAGE_TOOLS = frozenset({"ViewImage", "GenerateImage"})


def envelope_paths(envelope: dict[str, Any], agent_home: Path) -> list[tuple[Path, str]]:
    """``[(absolute path, label)]`` of the images an image tool's envelope names (none for other tools)."""
    if envelope.get("tool_name") not in IMAGE_TOOLS:
        return []
    result = envelope.get("result") or {}
    details = (envelope.get("error") or {}).get("details") or {}
    ref = result.get("visual_reference") or details.get("visual_reference")
    if isinstance(ref, dict) and isinstance(ref.get("path"), str):
        return [(Path(ref["path"]), ref["path"])]
    out = []
    for img in result.get("images") or []:
        rel = img.get("path") if isinstance(img, dict) else None
        if isinstance(rel, str) and not Path(rel).is_absolute() and ".." not in Path(rel).parts:
            out.append((agent_home / rel, img.get("uri") or rel))
    return out


def envelope_previews(envelope: dict[str, Any], agent_home: Path) -> list[dict[str, Any]]:
    """Thumbnails (``{mime, data, width, height, label}``) of the images ``envelope`` names; a file that
    vanished or fails the checks is skipped."""
    out = []
    for path, label in envelope_paths(envelope, agent_home):
        try:
            preview = make_preview(probe_image(path))
        except ToolFailure:
            continue
        if preview is not None:
            out.append({**preview, "label": label})
    return out
