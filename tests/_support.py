"""Assertion helpers shared by the tests."""

from __future__ import annotations

import json
from typing import Any

from holon_nb.runtime import ToolResult


def ok(result: ToolResult) -> dict[str, Any]:
    """Assert a success envelope (no ``error`` key) and return its result."""
    env = result.envelope
    assert env["status"] == "success", json.dumps(env, indent=1)[:2000]
    assert "error" not in env
    return env["result"]


def err(result: ToolResult, kind: str) -> dict[str, Any]:
    """Assert an error envelope of ``kind`` (and its JSON receipt) and return the error."""
    env = result.envelope
    assert env["status"] == "error", json.dumps(env, indent=1)[:2000]
    assert "result" not in env
    assert env["error"]["kind"] == kind, env["error"]
    assert env["summary_text"] == env["error"]["message"]
    receipt = json.loads(result.full_receipt)
    assert receipt["ok"] is False and receipt["kind"] == kind and receipt["tool_name"] == env["tool_name"]
    return env["error"]
