"""The official ``openai`` SDK glue shared by the Responses and Chat Completions transports: client construction
(``AsyncOpenAI``, ``max_retries=0`` — the lineage wrapper is the only retry layer), one request through the SDK's
``with_streaming_response`` face (JSON body or SSE stream), and the mapping of SDK exceptions to classified
:class:`~holon_nb.providers.base.ProviderTransportError` (turn-loop spec §2.4). SDK imports stay in this module
and the two transport modules.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import openai

from ._catalog import ResolvedProvider
from ._errors import RequestSite, classify_exception, fill_diagnostics, invalid_response, status_error
from ._wire import SSEEvent, iter_sse
from .base import ProviderTransportError, TurnResponse

__all__ = ["make_openai_client", "openai_request"]

_NO_KEY = "holon-nb-no-key"


def make_openai_client(resolved: ResolvedProvider, sdk_base_url: str) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` for ``sdk_base_url`` with the resolved key (a placeholder when keyless: the
    ``Authorization`` header is then omitted per request), ``max_retries=0`` and the send timeout (seconds)."""
    return openai.AsyncOpenAI(
        api_key=resolved.api_key or _NO_KEY, base_url=sdk_base_url, max_retries=0, timeout=resolved.http_timeout_s
    )


def _extra_headers(resolved: ResolvedProvider) -> dict[str, Any]:
    # `authorization: Bearer <key>` only when a key is configured (turn-loop spec §2.6)
    return {} if resolved.api_key else {"Authorization": openai.Omit()}


async def openai_request(
    create: Callable[..., Any],
    body: dict[str, Any],
    *,
    resolved: ResolvedProvider,
    context: str,
    url: str,
    primary: tuple[str, ...],
    on_json: Callable[[Any], TurnResponse],
    on_sse: Callable[[AsyncIterator[SSEEvent]], Awaitable[TurnResponse]],
    classify_body: Callable[[int, str], tuple[str, str, str | None]] | None = None,
    tool_names: tuple[str, ...] = (),
    scrubber: Any = None,
) -> TurnResponse:
    """Send ``body`` through ``create`` (an SDK ``…with_streaming_response.create``) and parse the reply.

    Args:
        create: The SDK method.
        body: The full JSON body; keys in ``primary`` go as SDK keywords, the rest as ``extra_body``.
        context: Message prefix (``openai responses request``).
        url: The request URL, for diagnostics (sanitized there).
        on_json: Parser of a JSON reply body (already decoded).
        on_sse: Consumer of an ``text/event-stream`` reply (events arrive under the stream idle timeout).
        classify_body: ``(status, body_text) -> (kind, disposition, code)`` for non-success statuses
            (Chat's body codes); default: the status table.
        tool_names: Advertised tools, so a schema rejection can name one (turn-loop spec §3.6).

    Returns:
        The parsed response with ``provider_request_id`` from ``x-request-id``/``request-id``/``openai-request-id``.

    Raises:
        ProviderTransportError: every failure, classified (turn-loop spec §2.4); the body never enters the message.
    """
    kwargs = {k: body[k] for k in primary if k in body}
    extra = {k: v for k, v in body.items() if k not in primary}
    diag = RequestSite(provider=resolved.ref.provider, model_ref=resolved.route_ref, url=url)
    stage = "send"
    try:
        async with create(**kwargs, extra_body=extra or None, extra_headers=_extra_headers(resolved) or None) as resp:
            headers = resp.headers
            request_id = headers.get("x-request-id") or headers.get("request-id") or headers.get("openai-request-id")
            if "text/event-stream" in headers.get("content-type", ""):
                stage = "streaming_response_body"
                events = iter_sse(resp.iter_bytes(), resolved.stream_idle_timeout_ms / 1000)
                try:
                    result = await on_sse(events)
                finally:
                    await events.aclose()
            else:
                stage = "response_body"
                with anyio.fail_after(resolved.body_timeout_s):
                    raw = await resp.read()
                try:
                    data = json.loads(raw)
                except ValueError:
                    raise invalid_response(context, "response body is not valid JSON", **diag) from None
                result = on_json(data)
    except openai.APIStatusError as exc:
        status = exc.status_code
        text = _body_text(exc)
        kind = classify_body(status, text) if classify_body else None
        raise status_error(
            context,
            status,
            text,
            classification=kind[:2] if kind else None,
            code=kind[2] if kind else None,
            tool_names=tool_names,
            scrubber=scrubber,
            retry_after=exc.response.headers.get("retry-after"),
            **diag,
        ) from None
    except ProviderTransportError as exc:
        raise fill_diagnostics(exc, stage, diag)  # noqa: B904 - the same exception, re-raised
    except Exception as exc:  # noqa: BLE001 - SDK/HTTP failures are classified by type and message chain
        raise classify_exception(exc, stage=stage, context=context, **diag) from None
    return dataclasses.replace(result, provider_request_id=request_id)


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # noqa: BLE001 - an unread stream body: classify by status only
        return ""
