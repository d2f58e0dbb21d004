"""``ImagePlane``: ViewImage and GenerateImage behind ``ctx.images`` (workspace spec §12, §13).

Seams: :attr:`ImagePlane.observe` and :attr:`ImagePlane.generate_call` are the two calls that leave the
process (defaults: :func:`holon_nb.providers.media.observe_image` and
:func:`~holon_nb.providers.media.generate_images`); a media cassette
(:class:`holon_nb.providers.cassettes.media.MediaCassette`) replaces them and the model selection through
:meth:`ImagePlane.use_cassette`. Thumbnails of the images a call saw or wrote wait in
:meth:`ImagePlane.take_preview` until the runtime puts them in the call's ``ToolResult``.

Reading, checking and thumbnailing an image run in a worker thread (:func:`checked_image`,
:meth:`ImagePlane._preview`), never on the runtime's loop: a hostile file once held every other call
for 18 s (issue 25 item 2c). Each has a time budget: past :data:`CHECK_TIMEOUT_S` the call is refused
(``invalid_tool_input``), past :data:`PREVIEW_TIMEOUT_S` it goes on without a thumbnail; the abandoned
thread ends by itself (the checks are bounded: size, chunk count, pixels).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ...providers._catalog import ResolvedProvider
from ...providers._refs import parse_model_ref
from ...providers.media import MediaCallError, generate_images, observe_image
from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._clock import fmt, utcnow
from ._generated import GENERATED_DIR, create_exclusive, default_stem, extension_for
from ._observation import ObservationCache, ObservationError, parse_observation, visual_reference
from ._preview import make_preview
from ._probe import ImageFacts, probe_image
from ._selection import Selection, select_generator, select_vision

if TYPE_CHECKING:
    from ._ports import CatalogEnviron, ImageSettings

__all__ = [
    "ImagePlane",
    "AgentImages",
    "SIZES",
    "BACKGROUNDS",
    "OUTPUT_FORMATS",
    "CHECK_TIMEOUT_S",
    "PREVIEW_TIMEOUT_S",
    "checked_image",
]

SIZES = ("1024x1024", "1536x1024", "1024x1536")
BACKGROUNDS = ("auto", "transparent", "opaque")
OUTPUT_FORMATS = ("png", "jpeg", "webp")
#: Seconds an image's checks (stat, bounded read, chunk count, header) may take in their worker thread.
CHECK_TIMEOUT_S = 20.0
#: Seconds a notebook thumbnail may take; past it the call's receipt has no thumbnail.
PREVIEW_TIMEOUT_S = 10.0


async def checked_image(path: Path, tool: str = "ViewImage") -> ImageFacts:
    """:func:`~.probe.probe_image` in a worker thread, within :data:`CHECK_TIMEOUT_S` (loop thread).

    Raises:
        ToolFailure: what ``probe_image`` raises; ``invalid_tool_input`` (``validation_error: "image check
            timed out"``) when the checks outlast the budget (their thread is abandoned, not waited for).
    """
    try:
        with anyio.fail_after(CHECK_TIMEOUT_S):
            # probe_image is looked up when the thread runs (a test holds it to show the loop stays free)
            return await anyio.to_thread.run_sync(lambda: probe_image(path, tool), abandon_on_cancel=True)
    except TimeoutError:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message=f"{tool}: checking {path} took more than {CHECK_TIMEOUT_S:g} s; it was abandoned",
                details={
                    "tool_name": tool,
                    "field": "path",
                    "validation_error": "image check timed out",
                    "path": str(path),
                    "time_budget_s": CHECK_TIMEOUT_S,
                },
                recovery_hint="Re-encode the image with a common encoder, or retry when the machine is less busy.",
            )
        ) from None


class ImagePlane:
    """The image plane of one runtime: the observation cache, the model seams, pending previews.

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        catalog: The model catalog; its ``environ`` feeds the model selection.
        settings: Returns the runtime's current settings; their ``providers`` feed the model selection.
    """

    def __init__(self, *, catalog: CatalogEnviron, settings: Callable[[], ImageSettings]):
        self._catalog = catalog
        self._settings = settings
        self.cache = ObservationCache()
        self.observe: Callable[..., Any] = observe_image
        self.generate_call: Callable[..., Any] = generate_images
        self.cassette: Any = None
        self.vision_calls = 0
        self._previews: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        """Nothing to start (the service protocol of the facade)."""

    def bind(self, call: Any) -> AgentImages:
        """The view one call sees (``ctx.images``)."""
        return AgentImages(self, call)

    @contextlib.contextmanager
    def use_cassette(self, cassette: Any) -> Iterator[Any]:
        """Route vision and generation through ``cassette`` (record or replay) while the block runs."""
        previous = self.cassette
        self.cassette = cassette
        try:
            yield cassette
        finally:
            self.cassette = previous

    def _environ(self) -> Any:
        return self._catalog.environ

    def _settings_providers(self) -> Any:
        return self._settings().providers

    def vision_selection(self) -> Selection:
        """The vision model now (workspace spec §12 rule 9); a replaying cassette answers with its recorded route."""
        if self.cassette is not None and self.cassette.replaying:
            return _replayed(self.cassette, "vision")
        return select_vision(self._environ(), self._settings_providers())

    def generator_selection(self) -> Selection:
        """The image-generation model now (workspace spec §13 rule 3)."""
        if self.cassette is not None and self.cassette.replaying:
            return _replayed(self.cassette, "generate")
        return select_generator(self._environ(), self._settings_providers())

    async def _preview(self, execution_id: str, facts: ImageFacts, label: str) -> None:
        if not execution_id:
            return
        preview = None
        with anyio.move_on_after(PREVIEW_TIMEOUT_S):
            preview = await anyio.to_thread.run_sync(make_preview, facts, abandon_on_cancel=True)
        if preview is not None:
            preview["label"] = label
            with self._lock:
                self._previews.setdefault(execution_id, []).append(preview)

    def add_preview(self, execution_id: str, data: bytes, label: str) -> None:
        """Keep a thumbnail of an image another plane received for call ``execution_id`` (an MCP tool's image
        content, issue 29); bytes that are not a supported image are ignored."""
        from ._probe import probe_bytes

        try:
            facts = probe_bytes(data, Path(label))
        except Exception:  # noqa: BLE001 - not an image this plane can show: no thumbnail
            return
        preview = make_preview(facts)
        if preview is not None:
            preview["label"] = label
            with self._lock:
                self._previews.setdefault(execution_id, []).append(preview)

    def take_preview(self, execution_id: str) -> list[dict[str, Any]]:
        """Remove and return the thumbnails a call left (``[{mime, data, width, height, label}]``)."""
        with self._lock:
            return self._previews.pop(execution_id, [])


class AgentImages:
    """ViewImage and GenerateImage for one caller (``ctx.images``)."""

    def __init__(self, plane: ImagePlane, call: Any):
        self._plane = plane
        self._call = call

    def preview(self, data: bytes, label: str) -> None:
        """Show ``data`` (an image a tool produced, e.g. a plot RunCode's code displayed; issue 28) as a
        thumbnail beside this call's receipt; bytes that are not a supported image are ignored."""
        self._plane.add_preview(self._call.execution_id, data, label)

    async def view(self, path: Path, prompt: str) -> dict[str, Any]:
        """ViewImage (workspace spec §12) on an absolute, lexically normalised ``path``.

        Returns:
            ``{visual_reference, observation, selected_mode, vision_selection, summary_text}``.

        Raises:
            ToolFailure: ``invalid_tool_input``, ``image_read_failed``, ``vision_adapter_unavailable``
                (``details.visual_reference`` included), ``vision_observation_failed``.
        """
        plane = self._plane
        facts = await checked_image(path)
        ref = visual_reference(facts, fmt(utcnow()))
        await plane._preview(self._call.execution_id, facts, str(path))
        cached = plane.cache.get(ref["id"], prompt)
        if cached is not None:
            return _view_result(ref, prompt, cached, reused=True)
        sel = plane.vision_selection()
        if sel.resolved is None:
            raise ToolFailure(
                ToolError(
                    kind="vision_adapter_unavailable",
                    message="ViewImage: no vision model is configured; the image was validated and its reference recorded",
                    details={
                        "tool_name": "ViewImage",
                        "selected_mode": sel.mode,
                        "selection_reason": sel.reason,
                        **(
                            {"primary_provider": sel.primary_provider, "primary_model": sel.primary_model}
                            if sel.primary_provider
                            else {}
                        ),
                        "candidates": [c.to_dict() for c in sel.candidates],
                        "visual_reference": ref,
                    },
                    recovery_hint="Set HOLON_VISION_MODEL to an authenticated model with image input "
                    "(openai/gpt-5.4, anthropic/claude-sonnet-5), or configure one in HolonNB.providers.",
                )
            )
        plane.vision_calls += 1
        try:
            if plane.cassette is not None:
                text = await plane.cassette.observe(
                    sel.resolved, data=facts.data, mime=facts.mime, prompt=prompt, vision_mode=sel.mode
                )
            else:
                text = await plane.observe(sel.resolved, data=facts.data, mime=facts.mime, prompt=prompt)
            parsed = parse_observation(text)
        except (MediaCallError, ObservationError) as exc:
            raise ToolFailure(
                ToolError(
                    kind="vision_observation_failed",
                    message=f"ViewImage: the vision model failed: {exc}",
                    details={
                        "tool_name": "ViewImage",
                        "vision_provider": sel.resolved.ref.provider,
                        "vision_model": sel.resolved.ref.model,
                        "error": str(exc),
                        "visual_reference": ref,
                    },
                    recovery_hint="Retry, or choose another vision model (HOLON_VISION_MODEL).",
                )
            ) from None
        entry = {"observation": parsed, "selection": sel.to_dict()}
        plane.cache.put(ref["id"], prompt, entry)
        return _view_result(ref, prompt, entry, reused=False)

    async def generate(
        self,
        prompt: str,
        *,
        size: str | None,
        background: str | None,
        output_format: str | None,
        name: str | None,
        agent_home: Path,
    ) -> dict[str, Any]:
        """GenerateImage (workspace spec §13) with already validated enumerations and a sanitized ``name`` (or None).

        Raises:
            ToolFailure: ``image_generation_failed``, ``generated_media_write_failed``, ``generated_image_invalid``.
        """
        plane = self._plane
        sel = plane.generator_selection()
        if sel.resolved is None:
            raise _gen_failed(
                f"no image-generation model is configured ({sel.reason})",
                candidates=[c.to_dict() for c in sel.candidates],
            )
        call = plane.cassette.generate if plane.cassette is not None else plane.generate_call
        try:
            images = await call(
                sel.resolved, prompt=prompt, size=size, background=background, output_format=output_format
            )
        except MediaCallError as exc:
            raise _gen_failed(str(exc)) from None
        if not images:  # a provider or a replayed cassette answered with nothing to save (issue 25 item 6)
            raise _gen_failed("the provider returned no image")
        folder = agent_home / GENERATED_DIR
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _write_failed(folder, exc) from None
        now = utcnow()
        stem = name or default_stem(now)
        agent_id = self._call.agent_id
        checked = await _save_all(folder, stem, images, output_format)
        out = []
        for written, facts in checked:
            rel = (GENERATED_DIR / written.name).as_posix()
            await plane._preview(self._call.execution_id, facts, rel)
            out.append(
                {
                    "type": "generated_image",
                    "id": "img_" + facts.sha256[:16],
                    "workspace_id": f"agent_home:{agent_id}",
                    "path": rel,
                    "uri": f"workspace://agent_home:{agent_id}/{rel}",
                    "sha256": facts.sha256,
                    "mime": facts.mime,
                    "byte_count": facts.byte_count,
                    "size": {"width": facts.width, "height": facts.height},
                    "created_at": fmt(now),
                }
            )
        parameters = {
            k: v
            for k, v in (("size", size), ("background", background), ("output_format", output_format), ("name", name))
            if v is not None
        }
        n = len(out)
        return {
            "images": out,
            "provider": sel.resolved.ref.provider,
            "model": sel.resolved.ref.model,
            "prompt": prompt,
            "parameters": parameters,
            "summary_text": "GenerateImage created one image" if n == 1 else f"GenerateImage created {n} images",
        }


def _replayed(cassette: Any, kind: str) -> Selection:
    """The selection a replaying cassette recorded (no credential needed); unavailable if it holds no such call."""
    route = cassette.selection(kind)
    if route is None:
        return Selection("unavailable", f"cassette_has_no_{kind}_call")
    resolved = ResolvedProvider(ref=parse_model_ref(route["ref"]), transport=route["transport"], base_url="")
    mode = route["mode"] if kind == "vision" else "image_generation"
    return Selection(mode, "cassette_replay", resolved=resolved)


def _view_result(ref: dict[str, Any], prompt: str, entry: dict[str, Any], *, reused: bool) -> dict[str, Any]:
    sel = entry["selection"]
    generated_by = {"mode": sel["selected_mode"]}
    for key, name in (("vision_provider", "provider"), ("vision_model", "model")):
        if key in sel:
            generated_by[name] = sel[key]
    generated_by["selection_reason"] = sel["selection_reason"]
    obs = entry["observation"]
    observation = {
        "type": "visual_observation",
        "schema": "visual_observation.v1",
        "visual_reference_id": ref["id"],
        "prompt": prompt,
        "generated_by": generated_by,
        "summary": obs["summary"],
        **{k: obs[k] for k in ("ocr", "elements", "relations", "issues", "uncertainties", "external_sources")},
    }
    how = (
        "reused a cached observation"
        if reused
        else f"observed by {generated_by.get('provider')}/{generated_by.get('model')}"
    )
    return {
        "visual_reference": ref,
        "observation": observation,
        "selected_mode": sel["selected_mode"],
        "vision_selection": sel,
        "summary_text": f"ViewImage {ref['mime']} {ref['size']['width']}x{ref['size']['height']}: {how}",
    }


def _gen_failed(error: str, **details: Any) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="image_generation_failed",
            message=f"GenerateImage: {error}",
            details={"tool_name": "GenerateImage", "error": error, **details},
            recovery_hint="Set HOLON_IMAGE_GENERATION_MODEL to an authenticated OpenAI-compatible "
            "image model (openai/gpt-image-1).",
        )
    )


