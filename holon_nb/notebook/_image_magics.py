"""The image magic: ``%image view`` (ViewImage) and ``%image generate`` (GenerateImage), and the
thumbnails an agent turn's view shows for its image calls (:func:`envelope_previews`).

Each calls its tool through ``Runtime.call`` and displays the receipt once: the text receipt beside a
thumbnail of the image (see :mod:`holon_nb.runtime.images._preview`). ``--cassette FILE`` records or
replays the model call (a media cassette, :class:`holon_nb.providers.cassettes.media.MediaCassette`;
paths relative to the notebook's directory), so an image notebook runs offline in CI.

A direct call's ``ToolResult`` carries its thumbnails (``previews``); a model's calls reach the notebook
as ``tool_result`` events holding only the envelope, so the turn view makes the thumbnails from the
paths the envelope names: ``visual_reference.path`` (ViewImage's result, or the details of
``vision_adapter_unavailable`` / ``vision_observation_failed``) and each generated image's ``path``
under the agent home. Every file goes through ViewImage's checks first (size, header, pixel limit).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ..runtime.images._preview import make_preview
from ..runtime.images._probe import probe_image
from ..tools._errors import ToolFailure
from ._magics import SessionMagics, raise_option
from ._parsing import parse_quoted

__all__ = ["ImageMagics", "IMAGE_TOOLS", "envelope_paths", "envelope_previews"]

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


@magics_class
class ImageMagics(SessionMagics):
    """``%image view PATH --prompt TEXT`` and ``%image generate PROMPT [--size …] [--name …]``."""

    @line_magic
    @magic_arguments()
    @argument(
        "action",
        choices=("view", "generate"),
        help="view PATH: validate an image and ask the vision model about it (ViewImage); "
        "generate PROMPT: draw one image into <agent home>/media/generated/ (GenerateImage).",
    )
    @argument("words", nargs="*", help="view: the image path; generate: the prompt (quote it or not).")
    @argument("--prompt", default=None, help="view: what to inspect in the image (required).")
    @argument("--size", default=None, help="generate: 1024x1024, 1536x1024 or 1024x1536.")
    @argument("--background", default=None, help="generate: auto, transparent or opaque.")
    @argument("--output-format", dest="output_format", default=None, help="generate: png, jpeg or webp.")
    @argument("--name", default=None, help="generate: filename stem of the saved image.")
    @argument(
        "--cassette",
        default=None,
        help="Media cassette (.jsonl, relative to the notebook's directory) recording or replaying the model call.",
    )
    @argument(
        "--mode",
        default="auto",
        choices=("auto", "record", "replay"),
        help="Cassette mode: auto (replay when the file exists, else record), record, replay.",
    )
    @raise_option
    def image(self, line: str) -> None:
        """View or generate an image; the receipt shows the picture.

        Examples::

            %image view /usr/share/pixmaps/debian-logo.png --prompt "What does the logo show?"
            %image generate "a lighthouse at dusk, watercolour" --size 1536x1024 --name lighthouse
            %image view photo.jpg --prompt "Read the sign" --cassette cassettes/photo.jsonl
        """
        args = parse_quoted(self.image, line)
        text = " ".join(args.words).strip()
        if not text:
            raise UsageError(f"%image {args.action} needs " + ("a path" if args.action == "view" else "a prompt"))
        if args.action == "view":
            if not args.prompt:
                raise UsageError('%image view PATH needs --prompt "what to inspect"')
            payload: dict[str, Any] = {"path": text, "prompt": args.prompt}
            name = "ViewImage"
        else:
            payload = {"prompt": text}
            for key in ("size", "background", "output_format", "name"):
                if getattr(args, key) is not None:
                    payload[key] = getattr(args, key)
            name = "GenerateImage"
        with self._media_cassette(args.cassette, args.mode):
            self._call(name, payload, args.raise_error)

    @contextlib.contextmanager
    def _media_cassette(self, path: str | None, mode: str) -> Iterator[None]:
        if not path:
            yield
            return
        from ..providers.cassettes.media import MediaCassette

        full = Path(path) if Path(path).is_absolute() else Path(os.getcwd()) / path
        try:
            cassette = MediaCassette(full, mode)
        except (OSError, ValueError) as exc:
            raise UsageError(f"media cassette {full}: {exc}") from None
        with self._session.rt.images.use_cassette(cassette):
            yield
