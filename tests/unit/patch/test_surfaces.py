"""Input surfaces and format selection (commands spec §10.1-§10.2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.tools import REGISTRY, input_schema
from holon_nb.tools._context import CallContext
from holon_nb.tools.patching import (
    CODEX_LARK_GRAMMAR,
    CODEX_SURFACE,
    UNIFIED_SURFACE,
    detect_format,
    parse_patch,
    surface_for_route,
)

AC40 = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
CODEX = "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n*** End Patch"
CODEX_ROUTE = "openai-codex/gpt-5-codex"


@pytest.mark.parametrize(
    "route, surface",
    [
        (None, UNIFIED_SURFACE),
        ("anthropic/claude", UNIFIED_SURFACE),
        ("openai/gpt-5", UNIFIED_SURFACE),
        ("openai-codex/gpt-5", CODEX_SURFACE),
        ("openai-codex@chatgpt/gpt-5", CODEX_SURFACE),
        ("deepseek@responses/deepseek-v3", CODEX_SURFACE),
        ("deepseek/deepseek-v3", UNIFIED_SURFACE),
    ],
)
def test_surface_for_route(route: str | None, surface: str) -> None:
    assert surface_for_route(route) == surface


def test_call_context_has_model_route() -> None:
    assert CallContext(agent_id="a").model_route is None
    assert CallContext(agent_id="a", model_route="openai-codex/x").model_route == "openai-codex/x"


def test_published_schema_stays_patch_string() -> None:
    schema = input_schema(REGISTRY.get("ApplyPatch").input_model)
    assert schema["type"] == "object" and schema["required"] == ["patch"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"patch"} and schema["properties"]["patch"]["type"] == "string"


@pytest.mark.parametrize(
    "text, fmt",
    [
        (AC40, "unified_diff"),
        (CODEX, "codex_dsl"),
        ("\n\n  " + CODEX, "codex_dsl"),
        ("<<EOF\n" + CODEX + "\nEOF", "codex_dsl"),
        ("hello", "unknown"),
        ("--- a\n+++ b\n", "unknown"),
        ("x\n" * 50 + AC40, "unknown"),
    ],
)
def test_detect_format(text: str, fmt: str) -> None:
    assert detect_format(text) == fmt


def test_bare_json_string_is_the_patch(rt: Runtime, workspace: Path) -> None:
    ok(rt.call("ApplyPatch", json.dumps(AC40)))
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_stringified_argument_object(rt: Runtime, workspace: Path) -> None:
    ok(rt.call("ApplyPatch", json.dumps(json.dumps({"patch": AC40}))))
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_raw_text_on_the_unified_surface_is_the_patch(rt: Runtime, workspace: Path) -> None:
    """Review finding 9: this used to fail naming dispatch's internal `_raw` wrapper."""
    ok(rt.call("ApplyPatch", AC40))
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_non_object_json_is_invalid(rt: Runtime) -> None:
    err(rt.call("ApplyPatch", "[1, 2]"), "invalid_tool_input")
    err(rt.call("ApplyPatch", {"patch": 5}), "invalid_tool_input")


def test_lone_surrogate_is_invalid_input(rt: Runtime, workspace: Path) -> None:
    r = rt.call("ApplyPatch", {"patch": AC40.replace("TWO", "T\ud800")})
    e = err(r, "invalid_tool_input")
    assert e["details"]["field"] == "patch"
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_trailing_spaces_on_the_last_line_are_content(rt: Runtime, workspace: Path, apply) -> None:
    ok(apply("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n two\n-three\n+three  "))
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree  \n"


class TestCodexRoute:
    def test_raw_text_body(self, rt: Runtime, workspace: Path, call_as) -> None:
        res = ok(call_as(CODEX, model_route=CODEX_ROUTE))
        assert "diagnostics" not in res
        assert (workspace / "a.txt").read_text() == "one\n2\nthree\n"

    def test_input_wrapper_and_patch_field(self, rt: Runtime, workspace: Path, call_as) -> None:
        ok(call_as({"input": CODEX}, model_route=CODEX_ROUTE))
        ok(call_as({"patch": CODEX.replace("-two\n+2", "-2\n+22")}, model_route=CODEX_ROUTE))
        assert (workspace / "a.txt").read_text() == "one\n22\nthree\n"

    def test_empty_and_non_string_input(self, rt: Runtime, call_as) -> None:
        r = call_as({"input": "  "}, model_route=CODEX_ROUTE)
        assert err(r, "invalid_tool_input")["details"]["field"] == "input"
        assert json.loads(r.full_receipt)["field"] == "input"
        assert err(call_as("  ", model_route=CODEX_ROUTE), "invalid_tool_input")["details"]["field"] == "input"
        assert err(call_as({"input": 3}, model_route=CODEX_ROUTE), "invalid_tool_input")["details"]["field"] == "input"

    def test_unified_text_falls_back(self, rt: Runtime, workspace: Path, call_as) -> None:
        res = ok(call_as(AC40, model_route=CODEX_ROUTE))
        msg = res["diagnostics"][0]["message"]
        assert "expected_format=codex_dsl" in msg and "detected_format=unified_diff" in msg
        assert "surface=codex_dsl_freeform" in msg and "strict_parse_failure_rule=wrong_patch_format" in msg
        assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"

    def test_model_round_on_unified_route_refuses_input(self, rt: Runtime, call_as) -> None:
        e = err(call_as({"input": AC40}, model_route="anthropic/claude-sonnet"), "invalid_tool_input")
        assert e["details"]["expected_field"] == "patch"


def test_strict_parse_has_no_fallback_diagnostic() -> None:
    parsed = parse_patch(AC40)
    assert parsed.parser_mode == "strict" and parsed.diagnostics == []
    parsed = parse_patch(CODEX, CODEX_SURFACE)
    assert parsed.parser_mode == "strict" and parsed.detected_format == "codex_dsl"


def test_fallback_failure_returns_the_strict_error() -> None:
    from holon_nb.tools._errors import ToolFailure

    broken_codex = "*** Begin Patch\n*** Update File: a.txt\n one\n"  # no End Patch
    with pytest.raises(ToolFailure) as info:
        parse_patch(broken_codex, UNIFIED_SURFACE)
    assert info.value.error.details["rule"] == "wrong_patch_format"
    # the strict error stands (§10.2), and its hint says why the detected format failed as well
    assert info.value.error.recovery_hint.endswith(
        "@@ hunks. The text looks like codex_dsl, and read as codex_dsl it fails too: "
        "Codex DSL patch must end with *** End Patch"
    )


def test_lark_grammar_names_every_section() -> None:
    """The grammar is for the provider's freeform-tool engine (it uses zero-width terminals, so
    Python lark cannot load it); check that it covers every DSL construct the parser accepts."""
    for keyword in (
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File: ",
        "*** Delete File: ",
        "*** Update File: ",
        "*** Move to: ",
        "*** End of File",
        '"@@"',
        '"@@ "',
    ):
        assert keyword in CODEX_LARK_GRAMMAR, keyword
    assert CODEX_LARK_GRAMMAR.startswith("start: begin_patch hunk+ end_patch")