async def _save_all(
    folder: Path, stem: str, images: list[Any], output_format: str | None
) -> list[tuple[Path, ImageFacts]]:
    """Write and re-check every image of a reply (workspace spec §13 rules 5, 6): all are saved, or none.

    Returns:
        ``[(path written, its facts)]`` in reply order.

    Raises:
        ToolFailure: ``generated_media_write_failed`` or ``generated_image_invalid``; every file this
            call wrote is removed first (issue 25 item 6: nothing invalid is left on disk).
    """
    written_paths: list[Path] = []
    checked: list[tuple[Path, ImageFacts]] = []
    try:
        for i, image in enumerate(images):
            ext = extension_for(image.mime, output_format)
            filename = f"{stem}.{ext}" if i == 0 else f"{stem}-{i + 1}.{ext}"
            try:
                written = create_exclusive(folder, filename, image.data)
            except OSError as exc:
                raise _write_failed(folder / filename, exc) from None
            written_paths.append(written)
            try:  # rule 6: the written file, re-read from disk with ViewImage's rules 3-6
                checked.append((written, await checked_image(written, "GenerateImage")))
            except ToolFailure as exc:
                raise _invalid_image(i, (GENERATED_DIR / written.name).as_posix(), image.data, exc) from None
    except BaseException:  # an invalid image, a failed write, a cancelled call: no partial result stays
        for path in written_paths:
            path.unlink(missing_ok=True)
        raise
    return checked


def _invalid_image(index: int, rel: str, data: bytes, exc: ToolFailure) -> ToolFailure:
    """``generated_image_invalid`` for image ``index`` of a reply (workspace spec §13 rule 6); its file is removed by the caller."""
    return ToolFailure(
        ToolError(
            kind="generated_image_invalid",
            message=f"GenerateImage: the provider's image is not a valid image ({exc.error.message}); "
            "nothing was saved",
            details={
                "tool_name": "GenerateImage",
                "path": rel,
                "image_index": index,
                "sha256": hashlib.sha256(data).hexdigest(),
                "error": exc.error.details,
                "removed": True,
            },
            recovery_hint="Retry, or check the image model's output.",
        )
    )


def _write_failed(path: Path, exc: OSError) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="generated_media_write_failed",
            message=f"GenerateImage: cannot write {path}: {exc.strerror or exc}",
            details={"tool_name": "GenerateImage", "path": str(path), "io_error": str(exc)},
            recovery_hint="Check the agent home is writable and the disk has space.",
        )
    )
