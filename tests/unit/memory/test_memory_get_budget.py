"""MemoryGet fits its own receipt into the caller's tool-output budget (review fix over agents spec §5.18).

Without it an ``output_ref`` could never be read: the MemoryGet receipt of an
over-budget output was itself over budget and was projected to a new
``output_ref``, forever.
"""

from __future__ import annotations

import json
from pathlib import Path

from _support import ok

from holon_nb import Runtime, RuntimeSettings
from holon_nb.render import estimate_tokens


def _stand_in_ref(result) -> str:
    assert result.projected, result.receipt[:300]
    return json.loads(result.receipt)["output_ref"]


def test_output_ref_of_a_long_command_is_readable_with_defaults(rt: Runtime) -> None:
    ref = _stand_in_ref(rt.call("ExecCommand", {"cmd": "seq 1 6000"}))
    got = rt.call("MemoryGet", {"source_ref": ref})
    mem = ok(got)["memory"]
    assert got.projected is False
    assert estimate_tokens(got.receipt) <= rt.settings.tool_output_budget_tokens
    assert mem["truncated"] is True and mem["kind"] == "tool_command_output"
    assert '"content": "1\\n2\\n3\\n4\\n' in mem["content"]  # the head of the output
    meta = mem["metadata"]
    assert meta["returned_chars"] == len(mem["content"]) > 1000
    assert meta["total_chars"] > meta["returned_chars"]
    assert meta["tool_execution_id"] == ref.split(":")[1]  # provenance kept
    assert f"{meta['returned_chars']} of {meta['total_chars']}" in got.envelope["summary_text"]


def test_a_tiny_budget_still_answers_without_a_stand_in(tmp_path: Path, workspace: Path) -> None:
    settings = RuntimeSettings(tool_output_budget_tokens=50)
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as tiny:
        ref = _stand_in_ref(tiny.call("ExecCommand", {"cmd": "seq 1 6000"}))
        got = tiny.call("MemoryGet", {"source_ref": ref})
        mem = ok(got)["memory"]
        assert got.projected is False
        assert estimate_tokens(got.receipt) <= 50
        assert mem["truncated"] is True
        assert mem["metadata"]["returned_chars"] == len(mem["content"])
        assert mem["metadata"]["total_chars"] > 20000


def test_a_document_that_fits_is_returned_whole(rt: Runtime) -> None:
    note = rt.tasks.agent_home("default") / "memory" / "self.md"
    note.parent.mkdir(parents=True)
    note.write_text("short note\n")
    got = rt.call("MemoryGet", {"source_ref": "agent_memory:self"})
    mem = ok(got)["memory"]
    assert got.projected is False
    assert mem["content"] == "short note\n" and mem["truncated"] is False
    assert (mem["metadata"]["returned_chars"], mem["metadata"]["total_chars"]) == (11, 11)
    assert mem["metadata"]["memory_name"] == "self"


def test_escaping_is_counted_not_just_characters(rt: Runtime) -> None:
    """Quotes and control characters take more room in the receipt than in the content."""
    note = rt.tasks.agent_home("default") / "memory" / "self.md"
    note.parent.mkdir(parents=True)
    note.write_text('"\x01' * 20000)
    got = rt.call("MemoryGet", {"source_ref": "agent_memory:self", "max_chars": 50000})
    mem = ok(got)["memory"]
    assert got.projected is False and mem["truncated"] is True
    assert 2000 < len(mem["content"]) < 10000 // 4  # two characters render as eight


def test_max_chars_below_the_budget_still_applies(rt: Runtime) -> None:
    ref = _stand_in_ref(rt.call("ExecCommand", {"cmd": "seq 1 6000"}))
    mem = ok(rt.call("MemoryGet", {"source_ref": ref, "max_chars": 300}))["memory"]
    assert len(mem["content"]) == 300 and mem["truncated"] is True
    assert mem["metadata"]["returned_chars"] == 300
