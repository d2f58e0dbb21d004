"""``%holon mcp serve`` in a real kernel (issue 29): an external MCP client's call (the SDK's streamable HTTP
client with the token) shows in the serving cell as a live receipt; ``%holon mcp serve stop`` ends it."""

from __future__ import annotations

import json
from pathlib import Path

from _support import write_nb

from holon_nb.testing._harness import run_notebook

CLIENT = """import json
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
info = json.loads((rt.home / "mcp-serve.json").read_text())
async def go():
    auth = {"Authorization": "Bearer " + info["token"]}
    async with create_mcp_http_client(headers=auth) as c, streamable_http_client(info["url"], http_client=c) as (
        r,
        w,
    ), ClientSession(r, w) as s:
        await s.initialize()
        return await s.call_tool("ExecCommand", {"cmd": "echo from outside"})
res = await go()
print(res.is_error, res.content[0].text)"""


def test_an_external_clients_call_shows_as_a_live_receipt(tmp_path: Path) -> None:
    nb = write_nb(
        tmp_path / "serve.ipynb",
        "import holon_nb\n%load_ext holon_nb\nrt = holon_nb.get_runtime()",
        "%holon mcp serve",
        CLIENT,
        "%holon mcp serve stop",
    )
    out = tmp_path / "executed.ipynb"
    summary = run_notebook(nb, output=out, timeout=120)
    assert summary.exit_code == 0, summary
    executed = json.loads(out.read_text())
    printed = "".join("".join(o.get("text", "")) for o in executed["cells"][2]["outputs"])
    assert "False" in printed and "from outside" in printed
    state = executed["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    logs = [m["state"].get("outputs", []) for m in state.values() if m["model_name"] == "OutputModel"]
    shown = json.dumps(logs)
    labels = [m["state"].get("value", "") for m in state.values() if m["model_name"] == "LabelModel"]
    assert "→ call 1: an MCP client called ExecCommand" in labels  # shown with its Stop button while it ran
    buttons = {m["state"].get("description") for m in state.values() if m["model_name"] == "ButtonModel"}
    assert "Ended" in buttons  # the call's Stop button, disabled once the call ended
    assert "application/vnd.holon.tool-result+json" in shown and "from outside" in shown
    stopped = "".join(str(o) for o in executed["cells"][3]["outputs"])
    assert "stopped serving http://127.0.0.1:" in stopped
