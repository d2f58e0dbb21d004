"""Real calls of every registered tool: one success and one error each (the human-receipt test's input)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from holon_nb import Runtime


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def make_repo(workspace: Path) -> None:
    """Make ``workspace`` a git repository with one commit."""
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    _git(workspace, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")


PATCH = """*** Begin Patch
*** Update File: a.txt
@@
 one
-two
+TWO
 three
*** End Patch"""


def success_calls(rt: Runtime, workspace: Path, tmp: Path) -> dict[str, Any]:
    """Call every tool once successfully; returns ``{tool name: ToolResult}``."""
    out: dict[str, Any] = {}

    def call(name: str, args: dict[str, Any], **kw: Any) -> Any:
        res = rt.call(name, args, **kw)
        assert res.ok, (name, res.envelope)
        out[name] = res
        return res

    call("ExecCommand", {"cmd": "printf 'one\\ntwo\\n'; echo warn >&2"})
    call("ExecCommandBatch", {"items": [{"cmd": "echo a"}, {"cmd": "false"}]})
    task = call("ExecCommand", {"cmd": "cat", "yield_time_ms": 0, "accepts_input": True}).result["task_handle"][
        "task_id"
    ]
    out["ExecCommand(promoted)"] = out["ExecCommand"]
    call("ExecCommand", {"cmd": "printf 'one\\ntwo\\n'; echo warn >&2"})
    call("ListTasks", {})
    call("TaskList", {})
    call("TaskStatus", {"task_id": task})
    call("TaskInput", {"task_id": task, "input": "hello\n"})
    call("TaskStop", {"task_id": task})
    call("TaskOutput", {"task_id": task, "block": True, "timeout_ms": 10000})
    call("ApplyPatch", {"patch": PATCH})
    call("GetWorkspaceState", {})
    other = tmp / "other"
    other.mkdir()
    make_repo_at = other
    (make_repo_at / "r.txt").write_text("r\n")
    make_repo(make_repo_at)
    ws = call("AttachWorkspace", {"path": str(other)}).result
    ws_id = ws.get("workspace_id") or (ws.get("workspace") or {}).get("workspace_id")
    call("SwitchWorkspace", {"workspace_id": ws_id})
    wt = call("CreateWorktree", {"workspace_id": ws_id, "branch": "feature-x", "base_ref": "main"}).result
    root = wt.get("execution_root_id") or (wt.get("execution_root") or {}).get("execution_root_id")
    call("RemoveWorktree", {"execution_root_id": root, "return_to": "canonical"})
    call("DetachWorkspace", {"workspace_id": ws_id})
    item = call(
        "CreateWorkItem",
        {
            "objective": "Make the report reproducible",
            "plan_status": "ready",
            "todo_list": [
                {"text": "collect inputs", "state": "in_progress"},
                {"text": "run the jobs", "state": "pending"},
            ],
        },
    ).result["work_item"]["id"]
    call("PickWorkItem", {"work_item_id": item})
    call("GetWorkItem", {"work_item_id": item})
    call("ListWorkItems", {})
    call(
        "UpdateWorkItem",
        {
            "work_item_id": item,
            "todo_list": [
                {"text": "collect inputs", "state": "completed"},
                {"text": "run the jobs", "state": "in_progress"},
            ],
        },
    )
    call("CreateTimer", {"duration_ms": 3_600_000, "summary": "check again"})
    timer = out["CreateTimer"].result["timer"]["id"]
    call("ListTimers", {})
    call("GetTimer", {"timer_id": timer})
    call("CancelTimer", {"timer_id": timer})
    call("Enqueue", {"text": "remember the CSV"})
    call("CreateAgent", {"agent_id": "reviewer"})
    call("SendAgentMessage", {"agent_id": "reviewer", "message": "hello"})
    call("GetAgent", {})
    call("AgentGet", {})
    call(
        "WaitFor",
        {"reason": "job A must finish", "wake": "operator_input", "delivery": "final"},
        context={"brief": "Waiting for job A."},
    )
    call("CompleteWorkItem", {"work_item_id": item}, context={"report": "Both jobs ran."})
    hits = call("MemorySearch", {"query": "report"}).result
    ref = (hits.get("results") or [{}])[0].get("source_ref")
    call("MemoryGet", {"source_ref": ref})
    call("ListModelProviders", {})
    call("ListProviderModels", {"provider": "scripted"})
    call("Sleep", {})
    call("InvokeAgent", {"message": "hi", "agent_id": "reviewer"})
    _web_calls(rt, tmp, call)
    trigger = call("CreateExternalTrigger", {"delivery_mode": "wake_hint", "description": "CI finished"}).result
    call("CancelExternalTrigger", {"external_trigger_id": trigger["external_trigger_id"]})
    return out


_PAGE = (
    b"<html><head><title>Notes</title></head><body><nav>Home | About</nav><main><h1>Release notes</h1>"
    b"<p>Version 2 reads receipts as prose and keeps every work item across a restart.</p>"
    b"<ul><li>faster commands</li><li>web tools</li></ul></main><footer>(c) us</footer></body></html>"
)


def _web_calls(rt: Runtime, tmp: Path, call: Any) -> None:
    """WebFetch from a page served on 127.0.0.1 (allow-listed), WebSearch through a ``command`` provider."""
    import json
    import sys
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(_PAGE)))
            self.end_headers()
            self.wfile.write(_PAGE)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        script = tmp / "search.py"
        hits = [{"title": "Release notes", "url": f"http://127.0.0.1:{port}/notes", "snippet": "Version 2"}]
        script.write_text(f"import sys\nsys.stdout.write({json.dumps({'results': hits})!r})\n")
        rt.settings = rt.settings.replace(
            web_allowed_hosts=(f"127.0.0.1:{port}",),
            web_search={
                "providers": ["local"],
                "provider_configs": {
                    "local": {
                        "kind": "command",
                        "command": [sys.executable, str(script), "{{query}}", "{{max_results}}"],
                    }
                },
            },
        )
        call("WebFetch", {"url": f"http://127.0.0.1:{port}/notes"})
        call("WebSearch", {"query": "release notes"})
    finally:
        server.shutdown()
        server.server_close()
