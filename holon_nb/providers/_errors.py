"""Provider failure classification (turn-loop spec §2.4, §3.6), SDK-independent.

Transports catch their SDK's exceptions and call the builders here, so every failure reaching the lineage
wrapper is a :class:`~holon_nb.providers.base.ProviderTransportError` with a ``kind`` and a ``disposition``::

    ProviderTransportError            (base.py) classified failure: kind, disposition, status, code, diagnostics
    └── ToolSchemaRejected            a 400/422 whose provider message names an advertised tool (turn-loop spec §3.6 ⚑)

Secret rule: displayed messages never include the response body (``<context> with status 400 Bad Request``);
the provider's ``error.message``, scrubbed of secret values, goes to ``diagnostics["provider_message"]`` only.
Diagnostic URLs lose credentials, query and fragment (:func:`sanitize_url`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any, TypedDict
from urllib.parse import urlsplit, urlunsplit

from ..render._scrubbing import Scrubber
from .base import ProviderTransportError, TokenUsage

__all__ = [
    "RequestSite",
    "fill_diagnostics",
    "ToolSchemaRejected",
    "sanitize_url",
    "classify_status",
    "classify_chat_error_body",
    "classify_responses_failure_code",
    "status_error",
    "invalid_response",
    "empty_response",
    "transport_failure",
    "classify_exception",
    "find_rejected_tool",
    "error_fields",
    "TYPED_CODES",
    "format_failure",
]

#: Codes kept on the error because the loop acts on them (turn-loop spec §2.4).
TYPED_CODES = frozenset({"context_length_exceeded", "non_persisted_item_id"})

_CHAT_CODES = {
    "rate_limit_exceeded": "rate_limited",
    "rate_limit_exceeded_error": "rate_limited",
    "insufficient_quota": "auth_error",
    "quota_exceeded": "auth_error",
    "invalid_api_key": "auth_error",
    "invalid_authentication": "auth_error",
    "context_length_exceeded": "contract_error",
    "max_tokens": "contract_error",
    "invalid_request_error": "contract_error",
    "invalid_request": "contract_error",
    "server_error": "server_error",
    "service_unavailable": "server_error",
}
_CHAT_TYPES = {
    "rate_limit_error": "rate_limited",
    "invalid_request_error": "contract_error",
    "authentication_error": "auth_error",
    "server_error": "server_error",
}
_RESPONSES_CODES = {
    "rate_limit_exceeded": "rate_limited",
    "server_error": "server_error",
    "service_unavailable": "server_error",
    "server_is_overloaded": "server_error",
    "slow_down": "server_error",
    "insufficient_quota": "auth_error",
}
_BODY_CUT = (
    "unexpected eof",
    "end of file",
    "connection reset",
    "connection closed",
    "connection aborted",
    "broken pipe",
    "incomplete",
    "error reading a body",
    "chunk size",
    "peer closed",
    "request or response body error",
    "close_notify",
    "server disconnected",
)


class RequestSite(TypedDict):
    """Which request failed: the ``provider``, ``model_ref`` and ``url`` keywords that the error builders
    below take, which a transport keeps once and passes as ``**site``."""

    provider: str
    model_ref: str
    url: str | None


class ToolSchemaRejected(ProviderTransportError):
    """A provider rejected the request's tool schemas and named the tool (``contract_error``/``fail_fast``, turn-loop spec §3.6).

    Attributes:
        tool_name: The advertised tool the provider message names.
        provider_message: The provider's ``error.message``, secrets scrubbed.
    """

    def __init__(
        self,
        message: str,
        *,
        tool_name: str,
        provider_message: str,
        status: int | None,
        code: str | None = None,
        diagnostics: dict[str, Any] | None = None,
    ):
        super().__init__(
            "contract_error",
            message,
            disposition="fail_fast",
            status=status,
            code=code,
            diagnostics=diagnostics,
            tool_name=tool_name,
        )
        self.provider_message = provider_message


def sanitize_url(url: str | None) -> str | None:
    """Drop userinfo, query and fragment from a URL (diagnostics never carry credentials, turn-loop spec §2.3).

    ``https://user:secret@example.com/v1/responses?api_key=token#frag`` → ``https://example.com/v1/responses``.
    """
    if url is None:
        return None
    text = str(url)
    if "://" not in text:
        text = text.split("?", 1)[0].split("#", 1)[0]
        return text.rsplit("@", 1)[-1] if "@" in text.split("/", 1)[0] else text
    parts = urlsplit(text)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def classify_status(status: int) -> tuple[str, str]:
    """``(kind, disposition)`` of an HTTP status (turn-loop spec §2.4 table)."""
    if status == 429:
        return "rate_limited", "retryable"
    if status in (401, 403):
        return "auth_error", "fail_fast"
    if 500 <= status <= 599:
        return "server_error", "retryable"
    if 400 <= status <= 499:
        return "contract_error", "fail_fast"
    return "unknown", "fail_fast"


def _disposition(kind: str) -> str:
    return (
        "retryable"
        if kind in {"rate_limited", "server_error", "timeout", "connection", "empty_response"}
        else "fail_fast"
    )


def error_fields(body: Any) -> dict[str, Any]:
    """``{message, code, type, param}`` of a JSON error body ``{"error": {...}}`` (also a bare ``{code, message}``)."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return {}
    if not isinstance(body, Mapping):
        return {}
    err = body.get("error", body)
    if isinstance(err, str):
        return {"message": err}
    if not isinstance(err, Mapping):
        return {}
    out = {k: err.get(k) for k in ("message", "code", "type", "param")}
    if out["code"] is not None and not isinstance(out["code"], str):
        out["code"] = str(out["code"])
    return out


