"""Runtime settings: a frozen value built from traits, the environment or the CLI.

The runtime never sees a traitlets object (style.md §2.12).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._clock import Clock

__all__ = ["RuntimeSettings", "resolve_home"]


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return default


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return default


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    return default if not value else value not in ("0", "false", "no", "off")


def _env_list(name: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in os.environ.get(name, "").split(",") if part.strip())


def resolve_home(home: str | os.PathLike[str] | None = None, workspace: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the holon home: explicit, else ``$HOLON_NB_HOME``, else ``<workspace or cwd>/.holon``.

    Returns:
        An absolute path (not created).
    """
    if home is not None:
        return Path(home).expanduser().resolve()
    env = os.environ.get("HOLON_NB_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return (Path(workspace) if workspace is not None else Path.cwd()).resolve() / ".holon"


#: Folder of the per-notebook homes inside ``.holon/`` (so a notebook called ``agents`` or ``spool`` cannot
#: land inside the shared home's own folders).
NOTEBOOK_HOMES = "notebooks"


def notebook_name(namespace: Mapping[str, Any] | None = None) -> str | None:
    """The path (or name) of the notebook a kernel runs, when its front end said so; else None.

    Jupyter Server and JupyterLab set ``JPY_SESSION_NAME`` in the kernel's environment (ipykernel also puts it
    in ``__session__``); VS Code sets ``__vsc_ipynb_file__`` in the user namespace ``namespace``.
    """
    ns = namespace or {}
    for value in (os.environ.get("JPY_SESSION_NAME"), ns.get("__session__"), ns.get("__vsc_ipynb_file__")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def kernel_home(
    namespace: Mapping[str, Any] | None = None, cwd: str | os.PathLike[str] | None = None
) -> tuple[Path, str]:
    """The holon home ``%load_ext holon_nb`` opens in a kernel, and why (issue 26 item 2).

    1. ``$HOLON_NB_HOME`` when it is set (an explicit home: ``holon-nb run`` gives each run a temporary one);
    2. else ``<cwd>/.holon/notebooks/<notebook stem>/`` when the kernel knows its notebook (:func:`notebook_name`):
       two notebooks of one folder never see each other's tasks, work items, messages or token counts;
    3. else ``<cwd>/.holon/`` (a console, a kernel started by hand).

    Args:
        namespace: The kernel's user namespace (may name the notebook); None: only the environment is read.
        cwd: The kernel's working directory; None: the current one.

    Returns:
        ``(absolute home path, source)`` with source ``"env"``, ``"notebook"`` or ``"folder"``.
    """
    if os.environ.get("HOLON_NB_HOME"):
        return resolve_home(), "env"
    base = Path(cwd if cwd is not None else os.getcwd()).resolve() / ".holon"
    name = notebook_name(namespace)
    stem = Path(name.replace("\\", "/")).stem.strip() if name else ""
    if stem and stem not in (".", "..") and not stem.startswith("."):
        return base / NOTEBOOK_HOMES / stem, "notebook"
    return base, "folder"


@dataclass(frozen=True)
class RuntimeSettings:
    """Options of one runtime. Units are in the names or stated.

    Attributes:
        default_tool_output_tokens: ExecCommand output budget when the call gives none
            (tokens; env ``HOLON_DEFAULT_TOOL_OUTPUT_TOKENS``; commands spec §4.3).
        max_tool_output_tokens: Upper cap of that budget (tokens; env ``HOLON_MAX_TOOL_OUTPUT_TOKENS``).
        tool_output_budget_tokens: Provider-projection budget for one receipt (estimated tokens, commands spec §3.4).
        max_task_log_bytes: Cap of each task log and output spool (bytes, D13).
        max_home_bytes: Size cap of the whole holon home (bytes; env ``HOLON_NB_MAX_HOME_BYTES``; default
            1 GiB; 0: no cap). Past it, the oldest command artifacts and ended tasks' logs are pruned
            (:mod:`holon_nb.runtime.housekeeping._prune`; never a live task's log or a file a work item names).
        artifact_max_age_days: Command artifacts and ended tasks' logs older than this are pruned (days; env
            ``HOLON_NB_ARTIFACT_MAX_AGE_DAYS``; default 14; 0: no age limit).
        patch_outside_workspace: Allow ApplyPatch outside the bound roots (D3; off).
        extra_secrets: Values scrubbed from receipts besides secret environment variables (D6).
        approval: When a model's tool call asks the user first: ``never`` (default), ``on_request``
            (authority-expanding, agent-creation and web tools, ExecCommand outside the active
            execution root) or ``always`` (see :mod:`holon_nb.runtime.agents._approvals`).
        approval_timeout_s: Seconds an approval question waits for an answer before the call is denied
            (``approval_denied``, "no answer came within N s"); ``<= 0`` waits forever.
        notebook_tools: The opt-in Notebook tool family (issue 28) is on for every public agent (default off).
        notebook_tools_agents: Agents it is on for even when ``notebook_tools`` is off (a per-agent opt-in).
        notebook_approve_all: Trust the session: the Notebook family's RunCode, EditNotebook and ExecuteCell
            run without asking (by default each of a model's calls is asked in the cell, whatever ``approval``).
        command_env_unset: Environment variable names removed from every command's environment (the
            notebook layer removes ``FORCE_COLOR`` and ``CLICOLOR_FORCE``, which ipykernel sets for
            every kernel, unless ``HolonNB.command_colours``).
        prompt_budget_tokens: Estimated-token budget of one model request (``(chars + 3) // 4`` of its
            JSON; env ``HOLON_PROMPT_BUDGET_TOKENS``); 0 means unlimited. Over it, old turns are dropped
            and older rounds of a long turn are recapped (turn-loop spec §1.10).
        providers: Provider configuration by id, ``{"<id>" | "<id>@<endpoint>": {transport, base_url,
            auth: {source, kind, env}, …}}`` (turn-loop spec §2.2; secrets never live here, only the names
            of the variables holding them); entries replace those of ``$HOLON_NB_PROVIDERS``. Used to
            resolve turn models and by ListModelProviders.
        store_busy_timeout_s: How long one write waits, in total, for the home's SQLite write lock while
            another process (a second kernel on the same home) holds it, retrying with backoff (seconds;
            env ``HOLON_NB_STORE_BUSY_TIMEOUT_S``). Past it a direct call gets ``runtime_db_busy``
            (retryable) and ``Runtime()`` raises ``RuntimeStartupError``; background writes (a task's
            end, a timer tick) keep retrying until they succeed or the runtime closes.
        memory_index_interval_s: How often the background memory indexer looks for new records to index
            (seconds); it writes in small transactions (a few ms each). 0 turns it off (each MemorySearch then
            catches up for at most 0.5 s before answering, and ``index_status`` reports any lag).
        shell_snapshot: Run login-shell commands through a snapshot of the login profile
            (:mod:`holon_nb.runtime.tasks._snapshot`); env ``HOLON_SHELL_SNAPSHOT`` (``0`` turns it off).
        web_fetch_enabled, web_fetch_max_chars, web_fetch_max_response_bytes, web_fetch_timeout_s,
        web_fetch_max_redirects, web_allowed_hosts, web_denied_hosts: WebFetch policy (workspace spec §9;
            env ``HOLON_NB_WEB_FETCH_ENABLED``, ``…_MAX_CHARS``, ``…_MAX_RESPONSE_BYTES``, ``…_TIMEOUT_S``,
            ``…_MAX_REDIRECTS``, ``HOLON_NB_WEB_ALLOWED_HOSTS`` / ``…_DENIED_HOSTS`` as comma lists).
            Host rules are ``host``, ``host:port``, ``[ipv6]`` or ``[ipv6]:port``, exact, case-insensitive.
        web_search: WebSearch configuration (workspace spec §10): ``{"mode", "provider", "providers",
            "max_results", "max_provider_attempts", "enabled", "provider_configs": {id: {kind, base_url,
            api_key_env, command, limits}}}``; env ``HOLON_NB_WEB_SEARCH`` (JSON) supplies defaults.
        x_search: XSearch configuration (workspace spec §11): ``{"enabled", "base_url", "api_key_env",
            "model", "timeout_seconds"}``; env ``XAI_API_KEY`` makes it available.
        callback_base_url: Base of external trigger URLs (workspace spec §14); empty means the local callback server's
            own ``http://127.0.0.1:<port>`` (env ``HOLON_NB_CALLBACK_BASE_URL``).
        callback_port: Port of the local callback server; 0 picks a free one (env ``HOLON_NB_CALLBACK_PORT``).
        mcp_servers: MCP servers by name in the ``mcpServers`` shape of Claude Code and Codex (issue 29;
            :mod:`holon_nb.runtime.mcp._config`): ``{"command", "args", "env"}`` (stdio) or ``{"url", "headers"}``
            (streamable HTTP); entries of ``.mcp.json``, ``[tool.holon_nb.mcpServers]`` and
            ``$HOLON_NB_MCP_CONFIG`` come first, these override them by name.
        mcp_cassette: Record/replay file of MCP calls (``.jsonl``, relative to the workspace); empty: none.
        mcp_cassette_mode: ``auto``, ``record``, ``replay`` or ``off``; empty: ``$HOLON_NB_CASSETTE_MODE`` at each
            use (``holon-nb test`` sets ``replay``), else ``auto``.
        clock: The clock that schedules timers and waits' rechecks (:class:`~.clock.Clock`, the system's
            by default; a :class:`~.clock.ManualClock` makes a test's hour-long timer fire when the test
            advances the clock an hour, with no real sleep).
    """

    default_tool_output_tokens: int = field(default_factory=lambda: _env_int("HOLON_DEFAULT_TOOL_OUTPUT_TOKENS", 8000))
    max_tool_output_tokens: int = field(default_factory=lambda: _env_int("HOLON_MAX_TOOL_OUTPUT_TOKENS", 64000))
    tool_output_budget_tokens: int = 2500
    max_task_log_bytes: int = 256 * 1024 * 1024
    max_home_bytes: int = field(default_factory=lambda: _env_int("HOLON_NB_MAX_HOME_BYTES", 1024**3))
    artifact_max_age_days: float = field(default_factory=lambda: _env_float("HOLON_NB_ARTIFACT_MAX_AGE_DAYS", 14.0))
    patch_outside_workspace: bool = False
    extra_secrets: tuple[str, ...] = ()
    approval: str = "never"
    approval_timeout_s: float = 120.0
    notebook_tools: bool = False
    notebook_tools_agents: tuple[str, ...] = ()
    notebook_approve_all: bool = False
    command_env_unset: tuple[str, ...] = ()
    prompt_budget_tokens: int = field(default_factory=lambda: _env_int("HOLON_PROMPT_BUDGET_TOKENS", 0))
    providers: Mapping[str, Any] = field(default_factory=dict)
    memory_index_interval_s: float = 1.0
    store_busy_timeout_s: float = field(default_factory=lambda: float(_env_int("HOLON_NB_STORE_BUSY_TIMEOUT_S", 30)))
    shell_snapshot: bool = field(
        default_factory=lambda: (
            os.environ.get("HOLON_SHELL_SNAPSHOT", "1").strip().lower() not in ("0", "false", "no", "off")
        )
    )
    web_fetch_enabled: bool = field(default_factory=lambda: _env_bool("HOLON_NB_WEB_FETCH_ENABLED", True))
    web_fetch_max_chars: int = field(default_factory=lambda: _env_int("HOLON_NB_WEB_FETCH_MAX_CHARS", 20_000))
    web_fetch_max_response_bytes: int = field(
        default_factory=lambda: _env_int("HOLON_NB_WEB_FETCH_MAX_RESPONSE_BYTES", 750_000)
    )
    web_fetch_timeout_s: float = field(default_factory=lambda: _env_float("HOLON_NB_WEB_FETCH_TIMEOUT_S", 20.0))
    web_fetch_max_redirects: int = field(default_factory=lambda: _env_int("HOLON_NB_WEB_FETCH_MAX_REDIRECTS", 5))
    web_allowed_hosts: tuple[str, ...] = field(default_factory=lambda: _env_list("HOLON_NB_WEB_ALLOWED_HOSTS"))
    web_denied_hosts: tuple[str, ...] = field(default_factory=lambda: _env_list("HOLON_NB_WEB_DENIED_HOSTS"))
    web_search: Mapping[str, Any] = field(default_factory=dict)
    x_search: Mapping[str, Any] = field(default_factory=dict)
    callback_base_url: str = field(default_factory=lambda: os.environ.get("HOLON_NB_CALLBACK_BASE_URL", ""))
    callback_port: int = field(default_factory=lambda: _env_int("HOLON_NB_CALLBACK_PORT", 0))
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    mcp_cassette: str = ""
    mcp_cassette_mode: str = ""
    clock: Clock = field(default_factory=Clock)

    def replace(self, **changes: object) -> RuntimeSettings:
        """Return a copy with ``changes`` applied.

        Raises:
            TypeError: for an unknown setting name.
        """
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
