"""``HolonNB``: every user option of the notebook layer as a help-bearing trait.

The object is added to ``shell.configurables`` so ``%config HolonNB`` lists
it and ``%config HolonNB.<option> = value`` changes it; a change takes effect
on the next call (style.md §2.12). The runtime never sees this object: it
gets a frozen :class:`~holon_nb.runtime.RuntimeSettings` built by
:meth:`HolonNB.to_settings`.

Example::

    %config HolonNB.raise_on_tool_error = True
    %config HolonNB.live_update_hz = 4
"""

from __future__ import annotations

import os
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, default, validate
from traitlets.config import Configurable

from ..providers._catalog import ProviderConfigError, check_provider_settings
from ..runtime import RuntimeSettings

__all__ = ["SETTING_TRAITS", "SETTINGS_INPUTS", "KERNEL_COLOUR_VARIABLES", "HolonNB"]

#: Variables ipykernel sets for the kernel's subprocesses that force colour even into pipes
#: (``ipykernel.zmqshell.ZMQInteractiveShell.init_environment``).
KERNEL_COLOUR_VARIABLES = ("FORCE_COLOR", "CLICOLOR_FORCE")

#: The web and external-trigger traits (workspace spec §9-§11, §14), mirrored like the others.
WEB_TRAITS = (
    "web_fetch_enabled",
    "web_fetch_max_chars",
    "web_fetch_max_response_bytes",
    "web_fetch_timeout_s",
    "web_fetch_max_redirects",
    "web_allowed_hosts",
    "web_denied_hosts",
    "web_search",
    "x_search",
    "callback_base_url",
    "callback_port",
)
_TUPLE_TRAITS = ("web_allowed_hosts", "web_denied_hosts", "notebook_tools_agents")

#: Traits mirrored one-to-one into :class:`RuntimeSettings` fields.
SETTING_TRAITS = (
    "default_tool_output_tokens",
    "max_tool_output_tokens",
    "max_task_log_bytes",
    "max_home_bytes",
    "artifact_max_age_days",
    "patch_outside_workspace",
    "approval",
    "approval_timeout_s",
    "notebook_tools",
    "notebook_tools_agents",
    "notebook_approve_all",
    "providers",
    "prompt_budget_tokens",
    "store_busy_timeout_s",
    "memory_index_interval_s",
    "shell_snapshot",
    "mcp_servers",
    "mcp_cassette",
    *WEB_TRAITS,
)
#: Every trait :meth:`HolonNB.to_settings` reads (a change is pushed to the runtime).
SETTINGS_INPUTS = (*SETTING_TRAITS, "command_colours", "cassette_mode")


def _settings_default(name: str) -> Any:
    """A traitlets ``@default`` for ``name`` that reads :class:`RuntimeSettings` (and so the environment)."""

    @default(name)
    def _get(self: Any) -> Any:
        value = getattr(RuntimeSettings(), name)
        return list(value) if isinstance(value, tuple) else value

    return _get


