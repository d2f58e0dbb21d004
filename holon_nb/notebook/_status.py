"""Read-only views for ``%holon status``, ``%holon tools`` and ``%holon config``.

Nothing here changes runtime state: status reads ``Runtime.status()``, the
tool table is derived from the registry (never written twice), the config
table reads traits and settings.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Any

from ..runtime import Runtime, RuntimeSettings
from ..runtime.core._loop import THREAD_NAME
from ..tools._registry import Registry
from ..tools._spec import Family
from ._config import HolonNB
from ._display import Table
from ._live import _CALL_ERRORS, _display_item

__all__ = ["config_table", "holon_mcp", "mcp_table", "status_table", "tools_table"]


def status_table(rt: Runtime, tracked: list[str]) -> Table:
    """A key/value table of the runtime's state (changes nothing).

    Args:
        rt: The runtime.
        tracked: Ids of tasks promoted in this kernel since the extension loaded.
    """
    st = dict(rt.status())
    st["runtime_threads"] = sum(1 for t in threading.enumerate() if t.name == THREAD_NAME)
    st["tasks_started_here"] = len(tracked)
    tasks = st.get("tasks") or {}
    rows: list[list[Any]] = [
        [k, ", ".join(f"{a}={b}" for a, b in v.items()) if isinstance(v, dict) else v]
        for k, v in st.items()
        if k != "tasks"
    ]
    rows.append(["tasks", ", ".join(f"{k}={v}" for k, v in sorted(tasks.items())) or "none"])
    return Table("holon_nb runtime", ["key", "value"], rows, data=st)


def _facing(model_facing: bool, alias_of: str | None) -> str:
    if model_facing:
        return "yes"
    return f"no (alias of {alias_of})" if alias_of else "no"


def tools_table(registry: Registry, notebook_tools: bool = False) -> Table:
    """Every registered tool with its family, stability and whether models see it; the opt-in Notebook family
    (issue 28) only while ``notebook_tools`` is on (its code runs and edits say they ask first)."""
    specs = [s for s in registry if notebook_tools or s.family is not Family.NOTEBOOK]
    rows = [
        [s.name, s.family.value, s.stability.value, _facing(s.model_facing, s.alias_of) + _asks(s.asks_approval)]
        for s in specs
    ]
    data = [
        {"name": s.name, "family": s.family.value, "stability": s.stability.value, "model_facing": s.model_facing}
        for s in specs
    ]
    return Table(f"{len(rows)} tools", ["tool", "family", "stability", "model-facing"], rows, data=data)


def _asks(asks: bool) -> str:
    return " (asks first)" if asks else ""


def config_table(config: HolonNB, settings: RuntimeSettings) -> Table:
    """The ``HolonNB`` options (value and help) followed by the runtime settings in effect."""
    rows: list[list[Any]] = []
    for name, trait in sorted(config.traits(config=True).items()):
        help_text = re.split(r"\.\s+(?=[A-Z$`(])", trait.help or "")[0]  # its first sentence ("e.g. x" stays)
        rows.append([f"HolonNB.{name}", getattr(config, name), help_text])
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if f.name == "extra_secrets":
            value = f"{len(value)} value(s)"
        rows.append([f"settings.{f.name}", value, "in effect in the runtime"])
    return Table("holon_nb configuration (%config HolonNB.<name> = value)", ["option", "value", "meaning"], rows)


def mcp_table(rows: list[dict[str, Any]], home: str) -> Table:
    """``%holon mcp``: each configured MCP server, its transport, state, restarts, tools and stderr log."""
    shown = []
    for r in rows:
        log = r.get("log") or ""
        log = log.replace(home, "<holon home>", 1) if log.startswith(home) else log
        state = r["state"] + (f" ({r['error']})" if r.get("error") else "")
        shown.append([r["server"], r["transport"], state, r["restarts"], ", ".join(r["tools"]) or "-", log or "-"])
    data = [{**r, "log": row[5] if row[5] != "-" else None} for r, row in zip(rows, shown, strict=True)]
    title = f"{len(rows)} MCP server(s)" if rows else "no MCP servers (%config HolonNB.mcp_servers = {...} adds them)"
    return Table(title, ["server", "transport", "state", "restarts", "tools", "stderr log"], shown, data=data)


def holon_mcp(session: Any, rest: str) -> None:
    """``%holon mcp``: start the configured MCP servers (lazily started until then) and show :func:`mcp_table`."""
    from IPython.core.error import UsageError
    from IPython.display import display

    from ..runtime.mcp import McpConfigError

    rt = session.rt
    words = rest.split()
    if words and words[0] == "serve":
        _serve(session, words[1:])
        return
    if words:
        raise UsageError(f"%holon mcp takes no arguments (got {rest!r}); %holon mcp serve serves this runtime")
    try:
        rt._loop.call(rt.mcp.start_all)
        rows = rt.mcp.status()
    except McpConfigError as exc:
        raise UsageError(f"%holon mcp: {exc}") from None
    display(mcp_table(rows, str(rt.home)))


#: The HTTP servers ``%holon mcp serve`` started, by runtime id (one per runtime).
_SERVING: dict[int, Any] = {}


#: Serializes appends to a cockpit's log (the server's thread; the kernel's, for a Stop's receipt).
_APPEND_LOCK = threading.Lock()


def _append(log: Any, obj: Any, raw: bool = False, stream: bool = False) -> None:
    """Append ``obj`` to the cockpit's ``log``, an ipywidgets ``Output``, as ``display`` shows it (``raw``: a
    mimebundle; ``stream``: a line of text on stdout), by one whole-value assignment (from any thread)."""
    item = {"output_type": "stream", "name": "stdout", "text": f"{obj}\n"} if stream else _display_item(obj, raw)
    with _APPEND_LOCK:
        log.outputs += (item,)


def _task_view(session: Any, log: Any, n: int, task_id: str, agent: str, receipt: dict[str, Any]) -> None:
    """Under served call ``n`` in the cockpit's ``log``: the live view of the background task it started (the
    notebook's own task view, drawn by the live hub, its Stop a TaskStop as ``agent``, the task's owner),
    replaced by the task's final receipt when it ends (server thread)."""
    import ipywidgets as widgets

    rt = session.rt

    def stop(_: str) -> str:  # kernel thread (the view's Stop)
        try:
            result = rt.call("TaskStop", {"task_id": task_id}, agent=agent)
        except _CALL_ERRORS as exc:  # the runtime closed meanwhile
            return f"stop failed: {exc}"
        _append(log, result)  # in the cockpit, as the calls' receipts
        return str(result.display_envelope.get("summary_text") or ("stop requested" if result.ok else "stop failed"))

    slot = widgets.Output()
    _append(log, widgets.VBox([widgets.Label(f"call {n} goes on as task {task_id}"), slot]))
    session.live.show_in(task_id, receipt.get("initial_output_preview"), slot, stop)


