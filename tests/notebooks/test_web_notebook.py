"""notebooks/05-web-and-triggers.ipynb executed by nbclient: fetch, SSRF refusals, search, a trigger woken by curl.

Everything it reaches is a server the notebook starts on 127.0.0.1; the agent's model is the scripted file
committed beside it (notebooks/make_05_web.py writes both).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _support import check_tutorial, receipt_text_drift

from holon_nb.runtime import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05-web-and-triggers.ipynb"
pytestmark = [
    pytest.mark.xdist_group("tutorial-05"),
    pytest.mark.skipif(shutil.which("curl") is None, reason="the tutorial POSTs with curl"),
]


def _code(nb: Any, startswith: str) -> Any:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(startswith)]
    return cell


def _bundles(cell: Any) -> list[dict[str, Any]]:
    return [o["data"] for o in cell.get("outputs", []) if o.get("output_type") in ("display_data", "execute_result")]


def _stream(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o["output_type"] == "stream")


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def executed(check: Any) -> tuple[Any, str]:
    summary = check.summary
    assert summary.exit_code == 0, summary
    assert summary.tasks_left_running == []
    return check.executed, nbformat.writes(check.executed)  # the notebook and the text a save would write


def test_loopback_is_refused_until_allowlisted_then_read_as_markdown(executed: tuple[Any, str]) -> None:
    nb, _ = executed
    (first,) = [c for c in nb.cells if c.cell_type == "code" and c.source == "%web fetch {base}/command-line.html"]
    (denied,) = _bundles(first)
    assert denied[RESULT_MIMETYPE]["error"]["kind"] == "network_denied"
    assert denied[RESULT_MIMETYPE]["error"]["details"]["blocked_ips"] == ["127.0.0.1"]
    (page,) = _bundles(_code(nb, "%config HolonNB.web_allowed_hosts = [HOST]\n"))
    md = page["text/markdown"]
    assert page[RESULT_MIMETYPE]["result"]["status"] == 200
    assert "# Command line" in md and "holon-nb run NOTEBOOK" in md and "|---|" in md  # heading, table kept
    assert "From Python" not in md and "Copyright the holon_nb authors" not in md  # sidebar, footer dropped
    (text,) = _bundles(_code(nb, "%web fetch {base}/command-line.html --mode text"))
    assert "From Python" in text["text/markdown"] and text[RESULT_MIMETYPE]["result"]["truncated"] is True


def test_ssrf_attempts_are_refused(executed: tuple[Any, str]) -> None:
    nb, _ = executed
    (direct,) = _bundles(_code(nb, '%config HolonNB.web_allowed_hosts = [HOST, "169.254.169.254"]'))
    (moved,) = _bundles(_code(nb, "%web fetch {base}/moved"))
    for bundle in (direct, moved):
        error = bundle[RESULT_MIMETYPE]["error"]
        assert error["kind"] == "network_denied" and error["details"]["reason"] == "metadata_address"
        assert "metadata" in error["message"]


def test_search_through_the_local_searxng_endpoint(executed: tuple[Any, str]) -> None:
    nb, _ = executed
    (found,) = _bundles(_code(nb, "%config HolonNB.web_search"))
    result = found[RESULT_MIMETYPE]["result"]
    assert result["winning_provider"] == "docs" and len(result["results"]) == 3
    # the local endpoint searches the README (the tutorial's frozen copy) served as pages, one per section:
    # hits are its sections
    site = Path(__file__).resolve().parents[2] / "notebooks" / "05-web-and-triggers.holon" / "site.md"
    headings = re.findall(r"^## (.+)$", site.read_text(), re.M)
    assert all(r["title"] in headings for r in result["results"]), result["results"]
    assert "<a href='http://127.0.0.1:" in found["text/html"]


def test_the_trigger_wakes_the_waiting_agent_and_the_token_is_never_saved(executed: tuple[Any, str]) -> None:
    nb, raw = executed
    answer = json.loads(_stream(_code(nb, "import time")).strip())
    assert answer["status"] == "accepted" and answer["woke_wait"] is True and answer["coalesced"] is False
    turns = _stream(_code(nb, "for turn in holon_nb.agent_turns()"))
    assert "completed wait_for_silent ['WebSearch', 'WaitFor']" in turns
    assert "completed end_turn []" in turns and "CI called back through the external trigger" in turns
    assert json.loads(_stream(_code(nb, "tid = ")).strip().splitlines()[-1]) == {"error": "not_found"}
    assert re.search(r"cb_[0-9a-f]{64}", raw) is None and "cb_[redacted]" in raw


def test_matches_its_committed_outputs(check: Any) -> None:
    """What ``holon-nb test`` checks: the run's outputs equal the committed ones, after normalisation."""
    assert not check.failed, check.report()


def test_saved_receipt_text_is_the_current_renderers(check: Any) -> None:
    """Issue 26 item 12: each saved receipt's text/plain is what the current renderer writes for it
    (regenerate with ``python notebooks/make_all.py`` when it is not)."""
    assert not receipt_text_drift(check), "\n\n".join(receipt_text_drift(check))
