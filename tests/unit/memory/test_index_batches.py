"""Memory indexing under contention (issue 9): small write batches, background catch-up, bounded input."""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from _support import err, eventually, ok
from hypothesis import given, settings
from hypothesis import strategies as st

from holon_nb.runtime import Runtime, RuntimeSettings
from holon_nb.runtime.core._store import new_id
from holon_nb.runtime.memory import _service as memory_module
from holon_nb.runtime.memory import _sources as sources
from holon_nb.tools._dispatch import MAX_TEXT_FIELD_CHARS


def _copies(rt: Runtime, n: int) -> None:
    """``n`` more real tool-execution rows, each a copy of a real ExecCommand call with its own words."""
    ok(rt.call("ExecCommand", {"cmd": "echo template"}))
    row = dict(rt.store.query("SELECT * FROM tool_executions ORDER BY rowid DESC LIMIT 1")[0])
    for i in range(n):
        args = json.dumps({"cmd": f"echo copyword{i} " + "filler " * 200})
        rt.store.record_execution({**row, "id": new_id("tool"), "args": args, "scrubbed_args": args})


def test_catch_up_commits_in_small_batches_and_indexes_everything(tmp_path: Path, workspace: Path) -> None:
    settings = RuntimeSettings(memory_index_interval_s=0)  # no background indexer: this test drives it
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as rt:
        _copies(rt, 1500)
        rt.memory.batch_sizes = []
        status = rt.memory.catch_up()
        assert status is not None and status["freshness"] == "fresh" and status["lag"] == 0
        batches = rt.memory.batch_sizes
        rows = sum(n for n, _ in batches)
        assert rows >= 1500  # every row went through a batch
        assert len(batches) > 1 and max(n for n, _ in batches) < rows  # not one long transaction
        hit = rt.call("MemorySearch", {"query": "copyword1499"})
        assert any("copyword1499" in r["snippet"] for r in ok(hit)["results"])


def test_a_search_catches_up_for_a_bounded_time_and_the_rest_follows_in_the_background(
    tmp_path: Path, workspace: Path, monkeypatch
) -> None:
    settings = RuntimeSettings(memory_index_interval_s=0)
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as rt:
        _copies(rt, 600)
        monkeypatch.setattr(memory_module, "SEARCH_CATCH_UP_BUDGET_S", 0.0)  # the search may not index at all
        status = ok(rt.call("MemorySearch", {"query": "copyword5"}))["index_status"]
        assert status["lag"] > 0 and status["results_may_be_incomplete"] is True
        assert status["consumption_was_limited"] is True
    # a runtime with the background indexer catches up on its own, without any search
    with Runtime(
        home=tmp_path / "home", workspace=workspace, settings=RuntimeSettings(memory_index_interval_s=0.1)
    ) as rt:
        eventually(lambda: rt.memory.index_status()["lag"] == 0, timeout=60)


def test_an_oversized_objective_is_refused_at_the_documented_limit(rt: Runtime) -> None:
    huge = "x" * (16 * 1024 * 1024)
    e = err(rt.call("CreateWorkItem", {"objective": huge}), "invalid_tool_input")
    assert e["details"]["field"] == "objective" and e["details"]["max_chars"] == MAX_TEXT_FIELD_CHARS
    assert e["details"]["length"] == len(huge) and str(MAX_TEXT_FIELD_CHARS) in e["message"]
    assert rt.store.query("SELECT COUNT(*) FROM work_items")[0][0] == 0
    # nested fields are measured too
    e = err(
        rt.call("CreateWorkItem", {"objective": "ok", "todo_list": [{"text": huge, "state": "pending"}]}),
        "invalid_tool_input",
    )
    assert e["details"]["field"] == "todo_list[0].text"


def test_an_objective_at_the_limit_is_stored_whole_and_searchable(rt: Runtime) -> None:
    objective = "zebraword " + "y" * (MAX_TEXT_FIELD_CHARS - 10)
    assert len(objective) == MAX_TEXT_FIELD_CHARS
    item = ok(rt.call("CreateWorkItem", {"objective": objective}))["work_item"]
    stored = rt.store.query("SELECT objective FROM work_items WHERE id=?", (item["id"],))[0][0]
    assert stored == objective
    hits = ok(rt.call("MemorySearch", {"query": "zebraword"}))["results"]
    assert any(h["source_ref"] == f"work_item:{item['id']}" for h in hits)


