"""ViewImage (workspace spec §12; acceptance cases 41–46) on real files and against local vision servers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _support import err, ok
from unit.images.conftest import configure, image_bytes, png_header
from unit.providers.servers import Reply, WireServer

from holon_nb import Runtime
from holon_nb.runtime.images._probe import MAX_BYTES
from holon_nb.tools._context import CallContext

OBS = {
    "type": "visual_observation",
    "schema": "visual_observation.v1",
    "summary": "A red square on white.",
    "ocr": "no text",
    "elements": {"description": "square"},
    "relations": 7,
    "uncertainties": [{"text": "hue"}, "edge"],
}


def _view(rt: Runtime, path: object, prompt: str = "what is there?"):
    return rt.call("ViewImage", {"path": str(path), "prompt": prompt})


@pytest.mark.parametrize(
    "fmt,mime", [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]
)
def test_real_images_are_sniffed_and_measured(rt: Runtime, tmp_path: Path, fmt: str, mime: str) -> None:
    data = image_bytes(fmt, (41, 29))
    path = tmp_path / "picture.bin"  # the extension is ignored
    path.write_bytes(data)
    e = err(_view(rt, path), "vision_adapter_unavailable")
    ref = e["details"]["visual_reference"]
    assert ref["mime"] == mime and ref["size"] == {"width": 41, "height": 29}
    assert ref["byte_count"] == len(data) and ref["id"] == "vis_" + ref["sha256"][:16]
    assert ref["path"] == str(path) and ref["type"] == "visual_reference"


def test_41_text_file_named_png_is_refused(rt: Runtime, tmp_path: Path) -> None:
    (tmp_path / "x.png").write_text("not an image at all\n")
    e = err(_view(rt, tmp_path / "x.png"), "invalid_tool_input")
    assert e["details"]["validation_error"] == "unsupported image header"
    assert e["details"]["supported_media_types"] == ["image/png", "image/jpeg", "image/gif", "image/webp"]


def test_a_jpeg_named_png_is_a_jpeg(rt: Runtime, tmp_path: Path) -> None:
    (tmp_path / "liar.png").write_bytes(image_bytes("JPEG"))
    e = err(_view(rt, tmp_path / "liar.png"), "vision_adapter_unavailable")
    assert e["details"]["visual_reference"]["mime"] == "image/jpeg"


def test_42_sparse_gigabyte_refused_without_reading(rt: Runtime, tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)
    os.chmod(big, 0o000)  # a read would fail with image_read_failed: the size check comes first
    try:
        e = err(_view(rt, big), "invalid_tool_input")
    finally:
        os.chmod(big, 0o644)
    assert e["details"]["max_byte_count"] == 20971520 == MAX_BYTES
    assert e["details"]["byte_count"] == 1 << 30


def test_unreadable_file_is_image_read_failed(rt: Runtime, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    p = tmp_path / "locked.png"
    p.write_bytes(image_bytes("PNG"))
    os.chmod(p, 0o000)
    try:
        err(_view(rt, p), "image_read_failed")
    finally:
        os.chmod(p, 0o644)


@pytest.mark.parametrize("target", ["dir", "/dev/zero", "link"])
def test_43_not_a_regular_file(rt: Runtime, tmp_path: Path, target: str) -> None:
    if target == "dir":
        path = tmp_path
    elif target == "link":
        path = tmp_path / "zero.png"
        path.symlink_to("/dev/zero")
    else:
        path = Path(target)
    e = err(_view(rt, path), "invalid_tool_input")
    assert e["details"]["validation_error"] == "not a regular file"


def test_missing_file_is_invalid_input_with_io_error(rt: Runtime, tmp_path: Path) -> None:
    e = err(_view(rt, tmp_path / "nope.png"), "invalid_tool_input")
    assert e["details"]["field"] == "path" and "io_error" in e["details"]


def test_44_pixel_bomb_header(rt: Runtime, tmp_path: Path) -> None:
    (tmp_path / "bomb.png").write_bytes(png_header(10000, 10000))
    e = err(_view(rt, tmp_path / "bomb.png"), "invalid_tool_input")
    d = e["details"]
    assert (d["width"], d["height"], d["pixel_count"], d["max_pixel_count"]) == (10000, 10000, 100_000_000, 50_000_000)


def test_bomb_beyond_pillows_own_limit_still_reports_its_size(rt: Runtime, tmp_path: Path) -> None:
    (tmp_path / "huge.png").write_bytes(png_header(60000, 60000))  # over Pillow's 2×MAX_IMAGE_PIXELS
    assert err(_view(rt, tmp_path / "huge.png"), "invalid_tool_input")["details"]["pixel_count"] == 3_600_000_000


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "GIF"])
def test_truncated_header_is_refused(rt: Runtime, tmp_path: Path, fmt: str) -> None:
    (tmp_path / "cut").write_bytes(image_bytes(fmt)[:14])
    e = err(_view(rt, tmp_path / "cut"), "invalid_tool_input")
    assert e["details"]["validation_error"] == "unsupported image header"


def test_file_just_over_the_limit(rt: Runtime, tmp_path: Path) -> None:
    p = tmp_path / "over.png"
    p.write_bytes(image_bytes("PNG") + b"\0" * (MAX_BYTES + 1))
    assert err(_view(rt, p), "invalid_tool_input")["details"]["byte_count"] > MAX_BYTES


def test_empty_fields_are_refused(rt: Runtime, tmp_path: Path) -> None:
    assert err(rt.call("ViewImage", {"path": "  ", "prompt": "x"}), "invalid_tool_input")["details"]["field"] == "path"
    assert err(rt.call("ViewImage", {"path": "a", "prompt": " "}), "invalid_tool_input")["details"]["field"] == "prompt"
    assert err(rt.call("ViewImage", {"path": "a", "prompt": "x", "extra": 1}), "invalid_tool_input")


def test_45_reads_are_not_confined(rt: Runtime, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pic.png").write_bytes(image_bytes("PNG"))
    assert rt.tool_context(CallContext("default")).cwd == workspace  # relative paths join the active cwd W
    e = err(_view(rt, "sub/../../outside/pic.png"), "vision_adapter_unavailable")
    assert e["details"]["visual_reference"]["path"] == str(outside / "pic.png")  # normalized, absolute


def test_46_unavailable_lists_candidates_and_reference(rt: Runtime, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOLON_MODEL", "openai/gpt-5.4")  # primary without a key: a candidate that is not usable
    (tmp_path / "a.png").write_bytes(image_bytes("PNG"))
    e = err(_view(rt, tmp_path / "a.png"), "vision_adapter_unavailable")
    d = e["details"]
    assert d["selected_mode"] == "unavailable" and d["primary_provider"] == "openai" and d["primary_model"] == "gpt-5.4"
    assert d["candidates"][0]["model_ref"] == "openai/gpt-5.4" and d["candidates"][0]["reason"].startswith("not_auth")
    assert d["visual_reference"]["mime"] == "image/png"


@pytest.mark.parametrize("transport", ["openai_chat_completions", "anthropic_messages"])
def test_46_observation_through_a_local_server_then_cached(
    rt: Runtime, tmp_path: Path, monkeypatch, wire: WireServer, transport: str
) -> None:
    configure(monkeypatch, wire, transport, image_input=True)
    reply_text = "Here you go:\n```json\n" + json.dumps(OBS) + "\n```"
    if transport == "anthropic_messages":
        wire.script(
            Reply(
                json={
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "eye",
                    "content": [{"type": "text", "text": reply_text}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 5, "output_tokens": 5},
                }
            )
        )
    else:
        wire.script(
            Reply(
                json={
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "eye",
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply_text}}
                    ],
                }
            )
        )
    data = image_bytes("PNG")
    (tmp_path / "a.png").write_bytes(data)
    first = ok(_view(rt, tmp_path / "a.png"))
    obs = first["observation"]
    assert obs["summary"] == "A red square on white." and obs["ocr"] == [{"text": "no text"}]
    assert obs["elements"] == [{"description": "square"}] and obs["relations"] == []
    assert obs["uncertainties"] == ["hue", "edge"]
    assert obs["generated_by"] == {
        "mode": "vision_adapter",
        "provider": "local",
        "model": "eye",
        "selection_reason": "auto_discovered_image_input",
    }
    assert first["vision_selection"]["vision_model"] == "eye"
    (req,) = wire.requests
    body = req.json
    if transport == "anthropic_messages":
        assert req.path == "/v1/messages"
        block = body["messages"][0]["content"][0]
        assert block["source"]["media_type"] == "image/png" and block["source"]["data"]
    else:
        assert req.path == "/v1/chat/completions" and body["response_format"] == {"type": "json_object"}
        url = body["messages"][1]["content"][1]["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
    second = _view(rt, tmp_path / "a.png")
    assert ok(second)["observation"]["summary"] == "A red square on white."
    assert "cached" in second.envelope["summary_text"] and len(wire.requests) == 1  # one adapter call
    receipt = second.receipt.splitlines()
    assert receipt[1].startswith("Reference: vis_") and receipt[2] == "Size: 40x30"
    assert receipt[3] == "Generated by: local/eye (vision_adapter)" and "Uncertainties: hue; edge" in receipt
    # the cache answers even with no vision model configured any more
    monkeypatch.delenv("HOLON_NB_PROVIDERS")
    assert ok(_view(rt, tmp_path / "a.png"))["observation"]["summary"]


def test_invalid_reply_is_vision_observation_failed(rt: Runtime, tmp_path: Path, monkeypatch, wire: WireServer) -> None:
    configure(monkeypatch, wire, "openai_chat_completions", image_input=True)
    wire.script(
        Reply(
            json={
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "eye",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": '{"type": "visual_observation", "summary": "x"}'},
                    }
                ],
            }
        ),
        Reply(status=500, json={"error": {"message": "boom"}}),
    )
    (tmp_path / "a.png").write_bytes(image_bytes("PNG"))
    e = err(_view(rt, tmp_path / "a.png"), "vision_observation_failed")
    assert e["details"]["vision_provider"] == "local" and "schema" in e["details"]["error"]
    e = err(_view(rt, tmp_path / "a.png", "again"), "vision_observation_failed")
    assert "500" in e["details"]["error"] or "Internal" in e["details"]["error"]


def test_explicit_default_wins_and_native_mode(rt: Runtime, tmp_path: Path, monkeypatch, wire: WireServer) -> None:
    configure(monkeypatch, wire, "openai_chat_completions")  # no capability flag: explicit choice still used
    monkeypatch.setenv("HOLON_VISION_MODEL", "local/eye")
    monkeypatch.setenv("HOLON_MODEL", "local/eye")
    wire.script(
        Reply(
            json={
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "eye",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(OBS)}}
                ],
            }
        )
    )
    (tmp_path / "a.gif").write_bytes(image_bytes("GIF"))
    res = ok(_view(rt, tmp_path / "a.gif"))
    assert res["selected_mode"] == "native_image_with_observation"
    assert res["vision_selection"]["selection_reason"] == "explicit_vision_default"


def test_receipt_mimebundle_carries_a_bounded_thumbnail(rt: Runtime, tmp_path: Path) -> None:
    import base64
    import io

    from PIL import Image

    (tmp_path / "wide.jpg").write_bytes(image_bytes("JPEG", (1600, 900)))
    result = _view(rt, tmp_path / "wide.jpg")
    bundle = result._repr_mimebundle_()
    thumb = Image.open(io.BytesIO(base64.b64decode(bundle["image/jpeg"])))
    assert max(thumb.size) == 384 and thumb.size[0] > thumb.size[1]
    assert '<img src="data:image/jpeg;base64,' in bundle["text/html"]
    assert "base64" not in json.dumps(result.envelope) and "base64" not in result.receipt  # never sent to a model


def test_builtin_openai_with_a_key_is_auto_discovered(
    rt: Runtime, tmp_path: Path, monkeypatch, wire: WireServer
) -> None:
    """An authenticated built-in provider (here openai, its base URL pointed at the local server) is found
    without any image configuration: its catalog models advertise image input."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    monkeypatch.setenv("HOLON_OPENAI_BASE_URL", wire.base_url + "/v1")
    wire.script(
        Reply(
            json={
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-5.3",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(OBS)}}
                ],
            }
        ),
        Reply(status=401, json={"error": {"message": "bad key sk-test-secret-123"}}),
    )
    (tmp_path / "a.png").write_bytes(image_bytes("PNG"))
    res = ok(_view(rt, tmp_path / "a.png"))
    assert res["vision_selection"]["vision_provider"] == "openai"
    assert wire.requests[0].headers["authorization"] == "Bearer sk-test-secret-123"
    failed = _view(rt, tmp_path / "a.png", "another prompt")
    e = err(failed, "vision_observation_failed")
    assert (
        "sk-test-secret-123" not in json.dumps(failed.display_envelope) and "sk-test-secret-123" not in failed.receipt
    )
    assert e["details"]["vision_provider"] == "openai"
