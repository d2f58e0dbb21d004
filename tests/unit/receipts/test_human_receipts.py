"""Every registered tool's human receipt (notebook ``text/plain``), from real calls, follows the rules.

Rules (render/human): the first line is ``Tool · status · N ms[ — summary]``; the text
is never the JSON envelope; no line is longer than 160 characters except lines of
command output; errors name their kind and hint; paths under the holon home read
``<holon home>/…`` and the workspace's own paths are relative; the model-visible
receipt is still the contract's rendering.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _tool_calls import success_calls

from holon_nb import Runtime
from holon_nb.render import ReceiptContext, Scrubber
from holon_nb.render.human import MAX_LINE, shown_status
from holon_nb.tools import REGISTRY, render_receipt
from holon_nb.tools.builtin.notebook._tools import NOTEBOOK_TOOLS

# the status is the call's, or for a successful call reporting one task the task's (`cancelled`, not `success`)
_HEAD = re.compile(
    r"^(?P<tool>[A-Za-z]+) · (?P<status>success|error|deferred|queued|running|cancelling|completed|failed|"
    r"cancelled|interrupted) · \d+ ms( — .+)?$"
)


def _output_lines(env: dict[str, Any]) -> set[str]:
    """Lines of command output anywhere in the envelope (they may be longer than MAX_LINE)."""
    lines: set[str] = set()

    def walk(v: Any, key: str = "") -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and key.endswith("preview"):
            lines.update(line.strip() for line in v.splitlines())

    walk(env)
    return lines


def check_rules(result: Any, home: Path, workspace: Path) -> str:
    text = result.display_text
    lines = text.splitlines()
    m = _HEAD.match(lines[0])
    assert m, lines[0]
    assert (m["tool"], m["status"]) == (result.tool_name, shown_status(result.display_envelope))
    if result.envelope.get("summary_text"):
        assert lines[0].split(" — ", 1)[1][:40] == result.envelope["summary_text"][:40]
    with pytest.raises(ValueError):
        json.loads(text)
    assert not any(line.lstrip().startswith('{"tool_name"') for line in lines), text
    exempt = _output_lines(result.display_envelope)
    for line in lines:
        assert len(line) <= MAX_LINE or line.strip() in exempt, (result.tool_name, line)
    assert str(home) not in text, text
    assert str(workspace) + "/" not in text, text
    assert "\x1b" not in text
    return text


@pytest.fixture
def calls(tmp_path: Path, workspace: Path) -> Any:
    rt = Runtime(home=workspace / ".holon", workspace=workspace)
    try:
        yield rt, success_calls(rt, workspace, tmp_path)
    finally:
        rt.close()


def test_every_tool_success_receipt_reads_as_text(calls: Any, workspace: Path) -> None:
    rt, results = calls
    # the image tools and XSearch succeed only against a model server (their own tests serve one on 127.0.0.1);
    # here their real receipts are the domain errors of a call without one (test_*_without_a_model)
    # the opt-in Notebook tools need a kernel: tests/unit/notebook/test_notebook_tools.py checks their receipts
    expected = set(REGISTRY.names()) - IMAGE_TOOLS - {"XSearch"} - set(NOTEBOOK_TOOLS)
    assert expected <= set(results), expected - set(results)
    for name, result in results.items():
        text = check_rules(result, rt.home, workspace)
        assert len(text.splitlines()) >= 2 or not result.result, name  # the result's fields follow the headline
        # the model still reads the contract's rendering, untouched by the human one
        context = ReceiptContext(result.execution_id, rt.settings.tool_output_budget_tokens)
        # (scrubbed: a trigger's capability token is a secret, issue 25 item 1d)
        assert result.full_receipt == Scrubber().text(render_receipt(result.envelope, context=context))


def test_tables_and_fields_of_list_results(calls: Any) -> None:
    _, results = calls
    tasks = results["ListTasks"].display_text.splitlines()
    assert "  tasks (1):" in tasks
    header = next(line for line in tasks if line.strip().startswith("id "))
    assert re.match(r"^ {4}id +status +kind +summary", header)
    assert "[x] collect inputs" in results["UpdateWorkItem"].display_text
    assert re.search(r"^    plan +work-items/work_\w+/plan.md$", results["GetWorkItem"].display_text, re.M)
    timers = results["ListTimers"].display_text
    assert re.search(r"timer_\w+ +active +\S+ +no +0 +check again", timers)
    hits = results["MemorySearch"].display_text.splitlines()
    # two lines a hit: its source ref and kind, then title and snippet further in; none wider than a card
    at = hits.index(next(line for line in hits if line.startswith("  hits (")))
    assert re.match(r"^ {4}\S+:\S+  \(\w+\)$", hits[at + 1]) and hits[at + 2].startswith(" " * 8 + "")
    assert max(len(line) for line in hits[at:]) <= 112, hits


def test_long_values_are_cut_with_a_visible_marker(rt: Runtime) -> None:
    objective = "word " * 80
    r = rt.call("CreateWorkItem", {"objective": objective})
    line = next(x for x in r.display_text.splitlines() if x.strip().startswith("objective"))
    assert re.search(r"… \[\+\d+ chars\]$", line)
    assert len(line) <= MAX_LINE


_BAD = {"_no_such_field": 1}
IMAGE_TOOLS = {"ViewImage", "GenerateImage"}


def test_image_tools_without_a_model(rt: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    for key in (
        "HOLON_VISION_MODEL",
        "HOLON_IMAGE_GENERATION_MODEL",
        "HOLON_MODEL",
        "HOLON_NB_PROVIDERS",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(workspace / "fake-home"))
    Image.new("RGB", (40, 30), "red").save(workspace / "a.png")
    view = rt.call("ViewImage", {"path": "a.png", "prompt": "what is it?"})
    text = check_rules(view, rt.home, workspace)
    assert re.search(r"^  kind +vision_adapter_unavailable$", text, re.M), text
    assert re.search(r"^      path +a\.png$", text, re.M), text  # the validated image, relative to the workspace
    gen = rt.call("GenerateImage", {"prompt": "a red square"})
    assert re.search(r"^  hint +Set HOLON_IMAGE_GENERATION_MODEL", check_rules(gen, rt.home, workspace), re.M)


def test_x_search_without_a_key(rt: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    r = rt.call("XSearch", {"query": "holon_nb"})
    text = check_rules(r, rt.home, workspace)
    assert re.search(r"^  kind +x_search_unavailable$", text, re.M), text
    assert re.search(r"^  hint +\S", text, re.M), text


def test_web_receipts_read_as_text(calls: Any) -> None:
    _, results = calls
    fetched = results["WebFetch"].display_text
    assert "Release notes" in fetched and "Version 2 reads receipts" in fetched
    assert "Release notes" in results["WebSearch"].display_text


def test_every_tool_error_receipt_names_kind_and_hint(rt: Runtime, workspace: Path) -> None:
    for name in REGISTRY.names():
        r = rt.call(name, _BAD)
        assert not r.ok, name
        text = check_rules(r, rt.home, workspace)
        assert re.search(r"^  kind +invalid_tool_input$", text, re.M), text
        # the parse error may wrap (its continuation lines align under it): read it as one text
        parse = re.search(r"^  parse error +(.*(?:\n {6,}\S.*)*)", text, re.M)
        assert parse and "unknown field `_no_such_field`" in " ".join(parse.group(1).split()), text
        assert re.search(r"^  hint +\S", text, re.M), text
        assert re.search(r"^  retryable +no$", text, re.M), text


def test_an_error_hint_is_shown_whole_on_aligned_lines(rt: Runtime, workspace: Path) -> None:
    r = rt.call("ExecCommand", {"cmd": "ls", "status": "running"})  # the quickstart's second error
    hint = r.envelope["error"]["recovery_hint"]
    assert len(hint) > MAX_LINE - 30  # long enough to need a second line
    text = check_rules(r, rt.home, workspace)
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("  hint "))
    column = lines[start].index(hint.split()[0])
    shown = [lines[start][column:]]
    for line in lines[start + 1 :]:
        if line[:column].strip():
            break
        shown.append(line[column:])
    assert len(shown) > 1 and " ".join(shown) == " ".join(hint.split())  # every word, none cut, in order
    assert all(len(line) <= MAX_LINE for line in lines)


def test_domain_error_keeps_the_details_that_matter(rt: Runtime, workspace: Path) -> None:
    r = rt.call("TaskStatus", {"task_id": "task_000000000000000"})
    text = check_rules(r, rt.home, workspace)
    assert re.search(r"^  kind +task_not_found$", text, re.M), text
    r = rt.call("RemoveWorktree", {"execution_root_id": "nope"})
    text = check_rules(r, rt.home, workspace)
    assert "details:" in text or "kind" in text


def test_paths_read_relative_to_the_workspace_and_the_holon_home(calls: Any) -> None:
    rt, results = calls
    promoted = rt.call("ExecCommand", {"cmd": "seq 1 40000", "max_output_tokens": 100})
    text = promoted.display_text
    assert "full output: <holon home>/agents/default/" in text, text
    assert "workdir      ." in results["TaskStatus"].display_text


def _reaches_a_runtime(obj: Any, depth: int = 4) -> bool:
    """True when a strong reference chain of at most ``depth`` links leads from ``obj`` to a Runtime."""
    import gc
    import types

    seen, frontier = set(), [obj]
    for _ in range(depth + 1):
        nxt = []
        for o in frontier:
            if isinstance(o, Runtime):
                return True
            if id(o) in seen or isinstance(o, (type, types.ModuleType)):
                continue
            seen.add(id(o))
            nxt.extend(gc.get_referents(o))
        frontier = nxt
    return False


def test_path_labels_are_read_when_shown_and_hold_the_runtime_weakly(tmp_path: Path) -> None:
    rt = Runtime(home=tmp_path / "home", workspace=tmp_path)
    kept = rt.call("ExecCommand", {"cmd": "seq 1 40000", "max_output_tokens": 100, "shell": "sh", "login": False})
    # the labels are a function the result calls when first shown; it keeps no strong reference to the runtime
    assert callable(kept.path_labels) and not _reaches_a_runtime(kept.path_labels)
    rt.close()
    # shown only now, after its runtime closed: the home still reads <holon home>
    text = kept.display_text
    assert "full output: <holon home>/agents/default/" in text, text
    home = str(tmp_path / "home")
    assert home not in text and home not in kept._repr_mimebundle_()["text/html"]


def test_a_result_shown_while_its_runtime_runs_labels_the_home(tmp_path: Path) -> None:
    with Runtime(home=tmp_path / "home", workspace=tmp_path) as rt:
        r = rt.call("ExecCommand", {"cmd": "seq 1 40000", "max_output_tokens": 100, "shell": "sh", "login": False})
        assert "full output: <holon home>/agents/default/" in r.display_text, r.display_text
        assert "&lt;holon home&gt;/agents/default/" in r._repr_mimebundle_()["text/html"]


# ---------------------------------------------------------------- issue 26, item 7: debug-dump receipts

from holon_nb.render._card import render_card  # noqa: E402
from holon_nb.render.human import PROSE_LINE, render_human  # noqa: E402

LONG_PATH = "/srv/data/projects/illustrations/generated/2026-12-03/a-very-long-descriptive-file-name-of-the-image.png"


def _view_image_env() -> dict[str, Any]:
    return {
        "tool_name": "ViewImage",
        "status": "success",
        "summary_text": "ViewImage image/png 64x64: observed by standin/eye",
        "result": {
            "selected_mode": "vision_adapter",
            "visual_reference": {
                "id": "vis_5c9063b436cedf05",
                "mime": "image/png",
                "byte_count": 2180,
                "sha256": "5c" * 32,
                "path": LONG_PATH,
                "size": {"width": 64, "height": 64},
            },
            "observation": {
                "generated_by": {"provider": "standin", "model": "eye", "mode": "vision_adapter"},
                "prompt": "What does this logo show?",
                "summary": "The Python logo: two stylised snakes, one blue and one yellow, interlocked head to tail "
                "so that together they form a cross-like shape with rounded ends, on a transparent background.",
                "elements": [{"description": "blue snake, upper left"}, {"description": "yellow snake, lower right"}],
                "relations": [{"description": "the two snakes interlock"}],
                "uncertainties": ["the image is only 64x64 pixels"],
            },
        },
    }


def test_view_image_receipt_is_not_a_debug_dump() -> None:
    text = render_human(_view_image_env(), 97, REGISTRY)
    assert "[+" not in text  # nothing the cell is about is cut: path, summary
    assert LONG_PATH in text
    summary = _view_image_env()["result"]["observation"]["summary"]
    assert " ".join(summary.split()) in " ".join(line.strip() for line in text.splitlines())
    assert '[{"description"' not in text and "Elements:" not in text
    assert "    - blue snake, upper left" in text and "    - the two snakes interlock" in text


def test_generate_image_receipt_shows_the_generated_file_whole() -> None:
    uri = "workspace://agent_home/generated-images/2026-12-03/blue-square-10546476f59c88f4.png"
    env = {
        "tool_name": "GenerateImage",
        "status": "success",
        "summary_text": "GenerateImage created one image",
        "result": {
            "provider": "standin",
            "model": "brush",
            "prompt": "a flat blue square",
            "images": [
                {
                    "id": "img_10546476f59c88f4",
                    "mime": "image/png",
                    "byte_count": 4575,
                    "sha256": "10" * 32,
                    "uri": uri,
                    "size": {"width": 1024, "height": 1024},
                }
            ],
        },
    }
    text = render_human(env, 27, REGISTRY)
    assert uri in text and "[+" not in text


def _error_env(message: str, hint: str, kind: str = "invalid_tool_input") -> dict[str, Any]:
    return {
        "tool_name": "ApplyPatch",
        "status": "error",
        "summary_text": message,
        "error": {"kind": kind, "message": message, "recovery_hint": hint, "retryable": False, "details": {}},
    }


def test_long_values_wrap_once_to_fit_an_output_area() -> None:
    # wrapped at 130 characters after a label column, a line was ~145 wide and the front end wrapped it again
    hint = "read the target region first and submit a hunk whose context lines match the current file exactly; " * 3
    text = render_human(_error_env("short", hint), 3, REGISTRY)
    hint_lines = [line for line in text.splitlines()[1:] if line.strip()]
    assert all(len(line) <= PROSE_LINE for line in hint_lines), max(hint_lines, key=len)
    assert " ".join(hint.split()) in " ".join(line.split("hint", 1)[-1].strip() for line in hint_lines)


def test_context_not_found_hint_keeps_the_file_excerpt_on_its_own_lines() -> None:
    hint = (
        "read the exact target region in pyproject.toml and submit a hunk with matching context. "
        'Nearby current content:\n1: [build-system]\n2: requires = ["hatchling>=1.18"]\n3: build-backend = "x"'
    )
    text = render_human(_error_env("hunk context does not match", hint, "context_not_found"), 2, REGISTRY)
    lines = [line.strip() for line in text.splitlines()]
    assert "1: [build-system]" in lines and '2: requires = ["hatchling>=1.18"]' in lines
    assert '3: build-backend = "x"' in lines


def test_an_error_card_states_its_message_once() -> None:
    message = "cannot update missing file nope.txt"
    card = render_card(_error_env(message, "read nope.txt first"), "receipt text", 7)
    before_model_view = card.split("what the model sees")[0]
    assert before_model_view.count(message) == 1, card


def test_a_task_receipt_shows_the_task_status_and_how_long_it_ran() -> None:
    env = {
        "tool_name": "TaskOutput",
        "status": "success",
        "result": {"retrieval_status": "success", "task": {"task_id": "task_0123456789abcde", "status": "cancelled"}},
    }
    assert render_human(env, 0, REGISTRY).splitlines()[0] == "TaskOutput · cancelled · 0 ms"
    assert render_human(env, 0, REGISTRY, ran_ms=2884).splitlines()[0] == "TaskOutput · cancelled · ran 2.9 s"
    assert "ran 2.9 s" in render_card(env, "r", 0, ran_ms=2884) and ">success<" not in render_card(env, "r", 0)


def test_the_follow_views_waking_message_is_cut_at_a_word_with_an_ellipsis() -> None:
    from holon_nb.notebook._agent_magics import waking_excerpt

    text = "CI finished: " + "the integration suite passed on every platform " * 5
    shown = waking_excerpt({"text": text}, width=80)
    assert shown.endswith("…") and len(shown) <= 80
    assert text.startswith(shown[:-1]) and text[len(shown) - 1] == " "  # whole words only
    assert waking_excerpt({"text": "short\nsecond line"}) == "short …"
    assert waking_excerpt({"text": "all done"}) == "all done"
