"""Every HTML card and live view we emit: one root that MathJax skips, scoped CSS, a capped live tail.

JupyterLab typesets ``\\[ … \\]`` and ``$ … $`` in HTML outputs unless an ancestor carries
``tex2jax_ignore``/``mathjax_ignore``; its default table style right-aligns cells and a widget's HTML
is double-spaced. These tests read the HTML each renderer produces for real tool results and views.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from _tool_calls import success_calls

from holon_nb import Runtime
from holon_nb.notebook._agent_view import AgentTurnView, TurnTrace, render_transcript_html
from holon_nb.notebook._board import render_board_html
from holon_nb.notebook._display import Note, Table
from holon_nb.notebook._widgets import TAIL_FOLLOW, VIEW_LINES, TaskWidget
from holon_nb.render._card import CARD_CLASS, MATH_IGNORE, render_card
from holon_nb.render._diff_view import render_diff

#: The scope of every card rule: root class and a MathJax class, outranking JupyterLab's
#: ``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`` (two classes and a type).
SCOPE = f"div.{CARD_CLASS}.mathjax_ignore"
_VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "col", "source"}


class _Roots(HTMLParser):
    """The top-level elements of a fragment: ``[(tag, attrs)]``, and any top-level text."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.roots: list[tuple[str, dict[str, str]]] = []
        self.stray = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.roots.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in _VOID:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag not in _VOID:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0:
            self.stray += data.strip()


def root_of(fragment: str) -> dict[str, str]:
    """The attributes of the fragment's single root element (asserts there is exactly one, and nothing else)."""
    parser = _Roots()
    parser.feed(fragment)
    parser.close()
    assert parser.depth == 0, fragment[-300:]
    assert len(parser.roots) == 1 and not parser.stray, (parser.roots, parser.stray, fragment[:300])
    return parser.roots[0][1]


def assert_card_root(fragment: str) -> None:
    """One root, carrying the MathJax-ignore classes and the scoping class, whose first child is the scoped CSS."""
    attrs = root_of(fragment)
    classes = attrs.get("class", "").split()
    assert set(MATH_IGNORE.split()) | {CARD_CLASS} <= set(classes), classes
    assert re.match(r"<div [^>]*><style>", fragment), fragment[:200]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("html")
    workspace = base / "W"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")  # the acceptance fixture W (tests/conftest.py)
    rt = Runtime(home=workspace / ".holon", workspace=workspace)
    try:
        yield success_calls(rt, workspace, base)
    finally:
        rt.close()


def test_every_tool_card_has_one_root_mathjax_skips(results: dict[str, Any]) -> None:
    assert len(results) > 20
    for name, result in results.items():
        html = result._repr_mimebundle_()["text/html"]
        assert_card_root(html)
        assert "holon-receipt" in root_of(html)["class"], name


def test_error_card_and_a_diff_of_tex_like_text(results: dict[str, Any]) -> None:
    env = {
        "tool_name": "ApplyPatch",
        "status": "error",
        "error": {"kind": "invalid_arguments", "message": "$5 and $6", "retryable": False},
    }
    assert_card_root(render_card(env, "r"))
    diff = render_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-re.sub(r'\\[(.*)\\]', '$1', s)\n+x = 1\n")
    assert set(MATH_IGNORE.split()) <= set(root_of(diff)["class"].split())


def test_notes_tables_and_the_board_have_a_card_root() -> None:
    assert_card_root(Note("cost $5 … $6")._repr_mimebundle_()["text/html"])
    assert_card_root(Table("t", ["a", "b"], [["1", "2"]])._repr_mimebundle_()["text/html"])
    item = {
        "id": "work_1",
        "objective": "find \\[x\\]",
        "state": "open",
        "readiness": "ready",
        "focus": "",
        "todo_list": [{"state": "done", "text": "a"}],
        "waits": [],
    }
    assert_card_root(render_board_html("main", [item], []))
    assert_card_root(render_board_html("main", [], []))


def test_task_view_html_children_have_card_roots() -> None:
    view = TaskWidget("task_0123456789abcde", "echo $5", on_stop=lambda _t: "stop requested")
    view.apply(status="running", elapsed_s=1.0, output="a \\[ b \\]\n")
    for child in view.children[:2]:
        assert_card_root(child.value)
    view.apply(note="stop requested")
    assert_card_root(view.children[0].value)
    view.apply(status="completed", exit_status=0, elapsed_s=2.0)
    assert_card_root(view.children[1].value)


def _trace() -> TurnTrace:
    trace = TurnTrace("main", "scripted//tmp/pytest-1/script.json", "hi")
    trace.apply("turn_started", {"turn_id": "turn_1"})
    trace.apply("round_started", {"round": 1})
    trace.apply("assistant_round", {"text": "costs $5 and $6", "usage": {"input_tokens": 3}})
    trace.apply("tool_call", {"tool_use_id": "t1", "name": "ExecCommand", "input": {"cmd": "echo '\\[x\\]'"}})
    trace.apply(
        "tool_result",
        {
            "tool_use_id": "t1",
            "receipt": "ExecCommand: exit 0\n\\[x\\]",
            "envelope": {"tool_name": "ExecCommand", "status": "success"},
        },
    )
    return trace


