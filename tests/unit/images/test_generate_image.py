"""GenerateImage (workspace spec §13; acceptance cases 47–48) against a local OpenAI Images server, and media
cassettes recording and replaying both image calls."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from _support import err, ok
from unit.images.conftest import configure, image_bytes
from unit.providers.servers import Reply, WireServer

from holon_nb import Runtime
from holon_nb.providers.cassettes.media import MediaCassette
from holon_nb.tools._context import CallContext


def _images(*blobs: bytes, fmt: str = "png") -> Reply:
    return Reply(
        json={"created": 0, "output_format": fmt, "data": [{"b64_json": base64.b64encode(b).decode()} for b in blobs]}
    )


@pytest.fixture
def drawing(monkeypatch, wire: WireServer) -> WireServer:
    configure(monkeypatch, wire, "openai_chat_completions", image_generation=True)
    return wire


def test_47_enumerations_and_names(rt: Runtime) -> None:
    e = err(rt.call("GenerateImage", {"prompt": "a cat", "size": "512x512"}), "invalid_tool_input")
    assert e["details"]["allowed_values"] == ["1024x1024", "1536x1024", "1024x1536"] and e["details"]["field"] == "size"
    assert (
        err(rt.call("GenerateImage", {"prompt": "a", "background": " "}), "invalid_tool_input")["details"]["field"]
        == "background"
    )
    assert err(rt.call("GenerateImage", {"prompt": "a", "output_format": "bmp"}), "invalid_tool_input")
    assert (
        err(rt.call("GenerateImage", {"prompt": "a", "name": "../.."}), "invalid_tool_input")["details"]["field"]
        == "name"
    )


def test_47_sanitized_name_never_overwrites(rt: Runtime, drawing: WireServer) -> None:
    first_png, second_png = image_bytes("PNG", (20, 10)), image_bytes("PNG", (30, 10))
    drawing.script(_images(first_png), _images(second_png))
    args = {"prompt": "a cat", "name": "../../etc/passwd", "size": "1024x1024"}
    one = rt.call("GenerateImage", args)
    img = ok(one)["images"][0]
    home = rt.tool_context(CallContext("default")).agent_home
    assert img["path"] == "media/generated/etc_passwd.png"
    assert img["uri"] == "workspace://agent_home:default/media/generated/etc_passwd.png"
    assert img["id"] == "img_" + hashlib.sha256(first_png).hexdigest()[:16] and img["size"] == {
        "width": 20,
        "height": 10,
    }
    assert one.envelope["summary_text"] == "GenerateImage created one image"
    assert ok(one)["parameters"] == {"size": "1024x1024", "name": "etc_passwd"}
    body = drawing.requests[0].json
    assert drawing.requests[0].path == "/v1/images/generations" and body["model"] == "eye" and "name" not in body
    two = ok(rt.call("GenerateImage", args))["images"][0]
    assert two["path"] == "media/generated/etc_passwd_2.png"
    assert (home / "media/generated/etc_passwd.png").read_bytes() == first_png  # byte-for-byte unchanged
    assert (home / "media/generated/etc_passwd_2.png").read_bytes() == second_png
    lines = one.receipt.splitlines()
    assert lines[0] == "GenerateImage created one image" and lines[1] == "Provider/model: local/eye"
    assert lines[3].startswith("Image: img_") and "uri workspace://agent_home:default/" in lines[3]
    assert lines[4] == "Size: 20x10"
    assert "image/png" in one._repr_mimebundle_()


def test_47_two_images_and_extensions(rt: Runtime, drawing: WireServer) -> None:
    drawing.script(_images(image_bytes("JPEG"), image_bytes("JPEG"), fmt="jpeg"))
    res = rt.call("GenerateImage", {"prompt": "two", "output_format": "jpeg", "name": "pair"})
    assert res.envelope["summary_text"] == "GenerateImage created 2 images"
    assert [i["path"] for i in ok(res)["images"]] == ["media/generated/pair.jpg", "media/generated/pair-2.jpg"]
    assert {i["mime"] for i in ok(res)["images"]} == {"image/jpeg"}


def test_default_stem_is_a_utc_timestamp(rt: Runtime, drawing: WireServer) -> None:
    drawing.script(_images(image_bytes("PNG")))
    path = ok(rt.call("GenerateImage", {"prompt": "x"}))["images"][0]["path"]
    assert path.startswith("media/generated/generated_") and path.endswith("Z.png")


def test_48_no_model_and_non_image_bytes(rt: Runtime, drawing: WireServer, monkeypatch) -> None:
    drawing.script(_images(b"<html>not an image</html>"), Reply(status=400, json={"error": {"message": "bad"}}))
    e = err(rt.call("GenerateImage", {"prompt": "x", "name": "junk"}), "generated_image_invalid")
    assert e["details"]["path"] == "media/generated/junk.png"
    assert e["details"]["sha256"] == hashlib.sha256(b"<html>not an image</html>").hexdigest()
    assert err(rt.call("GenerateImage", {"prompt": "x"}), "image_generation_failed")
    monkeypatch.delenv("HOLON_NB_PROVIDERS")
    assert err(rt.call("GenerateImage", {"prompt": "x"}), "image_generation_failed")["details"]["error"]


def test_oversized_generated_file_is_invalid_and_removed(rt: Runtime, drawing: WireServer) -> None:
    blob = b"\x89PNG\r\n\x1a\n" + b"\0" * (20 * 1024 * 1024)
    drawing.script(_images(blob))
    e = err(rt.call("GenerateImage", {"prompt": "x", "name": "huge"}), "generated_image_invalid")
    assert e["details"]["error"]["byte_count"] == len(blob) and e["details"]["path"] == "media/generated/huge.png"
    assert e["details"]["removed"] is True
    home = rt.tool_context(CallContext("default")).agent_home
    assert not (home / "media/generated/huge.png").exists()  # issue 25 item 6: nothing invalid stays on disk


def test_cassette_records_and_replays_both_calls(rt: Runtime, tmp_path: Path, monkeypatch, wire: WireServer) -> None:
    monkeypatch.setenv(
        "HOLON_NB_PROVIDERS",
        json.dumps(
            {
                "local": {
                    "transport": "openai_chat_completions",
                    "base_url": wire.base_url + "/v1",
                    "auth": {"source": "none"},
                    "models": [{"id": "eye", "image_input": True}, {"id": "brush", "image_generation": True}],
                }
            }
        ),
    )
    obs = {"type": "visual_observation", "schema": "visual_observation.v1", "summary": "Red on white."}
    drawn = image_bytes("PNG", (24, 24))
    wire.script(
        Reply(
            json={
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "eye",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(obs)}}
                ],
            }
        ),
        _images(drawn),
    )
    (tmp_path / "a.webp").write_bytes(image_bytes("WEBP"))
    path = tmp_path / "cas" / "images.jsonl"
    with rt.images.use_cassette(MediaCassette(path, "record")):
        assert (
            ok(rt.call("ViewImage", {"path": str(tmp_path / "a.webp"), "prompt": "p"}))["observation"]["summary"]
            == "Red on white."
        )
        ok(rt.call("GenerateImage", {"prompt": "a dot", "name": "dot"}))
    text = path.read_text()
    assert base64.b64encode(drawn).decode()[:40] not in text  # payloads are not inline
    blob = path.with_name("images.jsonl.blobs") / hashlib.sha256(drawn).hexdigest()
    assert blob.read_bytes() == drawn
    # replay in a fresh runtime, no provider configured, server gone
    monkeypatch.delenv("HOLON_NB_PROVIDERS")
    wire.close()
    fresh = Runtime(home=tmp_path / "home2", workspace=tmp_path)
    try:
        with fresh.images.use_cassette(MediaCassette(path, "replay")):
            view = ok(fresh.call("ViewImage", {"path": str(tmp_path / "a.webp"), "prompt": "p"}))
            assert view["observation"]["summary"] == "Red on white."
            assert view["observation"]["generated_by"]["model"] == "eye"
            gen = ok(fresh.call("GenerateImage", {"prompt": "a dot", "name": "dot"}))
            assert gen["images"][0]["sha256"] == hashlib.sha256(drawn).hexdigest() and gen["model"] == "brush"
            drift = err(
                fresh.call("ViewImage", {"path": str(tmp_path / "a.webp"), "prompt": "other"}),
                "vision_observation_failed",
            )
            assert "re-record" in drift["details"]["error"]
    finally:
        fresh.close()