def classify_chat_error_body(status: int, body: Any) -> tuple[str, str, str | None]:
    """Chat Completions: ``(kind, disposition, code)`` by body ``code``, then ``type``, then the status (turn-loop spec §2.4 ⚑)."""
    fields = error_fields(body)
    code, etype = fields.get("code"), fields.get("type")
    kind = _CHAT_CODES.get(code or "") or _CHAT_TYPES.get(etype or "")
    if kind is None:
        kind, disposition = classify_status(status)
    else:
        disposition = _disposition(kind)
    return kind, disposition, code


def classify_responses_failure_code(code: str | None) -> tuple[str, str]:
    """Responses SSE failure code → ``(kind, disposition)``; unknown codes are ``contract_error`` (turn-loop spec §2.4)."""
    kind = _RESPONSES_CODES.get(code or "", "contract_error")
    return kind, _disposition(kind)


def _diag(
    stage: str, provider: str, model_ref: str, url: str | None, status: int | None, source_chain: Iterable[str] = ()
) -> dict[str, Any]:
    return {
        "stage": stage,
        "provider": provider,
        "model_ref": model_ref,
        "url": sanitize_url(url),
        "status": status,
        "source_chain": list(source_chain),
    }


def find_rejected_tool(message: str, tool_names: Iterable[str]) -> str | None:
    """The advertised tool a provider message names: an exact token, else a ``tools[<i>]`` index (turn-loop spec §3.6).

    Delegates to :func:`holon_nb.providers._schema_lowering.rejected_tool_name`.
    """
    from ._schema_lowering import rejected_tool_name

    return rejected_tool_name(message, list(tool_names))


def status_error(
    context: str,
    status: int,
    body: bytes | str | None,
    *,
    provider: str,
    model_ref: str,
    url: str | None,
    classification: tuple[str, str] | None = None,
    code: str | None = None,
    tool_names: Iterable[str] = (),
    scrubber: Scrubber | None = None,
    retry_after: str | None = None,
) -> ProviderTransportError:
    """A non-success HTTP status as a classified error; the body never enters the message (turn-loop spec §2.4, §3.6).

    Args:
        context: What was being done (``openai responses request``).
        status: The HTTP status.
        body: The response body (only its scrubbed ``error.message`` is kept, in diagnostics).
        classification: ``(kind, disposition)`` overriding the status table (Chat body codes).
        code: A body code; kept when it is one of :data:`TYPED_CODES`.
        tool_names: Tools the request advertised; a 400/422 naming one raises :class:`ToolSchemaRejected`.
        scrubber: Secret scrubber for the provider message (default: secret-named environment variables).
        retry_after: The ``Retry-After`` header, kept in diagnostics (``retry_after_ms``) when numeric.
    """
    kind, disposition = classification or classify_status(status)
    fields = error_fields(body) if body is not None else {}
    code = code if code is not None else fields.get("code")
    phrase = _reason(status)
    message = f"{context} with status {status}{' ' + phrase if phrase else ''}"
    diagnostics = _diag("response_status", provider, model_ref, url, status)
    provider_message = fields.get("message")
    if isinstance(provider_message, str) and provider_message:
        provider_message = (scrubber or Scrubber()).text(provider_message)[:2000]
        diagnostics["provider_message"] = provider_message
    else:
        provider_message = None
    if retry_after and retry_after.strip().isdigit():
        diagnostics["retry_after_ms"] = int(retry_after.strip()) * 1000
    kept = code if code in TYPED_CODES else None
    if kind == "contract_error" and status in (400, 422) and provider_message:
        tool = find_rejected_tool(provider_message, tool_names)
        if tool is not None:
            return ToolSchemaRejected(
                f"{message} (provider rejected the schema of tool {tool})",
                tool_name=tool,
                provider_message=provider_message,
                status=status,
                code=kept,
                diagnostics=diagnostics,
            )
    return ProviderTransportError(
        kind, message, disposition=disposition, status=status, code=kept, diagnostics=diagnostics
    )


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def invalid_response(
    context: str,
    detail: str,
    *,
    provider: str = "",
    model_ref: str = "",
    url: str | None = None,
    token_usage: TokenUsage | None = None,
) -> ProviderTransportError:
    """``invalid_response``/``fail_fast``: malformed JSON, missing call id/name, SSE protocol violation (turn-loop spec §2.4)."""
    return ProviderTransportError(
        "invalid_response",
        f"{context}: {detail}",
        disposition="fail_fast",
        diagnostics=_diag("response_body", provider, model_ref, url, None),
        token_usage=token_usage,
    )


