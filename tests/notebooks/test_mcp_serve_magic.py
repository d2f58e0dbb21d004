"""``%holon mcp serve`` in a real kernel (issue 29): an external MCP client's call (the SDK's streamable HTTP
client with the token) shows in the serving cell as a live receipt; a call that goes on as a background task
shows the task's live view under it, kept current while the task runs, with a Stop, replaced by its final
receipt; ``%holon mcp serve stop`` ends it."""

from __future__ import annotations

import json
import queue
from pathlib import Path
from typing import Any

from _mcp_support import served_calls
from _support import eventually, execute, holon_kernel, write_nb

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


RESULT = "application/vnd.holon.tool-result+json"
WIDGET = "application/vnd.jupyter.widget-view+json"


class _Frontend:
    """The widget models a front end holds, built from a kernel's IOPub comm messages as JupyterLab builds them
    (whatever thread of the kernel sent them); :meth:`click` clicks a button as a person does."""

    def __init__(self, kc: Any) -> None:
        self.kc = kc
        self.models: dict[str, dict[str, Any]] = {}
        self.closed: set[str] = set()

    def take(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
            self.models[content["comm_id"]] = dict(content["data"]["state"])
        elif kind == "comm_msg" and content["data"].get("method") in ("update", "echo_update"):
            self.models.setdefault(content["comm_id"], {}).update(content["data"]["state"])
        elif kind == "comm_close":
            self.closed.add(content["comm_id"])

    def pump(self) -> _Frontend:
        """Take every IOPub message the kernel sent so far."""
        while True:
            try:
                self.take(self.kc.get_iopub_msg(timeout=0.05))
            except queue.Empty:
                return self

    def click(self, model_id: str) -> None:
        msg = self.kc.session.msg(
            "comm_msg", {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}}
        )
        self.kc.shell_channel.send(msg)

    def children(self, model_id: str) -> list[str]:
        return [c.removeprefix("IPY_MODEL_") for c in self.models[model_id].get("children", [])]

    def shown(self, model_id: str) -> list[dict[str, Any]]:
        """The display data of an ``Output`` model."""
        return [o["data"] for o in self.models[model_id].get("outputs", []) if o.get("output_type") == "display_data"]

    def task_view(self, task_id: str) -> dict[str, Any] | None:
        """The cockpit's entry of a served call's background task: its label, its slot, the live view in the slot
        (its header, tail and Stop models), or None while there is none."""
        for log_id, log in list(self.models.items()):
            if log.get("_model_name") != "OutputModel":
                continue
            for data in self.shown(log_id):
                entry = (data.get(WIDGET) or {}).get("model_id")
                if entry not in self.models or len(self.children(entry)) != 2:
                    continue
                label, slot = self.children(entry)
                if self.models[label].get("value", "").endswith(f"goes on as task {task_id}"):
                    return {"log": log_id, "label": self.models[label]["value"], "slot": slot, **self._view(slot)}
        return None

    def _view(self, slot: str) -> dict[str, Any]:
        (data,) = self.shown(slot) or [{}]
        view = (data.get(WIDGET) or {}).get("model_id")
        if view is None:
            return {"view": None, "final": data.get(RESULT), "text": data.get("text/plain", "")}
        header, tail, stop = self.children(view)
        return {
            "view": view,
            "header": self.models[header]["value"],
            "tail": self.models[tail]["value"],
            "stop": stop,
            "final": None,
        }


def test_a_served_background_task_shows_live_in_the_cockpit_and_its_stop_stops_it(tmp_path: Path) -> None:
    """Two served commands go on as background tasks: each has the notebook's live task view under its call in
    the cockpit, drawn while the task runs (its output grows in it), replaced by the task's final receipt at its
    end; the view's Stop stops the other one (TaskStop as the agent the calls run as)."""
    gates = [tmp_path / "go-1", tmp_path / "go-2"]  # the task waits for each: it is seen live, whatever the load
    follows = f"echo tick-1; until [ -e {gates[0]} ]; do sleep 0.05; done; echo tick-2; "
    follows += f"until [ -e {gates[1]} ]; do sleep 0.05; done; echo tick-3"
    with holon_kernel(tmp_path) as (_, kc):
        front = _Frontend(kc)
        for msg in execute(kc, "%holon mcp serve"):
            front.take(msg)
        info = json.loads((tmp_path / "home" / "mcp-serve.json").read_text())
        first, second = served_calls(
            info,
            {"cmd": follows, "yield_time_ms": 0, "login": False},
            {"cmd": "echo waiting; exec sleep 120", "yield_time_ms": 0, "login": False},
        )
        ended, stopped = (r.structured_content["result"]["task_handle"]["task_id"] for r in (first, second))

        # live while it runs: the view shows the output so far, then more of it, the task still running
        view = eventually(lambda: (v := front.pump().task_view(ended)) and "tick-1" in v.get("tail", "") and v)
        assert view["label"] == f"call 1 goes on as task {ended}" and "running" in view["header"]
        gates[0].touch()
        view = eventually(lambda: (v := front.pump().task_view(ended)) and "tick-2" in v.get("tail", "") and v)
        assert "running" in view["header"] and "tick-3" not in view["tail"]
        gates[1].touch()
        # ended: the final receipt is the slot's one output, the live view's widget closed
        done = eventually(lambda: (v := front.pump().task_view(ended)) and v["final"] and v)
        assert done["final"]["tool_name"] == "TaskOutput" and done["final"]["result"]["task"]["exit_status"] == 0
        assert "tick-3" in done["text"] and view["view"] in front.closed

        # the other one's Stop, as a person clicks it
        live = eventually(lambda: (v := front.pump().task_view(stopped)) and "waiting" in v.get("tail", "") and v)
        assert live["label"] == f"call 2 goes on as task {stopped}"
        front.click(live["stop"])
        done = eventually(lambda: (v := front.pump().task_view(stopped)) and v["final"] and v, timeout=60)
        assert done["final"]["result"]["task"]["status"] == "cancelled"
        receipts = [d[RESULT] for d in front.shown(done["log"]) if RESULT in d]
        stops = [r for r in receipts if r["tool_name"] == "TaskStop"]
        assert len(stops) == 1 and stops[0]["status"] == "success"  # logged in the cockpit, as its call's
        # each call's own receipt says its output is in the view below
        promoted = [r for r in receipts if r["tool_name"] == "ExecCommand"]
        assert [r["result"]["task_handle"]["task_id"] for r in promoted] == [ended, stopped]
