"""Record/replay of MCP servers (issue 29): a notebook test that uses an MCP tool runs offline.

A JSON-lines file, one line per server's tool list (``{"server", "tools": [...]}``) and one per call
(``{"server", "tool", "args", "result"}``, the result as the server sent it, before it was bounded). Modes as
the model cassettes' (``HolonNB.cassette_mode``): ``record`` writes what the servers answer; ``replay`` never
starts a server and answers from the file (a call not in it is ``mcp_server_unavailable``, naming the drift);
``auto`` replays when the file exists, else records; ``off`` (or no file) uses the servers.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

__all__ = ["McpCassette", "canonical_args"]


def canonical_args(args: dict[str, Any]) -> str:
    """The arguments' key in a cassette: sorted-key compact JSON."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class McpCassette:
    """One cassette file in one mode (``record`` or ``replay``; see the module).

    Args:
        path: The ``.jsonl`` file.
        mode: ``record`` or ``replay``.
    """

    def __init__(self, path: Path, mode: str) -> None:
        self.path, self.mode = path, mode
        self._tools: dict[str, list[dict[str, Any]]] = {}
        self._calls: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._used: dict[tuple[str, str, str], int] = {}
        self._lock = threading.Lock()
        if mode == "replay":
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                if "tools" in row:
                    self._tools[row["server"]] = row["tools"]
                else:
                    key = (row["server"], row["tool"], canonical_args(row.get("args") or {}))
                    self._calls.setdefault(key, []).append(row["result"])
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")

    def tools(self, server: str) -> list[dict[str, Any]] | None:
        """The recorded tool list of ``server`` (replay), or None when it has none."""
        return self._tools.get(server)

    def answer(self, server: str, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded result of this call (the n-th same call gets the n-th answer, then the last), or None."""
        key = (server, tool, canonical_args(args))
        answers = self._calls.get(key)
        if not answers:
            return None
        with self._lock:
            n = self._used.get(key, 0)
            self._used[key] = n + 1
        return answers[min(n, len(answers) - 1)]

    def _append(self, row: dict[str, Any]) -> None:
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")

    def record_tools(self, server: str, tools: list[dict[str, Any]]) -> None:
        """Write a server's tool list (record mode)."""
        if self._tools.get(server) != tools:
            self._tools[server] = tools
            self._append({"server": server, "tools": tools})

    def record_call(self, server: str, tool: str, args: dict[str, Any], result: dict[str, Any]) -> None:
        """Write one call and its result (record mode)."""
        self._append({"server": server, "tool": tool, "args": args, "result": result})
