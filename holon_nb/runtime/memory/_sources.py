"""Memory documents built from the runtime's own records (agents spec §6).

Each builder turns one authoritative record into a :class:`~.memory_index.Doc`:

- tool executions (``tool_executions`` table): the command receipt
  (``tool_execution:<id>:cmd``, kind ``tool_command_receipt``), the command
  output document (``…:stdout|stderr|output``, kind ``tool_command_output``)
  of ExecCommand and of each ExecCommandBatch item (``…:batch_item:<n>:<sel>``),
  and the stored envelope of every other tool (``…:output``, kind
  ``tool_execution_output``; also ExecCommandBatch without ``batch_item``,
  a fix over upstream);
- tasks (``task:<id>``): lifecycle plus terminal result evidence (the output
  summary; the head of the task log is searchable too);
- messages (``message:<id>``);
- the agent's curated memory notes (``agent_memory:self`` / ``:operator`` =
  ``memory/self.md`` / ``memory/operator.md`` in the agent home).

MemoryGet resolves these namespaces from the records themselves, never from
the index, so an ``output_ref`` resolves as soon as its execution is stored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...tools._source_refs import SourceRef
from ...tools._text import command_preview
from ..tasks._service import command_digest
from ._index import Doc

__all__ = [
    "AGENT_MEMORY_NOTES",
    "COMMAND_TOOLS",
    "UNINDEXED_TOOLS",
    "agent_memory_doc",
    "agent_memory_path",
    "execution_doc",
    "execution_docs",
    "file_head",
    "message_doc",
    "task_doc",
]

#: Tools whose executions have command receipts and command-output documents.
COMMAND_TOOLS = ("ExecCommand", "ExecCommandBatch")
#: Read-only inspection tools whose outputs only restate records that are indexed (or fetchable)
#: themselves: their ``output_ref`` still resolves (from ``tool_executions``), but they are not
#: indexed, so repeated listings never crowd MemorySearch results (review fix). Command output
#: (ExecCommand, ExecCommandBatch, TaskOutput) and every mutation stay indexed.
UNINDEXED_TOOLS = frozenset(
    {
        "MemorySearch",
        "MemoryGet",
        "GetAgent",
        "AgentGet",
        "ListWorkItems",
        "GetWorkItem",
        "ListTimers",
        "GetTimer",
        "GetWorkspaceState",
        "ListTasks",
        "TaskList",
        "TaskStatus",
    }
)
#: ``agent_memory:<name>`` → (file name in ``<agent home>/memory/``, title).
AGENT_MEMORY_NOTES = {
    "self": ("self.md", "Agent self memory"),
    "operator": ("operator.md", "Operator collaboration memory"),
}
_HEAD_CHARS = 16_000
_NOTE_MAX_BYTES = 4 * 1024 * 1024
_EVIDENCE = {
    "governance_surface": "runtime_evidence",
    "provenance_class": "tool_execution_record",
    "trust_class": "runtime_evidence",
}


def _pretty(value: Any) -> str:
    """``value`` as ``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)`` writes it.

    A flat dict (string keys, scalar values: a command's arguments) is written by the C encoder, its items
    separated by a newline and the indent (issue 27 item 7: ``indent`` makes ``json`` use its pure-Python
    encoder, ~0.15 ms of the indexer's time per command); the text is the same, as no scalar's JSON holds a
    newline. Anything else goes through ``json.dumps`` as it is.
    """
    if type(value) is dict and value and all(type(k) is str and type(v) in _SCALARS for k, v in value.items()):
        return "{\n  " + _FLAT_ITEMS(value)[1:-1] + "\n}"
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


_SCALARS = frozenset({str, int, float, bool, type(None)})
#: ``{"a": 1,\n  "b": 2}``: the items of a flat dict as ``_pretty`` lays them out, between its braces
_FLAT_ITEMS = json.JSONEncoder(separators=(",\n  ", ": "), sort_keys=True, ensure_ascii=False, default=str).encode


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # arguments a caller nested too deeply are recorded, not indexed
        return None


def file_head(path: Any, chars: int = _HEAD_CHARS) -> str:
    """The first ``chars`` characters of a text file (UTF-8, replacement), or "" if unreadable."""
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            return fh.read(chars)
    except (OSError, ValueError):
        return ""


def _strings(value: Any) -> Iterator[str]:
    """Every string and number leaf of a JSON value (what makes a stored envelope searchable)."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


# ---------------------------------------------------------------- tool executions


class _Execution:
    """A decoded ``tool_executions`` row.

    Arguments and envelope come from the D6-scrubbed copies (``scrubbed_args``, ``scrubbed_envelope``) the
    process that made the call stored, so a later process that no longer knows a secret cannot serve it;
    rows written before those columns existed fall back to the canonical ones.
    """

    def __init__(self, row: dict[str, Any]):
        self.id: str = row["id"]
        self.agent_id: str = row["agent_id"]
        self.tool_name: str = row["tool_name"]
        self.status: str = row["status"]
        self.created_at: str = row["created_at"]
        args = _loads(row.get("scrubbed_args") or row.get("args"))
        self.args: dict[str, Any] = args if isinstance(args, dict) else {}
        env = _loads(row.get("scrubbed_envelope") or row.get("envelope"))
        self.envelope: dict[str, Any] = env if isinstance(env, dict) else {}

    @property
    def result(self) -> dict[str, Any]:
        r = self.envelope.get("result")
        return r if isinstance(r, dict) else {}

    def item_input(self, index: int) -> dict[str, Any] | None:
        items = self.args.get("items")
        if not isinstance(items, list) or not 1 <= index <= len(items) or not isinstance(items[index - 1], dict):
            return None
        return items[index - 1]

    def item_output(self, index: int) -> dict[str, Any] | None:
        items = self.result.get("items")
        if not isinstance(items, list) or not 1 <= index <= len(items) or not isinstance(items[index - 1], dict):
            return None
        return items[index - 1]

    def metadata(self, **extra: Any) -> dict[str, Any]:
        return {"tool_execution_id": self.id, "tool_name": self.tool_name, **extra, **_EVIDENCE}


def _receipt_doc(ex: _Execution, index: int | None) -> Doc | None:
    item = ex.item_input(index) if index is not None else None
    source = item if index is not None else ex.args
    cmd = source.get("cmd") if isinstance(source, dict) else None
    if not isinstance(cmd, str):
        return None
    digest = command_digest(cmd)
    preview = command_preview(cmd)
    shared = {k: v for k, v in ex.args.items() if k != "items"} if index is not None else ex.args
    body = "\n".join(
        [
            f"tool_execution_id: {ex.id}",
            f"tool_name: {ex.tool_name}",
            f"cmd_digest: {digest}",
            "input_json:",
            _pretty(shared),
            *(["batch_item_input_json:", _pretty(item)] if item is not None else []),
            "cmd:",
            cmd,
        ]
    )
    ref = SourceRef("tool_execution", ex.id, index, "cmd")
    title = f"{ex.tool_name} command receipt" + (f" item {index}" if index is not None else "")
    return Doc(
        agent_id=ex.agent_id,
        source_ref=str(ref),
        kind="tool_command_receipt",
        scope_kind="agent",
        title=title,
        body=body,
        updated_at=ex.created_at,
        metadata=ex.metadata(batch_item_index=index, cmd_digest=digest, cmd_preview=preview),
    )


def _output_object(ex: _Execution, index: int | None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the ExecCommandResult-like object, extra facts) of a command execution or batch item."""
    if index is None:
        extra: dict[str, Any] = {}
        if ex.envelope.get("error"):
            extra["error"] = ex.envelope["error"]
        return ex.result, extra
    item = ex.item_output(index)
    if item is None:
        return None
    extra = {"item_status": item.get("status")}
    for key in ("error_kind", "error_message"):
        if item.get(key) is not None:
            extra[key] = item[key]
    result = item.get("result")
    return (result if isinstance(result, dict) else {}), extra


def _mark_pruned(artifact: Any) -> Any:
    """An artifact pointer whose file is gone gets ``pruned: true`` (D13: removed by the home's pruning
    policy); the execution record's previews stay, so the ``output_ref`` keeps resolving."""
    if isinstance(artifact, dict) and isinstance(artifact.get("path"), str) and not os.path.exists(artifact["path"]):
        return {**artifact, "pruned": True}
    return artifact


def _command_output_doc(ex: _Execution, index: int | None, selector: str, *, body: bool = True) -> Doc | None:
    """The command output document; ``body=False`` leaves its body (what MemoryGet shows, which the index
    does not keep: it searches ``search_text``) empty, for the index's catch-up (issue 27 item 7)."""
    found = _output_object(ex, index)
    if found is None:
        return None
    out, extra = found
    if selector == "output":
        content = next(
            (
                out[k]
                for k in ("stdout_preview", "stderr_preview", "initial_output_preview")
                if isinstance(out.get(k), str)
            ),
            None,
        )
    else:
        content = out.get(f"{selector}_preview") if isinstance(out.get(f"{selector}_preview"), str) else None
    artifacts = raw_artifacts if isinstance(raw_artifacts := out.get("artifacts"), list) else []
    artifact = None
    slot = out.get(f"{selector}_artifact") if selector != "output" else None
    if isinstance(slot, int) and not isinstance(slot, bool) and 0 <= slot < len(artifacts):
        artifact = artifacts[slot]
    artifacts = [_mark_pruned(a) for a in artifacts]
    artifact = _mark_pruned(artifact)
    pruned = any(isinstance(a, dict) and a.get("pruned") for a in artifacts)
    available = content is not None or artifact is not None
    doc: dict[str, Any] = {
        "source_type": "tool_command_output",
        "tool_execution_id": ex.id,
        "tool_name": ex.tool_name,
        "batch_item_index": index,
        "selector": selector,
        "status": ex.status,
        "disposition": out.get("disposition") if isinstance(out.get("disposition"), str) else "unknown",
        "content": content,
        "preview": content or "",
        "output_available": available,
        "availability": "available" if available else "output_unavailable",
        "truncated": bool(out.get("truncated")) or bool(out.get("initial_output_truncated")),
        "artifact": artifact,
        "message": (
            "Output evidence recovered from the tool execution record. The full-output artifact was pruned "
            "from the holon home (HolonNB.max_home_bytes / artifact_max_age_days); only these previews remain. "
            "Run the command again for the full output."
            if pruned
            else "Output evidence recovered from the tool execution record. If artifact is present, use that "
            "pointer for full bytes rather than expecting MemoryGet to stream them."
            if available
            else "No persisted output evidence is available for this tool execution stream."
        ),
        **extra,
    }
    if selector == "output" and artifacts:
        doc["artifacts"] = artifacts
    handle = out.get("task_handle")
    if isinstance(handle, dict) and handle.get("task_id"):
        doc["task_id"] = handle["task_id"]
    ref = SourceRef("tool_execution", ex.id, index, selector)
    title = f"{ex.tool_name} {selector if selector != 'output' else ''} output".replace("  ", " ")
    title += f" item {index}" if index is not None else ""
    source = ex.item_input(index) if index is not None else ex.args
    cmd = source.get("cmd") if isinstance(source, dict) else None
    search = [title, f"cmd: {cmd}" if isinstance(cmd, str) else ""]
    search += [
        out[k] for k in ("stdout_preview", "stderr_preview", "initial_output_preview") if isinstance(out.get(k), str)
    ]
    search += [file_head(a.get("path")) for a in artifacts if isinstance(a, dict)]
    if extra.get("error_message") or ex.envelope.get("error"):
        search.append(json.dumps(extra, default=str, ensure_ascii=False))
    return Doc(
        agent_id=ex.agent_id,
        source_ref=str(ref),
        kind="tool_command_output",
        scope_kind="agent",
        title=title,
        body=_pretty(doc) if body else "",
        updated_at=ex.created_at,
        search_text="\n".join(search),
        metadata=ex.metadata(batch_item_index=index, selector=selector),
    )


def _generic_output_doc(ex: _Execution, *, body: bool = True) -> Doc:
    summary = raw_summary if isinstance(raw_summary := ex.envelope.get("summary_text"), str) else ""
    doc = {
        "source_type": "tool_execution_output",
        "tool_execution_id": ex.id,
        "tool_name": ex.tool_name,
        "selector": "output",
        "status": ex.status,
        "summary": summary,
        "output": ex.envelope,
        "message": "Output evidence recovered from the tool execution record.",
    }
    title = f"{ex.tool_name} tool output"
    return Doc(
        agent_id=ex.agent_id,
        source_ref=f"tool_execution:{ex.id}:output",
        kind="tool_execution_output",
        scope_kind="agent",
        title=title,
        body=_pretty(doc) if body else "",
        updated_at=ex.created_at,
        search_text="\n".join([title, summary, *_strings(ex.envelope)]),
        metadata=ex.metadata(selector="output"),
    )


def execution_doc(row: dict[str, Any], ref: SourceRef) -> Doc | None:
    """The document a ``tool_execution:…`` ref names in this execution, or None (agents spec §6).

    ExecCommand: ``cmd``/``stdout``/``stderr``/``output`` without ``batch_item``;
    ExecCommandBatch: any selector with ``batch_item``, and ``output`` without it
    (the stored envelope); other tools: ``output`` only (the stored envelope).
    """
    ex = _Execution(row)
    if ex.tool_name == "ExecCommand" and ref.batch_item is None:
        if ref.selector == "cmd":
            return _receipt_doc(ex, None)
        return _command_output_doc(ex, None, ref.selector or "output")
    if ex.tool_name == "ExecCommandBatch" and ref.batch_item is not None:
        if ref.selector == "cmd":
            return _receipt_doc(ex, ref.batch_item)
        return _command_output_doc(ex, ref.batch_item, ref.selector or "output")
    if ref.batch_item is None and ref.selector == "output" and ex.tool_name != "ExecCommand":
        return _generic_output_doc(ex)
    return None


def execution_docs(row: dict[str, Any]) -> list[Doc]:
    """The searchable documents of one execution: receipts and outputs of command tools
    (per batch item), the stored envelope of other tools; none for :data:`UNINDEXED_TOOLS`.

    For the index's catch-up, which keeps no body (``prepare(keep_body=False)``): the output documents, whose
    ``search_text`` is what is searched, come without the pretty-printed body MemoryGet shows
    (:func:`execution_doc` makes it from the record); receipts keep theirs, their searched text.
    """
    ex = _Execution(row)
    if ex.tool_name in UNINDEXED_TOOLS:
        return []
    if ex.tool_name == "ExecCommand":
        docs = [_receipt_doc(ex, None), _command_output_doc(ex, None, "output", body=False)]
    elif ex.tool_name == "ExecCommandBatch" and isinstance(ex.args.get("items"), list) and ex.result:
        docs = []
        for index in range(1, len(ex.args["items"]) + 1):
            docs += [_receipt_doc(ex, index), _command_output_doc(ex, index, "output", body=False)]
    else:
        docs = [_generic_output_doc(ex, body=False)]
    return [d for d in docs if d is not None]


# ---------------------------------------------------------------- tasks and messages


def task_doc(rec: dict[str, Any]) -> Doc:
    """``task:<id>``: lifecycle plus terminal result evidence of a task record (``detail`` parsed)."""
    d = rec.get("detail") or {}
    cmd = d.get("cmd") if isinstance(d.get("cmd"), str) else None
    lines = [
        f"task_id: {rec['id']}",
        f"kind: {rec['kind']}",
        f"status: {rec['status']}",
        f"summary: {rec.get('summary') or ''}",
        f"created_at: {rec['created_at']}",
        f"updated_at: {rec['updated_at']}",
    ]
    if rec.get("work_item_id"):
        lines.append(f"work_item_id: {rec['work_item_id']}")
    if cmd is not None:
        lines += [f"cmd_digest: {d.get('cmd_digest') or command_digest(cmd)}", f"cmd_preview: {command_preview(cmd)}"]
    for key in ("workdir", "exit_status", "error", "cancelled_reason", "interrupted_reason", "output_path"):
        if d.get(key) is not None:
            lines.append(f"{key}: {d[key]}")
    if d.get("output_summary"):
        lines += ["result_summary:", str(d["output_summary"])]
    if cmd is not None:
        lines += ["cmd:", cmd]
    body = "\n".join(lines)
    head = file_head(d.get("output_path")) if rec["kind"] == "command_task" else ""
    return Doc(
        agent_id=rec["agent_id"],
        source_ref=f"task:{rec['id']}",
        kind="task",
        scope_kind="agent",
        title=rec.get("summary") or f"Task {rec['id']}",
        body=body,
        updated_at=rec["updated_at"],
        search_text=body + ("\n" + head if head else ""),
        metadata={
            "task_id": rec["id"],
            "kind": rec["kind"],
            "status": rec["status"],
            "summary": rec.get("summary"),
            "work_item_id": rec.get("work_item_id"),
            "exit_status": d.get("exit_status"),
            "cmd_preview": command_preview(cmd) if cmd is not None else None,
            "agent_id": rec["agent_id"],
            "created_at": rec["created_at"],
            "governance_surface": "runtime_evidence",
            "provenance_class": "task_record",
            "trust_class": "runtime_evidence",
        },
    )


def message_doc(rec: dict[str, Any]) -> Doc:
    """``message:<id>``: a queued message (``metadata`` as JSON text or dict)."""
    meta = _loads(rec.get("metadata")) if isinstance(rec.get("metadata"), str) else rec.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    lines = [f"message_ref: message:{rec['id']}", f"message_id: {rec['id']}", f"kind: {rec['kind']}"]
    if rec.get("seq") is not None:
        lines.append(f"message_seq: {rec['seq']}")
    if rec.get("origin_task_id"):
        lines.append(f"task_ref: task:{rec['origin_task_id']}")
    for key in ("work_item_id", "priority", "authority_class", "origin"):
        if meta.get(key) is not None:
            lines.append(f"{key}: {meta[key]}")
    text = rec.get("text") or ""
    lines += ["body:", text[:8000] + ("\n[truncated]" if len(text) > 8000 else "")]
    return Doc(
        agent_id=rec["agent_id"],
        source_ref=f"message:{rec['id']}",
        kind="message",
        scope_kind="agent",
        title=f"Message {rec['id']}",
        body="\n".join(lines),
        updated_at=rec["created_at"],
        metadata={
            "message_id": rec["id"],
            "kind": rec["kind"],
            "message_seq": rec.get("seq"),
            "task_id": rec.get("origin_task_id"),
            "work_item_id": meta.get("work_item_id"),
            "governance_surface": "runtime_evidence",
            "provenance_class": "message_envelope",
            "trust_class": "runtime_evidence",
        },
    )


# ---------------------------------------------------------------- agent memory notes


def agent_memory_path(home: Path, agent_id: str, name: str) -> Path | None:
    """``<home>/agents/<agent_id>/memory/<name>.md`` for a known note name, else None (no mkdir)."""
    note = AGENT_MEMORY_NOTES.get(name)
    return home / "agents" / agent_id / "memory" / note[0] if note else None


def agent_memory_doc(home: Path, agent_id: str, name: str) -> Doc | None:
    """``agent_memory:<name>``: the curated note file, or None when it does not exist."""
    path = agent_memory_path(home, agent_id, name)
    if path is None:
        return None
    try:
        st = path.stat()
        with open(path, "rb") as fh:
            body = fh.read(_NOTE_MAX_BYTES).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    updated = datetime.fromtimestamp(st.st_mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return Doc(
        agent_id=agent_id,
        source_ref=f"agent_memory:{name}",
        kind="agent_memory_markdown",
        scope_kind="agent",
        title=AGENT_MEMORY_NOTES[name][1],
        body=body,
        updated_at=updated,
        source_path=os.fspath(path),
        fingerprint=f"{st.st_mtime_ns}:{st.st_size}",
        metadata={
            "memory_name": name,
            "governance_surface": "curated_durable_memory",
            "provenance_class": "agent_home_memory_markdown",
            "trust_class": "agent_curated",
        },
    )
