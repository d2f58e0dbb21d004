"""notebooks/08-mcp.ipynb executed by nbclient (issue 29): a real MCP server (holon_nb.runtime.mcp._demo) started
over stdio by the kernel's runtime, a call replayed from the committed MCP cassette, and the SDK's client
against ``holon-nb mcp serve`` (notebooks/make_08_mcp.py writes the notebook and records the cassette)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support import check_tutorial, receipt_text_drift

from holon_nb.runtime import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "08-mcp.ipynb"
pytestmark = pytest.mark.xdist_group("tutorial-08")


def _cell(nb: Any, text: str) -> Any:
    """The one code cell starting with ``text``, else the one with a line equal to it."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    (cell,) = [c for c in code if c.source.startswith(text)] or [c for c in code if text in c.source.splitlines()]
    return cell


def _envelopes(cell: Any) -> list[dict[str, Any]]:
    return [o["data"][RESULT_MIMETYPE] for o in cell.get("outputs", []) if RESULT_MIMETYPE in o.get("data", {})]


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def executed(check: Any) -> Any:
    assert check.summary.exit_code == 0, check.summary
    assert check.summary.tasks_left_running == []
    return check.executed


def test_the_servers_tools_are_called_through_the_registry(executed: Any) -> None:
    [add] = _envelopes(_cell(executed, '%tool mcp__demo__add {"a": 2, "b": 40}'))
    assert add["status"] == "success" and add["result"]["content"] == [{"type": "text", "text": "42"}]
    pixel = _cell(executed, "%tool mcp__demo__pixel")
    assert any("image/png" in o.get("data", {}) for o in pixel.outputs)  # the image is shown inline
    [refused] = _envelopes(_cell(executed, '%tool mcp__demo__add {"a": 1, "c": 3}'))
    assert refused["error"]["details"]["parse_error"] == "missing field `b`; unknown field `c`"
    [hang] = _envelopes(_cell(executed, '%tool mcp__demo__hang {"seconds": 60}'))
    assert hang["error"]["kind"] == "mcp_timeout"
    crash, echo = _envelopes(_cell(executed, "%tool mcp__demo__crash"))
    assert crash["error"]["kind"] == "mcp_server_unavailable" and echo["status"] == "success"


def test_the_cassette_cell_is_replayed(executed: Any) -> None:
    [replayed] = _envelopes(_cell(executed, '%config HolonNB.mcp_cassette = "08'))
    assert replayed["result"]["replayed"] is True


def test_the_sdk_client_uses_holon_nb_mcp_serve(executed: Any) -> None:
    text = "".join(o.get("text", "") for o in _cell(executed, "import os, tempfile").outputs)
    assert "hello from an MCP client" in text and "schema error -> isError: True" in text
    assert "hidden trigger tools served: False" in text


def test_matches_its_committed_outputs(check: Any) -> None:
    """What ``holon-nb test`` checks: the run's outputs equal the committed ones, after normalisation."""
    assert not check.failed, check.report()


def test_saved_receipt_text_is_the_current_renderers(check: Any) -> None:
    assert not receipt_text_drift(check), "\n\n".join(receipt_text_drift(check))
