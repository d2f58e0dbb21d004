"""XSearch (workspace spec §11): xAI's hosted ``x_search`` in an isolated Responses request.

The request goes through the official ``openai`` SDK (``AsyncOpenAI(...).responses``) to the
``xai`` provider route of the model catalog (``HolonNB.providers`` may move its ``base_url``;
the key comes from ``$XAI_API_KEY`` or the variable the provider's ``auth.env`` names). The
raw JSON is read (``with_raw_response``) so hosted item types the SDK does not model are counted,
not lost. ``HolonNB.x_search`` = ``{"enabled", "model", "timeout_seconds"}``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure

if TYPE_CHECKING:
    from ._ports import WebSettings

__all__ = ["DEFAULT_MODEL", "XSearcher"]

DEFAULT_MODEL = "grok-4.3"


def _failed(message: str, details: dict[str, Any] | None = None, retryable: bool = False) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="tool_execution_failed",
            message=message,
            details=details,
            recovery_hint="Retry later, or use WebSearch for the general web.",
            retryable=retryable,
        )
    )


class XSearcher:
    """Resolves the XSearch configuration and runs searches.

    Args:
        settings: ``() -> RuntimeSettings`` (``x_search``, ``providers``).
    """

    def __init__(self, settings: Callable[[], WebSettings]):
        self._settings = settings

    def resolve(self) -> tuple[Any | None, str]:
        """``(resolved provider, model)`` when XSearch is available, else ``(None, why not)`` (rule 4)."""
        from ...providers._catalog import ProviderConfigError, resolve_provider
        from ...providers._refs import ModelRef

        settings = self._settings()
        cfg = dict(settings.x_search or {})
        if cfg.get("enabled") is False:
            return None, "x_search.enabled is false"
        model = str(cfg.get("model") or DEFAULT_MODEL)
        try:
            resolved = resolve_provider(
                ModelRef("xai", "default", model),
                os.environ,
                {"providers": dict(settings.providers or {})},
            )
        except ProviderConfigError as exc:
            return None, f"the xai provider does not resolve: {exc}"
        if resolved.transport != "openai_responses":
            return None, f"the xai provider's transport is {resolved.transport}, not openai_responses"
        if not resolved.api_key:
            return None, f"no xAI credential: set ${resolved.key_env or 'XAI_API_KEY'}"
        return resolved, model

    def available(self) -> bool:
        """True when an XSearch configuration resolves (the tool is then advertised)."""
        return self.resolve()[0] is not None

    def timeout_s(self) -> float:
        """``x_search.timeout_seconds`` (default 60; must be > 0)."""
        value = (self._settings().x_search or {}).get("timeout_seconds", 60)
        try:
            value = float(value)
        except (TypeError, ValueError):
            value = 60.0
        return value if value > 0 else 60.0

    async def search(
        self, query: str, allowed: list[str], excluded: list[str], from_date: str | None, to_date: str | None
    ) -> dict[str, Any]:
        """Run one isolated X search and return the ``XSearchResult`` payload (rules 5-6).

        Raises:
            ToolFailure: ``x_search_unavailable`` without a configuration; ``tool_execution_failed`` for a
                non-2xx answer, a transport failure or empty text.
        """
        resolved, model = self.resolve()
        if resolved is None:
            raise ToolFailure(
                ToolError(
                    kind="x_search_unavailable",
                    message=f"XSearch is not available: {model}",
                    details={"reason": model},
                    recovery_hint='Set XAI_API_KEY (and optionally %config HolonNB.x_search = {"model": …}); '
                    "use WebSearch meanwhile.",
                )
            )
        tool: dict[str, Any] = {"type": "x_search"}
        if allowed:
            tool["allowed_x_handles"] = allowed
        if excluded:
            tool["excluded_x_handles"] = excluded
        if from_date:
            tool["from_date"] = from_date
        if to_date:
            tool["to_date"] = to_date
        started = time.monotonic()
        raw = await self._post(resolved, model, query, tool)
        if raw.status_code == 401:  # rule 5: one retry after refreshing the credential
            refreshed, _ = self.resolve()
            if refreshed is not None:
                raw = await self._post(refreshed, model, query, tool)
        latency_ms = int((time.monotonic() - started) * 1000)
        if not 200 <= raw.status_code < 300:
            raise _failed(
                f"xAI answered HTTP {raw.status_code}",
                {"status": raw.status_code},
                retryable=raw.status_code in (429, 500, 502, 503, 504),
            )
        try:
            data = raw.json()
        except ValueError:
            raise _failed("xAI answered something that is not JSON") from None
        return self._result(data, model, latency_ms, raw.headers.get("x-request-id"))

    async def _post(self, resolved: Any, model: str, query: str, tool: dict[str, Any]) -> Any:
        import openai

        client = openai.AsyncOpenAI(
            api_key=resolved.api_key, base_url=resolved.base_url, max_retries=0, timeout=self.timeout_s()
        )
        try:
            # xAI's x_search tool is not one of the OpenAI SDK's ToolParam TypedDicts
            response = await client.responses.with_raw_response.create(  # type: ignore[call-overload]
                model=model, input=query, tools=[tool], tool_choice="auto", store=False
            )
            return response.http_response
        except openai.APIStatusError as exc:
            return exc.response
        except openai.APIError as exc:
            raise _failed(f"xAI could not be reached: {type(exc).__name__}", retryable=True) from None
        finally:
            await client.close()

    @staticmethod
    def _result(data: Any, model: str, latency_ms: int, request_id: str | None) -> dict[str, Any]:
        texts: list[str] = []
        citations: list[dict[str, Any]] = []
        seen: set[str] = set()
        hosted: dict[str, int] = {}
        for item in (data.get("output") if isinstance(data, dict) else None) or ():
            if not isinstance(item, dict):
                continue
            if item.get("type") != "message":
                kind = str(item.get("type"))
                hosted[kind] = hosted.get(kind, 0) + 1
                continue
            for part in item.get("content") or ():
                if not isinstance(part, dict) or part.get("type") != "output_text":
                    continue
                texts.append(str(part.get("text") or ""))
                for ann in part.get("annotations") or ():
                    if (
                        isinstance(ann, dict)
                        and ann.get("type") == "url_citation"
                        and ann.get("url")
                        and ann["url"] not in seen
                    ):
                        seen.add(ann["url"])
                        citations.append(
                            {k: ann[k] for k in ("url", "title", "start_index", "end_index") if ann.get(k) is not None}
                        )
        text = "".join(texts).strip()
        if not text:
            raise _failed("xAI returned no text for this X search", {"hosted_item_types": hosted})
        diagnostics: dict[str, Any] = {"latency_ms": latency_ms, "hosted_item_types": hosted}
        if request_id:
            diagnostics["provider_request_id"] = request_id
        n = len(citations)
        return {
            "text": text,
            "citations": citations,
            "provider": "xai",
            "backend": "x_search",
            "model": str(data.get("model") or model),
            "diagnostics": diagnostics,
            "summary_text": f"xAI X search returned {n} citation(s)",
        }