def _serve(session: Any, words: list[str]) -> None:
    """``%holon mcp serve [--port N]`` / ``%holon mcp serve stop``: serve this kernel's runtime to MCP clients
    over streamable HTTP on 127.0.0.1 with a new bearer token (written to ``<home>/mcp-serve.json``)."""
    from IPython.core.error import UsageError
    from IPython.display import display

    from ..runtime.mcp._serve import HttpServe, build_server, new_token, write_token_file
    from ._display import Note

    rt = session.rt
    running = _SERVING.get(id(rt))
    if words == ["stop"]:
        if running is None:
            raise UsageError("%holon mcp serve stop: this runtime is not being served")
        running.stop()
        del _SERVING[id(rt)]
        display(Note(f"stopped serving {running.url}"))
        return
    port = 0
    if words[:1] == ["--port"] and len(words) == 2 and words[1].isdigit():
        port = int(words[1])
    elif words:
        raise UsageError("write %holon mcp serve [--port N] or %holon mcp serve stop")
    if running is not None:
        raise UsageError(f"%holon mcp serve: already serving {running.url} (%holon mcp serve stop ends it)")
    import ipywidgets as widgets

    log = widgets.Output(layout=widgets.Layout(max_height="600px", overflow="auto"))
    stop = widgets.Button(description="Stop serving", button_style="warning")

    in_flight: dict[int, Any] = {}  # call number -> its Stop button, while the call runs

    def on_call(event: dict[str, Any]) -> None:  # on a server thread: widget updates are thread-safe comms
        n, tool = event["call"], event["tool"]
        if event["phase"] == "start":
            button = widgets.Button(description="Stop", button_style="danger", tooltip=f"stop call {n} ({tool})")

            def stop_call(_: Any) -> None:
                button.disabled = True
                event["stop"]()

            button.on_click(stop_call)
            in_flight[n] = button
            _append(log, widgets.HBox([widgets.Label(f"→ call {n}: an MCP client called {tool}"), button]))
            return
        done = in_flight.pop(n, None)
        if done is not None:
            done.disabled, done.description = True, "Ended"
        if event["phase"] == "stopped":
            _append(log, f"■ call {n} ({tool}) stopped from the notebook", stream=True)
            return
        result = event["result"]
        r = result.result or {}
        task_id = str((r.get("task_handle") or {}).get("task_id") or "") if tool == "ExecCommand" else ""
        if task_id and session.live.knows(task_id):  # the command goes on as a background task
            # as a cell's %exec: the receipt says the output is below, in the task's live view
            _append(log, result.output_shown_below(), raw=True)
            _task_view(session, log, n, task_id, event["agent"], r)
        else:
            _append(log, result)  # the live receipt (ToolResult's mimebundle)

    http = HttpServe(build_server(rt, on_call=on_call), new_token(), port)
    token_file = rt.home / "mcp-serve.json"
    write_token_file(token_file, http.url, http.token)
    http.start()
    _SERVING[id(rt)] = http

    def on_stop(_: Any) -> None:
        if _SERVING.get(id(rt)) is http:
            http.stop()
            del _SERVING[id(rt)]
        stop.disabled, stop.description = True, "Stopped"

    stop.on_click(on_stop)
    note = Note(
        f"serving this runtime's tools at {http.url} (streamable HTTP, 127.0.0.1 only); clients send "
        f"'Authorization: Bearer <token>' with the token in <holon home>/mcp-serve.json; each call they make "
        "shows below with a Stop button while it runs, then its receipt (a command that goes to the background "
        "is a task: its live view follows, with its own Stop, until its final receipt replaces it); Stop serving or "
        "%holon mcp serve stop ends the server"
    )
    display(note)
    display(widgets.VBox([stop, log]))
