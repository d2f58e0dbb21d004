"""``holon_nb.render``'s API: the outputs of a tool result, from an envelope or any ``ShownResult``.

render is the layer below ``holon_nb.tools`` (pyproject's layers contract): it reads a tool's declaration
through its ``Specs`` protocol, so these tests pin what it relies on (a ``Registry`` is a ``Specs``, the
custom-text marker is ``Rendering.CUSTOM_TEXT``'s value) and that its functions take a result that is not a
``ToolResult``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from holon_nb import render
from holon_nb.render._receipt import CUSTOM_TEXT
from holon_nb.tools import REGISTRY, Rendering, render_receipt

_PATCH_ENV = {
    "tool_name": "ApplyPatch",
    "status": "success",
    "summary_text": "1 file changed",
    "result": {"changed_files": [], "changed_file_count": 0},
}


def test_the_custom_text_marker_is_the_rendering_enums_value() -> None:
    assert Rendering.CUSTOM_TEXT == CUSTOM_TEXT


def test_a_registry_is_the_specs_of_a_custom_text_receipt() -> None:
    text = render.receipt_text(_PATCH_ENV, REGISTRY)
    assert text == render_receipt(_PATCH_ENV) and not text.startswith("{")
    # without declarations, every success is the canonical JSON envelope
    assert render.receipt_text(_PATCH_ENV, None) == render.dumps_envelope(_PATCH_ENV)


def test_model_receipt_scrubs_then_projects_over_budget() -> None:
    env = {"tool_name": "Sleep", "status": "success", "result": {"note": "secret-value " * 40}}
    context = render.ReceiptContext("tool_0123456789abcde", budget_tokens=20)
    got = render.model_receipt(env, REGISTRY, context, lambda text: text.replace("secret-value", "[redacted]"))
    assert got.projected and "secret-value" not in got.full and "[redacted]" in got.full
    stand_in = json.loads(got.text)
    assert stand_in["output_ref"] == "tool_execution:tool_0123456789abcde:output"
    small = render.model_receipt(env, REGISTRY, render.ReceiptContext(budget_tokens=10_000), str)
    assert small == (small.full, small.full, False)


def test_command_failures_reads_exec_and_batch_envelopes() -> None:
    failed = {
        "tool_name": "ExecCommand",
        "status": "success",
        "summary_text": "exited 2",
        "result": {"disposition": "completed", "exit_status": 2, "command_diagnostics": {"cmd_preview": "false"}},
    }
    assert render.command_failures(failed) == [("false", "exit status 2")]
    batch = {
        "tool_name": "ExecCommandBatch",
        "status": "success",
        "result": {"items": [{"cmd": "a", "status": "completed"}, {"cmd": "b", "status": "rejected"}]},
    }
    assert render.command_failures(batch) == [("b", "rejected")]
    assert render.command_failures({**failed, "status": "error"}) == []


@dataclass
class _Shown:
    """A result that is not a ``ToolResult``: what a typed result will be able to pass."""

    display_envelope: dict[str, Any]
    receipt: str = "receipt text"
    duration_ms: int = 7
    ran_ms: int | None = None
    projected: bool = False
    execution_id: str = "tool_0123456789abcde"
    previews: tuple[dict[str, Any], ...] = ()
    paths: tuple[tuple[str, str], ...] = field(default=())

    @cached_property
    def display_text(self) -> str:
        return render.human_text(self, REGISTRY)


def test_the_notebook_outputs_take_any_shown_result() -> None:
    token = "cb_" + "a" * 64
    shown = _Shown({"tool_name": "Sleep", "status": "success", "summary_text": f"woke {token}", "result": {}})
    bundle = render.mimebundle(shown)
    assert set(bundle) == {"text/plain", "text/html", render.RESULT_MIMETYPE}
    assert bundle["text/plain"].startswith("Sleep · success · 7 ms — woke cb_[redacted]")
    assert token not in json.dumps(bundle) and bundle["text/html"] == render.card_html(shown)
    picture = {"mime": "image/png", "data": b"\x89PNG", "width": 2, "height": 1, "label": "a.png"}
    with_picture = render.mimebundle(_Shown(shown.display_envelope, previews=(picture,)))
    assert with_picture["image/png"] == "iVBORw=="
    assert with_picture["text/html"].endswith(render.preview_html(picture))
