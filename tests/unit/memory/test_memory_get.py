"""MemoryGet resolution: owners only, no existence leak, each namespace from its own store (§5.18, §6)."""

from __future__ import annotations

import json

from _support import err, ok

from holon_nb.tools._source_refs import ALLOWED_SOURCE_REF_PREFIXES


def _index_brief(rt, agent_id: str, brief_id: str, text: str, **kw) -> None:
    with rt.store.tx() as db:
        rt.memory.index(db, agent_id=agent_id, source_ref=f"brief:{brief_id}", source_kind="brief", text=text, **kw)


def test_case_64_forged_ref_is_not_found(rt) -> None:
    e = err(rt.call("MemoryGet", {"source_ref": "brief:brief_000000000000000"}), "memory_source_not_found")
    assert e["domain"] == "not_found" and e["retryable"] is False
    assert e["details"]["allowed_source_ref_prefixes"] == list(ALLOWED_SOURCE_REF_PREFIXES)
    assert e["details"]["source_ref"] == "brief:brief_000000000000000"
    assert e["details"]["reason"]


def test_case_65_foreign_brief_is_indistinguishable_from_missing(rt) -> None:
    rt.store.ensure_agent("other", "public_named")
    _index_brief(rt, "other", "brief_0123456789abcde", "Result: shipped the other agent's release")
    # the owner reads it ...
    mem = ok(rt.call("MemoryGet", {"source_ref": "brief:brief_0123456789abcde"}, agent="other"))["memory"]
    assert mem["content"] == "Result: shipped the other agent's release"
    assert (mem["kind"], mem["scope_kind"], mem["agent_id"]) == ("brief", "workspace", "other")
    # ... nobody else does, and the error is the forged-ref error with only the ref changed
    foreign = err(rt.call("MemoryGet", {"source_ref": "brief:brief_0123456789abcde"}), "memory_source_not_found")
    forged = err(rt.call("MemoryGet", {"source_ref": "brief:brief_fffffffffffffff"}), "memory_source_not_found")
    assert foreign["message"].replace("0123456789abcde", "X") == forged["message"].replace("fffffffffffffff", "X")
    assert {**foreign["details"], "source_ref": None} == {**forged["details"], "source_ref": None}
    assert foreign["recovery_hint"] == forged["recovery_hint"]


def test_index_fed_document_is_returned_as_given(rt) -> None:
    text = "Objective: ship v2\nPlan status: ready\nTodo list:\n- [pending] tests"
    with rt.store.tx() as db:
        rt.memory.index(
            db,
            agent_id="default",
            source_ref="work_item:work_0000000000000aa",
            source_kind="work_item",
            text=text,
            updated_at="2026-01-02T03:04:05.000000Z",
            metadata={"state": "open"},
        )
    mem = ok(rt.call("MemoryGet", {"source_ref": "work_item:work_0000000000000aa"}))["memory"]
    assert mem["content"] == text and mem["truncated"] is False
    assert mem["title"] == "Objective: ship v2"
    assert mem["updated_at"] == "2026-01-02T03:04:05.000000Z"
    assert mem["metadata"]["state"] == "open"
    # re-indexing replaces, unindexing removes
    with rt.store.tx() as db:
        rt.memory.index(
            db,
            agent_id="default",
            source_ref="work_item:work_0000000000000aa",
            source_kind="work_item",
            text="Objective: ship v3",
            title="v3",
        )
    mem = ok(rt.call("MemoryGet", {"source_ref": "work_item:work_0000000000000aa"}))["memory"]
    assert (mem["content"], mem["title"]) == ("Objective: ship v3", "v3")
    with rt.store.tx() as db:
        rt.memory.unindex(db, agent_id="default", source_ref="work_item:work_0000000000000aa")
    err(rt.call("MemoryGet", {"source_ref": "work_item:work_0000000000000aa"}), "memory_source_not_found")


def test_index_is_part_of_the_producers_transaction(rt) -> None:
    try:
        with rt.store.tx() as db:
            rt.memory.index(
                db,
                agent_id="default",
                source_ref="brief:brief_rolled_back",
                source_kind="brief",
                text="never committed",
            )
            raise RuntimeError("the producer's write failed")
    except RuntimeError:
        pass
    err(rt.call("MemoryGet", {"source_ref": "brief:brief_rolled_back"}), "memory_source_not_found")
    assert ok(rt.call("MemorySearch", {"query": "committed"}))["results"] == []


def test_index_refuses_a_malformed_ref(rt) -> None:
    import pytest

    with pytest.raises(ValueError, match="opaque id"), rt.store.tx() as db:
        rt.memory.index(db, agent_id="default", source_ref="brief:../x", source_kind="brief", text="x")


def test_agent_memory_notes(rt) -> None:
    err(rt.call("MemoryGet", {"source_ref": "agent_memory:self"}), "memory_source_not_found")
    note = rt.tasks.agent_home("default") / "memory" / "operator.md"
    note.parent.mkdir(parents=True)
    note.write_text("The operator prefers small reviewed patches.\n")
    mem = ok(rt.call("MemoryGet", {"source_ref": "agent_memory:operator"}))["memory"]
    assert mem["content"] == "The operator prefers small reviewed patches.\n"
    assert mem["kind"] == "agent_memory_markdown" and mem["scope_kind"] == "agent"
    assert mem["source_path"] == str(note) and mem["title"] == "Operator collaboration memory"
    assert mem["metadata"]["trust_class"] == "agent_curated"
    err(rt.call("MemoryGet", {"source_ref": "agent_memory:notes"}), "memory_source_not_found")
    # another agent has its own notes, not these
    rt.store.ensure_agent("other", "public_named")
    err(rt.call("MemoryGet", {"source_ref": "agent_memory:operator"}, agent="other"), "memory_source_not_found")


def test_task_and_message_refs_resolve_from_their_tables(rt) -> None:
    r = ok(rt.call("ExecCommand", {"cmd": "echo task-evidence-7781; exit 3", "yield_time_ms": 0}))
    task_id = r["task_handle"]["task_id"]
    assert rt.wait_for_tasks(30) == []
    mem = ok(rt.call("MemoryGet", {"source_ref": f"task:{task_id}"}))["memory"]
    assert mem["kind"] == "task" and mem["scope_kind"] == "agent"
    assert "status: failed" in mem["content"] and "exit_status: 3" in mem["content"]
    assert "task-evidence-7781" in mem["content"]  # the terminal result evidence
    assert mem["metadata"]["status"] == "failed"
    msg = next(m for m in rt.messages() if m["origin_task_id"] == task_id)
    mem = ok(rt.call("MemoryGet", {"source_ref": f"message:{msg['id']}"}))["memory"]
    assert mem["kind"] == "message" and f"task_ref: task:{task_id}" in mem["content"]
    # another agent sees neither
    rt.store.ensure_agent("other", "public_named")
    err(rt.call("MemoryGet", {"source_ref": f"task:{task_id}"}, agent="other"), "memory_source_not_found")
    err(rt.call("MemoryGet", {"source_ref": f"message:{msg['id']}"}, agent="other"), "memory_source_not_found")


def test_receipt_is_canonical_json(rt) -> None:
    note = rt.tasks.agent_home("default") / "memory" / "self.md"
    note.parent.mkdir(parents=True)
    note.write_text("remember: run the linters")
    r = rt.call("MemoryGet", {"source_ref": "agent_memory:self"})
    assert json.loads(r.full_receipt)["result"]["memory"]["content"] == "remember: run the linters"
    assert r.envelope["summary_text"] == "retrieved agent_memory_markdown agent_memory:self"
