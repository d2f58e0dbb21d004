"""The one failure check of a command call: which commands of a successful call ran and failed.

A successful ExecCommand or ExecCommandBatch envelope can still hold a command that failed (its
``status`` is the call's, not the command's: commands spec §5.5). :func:`command_failures` reads them out;
``%exec --raise`` (:func:`holon_nb.notebook._display.raise_if_command_failed`) raises
:class:`~holon_nb.errors.CommandFailed` from it. Pure function of the (scrubbed) envelope.
"""

from __future__ import annotations

from typing import Any

__all__ = ["command_failures"]


def _how(result: dict[str, Any]) -> str:
    status = result.get("exit_status")
    if isinstance(status, int):
        return f"exit status {status}"
    return str(result.get("summary_text") or "no exit status")


def command_failures(envelope: dict[str, Any]) -> list[tuple[str, str]]:
    """The commands of a successful ExecCommand / ExecCommandBatch call that ran and failed.

    Returns:
        ``[(command preview, how it ended)]``: an ExecCommand that completed with a non-zero or
        absent exit status (killed by a signal); each batch item whose status is ``failed`` or
        ``rejected`` (commands spec §5.5: non-zero exit, timeout, spawn failure). A command still
        running when the call returned (promoted to a task) is not judged. Empty for other tools and
        for error envelopes (those raise :class:`ToolCallError`).
    """
    if envelope.get("status") != "success":
        return []
    r = envelope.get("result") or {}
    if envelope.get("tool_name") == "ExecCommand":
        if r.get("disposition") == "completed" and r.get("exit_status") != 0:
            return [
                (
                    (r.get("command_diagnostics") or {}).get("cmd_preview", ""),
                    _how({**r, "summary_text": envelope.get("summary_text")}),
                )
            ]
        return []
    if envelope.get("tool_name") == "ExecCommandBatch":
        return [
            (
                str(item.get("cmd", "")),
                _how(item["result"])
                if item.get("result")
                else str(item.get("error_message") or item.get("error_kind") or item["status"]),
            )
            for item in r.get("items") or []
            if item.get("status") in ("failed", "rejected")
        ]
    return []
