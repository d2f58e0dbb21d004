"""notebooks/06-images.ipynb executed by nbclient in a real kernel: a real image viewed with a replayed vision
observation, a generated image replayed from a cassette, hostile files refused; receipts carry thumbnails.

If the vision cell drifts after an ipykernel upgrade changed its logo file (the cassette keys on the image's
SHA-256), re-record: ``python notebooks/make_06_images.py --record``.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from _support import check_tutorial, receipt_text_drift

from holon_nb.runtime import RESULT_MIMETYPE

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "06-images.ipynb"
# one run of the tutorial serves every test here (check_tutorial): they run on one xdist worker
pytestmark = pytest.mark.xdist_group("tutorial-06")


@pytest.fixture(scope="module")
def check() -> Any:
    return check_tutorial(NOTEBOOK.name)


@pytest.fixture(scope="module")
def executed(check: Any) -> Any:
    assert check.summary.exit_code == 0, check.summary
    return check.executed


def _bundles(nb: Any, startswith: str) -> list[dict[str, Any]]:
    cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(startswith)]
    assert cells, startswith
    return [o["data"] for c in cells for o in c.outputs if RESULT_MIMETYPE in o.get("data", {})]


def _size(b64: str) -> tuple[int, int]:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(b64))).size


def test_real_logo_viewed_then_cached(executed: Any) -> None:
    first, second = _bundles(executed, "%image view {LOGO}")
    env = first[RESULT_MIMETYPE]
    assert env["status"] == "success"
    assert env["result"]["visual_reference"]["mime"] == "image/png"
    assert "Python logo" in env["result"]["observation"]["summary"]
    assert env["result"]["observation"]["generated_by"]["model"] == "eye"
    assert "reused a cached observation" in second[RESULT_MIMETYPE]["summary_text"]
    assert _size(first["image/png"]) == (64, 64)  # smaller than the cap: not enlarged
    assert "observed by standin/eye" in first["text/plain"].splitlines()[0]  # who saw it, on the first line


def test_generated_twice_without_overwriting(executed: Any) -> None:
    one, two = _bundles(executed, "%image generate")
    paths = [b[RESULT_MIMETYPE]["result"]["images"][0]["path"] for b in (one, two)]
    assert paths == ["media/generated/blue-square.png", "media/generated/blue-square_2.png"]
    assert _size(one["image/png"]) == (384, 384) and len(one["image/png"]) < 20_000  # a thumbnail, not 1024 px
    (listing,) = [c for c in executed.cells if c.cell_type == "code" and c.source.startswith("sorted(")]
    assert "blue-square_2.png" in listing.outputs[0]["data"]["text/plain"]


def test_hostile_files_are_refused(executed: Any) -> None:
    (bomb,) = _bundles(executed, "%image view {BOMB}")
    (liar,) = _bundles(executed, "%image view {LIAR}")
    assert bomb[RESULT_MIMETYPE]["error"]["details"]["pixel_count"] == 10_000_000_000
    assert liar[RESULT_MIMETYPE]["error"]["details"]["validation_error"] == "unsupported image header"


def test_python_api_cell(executed: Any) -> None:
    (cell,) = [c for c in executed.cells if c.cell_type == "code" and "MediaCassette" in c.source]
    text = "".join(o.get("text", "") for o in cell.outputs)
    assert "image/png {'width': 64, 'height': 64}" in text and "[('image/png', 64, 64)]" in text


def test_matches_its_committed_outputs(check: Any) -> None:
    """What ``holon-nb test`` checks: the run's outputs equal the committed ones, after normalisation."""
    assert not check.failed, check.report()


def test_saved_receipt_text_is_the_current_renderers(check: Any) -> None:
    """Issue 26 item 12: each saved receipt's text/plain is what the current renderer writes for it
    (regenerate with ``python notebooks/make_all.py`` when it is not)."""
    assert not receipt_text_drift(check), "\n\n".join(receipt_text_drift(check))
