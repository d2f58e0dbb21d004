"""The source_ref grammar (agents spec §6) and MemoryGet's validation errors (§5.18, cases 63, 66, 67)."""

from __future__ import annotations

import pytest
from _support import err, ok

from holon_nb.tools._source_refs import (
    ALLOWED_SOURCE_REF_PREFIXES,
    SourceRef,
    SourceRefError,
    parse_source_ref,
)

OPAQUE = "source_ref identifier must be an opaque id, not a path, URL, or query"
SHAPES = (
    "tool_execution source_ref must match tool_execution:<id>:{cmd,stdout,stderr,output} or "
    "tool_execution:<id>:batch_item:<index>:{cmd,stdout,stderr,output}"
)


@pytest.mark.parametrize(
    "ref",
    [
        "agent_memory:self",
        "agent_memory:operator",
        "workspace_profile:ws-123",
        "brief:abc",
        "message:msg_1",
        "turn:turn_123",
        "episode:ep_123",
        "work_item:work_123",
        "task:task_123",
        "brief:a.b-c_D9",
        "tool_execution:tool-123:cmd",
        "tool_execution:tool-123:stdout",
        "tool_execution:tool-123:stderr",
        "tool_execution:tool-123:output",
        "tool_execution:tool-123:batch_item:2:cmd",
        "tool_execution:tool-123:batch_item:12:stdout",
        "tool_execution:tool-123:batch_item:1:output",
    ],
)
def test_valid_refs_round_trip(ref: str) -> None:
    assert str(parse_source_ref(ref)) == ref


def test_parsed_parts() -> None:
    assert parse_source_ref("tool_execution:tool_1:batch_item:3:stderr") == SourceRef(
        "tool_execution", "tool_1", 3, "stderr"
    )
    ref = parse_source_ref("episode:ep_1")
    assert (ref.prefix, ref.id, ref.kind, ref.scope_kind) == ("episode", "ep_1", "context_episode", "workspace")
    assert parse_source_ref("task:t").scope_kind == "agent"


@pytest.mark.parametrize(
    "ref, error",
    [
        ("brief: x", "must not contain whitespace"),
        (" brief:x", "must not contain whitespace"),
        ("brief:x\n", "must not contain whitespace"),
        ("briefx", "missing source_ref prefix"),
        ("", "missing source_ref prefix"),
        ("brief:", "missing source_ref identifier"),
        ("brief:../../etc/passwd", OPAQUE),
        ("brief:/Users/me/README.md", OPAQUE),
        ("brief:https://example.com/memory", OPAQUE),
        ("work_item:work_123?raw=true", OPAQUE),
        ("skill:/x/SKILL.md", OPAQUE),
        ("memory:invalid-ref-123", "unsupported source_ref prefix"),
        ("file:abc", "unsupported source_ref prefix"),
        ("tool_execution:tool-123", SHAPES),
        ("tool_execution:", SHAPES),
        ("tool_execution:tool-123:batch_item:2", SHAPES),
        ("tool_execution:../x:cmd", SHAPES),
        ("tool_execution:tool-123:artifact", "unsupported tool_execution selector"),
        ("tool_execution:tool-123:batch_item:2:artifact", "unsupported tool_execution selector"),
        (
            "tool_execution:tool-123:batch_item:0:cmd",
            "batch item index must be a one-based integer without leading zeroes",
        ),
        (
            "tool_execution:tool-123:batch_item:02:cmd",
            "batch item index must be a one-based integer without leading zeroes",
        ),
        ("tool_execution:tool-123:batch_item:abc:cmd", "batch item index must be a one-based integer"),
        ("tool_execution:tool-123:batch_item:+2:cmd", "batch item index must be a one-based integer"),
        ("tool_execution:tool-123:batch_item:²:cmd", "batch item index must be a one-based integer"),
    ],
)
def test_invalid_refs_name_the_problem(ref: str, error: str) -> None:
    with pytest.raises(SourceRefError) as info:
        parse_source_ref(ref)
    assert info.value.validation_error == error


def test_case_63_path_like_id_is_invalid_input(rt) -> None:
    e = err(rt.call("MemoryGet", {"source_ref": "brief:../../etc/passwd"}), "invalid_tool_input")
    assert e["details"]["validation_error"] == OPAQUE
    assert e["details"]["field"] == "source_ref"
    assert e["details"]["source_ref"] == "brief:../../etc/passwd"
    assert e["details"]["allowed_source_ref_prefixes"] == list(ALLOWED_SOURCE_REF_PREFIXES)
    assert "MemorySearch" in e["recovery_hint"]


def test_case_66_leading_zero_batch_index(rt) -> None:
    e = err(rt.call("MemoryGet", {"source_ref": "tool_execution:tool_1:batch_item:0:cmd"}), "invalid_tool_input")
    assert e["details"]["validation_error"] == "batch item index must be a one-based integer without leading zeroes"


def test_source_ref_is_not_trimmed(rt) -> None:
    e = err(rt.call("MemoryGet", {"source_ref": " agent_memory:self "}), "invalid_tool_input")
    assert e["details"]["validation_error"] == "must not contain whitespace"


@pytest.mark.parametrize("max_chars", [0, 50001, -1, 10**30])
def test_case_67_max_chars_out_of_range(rt, max_chars: int) -> None:
    e = err(rt.call("MemoryGet", {"source_ref": "agent_memory:self", "max_chars": max_chars}), "invalid_tool_input")
    assert e["details"] == {
        "tool_name": "MemoryGet",
        "field": "max_chars",
        "max_chars": max_chars,
        "validation_error": "out of range",
        "minimum": 1,
        "maximum": 50000,
    }


def test_max_chars_bounds_are_inclusive(rt) -> None:
    note = rt.tasks.agent_home("default") / "memory" / "self.md"
    note.parent.mkdir(parents=True)
    note.write_text("x" * 60000)
    one = ok(rt.call("MemoryGet", {"source_ref": "agent_memory:self", "max_chars": 1}))["memory"]
    assert one["content"] == "x" and one["truncated"] is True
    # within the default tool-output budget (2,500 tokens) the content is bounded by the budget
    fitted = ok(rt.call("MemoryGet", {"source_ref": "agent_memory:self", "max_chars": "50000"}))["memory"]
    assert 9000 < len(fitted["content"]) < 10000 and fitted["truncated"] is True
    rt.settings = rt.settings.replace(tool_output_budget_tokens=100_000)  # a roomy budget: max_chars decides
    most = ok(rt.call("MemoryGet", {"source_ref": "agent_memory:self", "max_chars": "50000"}))["memory"]
    assert len(most["content"]) == 50000 and most["truncated"] is True
    default = ok(rt.call("MemoryGet", {"source_ref": "agent_memory:self"}))["memory"]
    assert len(default["content"]) == 12000


def test_result_fields_and_wrong_types_are_parse_errors(rt) -> None:
    e = err(rt.call("MemoryGet", {"source_ref": "agent_memory:self", "content": "x"}), "invalid_tool_input")
    assert "unknown field `content`" in e["details"]["parse_error"]
    e = err(rt.call("MemoryGet", {}), "invalid_tool_input")
    assert "missing field `source_ref`" in e["details"]["parse_error"]
    e = err(rt.call("MemorySearch", {"query": "x", "limit": -1}), "invalid_tool_input")
    assert "limit" in e["details"]["parse_error"]
