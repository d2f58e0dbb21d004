"""The open notebook's shared document (jupyter-collaboration): the live backend of the Notebook tools (issue 28).

A kernel started by a Jupyter server finds that server by its own parent process: the server writes
``jpserver-<pid>.json`` (url, token, root_dir) into the Jupyter runtime directory, which the kernel inherits
through ``JUPYTER_RUNTIME_DIR`` or ``jupyter_core.paths.jupyter_runtime_dir()``, and starts its kernels as
children (``os.getppid()``). The notebook is the kernel's ``JPY_SESSION_NAME`` (jupyter_server's
``SessionManager.get_kernel_env``: the notebook's path, absolute or relative to the server's root).

Each call asks the server for the notebook's collaboration session (``PUT /api/collaboration/session/<path>``,
jupyter_server_ydoc; room ``json:notebook:<fileId>``) and joins the room as one more collaborator with
jupyter-nbmodel-client (datalayer's maintained client over pycrdt: the Yjs sync protocol, awareness), applies the
read or the edit to the synced ``YNotebook`` and leaves, its updates sent first. The edit is a CRDT update like
a person's keystrokes in another browser tab: it appears in every open view without reload and merges with what
the user types meanwhile; the server saves the document as it saves any collaborative edit.

``_CollabUnavailable`` says why the live document cannot be reached (no server found, no
jupyter-collaboration on it, the client library missing, the room did not sync); the caller then falls back to
the file backend and says so in the receipt.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import HolonNBError
from ._document import HEADLESS, FileDocument, HeadlessDocument, _not_found, _slice, _text, _unsupported, locate_cell

__all__ = ["CollabDocument", "LiveDocument", "current_document", "find_room"]

#: Seconds one call may take to join the room, sync and send its edit.
CALL_TIMEOUT_S = 20.0


class _CollabUnavailable(HolonNBError):  # noqa: N818 - a reason, caught in current_document, never raised to users
    """Why the live collaboration document cannot be used (``str(exc)`` goes into the receipt's note)."""


def _runtime_dir() -> Path:
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        return Path(jupyter_runtime_dir())
    except ImportError:  # pragma: no cover - jupyter_core comes with every kernel
        return Path(os.environ.get("JUPYTER_RUNTIME_DIR", "~/.local/share/jupyter/runtime")).expanduser()


def find_room(session_name: str | None) -> dict[str, Any]:
    """The server and notebook of this kernel: ``{"url", "token", "path"}`` (``path`` relative to the server's
    root, ``/``-separated).

    Raises:
        _CollabUnavailable: no notebook session, or no Jupyter server is this kernel's parent.
    """
    if not session_name or not session_name.endswith(".ipynb"):
        raise _CollabUnavailable("this kernel does not know its notebook (no JPY_SESSION_NAME)")
    info_file = _runtime_dir() / f"jpserver-{os.getppid()}.json"
    try:
        info = json.loads(info_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise _CollabUnavailable("this kernel was not started by a Jupyter server it can find") from None
    path = Path(session_name)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(Path(info.get("root_dir") or "/").resolve())
        except ValueError:
            raise _CollabUnavailable("the notebook is outside the Jupyter server's root") from None
    return {"url": str(info["url"]).rstrip("/"), "token": str(info.get("token") or ""), "path": path.as_posix()}


#: Per server URL: whether its front end has real-time collaboration turned off (asked once per kernel).
_RTC_DISABLED: dict[str, bool] = {}


def _rtc_disabled(room: dict[str, Any]) -> bool:
    """Whether the server's front end edits files rather than the shared document: jupyter_server_ydoc keeps
    its endpoints with ``YDocExtension.disable_rtc`` and only tells the front end, through the page config
    (``disableRTC`` in ``jupyter-config-data`` of ``/lab``). An edit of the room would then be saved behind
    an open editor's back, so the live backend is not used."""
    url = room["url"]
    if url not in _RTC_DISABLED:
        request = urllib.request.Request(f"{url}/lab", headers={"Authorization": f"token {room['token']}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                page = response.read(2_000_000).decode("utf-8", "replace")
        except (OSError, ValueError):
            page = ""  # no JupyterLab page (Notebook 7 alone shares the same page config): collaboration as served
        start = page.find('id="jupyter-config-data"')
        config: dict[str, Any] = {}
        if start >= 0:
            body = page[page.find(">", start) + 1 : page.find("</script>", start)]
            try:
                config = json.loads(body)
            except ValueError:
                config = {}
        _RTC_DISABLED[url] = bool(config.get("disableRTC"))
    return _RTC_DISABLED[url]


def _websocket_url(room: dict[str, Any]) -> str:
    """The room's websocket URL (jupyter_nbmodel_client.get_jupyter_notebook_websocket_url), with the server's
    answer checked first: a server without jupyter-collaboration answers 404."""
    url = f"{room['url']}/api/collaboration/session/{urllib.parse.quote(room['path'])}"
    request = urllib.request.Request(
        url,
        data=json.dumps({"format": "json", "type": "notebook"}).encode(),
        method="PUT",
        headers={"Content-Type": "application/json", "Authorization": f"token {room['token']}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            session = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        why = "has no jupyter-collaboration" if exc.code == 404 else f"refused the session (HTTP {exc.code})"
        raise _CollabUnavailable(f"the Jupyter server {why}") from None
    except (OSError, ValueError) as exc:
        raise _CollabUnavailable(f"the Jupyter server did not answer ({type(exc).__name__})") from None
    if _rtc_disabled(room):
        raise _CollabUnavailable("real-time collaboration is turned off on this Jupyter server (disable_rtc)")
    room_id = f"{session['format']}:{session['type']}:{session['fileId']}"
    ws = "ws" + room["url"][len("http") :] if room["url"].startswith("http") else room["url"]
    query = urllib.parse.urlencode({"sessionId": session["sessionId"], "token": room["token"]})
    return f"{ws}/api/collaboration/room/{room_id}?{query}"


def _in_thread(work: Callable[[], Any], timeout_s: float) -> Any:
    """Run ``work`` (which calls ``asyncio.run``) in a thread of its own: the caller may be on a running loop."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name="holon-nb-collab", daemon=True)
    thread.start()
    thread.join(timeout_s + 5)
    if thread.is_alive():
        raise _CollabUnavailable(f"the collaboration room did not answer within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


class CollabDocument:
    """One notebook's collaboration room: :meth:`apply` runs a function on its synced model.

    Args:
        room: :func:`find_room`'s answer.
    """

    def __init__(self, room: dict[str, Any]) -> None:
        try:
            import jupyter_nbmodel_client  # noqa: F401
        except ImportError:
            raise _CollabUnavailable(
                "jupyter-nbmodel-client is not installed (pip install 'holon-nb[collab]')"
            ) from None
        self.room = room
        self.ws_url = _websocket_url(room)

    def apply(self, change: Callable[[Any], Any], timeout_s: float = CALL_TIMEOUT_S) -> Any:
        """Join the room, run ``change(model)`` on the synced ``NotebookModel`` (no await runs in between, so
        no remote update lands mid-change), send its updates and leave; return its value.

        Raises:
            ToolFailure: ``notebook_edit_unsupported`` when the room did not sync in ``timeout_s``.
            Whatever ``change`` raises (a ``ToolFailure``).
        """
        from jupyter_nbmodel_client import NbModelClient

        async def session() -> Any:
            client = NbModelClient(self.ws_url, path=self.room["path"], username="holon_nb agent", timeout=timeout_s)
            await client.start()
            try:
                if not client.synced:
                    await asyncio.wait_for(client.wait_until_synced(), timeout_s)
                return change(client)
            finally:
                await client.stop()

        def work() -> Any:
            try:
                return asyncio.run(asyncio.wait_for(session(), timeout_s))
            except (TimeoutError, OSError) as exc:
                raise _CollabUnavailable(f"the collaboration room did not sync ({type(exc).__name__})") from None

        try:
            return _in_thread(work, timeout_s)
        except _CollabUnavailable as exc:
            raise _unsupported(
                "Notebook",
                f"the open notebook's collaboration document could not be reached ({exc}); an edit may or may "
                "not have been applied",
            ) from None


def _ynotebook(client: Any) -> Any:
    """The client's ``jupyter_ydoc.YNotebook`` (NotebookModel keeps it as ``_doc``; it offers no public move or
    outputs setter, and YNotebook's own API — ``ycells``, ``create_ycell``, ``ydoc`` — is public)."""
    return client._doc


def _youtputs(outputs: list[dict[str, Any]]) -> list[Any]:
    """nbformat outputs as the shared document holds them (jupyter_ydoc ``YNotebook._create_youtputs``)."""
    from pycrdt import Map, Text

    out = []
    for output in json.loads(json.dumps(outputs)):
        if output.get("output_type") == "stream":
            text = output.get("text", "")
            output["text"] = Text(text if isinstance(text, str) else "".join(text))
        out.append(Map(output))
    return out


class LiveDocument:
    """The Notebook tools' document over :class:`CollabDocument`: what the open notebook shows now, unsaved
    edits included; every edit applied to it and merged with the user's (module docstring)."""

    def __init__(self, room: CollabDocument) -> None:
        self._room = room
        self.path = room.room["path"]

    def _cells(self, client: Any) -> list[dict[str, Any]]:
        return [dict(c) for c in client.as_dict().get("cells") or []]

    def read(self, start: int | None, end: int | None, cell_id: str | None) -> dict[str, Any]:
        cells = self._room.apply(self._cells)
        return {
            "backend": "collaboration",
            "path": self.path,
            "cell_count": len(cells),
            "cells": _slice(cells, start, end, cell_id),
            "note": "the open notebook's shared document (jupyter-collaboration), unsaved edits included",
        }

    def edit(self, op: str, target: dict[str, Any], source: str | None, cell_type: str) -> dict[str, Any]:
        def change(client: Any) -> dict[str, Any]:
            nb = _ynotebook(client)
            cells = self._cells(client)
            if op == "insert":
                from nbformat import v4

                index = len(cells) if target["index"] is None else target["index"]
                if index > len(cells):
                    raise _not_found("EditNotebook", index, None, len(cells))
                make = {"code": v4.new_code_cell, "markdown": v4.new_markdown_cell, "raw": v4.new_raw_cell}[cell_type]
                cell = make(source or "", metadata={"holon_nb": {"inserted_by": "agent"}})
                with nb.ydoc.transaction():
                    nb.ycells.insert(index, nb.create_ycell(cell))
                return _edited(op, index, cell["id"], len(cells) + 1)
            index, cell = locate_cell("EditNotebook", cells, target["index"], target["cell_id"])
            with nb.ydoc.transaction():
                if op == "replace":
                    text = nb.ycells[index]["source"]
                    text.clear()
                    text.insert(0, source or "")
                elif op == "delete":
                    del nb.ycells[index]
                    return _edited(op, index, cell.get("id"), len(cells) - 1)
                else:  # move: pycrdt's Array has no move; one transaction deletes and re-inserts the cell
                    to = target["to_index"]
                    if to >= len(cells):
                        raise _not_found("EditNotebook", to, None, len(cells))
                    moved = nb.ycells[index].to_py()
                    del nb.ycells[index]
                    nb.ycells.insert(to, nb.create_ycell(moved))
                    index = to
            return _edited(op, index, cell.get("id"), len(cells))

        return self._room.apply(change)

    def cell_source(self, index: int | None, cell_id: str | None) -> tuple[int, str | None, str, str]:
        def find(client: Any) -> tuple[int, str | None, str, str]:
            i, cell = locate_cell("ExecuteCell", self._cells(client), index, cell_id)
            return i, cell.get("id"), str(cell.get("cell_type", "code")), _text(cell.get("source"))

        result: tuple[int, str | None, str, str] = self._room.apply(find)
        return result

    def record_outputs(self, cell_id: str | None, index: int | None, outputs: list[dict[str, Any]]) -> None:
        """Put the outputs into the cell (found by id, else by index) of the shared document: the open notebook
        shows them, and they are saved with it."""

        def change(client: Any) -> None:
            nb = _ynotebook(client)
            cells = self._cells(client)
            found = [i for i, c in enumerate(cells) if cell_id is not None and c.get("id") == cell_id]
            i = found[0] if found else index
            if i is None or i >= len(cells):
                return
            with nb.ydoc.transaction():
                youtputs = nb.ycells[i]["outputs"]
                youtputs.clear()
                youtputs.extend(_youtputs(outputs))

        self._room.apply(change)


def _edited(op: str, index: int, cell_id: str | None, count: int) -> dict[str, Any]:
    return {
        "op": op,
        "backend": "collaboration",
        "applied": True,
        "index": index,
        "cell_id": cell_id,
        "cell_count": count,
        "note": "applied to the open notebook's shared document: it shows at once in every open view and "
        "merges with the user's own edits; saved as JupyterLab saves collaborative edits",
    }


def current_document(shell: Any) -> HeadlessDocument | LiveDocument | FileDocument:
    """The document of this kernel: the headless copy when a harness loaded one, else the open notebook's
    collaboration document when its Jupyter server has jupyter-collaboration (:mod:`._collab`), else the saved
    file (its receipts say why the live document could not be used)."""
    if HEADLESS.loaded:
        return HEADLESS
    name = os.environ.get("JPY_SESSION_NAME") or (getattr(shell, "user_ns", {}) or {}).get("__vsc_ipynb_file__")
    try:
        return LiveDocument(CollabDocument(find_room(name if isinstance(name, str) else None)))
    except _CollabUnavailable as exc:
        why = str(exc)
    path = Path(name) if isinstance(name, str) and name.endswith(".ipynb") else None
    if path is not None and not path.is_absolute():
        path = Path.cwd() / path
    return FileDocument(shell, path, why)
