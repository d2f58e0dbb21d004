"""Replaying cassettes again in the same holon home: seeded ids never collide with stored records, and
``history_since`` keeps an earlier replay pass out of the next pass's history (no ``history_prefix`` drift)."""

from __future__ import annotations

from pathlib import Path

from holon_nb import Runtime
from holon_nb.providers.base import TextBlock, ToolUseBlock
from holon_nb.providers.cassettes._cassette import CassetteProvider
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime.core._store import now_rfc3339
from holon_nb.runtime.turns._records import TurnHooks

REF = "scripted@default/scripted"


def _turn(rt: Runtime, path: Path, mode: str, message: str, history_since: str | None = None):
    cas = CassetteProvider(None, path, mode, workspace=rt.workspace, holon_home=rt.home)
    try:
        result = rt.turns.run_sync(message, model=REF, hooks=TurnHooks(**cas.turn_hooks()), history_since=history_since)
    except BaseException:
        cas.close(check=False)
        raise
    cas.close(terminal=result.terminal)  # replay: leftovers would raise CassetteDrift(unconsumed)
    return cas, result


def test_two_cassettes_replay_twice_in_one_home(tmp_path: Path, workspace: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with Runtime(home=tmp_path / "home1", workspace=workspace) as rt:
        rt.providers.register(
            REF,
            ScriptedProvider(
                [
                    Step.response([TextBlock("listing"), ToolUseBlock("c1", "ExecCommand", {"cmd": "echo one"})]),
                    Step.text("turn one done"),
                    Step.tool_use("c2", "GetAgent", {}),
                    Step.text("turn two done"),
                ]
            ),
        )
        _, live1 = _turn(rt, a, "record", "first")
        _, live2 = _turn(rt, b, "record", "second")
        assert (live1.final_text, live2.final_text) == ("turn one done", "turn two done")
    with Runtime(home=tmp_path / "home2", workspace=workspace) as rt:
        rt.providers.register(REF, ScriptedProvider([]))
        seen: list[str] = []
        for _ in range(2):
            since = now_rfc3339()
            for path, message, live in ((a, "first", live1), (b, "second", live2)):
                cas, again = _turn(rt, path, "replay", message, history_since=since)
                assert cas.failure is None, cas.failure
                assert again.terminal == "completed" and again.final_text == live.final_text
                seen.append(again.turn_id)
        assert len(set(seen)) == 4  # the second pass skipped the seeded ids the first one stored
        turns = rt.conversations.turns("default")
        assert [t["terminal_kind"] for t in turns] == ["completed"] * 4
        assert rt.conversations.totals("default")["turns"] == 4


def test_history_since_limits_history_and_is_checked(rt: Runtime) -> None:
    rt.providers.register(REF, ScriptedProvider([Step.text("one"), Step.text("two"), Step.text("three")]))
    rt.run_turn("first", model=REF)
    since = now_rfc3339()
    provider = ScriptedProvider([Step.text("two"), Step.text("three")])
    rt.providers.register(REF, provider)
    rt.turns.run_sync("second", model=REF, history_since=since)
    rt.turns.run_sync("third", model=REF, history_since=since.replace("Z", "+00:00"))
    first, second = (r.conversation for r in provider.requests())
    assert [m.text for m in first] == ["second"]
    assert [getattr(m, "text", None) for m in second][0] == "second" and len(second) == 3
    assert len(rt.conversations.history("default")) == 6  # without the bound: every turn
    import pytest

    with pytest.raises(ValueError, match="history_since"):
        rt.turns.run_sync("x", model=REF, history_since="yesterday")
    with pytest.raises(ValueError, match="offset"):
        rt.turns.run_sync("x", model=REF, history_since="2026-01-01T00:00:00")
