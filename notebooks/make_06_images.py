"""Write notebooks/06-images.ipynb, and (``--record``) record its two media cassettes.

    python notebooks/make_06_images.py            # the notebook only
    python notebooks/make_06_images.py --record   # also re-record the cassettes

The committed cassettes were recorded here against a *stand-in* served on 127.0.0.1 (below) that speaks the
OpenAI wire protocol: its vision answer describes the Python logo that ipykernel ships (written by hand
after looking at the image), and its "generated" image is a 1024×1024 picture drawn with Pillow. No real
model was reachable where they were made. To record them with a real model, run the two cells with
``--mode record`` and ``HOLON_VISION_MODEL`` / ``HOLON_IMAGE_GENERATION_MODEL`` naming an authenticated
model (``openai/gpt-5.4``, ``openai/gpt-image-1``) with its key in the environment.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
from _tutorial import tutorial_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "notebooks"
OUT = HERE / "06-images.ipynb"
CASSETTES = "06-images.holon/cassettes"
VIEW = f"{CASSETTES}/view-logo.jsonl"
DRAW = f"{CASSETTES}/generate.jsonl"
VIEW_PROMPT = "What does this logo show? Name it if you recognise it."
DRAW_PROMPT = "a flat blue square centred on a white background, no text"

SETUP = """import os, struct, tempfile, zlib
from pathlib import Path
import ipykernel

# a real image no one here drew: the Python logo ipykernel ships (a dependency of holon_nb)
LOGO = Path(ipykernel.__file__).parent / "resources" / "logo-64x64.png"
print(LOGO, LOGO.stat().st_size, "bytes")"""

HOSTILE = '''scratch = Path(tempfile.mkdtemp(prefix="holon-nb-06-hostile-"))

def png_header(width, height):
    """Just a PNG signature and an IHDR chunk declaring width x height: 45 bytes that claim 10 gigapixels."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk + struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))

