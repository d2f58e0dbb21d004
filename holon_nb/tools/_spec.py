"""Tool declarations: :class:`ToolSpec` and the enums it uses.

A tool is one frozen declaration. Everything else — JSON schemas, the
inventory file, the ``%holon tools`` table, provider tool lists — is derived
from these declarations (design.md, "The tool surface").
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import BaseModel

    from ._context import ToolContext

__all__ = ["Family", "Stability", "Rendering", "Profile", "ToolSpec", "PROFILE_FAMILIES"]

_DESCRIPTIONS = Path(__file__).with_name("descriptions")


class Family(str, enum.Enum):
    """Capability family of a tool (contract: ``ToolCapabilityFamily``, snake_case wire labels)."""

    CORE_AGENT = "core_agent"
    LOCAL_ENVIRONMENT = "local_environment"
    AUTHORITY_EXPANDING = "authority_expanding"
    WEB = "web"
    AGENT_CREATION = "agent_creation"
    EXTERNAL_TRIGGER = "external_trigger"
    #: Not a contract family: the opt-in Notebook tools of issue 28 (off by default; never for private children).
    NOTEBOOK = "notebook"
    #: tools of configured MCP servers (``mcp__<server>__<tool>``, issue 29): public named agents only
    MCP = "mcp"
    #: tools of an MCP server configured with ``private_children: true``: offered to private children too
    MCP_SHARED = "mcp_shared"


class Stability(str, enum.Enum):
    """Inventory stability label; ``hidden`` tools are dispatchable but never advertised."""

    STABLE = "stable"
    EXPERIMENTAL = "experimental"
    DEPRECATED = "deprecated"
    HIDDEN = "hidden"


class Rendering(str, enum.Enum):
    """How a success result is shown to the model (commands spec §3.4)."""

    CANONICAL_JSON = "canonical_json_envelope"
    CUSTOM_TEXT = "custom_text_receipt"


class Profile(str, enum.Enum):
    """Agent profile preset (agents spec §1.2)."""

    PUBLIC_NAMED = "public_named"
    PRIVATE_CHILD = "private_child"


#: Families each profile may call (agents spec §1.2; contract "工具家族").
PROFILE_FAMILIES: dict[Profile, frozenset[Family]] = {
    Profile.PUBLIC_NAMED: frozenset(Family),
    Profile.PRIVATE_CHILD: frozenset(
        {Family.CORE_AGENT, Family.LOCAL_ENVIRONMENT, Family.WEB, Family.EXTERNAL_TRIGGER, Family.MCP_SHARED}
    ),
}

#: The parsed-argument type of one tool: its ``input_model``, which its handler receives.
ArgsT = TypeVar("ArgsT", bound="BaseModel")

#: The success result type of one tool: its ``output_model`` (named by its ``result_name``).
OutT = TypeVar("OutT", bound="BaseModel")

#: ``async (args, ctx) -> payload``, where ``args`` is an instance of the tool's input model and the payload
#: a dict (optionally with a top-level ``summary_text``) or an instance of the tool's output model.
Handler = Callable[[ArgsT, "ToolContext"], Awaitable[dict[str, Any] | OutT]]


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT, OutT]):
    """One model-facing (or hidden) tool.

    Generic in its input and output models: ``ToolSpec[ExecCommandInput, ExecCommandResult]`` ties
    ``input_model`` to the argument type of ``handler`` (and of ``normalize``), and ``output_model`` to
    what it returns. Collections of tools of different models are ``ToolSpec[Any, Any]``.

    Attributes:
        name: Public tool name, exactly as in the contract (``ExecCommand``).
        family: Capability family used by the profile gate.
        input_model: Strict pydantic model (``extra="forbid"``) for the arguments.
        handler: ``async (args, ctx) -> payload``: a dict, which may carry a top-level
            ``summary_text`` that the envelope lifts out, or an ``output_model`` instance. Raise
            :class:`~holon_nb.tools._errors.ToolFailure` for a typed error.
        result_name: Name of the success contract (``ExecCommandResult``).
        output_model: Strict pydantic model of the success ``result`` (class name ``result_name``;
            :mod:`holon_nb.tools.builtin.results`). Dispatch validates every success payload against it
            and puts its JSON form in the envelope (:func:`holon_nb.tools._dispatch.typed_payload`).
        stability: Inventory stability; ``HIDDEN`` is never advertised.
        rendering: Model rendering of a success result.
        render_receipt: For ``CUSTOM_TEXT`` tools, ``(envelope dict, ReceiptContext) -> str``
            (the context carries the execution id and the tool-output budget).
        description_name: Basename of the Markdown description in
            ``tools/descriptions/`` (defaults to ``name``; aliases share one).
        alias_of: For a hidden legacy alias, the canonical tool name.
        normalize: Optional ``(args, tool_name) -> args`` post-parse step
            (commands spec §2.4) raising ``ToolFailure`` on invalid input.
        parse_hint: Optional ``(raw args, parse_error) -> str | None`` giving a
            targeted ``recovery_hint`` for a parse failure (commands spec §5.4).
        prepare: Optional ``(raw args, call) -> raw args`` run by dispatch before
            JSON parsing and validation, for tools whose accepted input shape
            depends on the call (ApplyPatch surfaces, commands spec §10.1); may
            raise ``ToolFailure``.
        human: The body renderer of the human receipt (notebook ``text/plain``), ``result dict ->
            lines``, built with :mod:`holon_nb.render.human`; None means its generic renderer.
        asks_approval: The user is asked in the cell before a model's call runs, whatever the approval
            policy, unless the session trusts it (``notebook_approve_all``); the Notebook family's RunCode,
            EditNotebook and ExecuteCell (issue 28).
        start_early: ``(parsed args, ctx) -> handle or None``: a synchronous first step a direct call runs on
            the calling thread, before the call reaches the runtime's loop (:func:`~._dispatch.start_early`);
            the handler then takes the handle up through its context. ExecCommand starts its command
            there while the loop wakes (issue 27 item 7). It must start nothing the handler would not.
        writes_store: The handler writes the holon home's store before it first awaits (its first step
            is synchronous code that opens a transaction). The runtime then waits for the store's write
            lock before running it, without blocking other calls while another process holds the lock.
    """

    name: str
    family: Family
    input_model: type[ArgsT]
    handler: Handler[ArgsT, OutT]
    result_name: str
    output_model: type[OutT]
    stability: Stability = Stability.STABLE
    rendering: Rendering = Rendering.CANONICAL_JSON
    render_receipt: Callable[[dict[str, Any], Any], str] | None = None
    description_name: str | None = None
    alias_of: str | None = None
    normalize: Callable[[ArgsT, str], ArgsT] | None = None
    parse_hint: Callable[[Any, str], str | None] | None = None
    prepare: Callable[[Any, Any], Any] | None = None
    related_surfaces: tuple[str, ...] = field(default=())
    human: Callable[[dict[str, Any]], list[str]] | None = None
    writes_store: bool = False
    asks_approval: bool = False
    start_early: Callable[[ArgsT, Any], Any] | None = None

    @property
    def model_facing(self) -> bool:
        """True when the tool may be advertised to a model."""
        return self.stability is not Stability.HIDDEN

    @property
    def description(self) -> str:
        """The model-visible description text (Markdown file beside the code)."""
        path = _DESCRIPTIONS / f"{self.description_name or self.name}.md"
        return path.read_text(encoding="utf-8")
