"""The Notebook tools on the open notebook's shared document (issue 28, jupyter-collaboration): a real Jupyter
server with collaboration on 127.0.0.1, a real kernel it started, EditNotebook called in that kernel, and a
second collaborator (a pycrdt client, as a browser tab would be) that sees the cell and whose concurrent
edits are kept. A server with real-time collaboration turned off falls back to the file backend and says so.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import TOKEN, jupyter_server, start_session
from _support import eventually

pytest.importorskip("jupyter_server_ydoc")
pytest.importorskip("jupyter_nbmodel_client")
pytestmark = [pytest.mark.kernel, pytest.mark.slow]

NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": [], "source": "a = 1"},
        {"cell_type": "code", "id": "c2", "metadata": {}, "execution_count": None, "outputs": [], "source": "b = 2"},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


class Kernel:
    """The server's kernel for ``nb.ipynb``, driven through its connection file (the server wrote it)."""

    def __init__(self, base: str, runtime: Path) -> None:
        from jupyter_client import BlockingKernelClient

        start_session(base, "nb.ipynb")
        request = urllib.request.Request(f"{base}/api/sessions", headers={"Authorization": f"token {TOKEN}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            kernel_id = json.loads(answer.read())[0]["kernel"]["id"]
        self.client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel_id}.json"))
        self.client.load_connection_file()
        self.client.start_channels(hb=False)  # a new kernel misses heartbeats while it imports: waited for below
        self.client.wait_for_ready(timeout=60)
        self.run(
            "%load_ext holon_nb\n%config HolonNB.notebook_tools = True\n%config HolonNB.notebook_approve_all = True"
        )

    def run(self, code: str) -> str:
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append("\n".join(msg["content"]["traceback"]))

        reply = self.client.execute_interactive(code, output_hook=hook, timeout=90)
        assert reply["content"]["status"] == "ok", "".join(out)
        return "".join(out)

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        code = (
            "import json as _j\nfrom holon_nb.notebook._session import current_session as _cs\n"
            f"print(_j.dumps(_cs().rt.call({tool!r}, {args!r}).envelope))"
        )
        envelope: dict[str, Any] = json.loads(self.run(code).strip().splitlines()[-1])
        return envelope


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path, Kernel]]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    runtime = tmp_path / "runtime"
    collaboration = request.param
    with jupyter_server(root, None, collaboration=collaboration, JUPYTER_RUNTIME_DIR=str(runtime)) as base:
        kernel = Kernel(base, runtime)
        try:
            yield base, root, kernel
        finally:
            kernel.client.stop_channels()


def user_client(base: str) -> Any:
    from jupyter_nbmodel_client import NbModelClient, get_jupyter_notebook_websocket_url

    return NbModelClient(get_jupyter_notebook_websocket_url(base, "nb.ipynb", TOKEN), username="user")


def sources(client: Any) -> list[str]:
    return [str(c["source"]) for c in client.as_dict()["cells"]]


@pytest.mark.parametrize("server", [True], indirect=True)
def test_agent_edits_reach_a_collaborator_and_the_users_typing_is_kept(server: tuple[str, Path, Kernel]) -> None:
    base, root, kernel = server

    async def scenario() -> dict[str, Any]:
        user = user_client(base)
        await user.start()
        await user.wait_until_synced()
        assert sources(user) == ["a = 1", "b = 2"]
        # the agent inserts while the user types in cell c2: both edits are in flight at once
        insert = asyncio.create_task(
            asyncio.to_thread(
                kernel.call, "EditNotebook", {"op": "insert", "index": 1, "source": "x = 41 + 1\nprint(x)"}
            )
        )
        text = user._doc.ycells[1]["source"]
        for ch in "  # typed by the user":
            text += ch
            await asyncio.sleep(0.01)
        envelope = await insert
        deadline = asyncio.get_running_loop().time() + 20
        while "x = 41 + 1\nprint(x)" not in sources(user):
            assert asyncio.get_running_loop().time() < deadline, sources(user)
            await asyncio.sleep(0.05)
        seen = sources(user)
        await user.stop()
        return {"envelope": envelope, "seen": seen}

    out = asyncio.run(scenario())
    result = out["envelope"]["result"]
    assert out["envelope"]["status"] == "success", out["envelope"]
    assert result["backend"] == "collaboration" and result["applied"] is True and result["index"] == 1
    assert out["seen"] == ["a = 1", "x = 41 + 1\nprint(x)", "b = 2  # typed by the user"]

    # the kernel reads the live document: the user's text too; it runs the inserted cell, outputs in the cell
    read = kernel.call("ReadNotebook", {})["result"]
    assert read["backend"] == "collaboration"
    assert [c["source"] for c in read["cells"]] == out["seen"]
    ran = kernel.call("ExecuteCell", {"cell_id": result["cell_id"]})["result"]
    assert ran["status"] == "ok" and ran["stdout"] == "42\n"
    moved = kernel.call("EditNotebook", {"op": "move", "cell_id": "c1", "to_index": 2})["result"]
    assert moved["index"] == 2
    kernel.call("EditNotebook", {"op": "replace", "cell_id": "c1", "source": "a = 10"})

    async def look() -> list[dict[str, Any]]:
        user = user_client(base)
        await user.start()
        await user.wait_until_synced()
        cells: list[dict[str, Any]] = user.as_dict()["cells"]
        await user.stop()
        return cells

    cells = asyncio.run(look())
    assert [c["source"] for c in cells] == ["x = 41 + 1\nprint(x)", "b = 2  # typed by the user", "a = 10"]
    assert cells[0]["outputs"][0]["text"] == "42\n"
    assert cells[0]["metadata"]["holon_nb"] == {"inserted_by": "agent"}

    # the server saves the shared document to the file, as it saves any collaborative edit
    def saved() -> list[str] | None:
        try:
            doc = json.loads((root / "nb.ipynb").read_text())
        except ValueError:  # read while the server writes it
            return None
        found = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in doc["cells"]]
        return found if found == [c["source"] for c in cells] else None

    eventually(saved, timeout=30)
    deleted = kernel.call("EditNotebook", {"op": "delete", "index": 5})
    assert deleted["error"]["kind"] == "cell_not_found"


@pytest.mark.parametrize("server", [False], indirect=True)
def test_rtc_turned_off_falls_back_to_the_file_and_says_why(server: tuple[str, Path, Kernel]) -> None:
    base, root, kernel = server
    before = (root / "nb.ipynb").read_bytes()
    read = kernel.call("ReadNotebook", {})["result"]
    assert read["backend"] == "file" and "real-time collaboration is turned off" in read["note"]
    refused = kernel.call("EditNotebook", {"op": "replace", "index": 0, "source": "2"})
    assert refused["error"]["kind"] == "notebook_edit_unsupported"
    assert "turned off" in refused["error"]["message"]
    assert (root / "nb.ipynb").read_bytes() == before
