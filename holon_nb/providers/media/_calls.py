"""Image calls through the official SDKs: a vision observation and an image generation (workspace spec §12, §13).

- :func:`observe_image` sends one image (base64) and a prompt and returns the model's reply text:
  OpenAI-compatible transports (``openai_chat_completions``, ``openai_responses``) through
  ``openai.AsyncOpenAI().chat.completions.create`` with an ``image_url`` data URL and
  ``response_format={"type": "json_object"}``; ``anthropic_messages`` through
  ``anthropic.AsyncAnthropic().messages.create`` with a base64 ``image`` block.
- :func:`generate_images` calls the OpenAI Images API (``images.generate``, ``response_format`` left to the
  server: ``b64_json`` is read, a ``url`` answer is refused — no other host is fetched) on any
  OpenAI-compatible base URL.

Both return plain data and raise :class:`MediaCallError` (one line, no secret, no body) on any failure.
The runtime's image plane (:mod:`holon_nb.runtime.images`) decides what to call and records the result;
cassettes (:mod:`holon_nb.providers.cassettes.media`) sit in front of these functions.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Literal, cast

from ...tools._errors import HolonNBError
from .._catalog import ResolvedProvider

__all__ = [
    "MediaCallError",
    "GeneratedImage",
    "observe_image",
    "generate_images",
    "OPENAI_COMPATIBLE",
    "VISION_TRANSPORTS",
    "VISION_SYSTEM_PROMPT",
]

#: Transports whose servers speak the OpenAI Chat Completions / Images wire protocol.
OPENAI_COMPATIBLE = frozenset({"openai_chat_completions", "openai_responses"})
#: Transports that can produce a visual observation (workspace spec §12 rule 9).
VISION_TRANSPORTS = OPENAI_COMPATIBLE | {"anthropic_messages"}

#: What the vision model is told (the reply format of workspace spec §12 rule 12).
VISION_SYSTEM_PROMPT = (
    "You are a visual observer. Look at the image and answer the user's prompt with one JSON object only: "
    '{"type": "visual_observation", "schema": "visual_observation.v1", "summary": "<one paragraph>", '
    '"ocr": [{"text": "..."}], "elements": [{"description": "..."}], "relations": [], "issues": [], '
    '"uncertainties": ["..."], "external_sources": []}. Describe only what is visible; put doubts in uncertainties.'
)


class MediaCallError(HolonNBError):
    """An image call failed (transport, status, or a reply without the expected content); ``str`` is one line."""


@dataclass(frozen=True)
class GeneratedImage:
    """One image a generation returned: its bytes and the mime type the provider declared (None if none)."""

    data: bytes
    mime: str | None = None


def _oneline(exc: BaseException, resolved: ResolvedProvider) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    for secret in (resolved.api_key, *resolved.extra_secrets):
        if secret:
            text = text.replace(secret, "[REDACTED]")
    return text[:500]


def _openai_base(resolved: ResolvedProvider) -> str:
    from .._openai_chat import chat_completions_url

    return chat_completions_url(resolved.base_url)[: -len("/chat/completions")]


async def observe_image(
    resolved: ResolvedProvider, *, data: bytes, mime: str, prompt: str, max_tokens: int = 2048
) -> str:
    """Ask the vision model of ``resolved`` about one image; return its reply text (not parsed here).

    Args:
        resolved: The provider route (its transport must be in :data:`VISION_TRANSPORTS`).
        data: The image bytes; ``mime`` their sniffed type (``image/png`` …).
        prompt: What to inspect.
        max_tokens: Output budget of the reply (tokens).

    Raises:
        MediaCallError: transport failure, an error status, or an empty reply.
    """
    b64 = base64.b64encode(data).decode("ascii")
    model = resolved.ref.model
    try:
        if resolved.transport == "anthropic_messages":
            from .._anthropic_messages import _make_client

            # the images plane sniffs ``mime`` (runtime/images/_probe.py): one of the four types Messages takes
            media_type = cast(Literal["image/jpeg", "image/png", "image/gif", "image/webp"], mime)
            anthropic_client = _make_client(resolved, resolved.base_url)
            async with anthropic_client:
                msg = await anthropic_client.messages.create(
                    model=model,
                    max_tokens=max_tokens,
                    system=VISION_SYSTEM_PROMPT,
                    messages=[
                        {
                            "role": "user",
                            "content": [
                                {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": b64}},
                                {"type": "text", "text": prompt},
                            ],
                        }
                    ],
                )
            text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text")
        elif resolved.transport in OPENAI_COMPATIBLE:
            from .._openai_client import _extra_headers, make_openai_client

            openai_client = make_openai_client(resolved, _openai_base(resolved))
            async with openai_client:
                reply = await openai_client.chat.completions.create(
                    model=model,
                    max_tokens=max_tokens,
                    response_format={"type": "json_object"},
                    extra_headers=_extra_headers(resolved),
                    messages=[
                        {"role": "system", "content": VISION_SYSTEM_PROMPT},
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": prompt},
                                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{b64}"}},
                            ],
                        },
                    ],
                )
            text = (reply.choices[0].message.content or "") if reply.choices else ""
        else:
            raise MediaCallError(f"transport {resolved.transport} cannot produce visual observations")
    except MediaCallError:
        raise
    except Exception as exc:  # the SDKs' many error types: one classified line
        raise MediaCallError(_oneline(exc, resolved)) from None
    if not text.strip():
        raise MediaCallError("the vision model returned an empty reply")
    return text


_MIMES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


async def generate_images(
    resolved: ResolvedProvider,
    *,
    prompt: str,
    size: str | None = None,
    background: str | None = None,
    output_format: str | None = None,
) -> list[GeneratedImage]:
    """Generate images with the OpenAI Images API of the SDK (``images.generate``, ``n=1``).

    Args:
        resolved: An OpenAI-compatible route (``base_url`` of the server; ``ref.model`` the image model).
        prompt, size, background, output_format: Sent as given when not None (workspace spec §13's enumerations,
            already validated).

    Returns:
        Every image of the reply, in order (a provider may return more than one; workspace spec §13 rule 7).

    Raises:
        MediaCallError: transport failure, an error status, a reply without ``b64_json`` data, or
            undecodable base64.
    """
    if resolved.transport not in OPENAI_COMPATIBLE:
        raise MediaCallError(f"transport {resolved.transport} has no OpenAI Images API")
    from .._openai_client import _extra_headers, make_openai_client

    body: dict[str, Any] = {"model": resolved.ref.model, "prompt": prompt, "n": 1}
    for key, value in (("size", size), ("background", background), ("output_format", output_format)):
        if value is not None:
            body[key] = value
    try:
        client = make_openai_client(resolved, _openai_base(resolved))
        async with client:
            reply = await client.images.generate(**body, extra_headers=_extra_headers(resolved))
    except Exception as exc:
        raise MediaCallError(_oneline(exc, resolved)) from None
    declared = _MIMES.get(str(getattr(reply, "output_format", "") or ""))
    out = []
    for item in reply.data or []:
        if not item.b64_json:
            raise MediaCallError("the image reply carried no b64_json data (a URL answer is not fetched)")
        try:
            out.append(GeneratedImage(base64.b64decode(item.b64_json, validate=True), declared))
        except (binascii.Error, ValueError):
            raise MediaCallError("the image reply's b64_json is not valid base64") from None
    if not out:
        raise MediaCallError("the image reply contained no image")
    return out