class HolonNB(Configurable):
    """Options of the holon_nb notebook layer (``%config HolonNB`` lists them).

    Token defaults follow the environment (``HOLON_DEFAULT_TOOL_OUTPUT_TOKENS``,
    ``HOLON_MAX_TOOL_OUTPUT_TOKENS``) when it sets them.
    """

    raise_on_tool_error = Bool(
        False,
        help="Raise holon_nb.tools._errors.ToolCallError after displaying a tool error receipt. "
        "False: an error is only a receipt (each tool magic also takes --raise).",
    ).tag(config=True)

    default_tool_output_tokens = Int(
        help="ExecCommand output budget in tokens (about 4 characters each) when a call gives no max_output_tokens.",
    ).tag(config=True)

    max_tool_output_tokens = Int(
        help="Upper cap, in tokens, of any command output budget (a larger max_output_tokens is clamped).",
    ).tag(config=True)

    max_task_log_bytes = Int(
        256 * 1024 * 1024,
        help="Cap of each background task's log and output spool, in bytes (default 256 MiB); "
        "past it the file stops growing and receipts say how many bytes were not kept.",
    ).tag(config=True)

    max_home_bytes = Int(
        help="Size cap of the holon home in bytes (default 1 GiB, or $HOLON_NB_MAX_HOME_BYTES; 0: no cap). "
        "Past it the oldest command artifacts and ended tasks' logs are pruned (never a live task's log "
        "or a file a work item names); %holon prune does it on demand and says what it removed.",
    ).tag(config=True)

    artifact_max_age_days = Float(
        help="Command artifacts and ended tasks' logs older than this many days are pruned (default 14, or "
        "$HOLON_NB_ARTIFACT_MAX_AGE_DAYS; 0: no age limit).",
    ).tag(config=True)

    patch_outside_workspace = Bool(
        False,
        help="Let ApplyPatch write outside the bound workspace roots and agent home (D3). Off by default.",
    ).tag(config=True)

    approval = Enum(
        ("never", "on_request", "always"),
        "never",
        help="Ask before a model's tool call runs: never (default); on_request (authority-expanding, "
        "agent-creation and web tools, and ExecCommand outside the active workspace); always (every call). "
        "The question appears in the turn's live view: Approve once, Approve for this session, Deny.",
    ).tag(config=True)

    approval_timeout_s = Float(
        120.0,
        help="Seconds an approval question waits for an answer before the call is denied (approval_denied); "
        "0 or less waits for ever. A headless run cannot click, so its questions end this way.",
    ).tag(config=True)

    notebook_tools = Bool(
        False,
        help="Offer agents the Notebook tools (beyond the contract): ListVariables, InspectVariable, KernelHistory, "
        "RunCode, ReadNotebook, EditNotebook, ExecuteCell. Off by default; private child agents never get them. "
        "RunCode, EditNotebook and ExecuteCell ask in the cell before each call unless notebook_approve_all.",
    ).tag(config=True)

    notebook_tools_agents = List(
        Unicode(),
        help="Agent ids that get the Notebook tools even while notebook_tools is off (a per-agent opt-in).",
    ).tag(config=True)

    notebook_approve_all = Bool(
        False,
        help="Trust this session: the Notebook tools' RunCode, EditNotebook and ExecuteCell run without asking "
        "(%%agent --approve-all sets it). Off: each call of a model is asked in the turn's view, and a "
        "headless run, which cannot click, has them denied after approval_timeout_s.",
    ).tag(config=True)

    store_busy_timeout_s = Float(
        30.0,
        help="Seconds a write waits in total for the holon home's database while another kernel or process holds "
        "its write lock (retried with backoff). Past it a tool call answers runtime_db_busy (retryable) and "
        "loading the extension fails with RuntimeStartupError; background writes retry until they succeed.",
    ).tag(config=True)

    memory_index_interval_s = Float(
        1.0,
        help="Seconds between passes of the background memory indexer (it writes in small transactions of a few ms); "
        "0 turns it off, and each MemorySearch then catches up for at most 0.5 s before answering.",
    ).tag(config=True)

    model = Unicode(
        "",
        help="Model ref (provider@endpoint/model) of %%agent turns; empty means $HOLON_MODEL.",
    ).tag(config=True)

    command_colours = Bool(
        False,
        help="Let commands colour their output. ipykernel sets FORCE_COLOR=1 and CLICOLOR_FORCE=1 for everything "
        "the kernel starts, so tools like pytest colour even piped output; by default holon_nb removes those "
        "two from the environment of %exec and ExecCommand. Set True to keep them: the colours then show in "
        "the HTML receipt card only; what a model reads and a notebook saves as text never has escape codes.",
    ).tag(config=True)

    shell_snapshot = Bool(
        help="Run login-shell commands (%exec, ExecCommand with login true, the default) through a snapshot of the "
        "login profile: the profile runs once (in the background when the extension loads), its exported "
        "variables, functions, aliases and options are recorded under the holon home, and each command then "
        "runs as a non-login shell that sources them (milliseconds instead of the profile's cost). The "
        "environment is frozen at capture until one of the shell's startup files changes. False runs every "
        "login command through the full login shell. Default: $HOLON_SHELL_SNAPSHOT, else True.",
    ).tag(config=True)

    prompt_budget_tokens = Int(
        help="Most estimated tokens ((characters + 3) // 4) of one model request; 0 means no limit. Over it, "
        "older turns are left out, then older rounds of a long turn go to the model as a short recap "
        "(the newest two rounds stay exact). Default: $HOLON_PROMPT_BUDGET_TOKENS, else 0.",
    ).tag(config=True)

    providers = Dict(
        help='Model providers by id, for %%agent turns and %models: {"<id>": {"transport": '
        '"openai_chat_completions", "base_url": "http://127.0.0.1:8000/v1", "auth": {"source": '
        '"env", "env": "MY_KEY"}}}. A built-in id (openai, ollama, vllm, …) takes just the settings '
        "to change; a new id needs transport and base_url. Keys never go here: auth.env names the "
        "environment variable holding one. Entries replace those of $HOLON_NB_PROVIDERS.",
    ).tag(config=True)

    cassette = Unicode(
        "",
        help="Record/replay cassette of %%agent turns (a .jsonl path, relative to the notebook's directory); "
        "empty means none. %%agent --cassette overrides it.",
    ).tag(config=True)

    cassette_mode = Enum(
        ("auto", "record", "replay", "verify", "lenient", "off"),
        help="How %%agent uses its cassette: auto (replay when the file exists, else record), record, replay "
        "(offline; drift is an error), verify, lenient, off (no cassette: call the provider). "
        "Default: $HOLON_NB_CASSETTE_MODE (holon-nb test sets replay), else auto.",
    ).tag(config=True)

    @default("cassette_mode")
    def _default_cassette_mode(self) -> str:
        mode = os.environ.get("HOLON_NB_CASSETTE_MODE", "").strip().lower()
        return mode if mode in ("auto", "record", "replay", "verify", "lenient", "off") else "auto"

    mcp_servers = Dict(
        help="MCP servers whose tools join the registry as mcp__<server>__<tool>, in the mcpServers shape of Claude "
        'Code and Codex: {"<name>": {"command": "python", "args": ["server.py"], "env": {}}} (stdio) or '
        '{"<name>": {"url": "http://127.0.0.1:8000/mcp", "headers": {}}} (streamable HTTP); optional '
        "startup_timeout_s, tool_timeout_s, max_result_chars, enabled. Entries of .mcp.json, "
        "[tool.holon_nb.mcpServers] in pyproject.toml and $HOLON_NB_MCP_CONFIG come first. Servers start on first "
        "use; %holon mcp lists them, their state and tools.",
    ).tag(config=True)

    mcp_cassette = Unicode(
        "",
        help="Record/replay file of MCP tool calls (.jsonl, relative to the notebook's directory); empty means none. "
        "Its mode is HolonNB.cassette_mode: under holon-nb test (replay) no MCP server is started.",
    ).tag(config=True)

    @validate("mcp_servers")
    def _check_mcp_servers(self, proposal: Any) -> dict[str, Any]:
        from ..runtime.mcp import McpConfigError, parse_server

        for name, entry in proposal["value"].items():
            try:
                parse_server(name, entry)
            except McpConfigError as exc:
                raise TraitError(f"HolonNB.mcp_servers: {exc}") from None
        return proposal["value"]

    live_update_hz = Float(
        10.0,
        help="Most updates per second (Hz) sent to live views (task views, %workitems boards, %%agent "
        "views: one pump draws them all); output chunks and events arriving faster are coalesced. "
        "Clamped to 0.5..60.",
    ).tag(config=True)

    web_fetch_enabled = Bool(help="Let WebFetch fetch pages (default True; $HOLON_NB_WEB_FETCH_ENABLED).").tag(
        config=True
    )

    web_fetch_max_chars = Int(
        help="Most characters of text WebFetch returns (default 20000); a call's max_chars is clamped to it.",
    ).tag(config=True)

    web_fetch_max_response_bytes = Int(
        help="Most decoded body bytes WebFetch reads per page (default 750000); the rest is discarded.",
    ).tag(config=True)

    web_fetch_timeout_s = Float(
        help="Seconds one WebFetch request (one redirect hop, body included) may take; at least 1 (default 20).",
    ).tag(config=True)

    web_fetch_max_redirects = Int(help="Most redirects WebFetch follows (default 5).").tag(config=True)

    web_allowed_hosts = List(
        Unicode(),
        help="Hosts WebFetch may fetch, as host, host:port, [ipv6] or [ipv6]:port (exact, case-insensitive). "
        "Empty: any public host. A listed host may resolve to a private or loopback address (e.g. "
        "'127.0.0.1:8000' for a local server); cloud metadata addresses are refused always. "
        "Default: $HOLON_NB_WEB_ALLOWED_HOSTS (comma-separated).",
    ).tag(config=True)

    web_denied_hosts = List(
        Unicode(),
        help="Hosts WebFetch never fetches (same rule syntax; wins over web_allowed_hosts).",
    ).tag(config=True)

    web_search = Dict(
        help='WebSearch providers and routing: {"mode": "fallback"|"single"|"aggregate", '
        '"providers": [ids in order], "max_results": 5, "provider_configs": {"<id>": {"kind": '
        '"searxng"|"brave"|"tavily"|"exa"|"command", "base_url": …, "api_key_env": '
        '"VAR", "command": [argv with {{query}}]}}}. Keys never go here: api_key_env names the variable. '
        "Empty: the key-free DuckDuckGo Lite scrape.",
    ).tag(config=True)

    x_search = Dict(
        help='XSearch: {"enabled": true, "base_url": "https://api.x.ai/v1", "api_key_env": "XAI_API_KEY", '
        '"model": "grok-4.3", "timeout_seconds": 60}. Available (and advertised) only when the key '
        "variable is set.",
    ).tag(config=True)

    callback_base_url = Unicode(
        help="Base URL of external trigger URLs (CreateExternalTrigger) when the kernel is reached through a "
        "proxy, e.g. https://hub.example.org/user/me/proxy/8765 with jupyter-server-proxy. Empty: the local "
        "callback server's http://127.0.0.1:<port>.",
    ).tag(config=True)

    callback_port = Int(
        help="Port of the local callback server (127.0.0.1) that serves external trigger URLs; 0 picks a free "
        "one. Started only when the first trigger exists.",
    ).tag(config=True)

    # the web defaults follow the environment ($HOLON_NB_WEB_*, $HOLON_NB_CALLBACK_*), as RuntimeSettings reads it
    _d1 = _settings_default("web_fetch_enabled")
    _d2 = _settings_default("web_fetch_max_chars")
    _d3 = _settings_default("web_fetch_max_response_bytes")
    _d4 = _settings_default("web_fetch_timeout_s")
    _d5 = _settings_default("web_fetch_max_redirects")
    _d6 = _settings_default("web_allowed_hosts")
    _d7 = _settings_default("web_denied_hosts")
    _d8 = _settings_default("callback_base_url")
    _d9 = _settings_default("callback_port")

    @validate("web_fetch_max_chars", "web_fetch_max_response_bytes", "web_fetch_max_redirects", "callback_port")
    def _non_negative_web(self, proposal: Any) -> int:
        value = proposal["value"]
        if isinstance(value, bool) or value < 0:
            raise TraitError(f"HolonNB.{proposal['trait'].name} must be a number of 0 or more, got {value!r}")
        return value

    @validate("web_allowed_hosts", "web_denied_hosts")
    def _check_host_rules(self, proposal: Any) -> list[str]:
        from ..runtime.web._policy import parse_host_rules

        try:
            parse_host_rules(proposal["value"])
        except ValueError as exc:
            raise TraitError(f"HolonNB.{proposal['trait'].name}: {exc}") from None
        return proposal["value"]

    @default("default_tool_output_tokens")
    def _default_tokens(self) -> int:
        return RuntimeSettings().default_tool_output_tokens

    @default("max_tool_output_tokens")
    def _default_max_tokens(self) -> int:
        return RuntimeSettings().max_tool_output_tokens

    @default("shell_snapshot")
    def _default_shell_snapshot(self) -> bool:
        return RuntimeSettings().shell_snapshot

    @default("prompt_budget_tokens")
    def _default_budget(self) -> int:
        return RuntimeSettings().prompt_budget_tokens

    @default("max_home_bytes")
    def _default_home_cap(self) -> int:
        return RuntimeSettings().max_home_bytes

    @default("artifact_max_age_days")
    def _default_artifact_age(self) -> float:
        return RuntimeSettings().artifact_max_age_days

    @validate("max_home_bytes", "artifact_max_age_days")
    def _zero_or_more(self, proposal: Any) -> Any:
        if isinstance(proposal["value"], bool) or proposal["value"] < 0:
            raise TraitError(f"HolonNB.{proposal['trait'].name} must be 0 (no limit) or more, got {proposal['value']}")
        return proposal["value"]

    @validate("prompt_budget_tokens")
    def _non_negative(self, proposal: Any) -> int:
        if isinstance(proposal["value"], bool):
            raise TraitError("HolonNB.prompt_budget_tokens is a number of tokens (0: no limit), not True/False")
        if proposal["value"] < 0:
            raise TraitError(f"HolonNB.prompt_budget_tokens must be 0 (no limit) or more, got {proposal['value']}")
        return proposal["value"]

    @validate("default_tool_output_tokens", "max_tool_output_tokens", "max_task_log_bytes")
    def _positive(self, proposal: Any) -> int:
        value = proposal["value"]
        if value < 1:
            # TraitError (not ValueError): traitlets then keeps the old value instead of the rejected one
            raise TraitError(f"HolonNB.{proposal['trait'].name} must be at least 1, got {value}")
        return value

    @validate("providers")
    def _check_providers(self, proposal: Any) -> dict[str, Any]:
        value = proposal["value"]
        for provider_id, settings in value.items():
            try:
                check_provider_settings(provider_id, settings)
            except ProviderConfigError as exc:
                raise TraitError(f"HolonNB.providers: {exc}") from None
        return value

    @validate("live_update_hz")
    def _clamp_hz(self, proposal: Any) -> float:
        return min(60.0, max(0.5, float(proposal["value"])))

    @property
    def update_period_s(self) -> float:
        """Shortest interval between two live-view updates, in seconds."""
        return 1.0 / self.live_update_hz

    def to_settings(self, base: RuntimeSettings | None = None) -> RuntimeSettings:
        """Return ``base`` (default: fresh settings) with the mirrored traits applied.

        Args:
            base: The settings to start from; fields not mirrored are kept.

        Returns:
            A frozen :class:`RuntimeSettings`.
        """
        base = base if base is not None else RuntimeSettings()
        unset = () if self.command_colours else KERNEL_COLOUR_VARIABLES
        values = {name: getattr(self, name) for name in SETTING_TRAITS}
        for name in _TUPLE_TRAITS:
            values[name] = tuple(values[name])
        if "cassette_mode" in self._trait_values:  # set or read already; its default is read late (the environment)
            values["mcp_cassette_mode"] = self.cassette_mode
        return base.replace(command_env_unset=unset, **values)