BOMB = scratch / "bomb.png"
BOMB.write_bytes(png_header(100_000, 100_000))
LIAR = scratch / "photo.jpg"
LIAR.write_text("<html><body>not a photo</body></html>\\n")
print(BOMB.stat().st_size, "bytes;", LIAR.stat().st_size, "bytes")'''


def build() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# Images: ViewImage and GenerateImage\n\n"
            "`%image view PATH --prompt TEXT` validates an image (size, content type, dimensions) and asks a vision\n"
            "model about it; `%image generate PROMPT` draws one image into the agent home's `media/generated/`.\n"
            "Both receipts show the picture itself — a thumbnail of at most 384 px beside the text receipt — so\n"
            "JupyterLab, GitHub and nbviewer show it, and a saved notebook stays small.\n\n"
            "The model calls here are **replayed** from media cassettes committed beside this notebook\n"
            "(`06-images.holon/cassettes/`), so it runs offline with no API key. They were recorded against a\n"
            "stand-in on 127.0.0.1 speaking the OpenAI wire protocol (see `notebooks/make_06_images.py`);\n"
            "re-record with a real model by changing `--mode replay` to `--mode record` and setting\n"
            "`HOLON_VISION_MODEL` / `HOLON_IMAGE_GENERATION_MODEL` (for example `openai/gpt-5.4`,\n"
            "`openai/gpt-image-1`) with the provider's key in the environment."
        ),
        new_code_cell(SETUP),
        new_code_cell(
            "import holon_nb\nholon_nb.clear_home()  # this notebook's own holon home starts empty: each run shows only its own state\n%load_ext holon_nb\nrt = holon_nb.get_runtime()"
        ),
        new_markdown_cell(
            "## Look at a real image\n\n"
            "The file's content decides its type (the extension is ignored). The receipt gives the\n"
            "`visual_reference` (id, media type, bytes, SHA-256, size) and the model's observation."
        ),
        new_code_cell(f'%image view {{LOGO}} --prompt "{VIEW_PROMPT}" --cassette {VIEW} --mode replay'),
        new_markdown_cell(
            "The same image with the same prompt is answered from the runtime's observation cache: no model call."
        ),
        new_code_cell(f'%image view {{LOGO}} --prompt "{VIEW_PROMPT}" --cassette {VIEW} --mode replay'),
        new_markdown_cell(
            "## Generate an image\n\n"
            "The file goes to `<agent home>/media/generated/<name>.png` and the result names it with a\n"
            "`workspace://agent_home:<agent>/…` URI. A second call with the same `--name` never overwrites the first:\n"
            "it writes `blue-square_2.png`."
        ),
        new_code_cell(
            f'%image generate "{DRAW_PROMPT}" --size 1024x1024 --name blue-square --cassette {DRAW} --mode replay'
        ),
        new_code_cell(
            f'%image generate "{DRAW_PROMPT}" --size 1024x1024 --name blue-square --cassette {DRAW} --mode replay'
        ),
        new_code_cell(
            'sorted(p.name for p in (Path(rt.home) / "agents" / "default" / "media" / "generated").iterdir())'
        ),
        new_markdown_cell(
            "## Hostile files\n\n"
            "A *decompression bomb* is a small file whose header declares a huge picture: decoding it would take\n"
            "gigabytes. ViewImage reads the header only and refuses anything over 50 megapixels before any pixel is\n"
            "decoded. A file that *lies about its type* (HTML named `photo.jpg`) is refused by its content. Both\n"
            "are refused before any model is asked."
        ),
        new_code_cell(HOSTILE),
        new_code_cell('%image view {BOMB} --prompt "what is this?"'),
        new_code_cell('%image view {LIAR} --prompt "what is in the photo?"'),
        new_markdown_cell(
            "## From Python\n\n`rt.call` returns the same result; `result.previews` holds the thumbnails (never sent "
            "to a model nor stored)."
        ),
        new_code_cell(
            "from holon_nb.providers.cassettes.media import MediaCassette\n"
            f"with rt.images.use_cassette(MediaCassette({VIEW!r}, 'replay')):\n"
            f"    result = rt.call('ViewImage', {{'path': str(LOGO), 'prompt': {VIEW_PROMPT!r}}})\n"
            "print(result.result['visual_reference']['mime'], result.result['visual_reference']['size'])\n"
            "print(result.result['observation']['summary'])\n"
            "print([(p['mime'], p['width'], p['height']) for p in result.previews])"
        ),
    ]
    return tutorial_notebook(cells)


# ---------------------------------------------------------------- recording against a stand-in

OBSERVATION = {
    "type": "visual_observation",
    "schema": "visual_observation.v1",
    "summary": "The Python logo: two stylised snakes, one blue and one yellow, interlocked head to tail so that "
    "together they form a cross-like shape, on a transparent background.",
    "ocr": [],
    "elements": [
        {"description": "blue snake, upper left, with a white eye"},
        {"description": "yellow snake, lower right, with a white eye"},
    ],
    "relations": [{"description": "the two snakes interlock, rotated 180 degrees from each other"}],
    "issues": [],
    "uncertainties": ["the image is only 64x64 pixels, so fine detail is not visible"],
    "external_sources": [],
}


def _drawn_png() -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (1024, 1024), "white")
    ImageDraw.Draw(im).rectangle((312, 312, 712, 712), fill=(30, 90, 200))
    out = io.BytesIO()
    im.save(out, "PNG", optimize=True)
    return out.getvalue()


class _StandIn(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.endswith("/chat/completions"):
            body = {
                "id": "standin-1",
                "object": "chat.completion",
                "created": 0,
                "model": "eye",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(OBSERVATION)},
                    }
                ],
            }
        else:
            body = {
                "created": 0,
                "output_format": "png",
                "data": [{"b64_json": base64.b64encode(_drawn_png()).decode()}],
            }
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def record() -> None:
    import shutil
    import tempfile

    from holon_nb import Runtime
    from holon_nb.providers.cassettes.media import MediaCassette

    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["HOLON_NB_PROVIDERS"] = json.dumps(
        {
            "standin": {
                "transport": "openai_chat_completions",
                "base_url": f"http://127.0.0.1:{server.server_port}/v1",
                "auth": {"source": "none"},
                "models": [{"id": "eye", "image_input": True}, {"id": "brush", "image_generation": True}],
            }
        }
    )
    for key in ("HOLON_MODEL", "HOLON_VISION_MODEL", "HOLON_IMAGE_GENERATION_MODEL"):
        os.environ.pop(key, None)
    import ipykernel

    logo = Path(ipykernel.__file__).parent / "resources" / "logo-64x64.png"
    shutil.rmtree(HERE / "06-images.holon", ignore_errors=True)
    home = tempfile.mkdtemp()
    with Runtime(home=home, workspace=HERE) as rt:
        with rt.images.use_cassette(MediaCassette(HERE / VIEW, "record")):
            print(rt.call("ViewImage", {"path": str(logo), "prompt": VIEW_PROMPT}, raise_on_error=True).receipt)
        with rt.images.use_cassette(MediaCassette(HERE / DRAW, "record")):
            print(
                rt.call(
                    "GenerateImage",
                    {"prompt": DRAW_PROMPT, "size": "1024x1024", "name": "blue-square"},
                    raise_on_error=True,
                ).receipt
            )
    shutil.rmtree(home, ignore_errors=True)
    server.shutdown()


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    nbformat.write(build(), OUT)
    print("wrote", OUT)
    if "--record" in sys.argv:
        record()