def test_agent_view_html_has_card_roots() -> None:
    trace = _trace()
    assert_card_root(render_transcript_html(trace))
    view = AgentTurnView(trace, on_stop=lambda: "stop requested")
    assert_card_root(view.children[0].value)
    assert_card_root(view.children[1].value)
    future = view.ask("ExecCommand", {"cmd": "rm -rf $HOME"}, "writes outside the workspace")
    question = view.children[2].children[0].children[0]
    assert_card_root(question.value)
    future.cancel()  # withdrawn: the note goes inside the same root
    assert "withdrawn" in question.value
    assert_card_root(question.value)
    trace.apply("turn_terminal", {"terminal": "completed", "final_text": "the end"})
    view.refresh()
    assert_card_root(view.children[1].value)
    assert "the end" in view.children[1].value


def _rules(fragment: str) -> dict[str, str]:
    """The scoped ``<style>`` of a card root as ``{selector: declarations}`` (one entry per selector)."""
    css = re.match(r"<div [^>]*><style>(.*?)</style>", fragment, re.S)
    assert css, fragment[:200]
    rules: dict[str, str] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css.group(1)):
        for selector in selectors.split(","):
            rules[selector.strip()] = rules.get(selector.strip(), "") + ";" + body
    return rules


def test_scoped_css_left_aligns_cells_and_single_spaces_text(results: dict[str, Any]) -> None:
    batch = results["ExecCommandBatch"]._repr_mimebundle_()["text/html"]
    assert "<table" in batch and "<td>" in batch
    rules = _rules(batch)
    # every rule is scoped under the card's root: nothing outside a holon card changes (the dark theme's
    # colours apply under JupyterLab's dark-theme marker on <body>)
    dark = "body[data-jp-theme-light='false'] "
    assert all(sel.removeprefix(dark).startswith(f"{SCOPE}") for sel in rules), list(rules)
    # outranks JupyterLab's ``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td {text-align:right}``
    for cell in ("tr", "th", "td"):
        assert "text-align:left" in rules[f"{SCOPE} {cell}"], cell
    for wrapped in ("", " div", " p", " span"):
        assert "line-height:normal" in rules[f"{SCOPE}{wrapped}"], wrapped
    assert "margin:0" in rules[f"{SCOPE} p"]
    # the same rules in every card and view, live or static
    view = TaskWidget("task_0123456789abcde", "true")
    assert _rules(view.children[0].value) == rules == _rules(Note("n")._repr_mimebundle_()["text/html"])


def test_board_headers_are_separated_and_left_aligned() -> None:
    item = {
        "id": "work_1",
        "objective": "a long objective " * 6,
        "state": "open",
        "readiness": "ready",
        "focus": "",
        "todo_list": [],
        "waits": [],
    }
    board = render_board_html("main", [item], [])
    rules = _rules(board)
    th = rules[f"{SCOPE} th"]
    assert re.search(r"padding:\S+ (1[0-9]|[2-9][0-9])px", th), th  # "state" and "readiness" do not run together
    assert "text-align:left" in th and "text-align:left" in rules[f"{SCOPE} td"]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", board)
    assert headers[:3] == ["objective", "state", "readiness"]


def _pre_style(fragment: str, cls: str | None = None) -> str:
    match = re.search(r"<pre (?:class='%s' )?style='([^']*)'" % (cls or "[^']*"), fragment)
    assert match, fragment[:300]
    return match.group(1)


def test_live_tail_is_the_receipts_capped_scroll_box(results: dict[str, Any]) -> None:
    view = TaskWidget("task_0123456789abcde", "seq")
    view.apply(status="running", elapsed_s=1.0, output="".join(f"line {i} " + "x" * 150 + "\n" for i in range(60)))
    tail = view.children[1].value
    assert tail.count("line ") == VIEW_LINES  # the tail keeps its 40 lines, in a box of capped height
    # the tail widget itself is the scroll box (it outlives each update, so a reader's scroll is kept), and
    # column-reverse keeps it at the newest line (issue 26 item 6); the header's <style> says so
    assert TAIL_FOLLOW in view.children[1]._dom_classes
    box = re.search(r"\.widget-html\." + TAIL_FOLLOW + r"\{([^}]*)\}", view.children[0].value)
    assert box, view.children[0].value[:500]
    assert "overflow:auto" in box.group(1) and "flex-direction:column-reverse" in box.group(1), box.group(1)
    # as tall as the final receipt's (TaskOutput card) box
    final = results["TaskOutput"]._repr_mimebundle_()["text/html"]
    height = re.search(r"max-height:\d+(\.\d+)?em", _pre_style(final))
    assert height and height.group(0) in box.group(1)
    # a static view's tail is a capped box of its own that starts at the newest line too
    static = view.static_bundle()["text/html"]
    assert "holon-task-tail-box" in static and "column-reverse" in static and height.group(0) in static