def test_write_many_upserts_and_replaces_the_searchable_text(rt: Runtime) -> None:
    from holon_nb.runtime.memory._index import Doc, prepare, search, write_many

    def doc(ref: str, text: str) -> Doc:
        return Doc(
            agent_id="default",
            source_ref=ref,
            kind="brief",
            scope_kind="agent",
            title=ref,
            body=text,
            updated_at="2026-01-01T00:00:00Z",
        )

    with rt.store.tx() as db:
        write_many(
            db,
            [
                prepare(doc("brief:brief_a", "oldword alpha"), keep_body=True),
                prepare(doc("brief:brief_b", "betaword"), keep_body=True),
            ],
            fts=True,
        )
    with rt.store.tx() as db:  # an update, and the same ref twice in one batch: the last one wins
        write_many(
            db,
            [
                prepare(doc("brief:brief_a", "interim"), keep_body=True),
                prepare(doc("brief:brief_a", "newword alpha"), keep_body=True),
            ],
            fts=True,
        )

    def refs(q: str) -> list[str]:
        return [
            r["source_ref"]
            for r in search(rt.store.query, q, agent_id="default", limit=10, workspace_id=None, all_workspaces=True)
        ]

    assert refs("oldword") == [] and refs("interim") == [] and refs("newword") == ["brief:brief_a"]
    assert refs("betaword") == ["brief:brief_b"]
    assert rt.store.query("SELECT body FROM memory_documents WHERE source_ref='brief:brief_a'")[0][0] == "newword alpha"
    assert rt.store.query("SELECT COUNT(*) FROM memory_fts")[0][0] == 2


_SCALAR = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.dictionaries(st.text(), _SCALAR), st.dictionaries(st.text(), st.lists(_SCALAR)), _SCALAR))
def test_indexed_arguments_are_laid_out_as_json_dumps_does(value: object) -> None:
    """issue 27 item 7: a command's arguments (a flat dict) go through the C encoder, nested values through
    ``json.dumps``; the indexed text is what ``json.dumps(indent=2, sort_keys=True, ...)`` writes either way."""
    expected = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    assert sources._pretty(value) == expected


def test_the_background_indexer_waits_for_a_quiet_runtime_at_most_max_defer_s(
    tmp_path: Path, workspace: Path, monkeypatch
) -> None:
    """Issue 27 item 7: the indexer's Python work and a call's share the GIL, so it indexes once no call has run
    for ``QUIET_S``; a runtime that is never quiet still gets its records indexed ``MAX_DEFER_S`` late."""
    monkeypatch.setattr(memory_module, "MAX_DEFER_S", 3600.0)
    settings = RuntimeSettings(memory_index_interval_s=0.02)
    gates = [tmp_path / "go", tmp_path / "go-again"]
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as rt, ThreadPoolExecutor(1) as pool:

        def held_call(gate: Path) -> Future:
            """An ExecCommand kept in its foreground window (a call in flight) until ``gate`` exists."""
            cmd = f"while [ ! -e '{gate}' ]; do sleep 0.02; done"
            args = {"cmd": cmd, "shell": "sh", "login": False, "yield_time_ms": 120_000}
            running = pool.submit(lambda: rt.call("ExecCommand", args).envelope)
            eventually(lambda: rt._loop.calls_in_flight == 1)
            return running

        try:
            ok(rt.call("ExecCommand", {"cmd": "echo to-index"}))
            running = held_call(gates[0])
            time.sleep(0.5)  # 25 of the indexer's intervals while the call runs: it waits for a quiet moment
            assert rt.memory.index_status()["lag"] > 0
            gates[0].touch()
            assert running.result(timeout=60)["status"] == "success"
            eventually(lambda: rt.memory.index_status()["lag"] == 0)  # quiet now

            monkeypatch.setattr(memory_module, "MAX_DEFER_S", 0.2)
            running = held_call(gates[1])
            ok(rt.call("ExecCommand", {"cmd": "echo also-to-index"}))  # from this thread, beside the held call
            eventually(lambda: rt.memory.index_status()["lag"] == 0)  # indexed while the held call still runs
            assert not running.done()
            gates[1].touch()
            assert running.result(timeout=60)["status"] == "success"
        finally:  # a failed assertion must not leave a call held for its two minutes
            for gate in gates:
                gate.touch()
