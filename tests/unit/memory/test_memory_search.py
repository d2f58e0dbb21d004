"""MemorySearch: FTS5 ranking, visibility, catch-up indexing and durability (agents spec §5.17, case 68)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from _support import err, ok, store_state

from holon_nb import Runtime
from holon_nb.runtime.memory._index import fts5_available


def _index(rt, agent_id: str, ref: str, text: str, kind: str = "brief", **kw) -> None:
    with rt.store.tx() as db:
        rt.memory.index(db, agent_id=agent_id, source_ref=ref, source_kind=kind, text=text, **kw)


def _search(rt, query: str, agent: str | None = None, **kw) -> dict:
    return ok(rt.call("MemorySearch", {"query": query, **kw}, agent=agent))


def _refs(found: dict) -> list[str]:
    return [r["source_ref"] for r in found["results"]]


def test_this_sqlite_has_fts5(rt) -> None:
    assert rt.memory.fts is True
    assert fts5_available(rt.store.query) is True


def test_case_68_limit_is_clamped_and_only_callers_documents(rt) -> None:
    rt.store.ensure_agent("other", "public_named")
    with rt.store.tx() as db:
        for i in range(60):
            rt.memory.index(
                db,
                agent_id="default",
                source_ref=f"brief:brief_{i:015x}",
                source_kind="brief",
                text=f"deploy note number {i}",
            )
        for i in range(5):
            rt.memory.index(
                db,
                agent_id="other",
                source_ref=f"brief:brief_o{i:014x}",
                source_kind="brief",
                text=f"deploy of the other agent {i}",
            )
    found = _search(rt, "deploy", limit=500)
    assert len(found["results"]) == 50
    assert {r["agent_id"] for r in found["results"]} == {"default"}
    assert all(r["kind"] == "brief" and "deploy" in r["snippet"] for r in found["results"])
    assert len(_search(rt, "deploy")["results"]) == 10  # default limit
    assert len(_search(rt, "deploy", limit=0)["results"]) == 1  # clamped up to 1
    other = _search(rt, "deploy", agent="other", limit=50)
    assert sorted(_refs(other)) == [f"brief:brief_o{i:014x}" for i in range(5)]


def test_result_shape_and_query_echo(rt) -> None:
    _index(
        rt,
        "default",
        "brief:brief_shape",
        "Release checklist: tag, build, publish",
        title="Release brief",
        updated_at="2026-03-01T00:00:00.000000Z",
        metadata={"work_item_id": "work_x"},
    )
    found = _search(rt, "  checklist  ")
    assert found["query"] == "checklist"
    (hit,) = found["results"]
    assert set(hit) == {
        "kind",
        "source_ref",
        "scope_kind",
        "agent_id",
        "title",
        "snippet",
        "score",
        "updated_at",
        "metadata",
    }
    assert (hit["kind"], hit["scope_kind"], hit["title"]) == ("brief", "workspace", "Release brief")
    assert hit["updated_at"] == "2026-03-01T00:00:00.000000Z"
    assert hit["metadata"]["work_item_id"] == "work_x"
    assert "checklist" in hit["snippet"] and isinstance(hit["score"], float)
    status = found["index_status"]
    assert status["freshness"] == "fresh" and status["lag"] == 0
    assert status["cursor"] == status["high_watermark"]


def test_blank_query_is_invalid(rt) -> None:
    e = err(rt.call("MemorySearch", {"query": "   "}), "invalid_tool_input")
    assert e["details"] == {"tool_name": "MemorySearch", "field": "query", "validation_error": "must not be empty"}


def test_terms_are_or_ed_and_operators_neutralised(rt) -> None:
    _index(rt, "default", "brief:brief_a", "alpha release notes")
    _index(rt, "default", "brief:brief_b", "beta rollout plan")
    assert sorted(_refs(_search(rt, "alpha beta"))) == ["brief:brief_a", "brief:brief_b"]
    for hostile in ['alpha AND "beta', "NEAR(alpha beta)", "alpha*", "title:alpha", "-beta", '"', "(", "^alpha"]:
        ok(rt.call("MemorySearch", {"query": hostile}))
    assert _refs(_search(rt, "title:alpha")) == []  # a quoted phrase, not a column filter
    assert _refs(_search(rt, "AND")) == []  # an operator word is just a word


def test_ranking_bm25_then_recency(rt) -> None:
    _index(rt, "default", "brief:brief_once", "kubernetes " + "filler words here " * 40)
    _index(rt, "default", "brief:brief_often", "kubernetes kubernetes kubernetes cluster")
    assert _refs(_search(rt, "kubernetes")) == ["brief:brief_often", "brief:brief_once"]
    _index(rt, "default", "brief:brief_old", "identical text", updated_at="2026-01-01T00:00:00.000000Z")
    _index(rt, "default", "brief:brief_new", "identical text", updated_at="2026-02-01T00:00:00.000000Z")
    assert _refs(_search(rt, "identical")) == ["brief:brief_new", "brief:brief_old"]


def test_cjk_bigrams(rt) -> None:
    note = rt.tasks.agent_home("default") / "memory" / "self.md"
    note.parent.mkdir(parents=True)
    note.write_text("The agent now remembers 混合 搜索 diagnostics.")
    found = _search(rt, "混合搜索")
    assert _refs(found) == ["agent_memory:self"]
    assert "混合" in found["results"][0]["snippet"]


def test_agent_memory_notes_follow_the_file(rt) -> None:
    note = rt.tasks.agent_home("default") / "memory" / "self.md"
    note.parent.mkdir(parents=True)
    note.write_text("prefers precise release checklists")
    (hit,) = _search(rt, "checklists")["results"]
    assert hit["source_ref"] == "agent_memory:self" and hit["kind"] == "agent_memory_markdown"
    assert hit["source_path"] == str(note) and hit["scope_kind"] == "agent"
    note.write_text("now prefers weekly summaries, much longer text than before")
    assert _refs(_search(rt, "checklists")) == []
    assert _refs(_search(rt, "weekly")) == ["agent_memory:self"]
    note.unlink()
    assert _refs(_search(rt, "weekly")) == []


def test_command_receipts_and_outputs_are_searchable(rt) -> None:
    r = rt.call("ExecCommand", {"cmd": "echo zebra-unique-token"})
    found = _search(rt, "zebra")
    assert sorted(_refs(found)) == [f"tool_execution:{r.execution_id}:cmd", f"tool_execution:{r.execution_id}:output"]
    kinds = {h["source_ref"]: h["kind"] for h in found["results"]}
    assert kinds[f"tool_execution:{r.execution_id}:cmd"] == "tool_command_receipt"
    assert kinds[f"tool_execution:{r.execution_id}:output"] == "tool_command_output"
    # a word only the output contains
    r2 = rt.call("ExecCommand", {"cmd": "printf 'gir''affe\\n'"})
    assert _refs(_search(rt, "giraffe")) == [f"tool_execution:{r2.execution_id}:output"]
    # each batch item has its own refs
    b = rt.call("ExecCommandBatch", {"items": [{"cmd": "echo okapi-one"}, {"cmd": "echo tapir-two"}]})
    assert sorted(_refs(_search(rt, "tapir"))) == [
        f"tool_execution:{b.execution_id}:batch_item:2:cmd",
        f"tool_execution:{b.execution_id}:batch_item:2:output",
    ]


def test_full_stream_in_an_artifact_is_searchable(rt) -> None:
    r = rt.call("ExecCommand", {"cmd": "seq 1 3000; echo nee''dle; seq 1 3000", "max_output_tokens": 50})
    assert r.envelope["result"]["truncated"] is True
    assert "needle" not in r.envelope["result"]["stdout_preview"]
    assert _refs(_search(rt, "needle")) == [f"tool_execution:{r.execution_id}:output"]


def test_other_tools_outputs_are_searchable_but_not_memory_reads(rt) -> None:
    e = rt.call("TaskStop", {"task_id": "task_wombat"})
    assert e.envelope["error"]["kind"] == "task_not_found"
    assert _refs(_search(rt, "wombat")) == [f"tool_execution:{e.execution_id}:output"]
    # MemorySearch/MemoryGet/GetAgent outputs restate other evidence: never indexed
    rt.call("MemoryGet", {"source_ref": "brief:brief_wombat"})
    rt.call("GetAgent", {"agent_id": "wombat"})
    rt.call("TaskStatus", {"task_id": "task_wombat"})
    assert _refs(_search(rt, "wombat")) == [f"tool_execution:{e.execution_id}:output"]


def test_read_only_inspection_outputs_do_not_crowd_the_index(rt) -> None:
    """Review fix: reads restate records that are indexed themselves; only commands and mutations are."""
    created = rt.call("CreateWorkItem", {"objective": "migrate the zebrafish pipeline"})
    wid = ok(created)["work_item"]["id"]
    timer = ok(rt.call("CreateTimer", {"duration_ms": 3_600_000, "summary": "zebrafish check"}))["timer"]["id"]
    reads = [
        rt.call(name, args)
        for _ in range(5)
        for name, args in (
            ("ListWorkItems", {}),
            ("GetWorkItem", {"work_item_id": wid}),
            ("ListTimers", {}),
            ("GetTimer", {"timer_id": timer}),
            ("GetWorkspaceState", {}),
            ("ListTasks", {}),
            ("TaskList", {}),
            ("GetAgent", {}),
            ("TaskStatus", {"task_id": "task_zebrafish"}),
        )
    ]
    command = rt.call("ExecCommand", {"cmd": "echo zebrafish-run"})
    found = _search(rt, "zebrafish", limit=50)
    tools = sorted(r["metadata"].get("tool_name") or r["kind"] for r in found["results"])
    assert tools == sorted(["work_item", "CreateWorkItem", "CreateTimer", "ExecCommand", "ExecCommand"]), tools
    assert f"work_item:{wid}" in _refs(found)
    assert f"tool_execution:{command.execution_id}:output" in _refs(found)
    # their output_refs still resolve: MemoryGet reads the tool_executions table, not the index
    for r in reads[:2]:
        mem = ok(rt.call("MemoryGet", {"source_ref": f"tool_execution:{r.execution_id}:output"}))["memory"]
        assert mem["kind"] == "tool_execution_output" and "zebrafish" in mem["content"]


def test_foreign_executions_are_never_returned(rt) -> None:
    rt.store.ensure_agent("other", "public_named")
    rt.call("ExecCommand", {"cmd": "echo private-marmot"}, agent="other")
    assert _refs(_search(rt, "marmot")) == []
    assert len(_search(rt, "marmot", agent="other")["results"]) == 2


def test_workspace_scope(rt) -> None:
    rt.call("ExecCommand", {"cmd": "true"})  # the default agent's workspace state exists from here on
    active = rt.workspaces.tables.agent_state("default")["active"]["workspace_id"]
    _index(rt, "default", "brief:brief_here", "lemur here", workspace_id=active)
    _index(rt, "default", "brief:brief_there", "lemur there", workspace_id="ws_000000000000000")
    _index(rt, "default", "brief:brief_any", "lemur anywhere")
    assert sorted(_refs(_search(rt, "lemur"))) == ["brief:brief_any", "brief:brief_here"]
    assert sorted(_refs(_search(rt, "lemur", include_all_workspaces=True))) == [
        "brief:brief_any",
        "brief:brief_here",
        "brief:brief_there",
    ]
    hit = next(h for h in _search(rt, "lemur")["results"] if h["source_ref"] == "brief:brief_here")
    assert hit["workspace_id"] == active


def test_catch_up_is_bounded_and_reports_lag(rt) -> None:
    rt._loop.call(rt.memory.close)  # stop the background indexer: this test drives catch-up itself
    for i in range(4):
        rt.call("ExecCommand", {"cmd": f"echo batchword{i}"})
    status = rt.memory.catch_up(limit=1)
    assert status["freshness"] == "stale" and status["lag"] > 0
    assert status["indexing_needed"] is True and status["results_may_be_incomplete"] is True
    assert status["consumption_was_limited"] is True
    assert status["high_watermark"] - status["cursor"] == status["lag"]
    status = rt.memory.catch_up()
    assert status["freshness"] == "fresh" and status["lag"] == 0
    assert "consumption_was_limited" not in status


def test_search_without_fts5_is_a_typed_error(rt) -> None:
    _index(rt, "default", "brief:brief_nofts", "still fetchable")
    rt.memory.fts = False  # as on a Python whose SQLite lacks FTS5
    e = err(rt.call("MemorySearch", {"query": "fetchable"}), "memory_index_unavailable")
    assert "FTS5" in e["message"] and e["domain"] == "storage"
    assert ok(rt.call("MemoryGet", {"source_ref": "brief:brief_nofts"}))["memory"]["content"] == "still fetchable"


def test_memory_tools_change_no_state(rt) -> None:
    rt.call("ExecCommand", {"cmd": "echo read-only-check"})
    _index(rt, "default", "brief:brief_ro", "read-only brief")
    before = store_state(rt.store.path)
    assert before["agents"]
    ok(rt.call("MemorySearch", {"query": "read-only"}))
    ok(rt.call("MemoryGet", {"source_ref": "brief:brief_ro"}))
    err(rt.call("MemoryGet", {"source_ref": "brief:brief_missing"}), "memory_source_not_found")
    assert store_state(rt.store.path) == before


def test_a_new_runtime_on_the_same_home_still_finds_everything(tmp_path: Path, workspace: Path) -> None:
    with Runtime(home=tmp_path / "home", workspace=workspace) as first:
        r = first.call("ExecCommand", {"cmd": "echo persistent-pangolin"})
        _index(first, "default", "brief:brief_persist", "pangolin brief")
        assert len(_search(first, "pangolin")["results"]) == 3
        later = first.call("ExecCommand", {"cmd": "echo pangolin-after-search"})  # indexed by the next runtime
    with Runtime(home=tmp_path / "home", workspace=workspace) as second:
        refs = _refs(_search(second, "pangolin", limit=50))
        assert f"tool_execution:{r.execution_id}:output" in refs and "brief:brief_persist" in refs
        assert f"tool_execution:{later.execution_id}:output" in refs
        assert (
            ok(second.call("MemoryGet", {"source_ref": "brief:brief_persist"}))["memory"]["content"] == "pangolin brief"
        )


def test_unusual_text_never_breaks_search(rt) -> None:
    _index(rt, "default", "brief:brief_odd", "nul\x00byte and \ud800 surrogate text")
    for query in ['"a\\u0000b"', '"☃ ☃"', '"\\"\\"\\""', '"' + "x " * 2000 + '"']:
        ok(rt.call("MemorySearch", '{"query": ' + query + "}"))
    err(rt.call("MemorySearch", '{"query": "\\ud800"}'), "invalid_tool_input")  # a lone surrogate is no text
    assert _refs(_search(rt, "surrogate")) == ["brief:brief_odd"]


def test_task_records_logs_and_messages_are_searchable(rt) -> None:
    r = ok(rt.call("ExecCommand", {"cmd": "sleep 0.3; echo aard''vark-in-log", "yield_time_ms": 0}))
    task_id = r["task_handle"]["task_id"]
    assert rt.wait_for_tasks(30) == []
    refs = _refs(_search(rt, "aardvark", limit=50))
    assert f"task:{task_id}" in refs  # the task record with its terminal evidence (log head, result summary)
    msg = next(m for m in rt.messages() if m["origin_task_id"] == task_id)
    assert f"message:{msg['id']}" in refs  # the TaskResult message quoting the output
    hit = next(h for h in _search(rt, "aardvark", limit=50)["results"] if h["source_ref"] == f"task:{task_id}")
    assert hit["kind"] == "task" and hit["metadata"]["status"] == "completed"


def test_index_never_stores_secret_values(rt, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_TEST_API_KEY", "s3cr3tvalue-abcdef")
    rt.call("ExecCommand", {"cmd": "echo s3cr3tvalue-abcdef shown-with-a-secret"})
    found = _search(rt, "shown-with-a-secret")
    assert len(found["results"]) == 2
    assert all("s3cr3tvalue" not in h["snippet"] for h in found["results"])
    assert _refs(_search(rt, "s3cr3tvalue-abcdef")) == []
    db = sqlite3.connect(rt.store.path)
    try:
        assert db.execute("SELECT COUNT(*) FROM memory_fts WHERE body LIKE '%s3cr3tvalue%'").fetchone()[0] == 0
    finally:
        db.close()


def test_scores_do_not_depend_on_the_runs_roots() -> None:
    # issue 24: a BM25 score counted the tokens of the random temp folder names (an `_` in one adds a
    # token), so a notebook's %memory search receipt differed about one run in five
    import shutil
    import tempfile

    receipts = []
    for i in range(20):
        scratch = Path(tempfile.mkdtemp(prefix="holon-nb-run-" + "x_" * (i % 4)))
        workspace = scratch / ("book" + "_v" * (i % 3))
        workspace.mkdir()
        runtime = Runtime(home=scratch / "home", workspace=workspace)
        try:
            # a background task: its record names the workdir and the output file under the holon home
            started = ok(
                runtime.call("ExecCommand", {"cmd": "sleep 0.3; echo nightly report ready", "yield_time_ms": 0})
            )
            task_id = started["task_handle"]["task_id"]
            ok(runtime.call("TaskOutput", {"task_id": task_id, "block": True, "timeout_ms": 30_000}))
            found = _search(runtime, "nightly report")
            receipts.append([(r["kind"], r["score"]) for r in found["results"]])
        finally:
            runtime.close()
            shutil.rmtree(scratch, ignore_errors=True)
    assert {kind for kind, _ in receipts[0]} >= {"task", "message"}, receipts[0]
    assert all(r == receipts[0] for r in receipts), receipts
