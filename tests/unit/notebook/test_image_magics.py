"""%image view / %image generate in IPython's in-process shell, and image thumbnails in an agent turn's view."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from unit.images.conftest import image_bytes, png_header


@pytest.fixture(autouse=True)
def no_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in [k for k in os.environ if k.endswith(("_API_KEY", "_AUTH_TOKEN"))] + [
        "HOLON_MODEL",
        "HOLON_NB_PROVIDERS",
        "HOLON_VISION_MODEL",
        "HOLON_IMAGE_GENERATION_MODEL",
    ]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "fake-home"))


def _thumb(bundle: dict[str, Any], mime: str = "image/png") -> tuple[int, int]:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(bundle[mime]))).size


def test_view_shows_the_picture_beside_the_receipt(run, receipts, tmp_path: Path) -> None:
    (tmp_path / "wide.png").write_bytes(image_bytes("PNG", (1000, 500)))
    (bundle,) = run("image", 'view wide.png --prompt "what is it?"')
    (env,) = receipts([bundle], "ViewImage")
    assert env["error"]["kind"] == "vision_adapter_unavailable"  # no model: the reference is still recorded
    assert env["error"]["details"]["visual_reference"]["size"] == {"width": 1000, "height": 500}
    assert _thumb(bundle) == (384, 192)  # capped at 384 px, aspect kept
    assert '<img src="data:image/png;base64,' in bundle["text/html"]


def test_hostile_files_get_error_receipts_without_pictures(run, receipts, tmp_path: Path) -> None:
    (tmp_path / "bomb.png").write_bytes(png_header(100_000, 100_000))
    (tmp_path / "photo.jpg").write_text("<html>not a photo</html>")
    (bomb,) = run("image", "view bomb.png --prompt x")
    (liar,) = run("image", "view photo.jpg --prompt x")
    assert receipts([bomb])[0]["error"]["details"]["pixel_count"] == 10_000_000_000
    assert receipts([liar])[0]["error"]["details"]["validation_error"] == "unsupported image header"
    assert "image/png" not in bomb and "image/png" not in liar


def test_usage_errors(ip: Any) -> None:
    with pytest.raises(UsageError, match="--prompt"):
        ip.run_line_magic("image", "view a.png")
    with pytest.raises(UsageError, match="needs a prompt"):
        ip.run_line_magic("image", "generate")
    with pytest.raises(UsageError, match="media cassette"):
        ip.run_line_magic("image", "view a.png --prompt x --cassette missing.jsonl --mode replay")


def test_generate_replayed_from_a_cassette(run, receipts, tmp_path: Path) -> None:
    drawn = image_bytes("JPEG", (600, 400))
    cas = tmp_path / "gen.jsonl"
    digest = hashlib.sha256(drawn).hexdigest()
    cas.write_text(
        json.dumps({"format": "holon-nb-media-cassette", "version": 1})
        + "\n"
        + json.dumps(
            {
                "kind": "generate",
                "route": {"ref": "standin/brush", "transport": "openai_chat_completions"},
                "request": {"prompt": "a hill", "size": "1536x1024", "background": None, "output_format": "jpeg"},
                "response": {"images": [{"sha256": digest, "mime": "image/jpeg"}]},
            }
        )
        + "\n"
    )
    (tmp_path / "gen.jsonl.blobs").mkdir()
    (tmp_path / "gen.jsonl.blobs" / digest).write_bytes(drawn)
    (bundle,) = run(
        "image",
        'generate a hill --size 1536x1024 --output-format jpeg --name "my hill" --cassette gen.jsonl --mode replay',
    )
    (env,) = receipts([bundle], "GenerateImage")
    assert env["status"] == "success" and env["result"]["images"][0]["path"] == "media/generated/my_hill.jpg"
    assert env["result"]["provider"] == "standin" and _thumb(bundle, "image/jpeg") == (384, 256)


def test_agent_turn_view_shows_thumbnails(ip: Any, tmp_path: Path) -> None:
    (tmp_path / "pic.gif").write_bytes(image_bytes("GIF", (200, 100)))
    (tmp_path / "script.yaml").write_text(f"""\
format: holon_nb.script/v1
steps:
  - tool_use: {{id: call_1, name: ViewImage, input: {{path: {tmp_path / "pic.gif"}, prompt: describe it}}}}
  - text: I could not see it, but its reference is recorded
""")
    with capture_output():
        ip.run_cell_magic("agent", "--model scripted/script.yaml --wait", "look at pic.gif")
    from holon_nb.notebook import current_session

    _session = current_session()

    run = _session.turns._all[-1]
    (tool,) = [i for i in run.trace.items if i["kind"] == "tool"]
    assert tool["name"] == "ViewImage" and [(p["width"], p["height"]) for p in tool["previews"]] == [(200, 100)]
    bundle = run.view.static_bundle()
    assert "[thumbnail 200x100 of " in bundle["text/plain"]  # the saved transcript says so
    assert '<img src="data:image/png;base64,' in bundle["text/html"] and _thumb(bundle) == (200, 100)


def test_agent_turn_without_images_saves_no_image(ip: Any, tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text("format: holon_nb.script/v1\nsteps:\n  - text: hello\n")
    with capture_output():
        ip.run_cell_magic("agent", "--model scripted/script.yaml --wait", "hi")
    from holon_nb.notebook import current_session

    _session = current_session()

    bundle = _session.turns._all[-1].view.static_bundle()
    assert not [m for m in bundle if m.startswith("image/")] and "<img" not in bundle["text/html"]
