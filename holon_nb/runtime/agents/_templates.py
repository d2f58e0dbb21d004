"""Agent home templates for CreateAgent / InvokeAgent (agents spec §5.5 rule 4, §5.6 rule 3).

A template initialises a new agent's home. holon_nb keeps it to the one file
an agent home is read for: ``AGENTS.md``. Selectors (agents spec §5.5 ``template``):

============================  =====================================================
``holon-default``             the catalog's default layout (no ``AGENTS.md``);
                              also ``builtin:default`` / ``builtin:holon-default``
``agent:<agent_id>``          that agent's ``AGENTS.md``
``agent_home:<relative>``     a file or directory inside the *caller's* home
``user:<name>``               ``<holon home>/templates/<name>``
``user_global:<name>``        ``~/.holon/templates/<name>``
``/absolute/path``            a file, or a directory holding ``AGENTS.md``
``https://github.com/…``      refused: ``unsupported_runtime_capability`` (no network)
============================  =====================================================

A directory contributes its ``AGENTS.md``; a file is copied as ``AGENTS.md``.
Templates are read before any record is written, so a bad template has no
side effect.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure

if TYPE_CHECKING:
    from ..core._store import Store

__all__ = ["DEFAULT_TEMPLATE", "MAX_TEMPLATE_BYTES", "Template", "load_template"]

#: The catalog id of the default layout.
DEFAULT_TEMPLATE = "holon-default"
#: Largest ``AGENTS.md`` a template may provide (bytes).
MAX_TEMPLATE_BYTES = 256 * 1024
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_BUILTIN = {DEFAULT_TEMPLATE, "builtin:default", "builtin:" + DEFAULT_TEMPLATE}


@dataclass(frozen=True)
class Template:
    """A resolved template.

    Attributes:
        selector: The template as requested.
        source: The file its ``AGENTS.md`` came from; None for the default layout.
        agents_md: The ``AGENTS.md`` text to write into the new home; None for the default layout.
    """

    selector: str
    source: str | None = None
    agents_md: str | None = None

    def apply(self, home: Path) -> list[str]:
        """Write the template into ``home`` (created); return the files written (absolute paths).

        Raises:
            OSError: when the file cannot be written.
        """
        home.mkdir(parents=True, exist_ok=True)
        if self.agents_md is None:
            return []
        path = home / "AGENTS.md"
        path.write_text(self.agents_md, encoding="utf-8")
        return [str(path)]


def _bad(tool: str, selector: str, why: str, hint: str | None = None) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"invalid `template` for {tool}: {why}",
            details={"tool_name": tool, "field": "template", "validation_error": why, "template": selector[:200]},
            recovery_hint=hint
            or f"Use {DEFAULT_TEMPLATE}, an agent:<id> / agent_home:<path> / user:<name> selector, "
            "or an absolute path to a directory holding AGENTS.md.",
        )
    )


def _path_for(store: Store, home: Path, caller_id: str, selector: str, tool: str) -> Path:
    kind, _, rest = selector.partition(":")
    if selector.startswith(("https://", "http://")):
        raise ToolFailure(
            ToolError(
                kind="unsupported_runtime_capability",
                message="remote (GitHub) templates are not supported: holon_nb does not fetch from the network",
                details={"tool_name": tool, "field": "template", "capability": "remote_templates"},
                recovery_hint="Clone the template and pass its absolute local path instead.",
            )
        )
    if os.path.isabs(selector):
        return Path(selector)
    if kind == "agent" and _NAME.fullmatch(rest) and ".." not in rest:
        if store.agent(rest) is None:
            raise _bad(tool, selector, f"agent {rest} does not exist")
        return home / "agents" / rest / "AGENTS.md"
    if kind == "agent_home" and rest:
        own = (home / "agents" / caller_id).resolve()
        path = (own / rest).resolve()
        if path != own and own not in path.parents:
            raise _bad(tool, selector, "agent_home: paths must stay inside your agent home")
        return path
    if kind in ("user", "user_global") and _NAME.fullmatch(rest) and ".." not in rest:
        base = home / "templates" if kind == "user" else Path.home() / ".holon" / "templates"
        return base / rest
    raise _bad(tool, selector, "unknown template")


def load_template(store: Store, home: Path, caller_id: str, selector: str | None, tool: str) -> Template:
    """Resolve and read a template selector (blocking file IO; run it in a worker thread).

    Args:
        store: The runtime's store (``agent:`` names an agent that must exist).
        home: The holon home (agents' homes and ``user:`` templates are under it).
        caller_id: The calling agent (``agent_home:`` paths are relative to its home).
        selector: The ``template`` argument, trimmed; None means the default layout.
        tool: The tool name used in error messages.

    Returns:
        The :class:`Template`.

    Raises:
        ToolFailure: ``invalid_tool_input`` (``field: "template"``) for an unknown or unreadable
            template, or one larger than :data:`MAX_TEMPLATE_BYTES`; ``unsupported_runtime_capability``
            for a remote (GitHub) template.
    """
    if selector is None or selector in _BUILTIN:
        return Template(selector or DEFAULT_TEMPLATE)
    if "\x00" in selector:
        raise _bad(tool, selector, "contains a NUL character")
    path = _path_for(store, home, caller_id, selector, tool)
    if path.is_dir():
        path = path / "AGENTS.md"
    try:
        if not path.is_file():
            raise _bad(tool, selector, f"{path} is not a regular file" if path.exists() else f"{path} does not exist")
        with open(path, "rb") as fh:  # read at most one byte past the cap (/proc files report size 0)
            data = fh.read(MAX_TEMPLATE_BYTES + 1)
        if len(data) > MAX_TEMPLATE_BYTES:
            raise _bad(tool, selector, f"{path} is larger than {MAX_TEMPLATE_BYTES} bytes")
        text = data.decode("utf-8", errors="replace")
    except OSError as exc:
        raise _bad(tool, selector, f"{path} cannot be read ({exc.strerror or exc})") from None
    return Template(selector, str(path), text)
