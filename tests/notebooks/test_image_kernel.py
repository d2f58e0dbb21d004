"""Images in a real kernel (nbclient): an agent turn whose model calls ViewImage and GenerateImage keeps the
thumbnails in its saved output, and ``%image`` receipts carry the picture in their mimebundle."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from unit.images.conftest import image_bytes

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def kernel_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in [k for k in os.environ if k.endswith(("_API_KEY", "_AUTH_TOKEN"))] + [
        "HOLON_MODEL",
        "HOLON_NB_PROVIDERS",
        "HOLON_VISION_MODEL",
        "HOLON_IMAGE_GENERATION_MODEL",
    ]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOLON_NB_HOME", str(tmp_path / "home"))
    (tmp_path / "fake-home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "fake-home"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return tmp_path


def _execute(tmp_path: Path, cells: list[str]) -> Any:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    NotebookClient(nb, kernel_name="python3", timeout=90, resources={"metadata": {"path": str(tmp_path)}}).execute()
    path = tmp_path / "executed.ipynb"
    nbformat.write(nb, path)
    return nbformat.read(path, as_version=4)


def _size(b64: str) -> tuple[int, int]:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(b64))).size


def test_agent_turn_saves_thumbnails_and_image_magic_shows_the_picture(kernel_env: Path) -> None:
    tmp = kernel_env
    (tmp / "chart.png").write_bytes(image_bytes("PNG", (800, 600)))
    (tmp / "script.yaml").write_text("""\
format: holon_nb.script/v1
steps:
  - tool_use: {id: call_1, name: ViewImage, input: {path: chart.png, prompt: what does the chart show}}
  - text: no vision model is configured, but the chart is validated
""")
    nb = _execute(
        tmp,
        [
            "%load_ext holon_nb",
            "%%agent --model scripted/script.yaml --wait\nlook at chart.png",
            '%image view chart.png --prompt "what is it?"',
        ],
    )
    agent_cell, image_cell = nb.cells[1], nb.cells[2]
    assert not [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    saved = [o["data"] for o in agent_cell.outputs if "text/html" in o.get("data", {})]
    assert saved, [o.get("data", {}).keys() for o in agent_cell.outputs]
    final = saved[-1]
    assert '<img src="data:image/png;base64,' in final["text/html"] and _size(final["image/png"]) == (384, 288)
    assert "[thumbnail 384x288 of " in final["text/plain"] and "ViewImage" in final["text/plain"]
    (bundle,) = [o["data"] for o in image_cell.outputs if "application/vnd.holon.tool-result+json" in o.get("data", {})]
    assert bundle["application/vnd.holon.tool-result+json"]["error"]["kind"] == "vision_adapter_unavailable"
    assert _size(bundle["image/png"]) == (384, 288)
    assert len(json.dumps(bundle)) < 60_000  # the saved output holds a thumbnail, not the image