def empty_response(
    context: str, usage: TokenUsage, *, provider: str = "", model_ref: str = "", url: str | None = None
) -> ProviderTransportError:
    """``empty_response``/``retryable``: a completed response without output; its usage is kept (turn-loop spec §2.4)."""
    return ProviderTransportError(
        "empty_response",
        f"{context}: provider returned an empty response",
        disposition="retryable",
        token_usage=usage,
        diagnostics=_diag("response_body", provider, model_ref, url, None),
    )


def transport_failure(
    kind: str,
    context: str,
    detail: str,
    *,
    stage: str,
    provider: str,
    model_ref: str,
    url: str | None,
    source_chain: Iterable[str] = (),
    status: int | None = None,
    code: str | None = None,
) -> ProviderTransportError:
    """A failure of the given kind with diagnostics (timeouts, connection errors, stream error events)."""
    return ProviderTransportError(
        kind,
        f"{context}: {detail}",
        disposition=_disposition(kind),
        status=status,
        code=code if code in TYPED_CODES else None,
        diagnostics=_diag(stage, provider, model_ref, url, status, source_chain),
    )


def fill_diagnostics(exc: ProviderTransportError, stage: str, diag: RequestSite) -> ProviderTransportError:
    """Add the transport's stage and request diagnostics the error does not carry yet (URLs sanitized);
    returns ``exc`` (for ``raise``)."""
    site: dict[str, Any] = {"stage": stage, **diag, "url": sanitize_url(diag["url"])}
    for key, value in site.items():
        if not exc.diagnostics.get(key):
            exc.diagnostics[key] = value
    return exc


def _chain(exc: BaseException) -> list[str]:
    out: list[str] = []
    cur: BaseException | None = exc
    seen: set[int] = set()
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text = f"{type(cur).__name__}: {cur}".strip()
        out.append(text[:300])
        cur = cur.__cause__ or cur.__context__
    return out


def classify_exception(
    exc: BaseException, *, stage: str, context: str, provider: str, model_ref: str, url: str | None
) -> ProviderTransportError:
    """Classify a non-HTTP-status exception by its type names and message chain (turn-loop spec §2.4 rows 5–6, 11).

    Timeouts (any ``*Timeout*`` type or ``TimeoutError``) → ``timeout``; connect failures → ``connection``;
    a body read cut short (unexpected EOF, reset, incomplete message, chunk size…) → ``connection``;
    anything else → ``unknown``/``fail_fast``.
    """
    if isinstance(exc, ProviderTransportError):
        return exc
    chain = _chain(exc)
    names = " ".join(type(e).__name__ for e in _walk(exc)).lower()
    text = " ".join(chain).lower()
    if "timeout" in names or isinstance(exc, TimeoutError):
        kind = "timeout"
    elif "connect" in names or isinstance(exc, ConnectionError) or any(m in text for m in _BODY_CUT):
        kind = "connection"
    else:
        kind = "unknown"
    return transport_failure(
        kind,
        context,
        f"{type(exc).__name__}",
        stage=stage,
        provider=provider,
        model_ref=model_ref,
        url=url,
        source_chain=chain,
    )


def _walk(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def format_failure(model_ref: str, attempts: int, error: BaseException) -> str:
    """``<route>: retries_exhausted after N attempts (<kind>, status=<code>): <error>`` or
    ``<route>: fail_fast (<kind>, status=<code>): <error>`` (turn-loop spec §2.3; ``, status=`` omitted without a status)."""
    if isinstance(error, ProviderTransportError):
        kind, disposition, status = error.kind, error.disposition, error.status
    else:
        kind, disposition, status = "unknown", "fail_fast", None
    st = f", status={status}" if status is not None else ""
    if disposition == "retryable":
        return f"{model_ref}: retries_exhausted after {attempts} attempts ({kind}{st}): {error}"
    return f"{model_ref}: fail_fast ({kind}{st}): {error}"
