"""What every HTTP transport shares, SDK-free: identity, optional :class:`~holon_nb.providers.base.Provider`
members with their defaults (turn-loop spec §2.1), the secret scrubber for provider messages, tool-schema
lowering through :func:`holon_nb.providers._schema_lowering.lower_tool_schema` (turn-loop spec §3.5) with the strict preflight
(turn-loop spec §3.3 ⚑).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..render._scrubbing import Scrubber
from ._catalog import ResolvedProvider
from ._errors import ToolSchemaRejected
from ._wire import DeltaListener
from .base import ProviderToolSpec, ProviderTransportError, TurnRequest

__all__ = ["HTTPTransport", "lower_tools"]


def lower_tools(tools: tuple[ProviderToolSpec, ...], contract: str) -> list[tuple[ProviderToolSpec, dict[str, Any]]]:
    """Each tool with its schema lowered for ``contract`` (``relaxed``/``strict``), in order (turn-loop spec §3.2–3.3).

    Raises:
        ToolSchemaRejected: strict preflight — a lowered schema fails the strict validator; the message names
            the tool and the JSON path, and no request is sent (turn-loop spec §3.3 ⚑).
    """
    from ._schema_lowering import SchemaDefinitionError, ToolSchemaInvalid, lower_for_provider, lower_tool_schema

    out = []
    for spec in tools:
        try:
            if contract == "strict":
                lowered = lower_for_provider(spec.name, spec.input_schema, contract)
            else:
                lowered = lower_tool_schema(spec.input_schema, contract)
        except (ToolSchemaInvalid, SchemaDefinitionError) as exc:
            problems = list(getattr(exc, "errors", None) or [str(exc)])
            detail = "; ".join(problems[:5])
            raise ToolSchemaRejected(
                f"{contract} schema preflight failed for tool {spec.name}: {detail}",
                tool_name=spec.name,
                provider_message=detail,
                status=None,
                diagnostics={"stage": "preflight", "errors": problems},
            ) from None
        out.append((spec, lowered))
    return out


class HTTPTransport:
    """Base of the SDK transports.

    Args:
        resolved: The route's resolved configuration.
        environ: Environment whose secret-named values are scrubbed from provider messages (default
            ``os.environ``).
        delta_listener: Optional ``listener(kind, payload)`` fed while a stream arrives (turn-loop spec §1.11).

    Attributes:
        route_ref: Canonical ``provider@endpoint/model``.
        provider_name: The provider id.
        transport: The wire name (set by subclasses).
    """

    transport = ""

    def __init__(
        self,
        resolved: ResolvedProvider,
        *,
        environ: Mapping[str, str] | None = None,
        delta_listener: DeltaListener | None = None,
    ):
        self.resolved = resolved
        self.route_ref = resolved.route_ref
        self.provider_name = resolved.ref.provider
        self.model = resolved.ref.model
        self.scrubber = Scrubber(environ, extra=resolved.extra_secrets)
        self.delta_listener = delta_listener

    def prompt_capabilities(self) -> set[str]:
        """``{"full_request_only"}`` (holon_nb always sends full history), plus ``prompt_cache_key`` when sent."""
        caps = {"full_request_only"}
        if self.resolved.send_prompt_cache_key:
            caps.add("prompt_cache_key")
        return caps

    def supports_freeform_grammar_tools(self) -> bool:
        """False unless the transport sends custom (freeform) tools."""
        return False

    def resolved_image_input_support(self) -> bool | None:
        """Unknown (None): the model catalog decides."""
        return None

    def context_management_policy(self) -> None:
        """No provider-side context management (holon_nb v1)."""
        return None

    async def generate_image(self, req: Any) -> Any:
        """Not offered by the turn transports.

        Raises:
            ProviderTransportError: always, kind ``unsupported_transport``.
        """
        raise ProviderTransportError("unsupported_transport", f"{self.transport} does not generate images")

    def max_tokens(self, req: TurnRequest) -> int:
        """The request's output budget, else the provider default (tokens)."""
        return req.max_output_tokens or self.resolved.max_output_tokens

    async def aclose(self) -> None:
        """Close the SDK client (subclasses)."""
