"""Record/replay of image calls: vision observations and image generations (issue 14, part 4).

A media cassette is a JSON-lines file: a header ``{"format": "holon-nb-media-cassette", "version": 1}``
then one line per call::

    {"kind": "vision", "route": {"ref": "openai/gpt-5.4", "transport": "openai_chat_completions"},
     "request": {"image_sha256": "…", "mime": "image/png", "prompt": "…"},
     "response": {"text": "<the model's reply>"}}
    {"kind": "generate", "route": {…}, "request": {"prompt": "…", "size": …, "background": …, "output_format": …},
     "response": {"images": [{"sha256": "…", "mime": "image/png"}]}}

A failed call is recorded as ``"response": {"error": "<one line>"}`` and replayed as the same failure.
Image payloads are never inline: a vision request names the input by its SHA-256 (the image is the
user's file, already on disk), and generated images are stored once by content hash in the folder
``<cassette>.blobs/<sha256>`` beside the file. Route selection is recorded too (``vision_mode``), so a
replay needs no credential and no network.

Modes: ``record`` (call the real provider and rewrite the file), ``replay`` (offline; a call the file does
not hold fails with a :class:`~holon_nb.providers.media.MediaCallError` naming the request and how to
re-record), ``auto`` (replay when the file exists, else record).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..media import GeneratedImage, MediaCallError, generate_images, observe_image

__all__ = ["MediaCassette", "MEDIA_FORMAT", "MODES"]

MEDIA_FORMAT = "holon-nb-media-cassette"
MODES = ("record", "replay", "auto")
_RERECORD = "re-record it with mode='record' (%image … --mode record) against a real model"


class MediaCassette:
    """One media cassette file.

    Args:
        path: The ``.jsonl`` file.
        mode: ``record`` | ``replay`` | ``auto``.
        observe, generate: The real calls used when recording (defaults: the SDK functions).

    Raises:
        ValueError: an unknown mode, or a file that is not a media cassette.
        FileNotFoundError: ``replay`` of a missing file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: str = "auto",
        *,
        observe: Callable[..., Any] = observe_image,
        generate: Callable[..., Any] = generate_images,
    ):
        if mode not in MODES:
            raise ValueError(f"media cassette mode {mode!r} is not one of {', '.join(MODES)}")
        self.path = Path(path)
        self.blobs = self.path.with_name(self.path.name + ".blobs")
        if mode == "auto":
            mode = "replay" if self.path.exists() else "record"
        self.mode = mode
        self._observe, self._generate = observe, generate
        self.interactions: list[dict[str, Any]] = []
        self._used: set[int] = set()
        if mode == "replay":
            self.interactions = self._read()

    @property
    def replaying(self) -> bool:
        """True in replay mode (the plane then takes the route from :meth:`selection`)."""
        return self.mode == "replay"

    def _read(self) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if not lines or lines[0].get("format") != MEDIA_FORMAT:
            raise ValueError(f"{self.path} is not a media cassette (no {MEDIA_FORMAT} header)")
        return lines[1:]

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [{"format": MEDIA_FORMAT, "version": 1}, *self.interactions]
        self.path.write_text(
            "".join(json.dumps(x, sort_keys=True, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
        )

    def _record(self, item: dict[str, Any]) -> None:
        if not self.interactions and self.path.exists():
            self.path.unlink()  # a new recording replaces the old file
        self.interactions.append(item)
        self._write()

    def _find(self, kind: str, request: dict[str, Any]) -> dict[str, Any]:
        for i, item in enumerate(self.interactions):
            if i not in self._used and item["kind"] == kind and item["request"] == request:
                self._used.add(i)
                return item
        for item in self.interactions:  # a repeated call replays the same answer again
            if item["kind"] == kind and item["request"] == request:
                return item
        raise MediaCallError(
            f"cassette {self.path.name} holds no {kind} call for {json.dumps(request, sort_keys=True)}; {_RERECORD}"
        )

    def selection(self, kind: str) -> dict[str, Any] | None:
        """The recorded route of the first ``kind`` call (``{ref, transport, mode}``), or None if there is none."""
        for item in self.interactions:
            if item["kind"] == kind:
                return {**item["route"], "mode": item.get("vision_mode", "vision_adapter")}
        return None

    async def observe(
        self, resolved: Any, *, data: bytes, mime: str, prompt: str, vision_mode: str | None = None
    ) -> str:
        """:func:`~holon_nb.providers.media.observe_image`, recorded or replayed (``vision_mode``: the plane's
        selection mode, recorded so a replay reports the same)."""
        request = {"image_sha256": hashlib.sha256(data).hexdigest(), "mime": mime, "prompt": prompt}
        if self.replaying:
            return self._answer(self._find("vision", request))["text"]
        route = {"ref": resolved.ref.compact, "transport": resolved.transport}
        try:
            text = await self._observe(resolved, data=data, mime=mime, prompt=prompt)
        except MediaCallError as exc:
            self._record({"kind": "vision", "route": route, "request": request, "response": {"error": str(exc)}})
            raise
        self._record(
            {
                "kind": "vision",
                "route": route,
                "request": request,
                "response": {"text": text},
                "vision_mode": vision_mode or "vision_adapter",
            }
        )
        return text

    async def generate(
        self,
        resolved: Any,
        *,
        prompt: str,
        size: str | None = None,
        background: str | None = None,
        output_format: str | None = None,
    ) -> list[GeneratedImage]:
        """:func:`~holon_nb.providers.media.generate_images`, recorded or replayed (bytes from the blob folder)."""
        request = {"prompt": prompt, "size": size, "background": background, "output_format": output_format}
        if self.replaying:
            response = self._answer(self._find("generate", request))
            out = []
            for img in response["images"]:
                blob = self.blobs / img["sha256"]
                try:
                    data = blob.read_bytes()
                except OSError:
                    raise MediaCallError(f"cassette blob {blob} is missing; {_RERECORD}") from None
                if hashlib.sha256(data).hexdigest() != img["sha256"]:
                    raise MediaCallError(f"cassette blob {blob} does not match its hash; {_RERECORD}")
                out.append(GeneratedImage(data, img.get("mime")))
            return out
        route = {"ref": resolved.ref.compact, "transport": resolved.transport}
        try:
            images = await self._generate(
                resolved, prompt=prompt, size=size, background=background, output_format=output_format
            )
        except MediaCallError as exc:
            self._record({"kind": "generate", "route": route, "request": request, "response": {"error": str(exc)}})
            raise
        self.blobs.mkdir(parents=True, exist_ok=True)
        stored = []
        for img in images:
            digest = hashlib.sha256(img.data).hexdigest()
            blob = self.blobs / digest
            if not blob.exists():  # stored once by content hash
                blob.write_bytes(img.data)
            stored.append({"sha256": digest, "mime": img.mime})
        self._record({"kind": "generate", "route": route, "request": request, "response": {"images": stored}})
        return images

    @staticmethod
    def _answer(item: dict[str, Any]) -> dict[str, Any]:
        response = item["response"]
        if "error" in response:
            raise MediaCallError(response["error"])
        return response
