"""A hand-written stdio "MCP server" for the hostile tests (issue 29): valid handshake and tool list, then
malformed JSON-RPC on tools/call (a line that is not JSON, then a response whose result is not a tool result)."""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "garble", "description": "answers garbage", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "huge", "description": "answers 50 MB of text", "inputSchema": {"type": "object", "properties": {}}},
]
HUGE = 50 * 1024 * 1024


def reply(msg_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, msg_id = msg.get("method"), msg.get("id")
    if method == "initialize":
        reply(
            msg_id,
            {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            },
        )
    elif method == "tools/list":
        reply(msg_id, {"tools": TOOLS})
    elif method == "tools/call" and msg["params"]["name"] == "huge":
        reply(msg_id, {"content": [{"type": "text", "text": "x" * HUGE}]})
    elif method == "tools/call":
        sys.stdout.write("this is {not json\n")
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"content": "not a list"}}) + "\n")
        sys.stdout.flush()
    elif msg_id is not None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {}}) + "\n")
        sys.stdout.flush()
