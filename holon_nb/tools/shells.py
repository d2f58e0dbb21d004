"""Which shell a command runs in (commands spec §4.1); light, so the runtime can ask before any tool loads."""

from __future__ import annotations

import os

__all__ = ["resolve_shell"]


def resolve_shell(shell: str | None) -> str:
    """Resolve the shell program (commands spec §4.1): explicit, else from ``$SHELL``, else ``sh``."""
    if shell:
        return shell
    env_shell = os.environ.get("SHELL", "")
    for name in ("bash", "zsh", "sh"):
        if name in env_shell:
            return name
    return "sh"
