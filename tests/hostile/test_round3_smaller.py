"""The third hostile round's smaller findings (issue 25 item 6), one test each.

- a result field passed as input gets the result-field hint on every tool (ExecCommandBatch top level
  and ``items[]``, CreateWorkItem, UpdateWorkItem lost it);
- enum errors spell the offending value as JSON (``null``, ``true``), never as Python (``None``);
- the hidden trigger tools' published schemas accept exactly what their validation accepts;
- TaskOutput's ``failure_artifact`` matches upstream's published result schema;
- the inventory checker sees tool-level changes, omitted defaults and dropped result schemas;
- GenerateImage leaves nothing on disk for an invalid image and fails when the provider returns none;
- WebFetch refuses 6to4, Teredo and IPv4-translated addresses that embed a private IPv4;
- a final brief the runtime refused to publish is not the turn's final text.

Everything is offline: local servers on 127.0.0.1, the scripted provider, real subprocesses.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _support import err, ok
from _web_support import LocalServer, page
from unit.providers.servers import Reply, WireServer

from holon_nb.providers.base import TextBlock, ToolUseBlock, TurnRequest
from holon_nb.providers.cassettes.media import MEDIA_FORMAT, MediaCassette
from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.web import WebService
from holon_nb.runtime.web._policy import blocked_reason
from holon_nb.tools._context import CallContext
from holon_nb.tools._inventory import compare_with_upstream, generate_inventory, schema_differences

UPSTREAM = Path(__file__).parents[1] / "contract" / "data" / "upstream-model-tool-schema-inventory.json"


def _upstream_tool(name: str) -> dict[str, Any]:
    doc = json.loads(UPSTREAM.read_text(encoding="utf-8"))
    return next(t for t in doc["tools"] if t["name"] == name)


def _published(name: str) -> dict[str, Any]:
    inv = generate_inventory()
    return next(t for t in [*inv["tools"], *inv["hidden_tools"]] if t["name"] == name)["input_schema"]


# ---------------------------------------------------------------- result-field hint


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("ExecCommandBatch", {"items": [{"cmd": "true"}], "status": "running"}, "status"),
        ("ExecCommandBatch", {"items": [{"cmd": "true", "exit_status": 0}]}, "exit_status"),
        ("ExecCommandBatch", {"items": [{"cmd": "true", "task_handle": "t"}]}, "task_handle"),
        ("CreateWorkItem", {"objective": "o", "status": "open"}, "status"),
        ("UpdateWorkItem", {"work_item_id": "work_x", "status": "done"}, "status"),
        ("ExecCommand", {"cmd": "true", "disposition": "completed"}, "disposition"),
    ],
)
def test_result_field_hint_on_every_tool(rt: Runtime, tool: str, args: dict[str, Any], field: str) -> None:
    e = err(rt.call(tool, args), "invalid_tool_input")
    assert field in e["details"]["parse_error"]
    assert f"`{field}` is a result field" in e["recovery_hint"], e["recovery_hint"]


def test_result_field_hint_keeps_the_tools_own_hint(rt: Runtime) -> None:
    e = err(rt.call("CreateWorkItem", {"objective": "o", "status": "open"}), "invalid_tool_input")
    assert "todo_list items are" in e["recovery_hint"]  # CreateWorkItem's own guidance is still there


# ---------------------------------------------------------------- enum spelling


@pytest.mark.parametrize(
    ("tool", "args", "shown"),
    [
        ("ExecCommand", {"cmd": "true", "duplicate_policy": None}, "`null`"),
        ("ExecCommand", {"cmd": "true", "duplicate_policy": True}, "`true`"),
        ("ExecCommand", {"cmd": "true", "duplicate_policy": "always"}, "`always`"),
        ("WaitFor", {"reason": "r", "wake": None, "delivery": "silent"}, "`null`"),
        ("WaitFor", {"reason": "r", "wake": "timer", "delivery": False}, "`false`"),
    ],
)
def test_enum_errors_spell_values_as_json(rt: Runtime, tool: str, args: dict[str, Any], shown: str) -> None:
    pe = err(rt.call(tool, args), "invalid_tool_input")["details"]["parse_error"]
    assert f"unknown variant {shown}" in pe, pe
    for python in ("None", "True", "False", "'"):
        assert python not in pe, pe


def test_enum_errors_list_expected_values_as_names(rt: Runtime) -> None:
    pe = err(rt.call("ExecCommand", {"cmd": "true", "duplicate_policy": "x"}), "invalid_tool_input")["details"][
        "parse_error"
    ]
    assert "expected `reuse_running` or `start_new`" in pe, pe


# ---------------------------------------------------------------- hidden trigger tools: schema == validation

TRIGGER_PROBES = [
    ("CreateExternalTrigger", {"delivery_mode": "wake_only"}),
    ("CreateExternalTrigger", {"delivery_mode": "wake_hint"}),
    ("CreateExternalTrigger", {"delivery_mode": "enqueue_message", "source": "ci"}),
    ("CreateExternalTrigger", {"delivery_mode": "later"}),
    ("CreateExternalTrigger", {}),
    ("CancelExternalTrigger", {}),
    ("CancelExternalTrigger", {"external_trigger_id": None}),
    ("CancelExternalTrigger", {"external_trigger_id": "trigger_000000000000000"}),
    ("CancelExternalTrigger", {"external_trigger_id": 5}),
]


@pytest.mark.parametrize(("tool", "args"), TRIGGER_PROBES)
def test_trigger_schemas_accept_what_validation_accepts(rt: Runtime, tool: str, args: dict[str, Any]) -> None:
    schema_ok = jsonschema.Draft202012Validator(_published(tool)).is_valid(args)
    env = rt.call(tool, args).envelope
    refused = env["status"] == "error" and env["error"]["kind"] == "invalid_tool_input"
    assert schema_ok is not refused, (tool, args, schema_ok, env)


# ---------------------------------------------------------------- TaskOutput failure_artifact


def test_task_output_failure_artifact_matches_upstream_schema(rt: Runtime) -> None:
    started = ok(rt.call("ExecCommand", {"cmd": "echo out; exit 3", "yield_time_ms": 0}))
    task_id = started["task_handle"]["task_id"]
    rt.wait_for_tasks(30)
    result = ok(rt.call("TaskOutput", {"task_id": task_id}))
    artifact = result["task"]["failure_artifact"]
    schema = _upstream_tool("TaskOutput")["result_envelope"]["success_result_schema"]
    jsonschema.Draft202012Validator(schema["properties"]["task"]["properties"]["failure_artifact"]).validate(artifact)
    assert artifact["kind"] == "command_task_exit_nonzero" and artifact["exit_status"] == 3
    assert artifact["summary"] and all(isinstance(v, str) for v in artifact["metadata"].values())


# ---------------------------------------------------------------- the inventory checker


def _inv(**tool: Any) -> dict[str, Any]:
    entry = {
        "name": "T",
        "family": "core_agent",
        "stability": "stable",
        "input_schema": {"type": "object", "properties": {}, "required": []},
        "result_envelope": {"model_rendering": "canonical_json_envelope", "success_result": "R"},
    }
    entry.update(tool)
    return {"tools": [entry]}


def test_checker_sees_tool_level_changes() -> None:
    up = _inv()
    up["tools"].append({**_inv()["tools"][0], "name": "Gone"})
    ours = _inv(family="web", stability="experimental")
    ours["tools"][0]["result_envelope"] = {"model_rendering": "custom_text_receipt", "success_result": "S"}
    ours["tools"].append({**_inv()["tools"][0], "name": "New"})
    problems = compare_with_upstream(ours, up, "")
    text = "\n".join(problems)
    for needle in ("Gone `name` tool", "New `name` tool", "T `family` tool", "T `stability` tool"):
        assert needle in text, text
    assert "T `model_rendering` tool" in text and "T `success_result` tool" in text, text


def test_checker_sees_a_hidden_tool_that_upstream_publishes() -> None:
    up = _inv(name="AgentGet")
    ours = {"tools": [], "hidden_tools": [{**_inv(name="AgentGet", stability="hidden")["tools"][0]}]}
    assert any("AgentGet `stability` tool" in p for p in compare_with_upstream(ours, up, ""))
    assert not any("`name`" in p for p in compare_with_upstream(ours, up, ""))


def test_checker_sees_omitted_and_changed_defaults() -> None:
    up = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"], "default": None},
            "b": {"type": "boolean", "default": False},
            "c": {"type": "integer"},
        },
    }
    ours = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": "boolean", "default": True},
            "c": {"type": "integer", "default": 3},
        },
    }
    found = schema_differences("T", ours, up)
    assert {k for k in found if k[2] == "default"} == {
        ("T", "a", "default"),
        ("T", "b", "default"),
        ("T", "c", "default"),
    }


def test_checker_sees_a_dropped_result_schema() -> None:
    up = _inv()
    up["tools"][0]["result_envelope"]["success_result_schema"] = {"type": "object", "properties": {}}
    ours = _inv()
    ours["tools"][0]["result_envelope"]["success_result_schema"] = None
    problems = compare_with_upstream(ours, up, "")
    assert any("T `success_result_schema` result" in p for p in problems), problems
    listed = "## Differences\n- `T` `success_result_schema` result: on purpose\n"
    assert compare_with_upstream(ours, up, listed) == []


# ---------------------------------------------------------------- GenerateImage

_MODEL_ENV = ("HOLON_MODEL", "HOLON_MODEL_FALLBACKS", "HOLON_NB_PROVIDERS", "HOLON_IMAGE_GENERATION_MODEL")


@pytest.fixture
def drawing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[WireServer]:
    """A local OpenAI Images server as provider ``local`` with one image model ``brush``."""
    for key in _MODEL_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "fake-home"))
    with WireServer() as srv:
        monkeypatch.setenv(
            "HOLON_NB_PROVIDERS",
            json.dumps(
                {
                    "local": {
                        "transport": "openai_chat_completions",
                        "base_url": srv.base_url + "/v1",
                        "auth": {"source": "none"},
                        "models": [{"id": "brush", "image_generation": True}],
                    }
                }
            ),
        )
        yield srv


def _images(*blobs: bytes) -> Reply:
    return Reply(json={"created": 0, "data": [{"b64_json": base64.b64encode(b).decode()} for b in blobs]})


def _generated(rt: Runtime) -> list[str]:
    folder = rt.tool_context(CallContext("default")).agent_home / "media" / "generated"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_generate_image_leaves_no_invalid_file_on_disk(rt: Runtime, drawing: WireServer) -> None:
    drawing.script(_images(b"<html>not an image</html>"))
    e = err(rt.call("GenerateImage", {"prompt": "x", "name": "junk"}), "generated_image_invalid")
    assert e["details"]["sha256"]
    assert _generated(rt) == []


def test_generate_image_removes_every_image_of_a_call_with_an_invalid_one(rt: Runtime, drawing: WireServer) -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buf, "PNG")
    drawing.script(_images(buf.getvalue(), b"GIF89a-not-really"))
    err(rt.call("GenerateImage", {"prompt": "x", "name": "pair"}), "generated_image_invalid")
    assert _generated(rt) == []


def test_generate_image_with_no_image_returned_is_an_error(rt: Runtime, drawing: WireServer, tmp_path: Path) -> None:
    """The OpenAI Images call refuses an empty reply itself; a replayed media cassette of an empty answer did not."""
    drawing.script(_images())
    e = err(rt.call("GenerateImage", {"prompt": "x"}), "image_generation_failed")
    assert "no image" in e["message"]
    cassette = tmp_path / "empty.jsonl"
    request = {"background": None, "output_format": None, "prompt": "x", "size": None}
    route = {"ref": "local/brush", "transport": "openai_chat_completions"}
    lines = [
        {"format": MEDIA_FORMAT, "version": 1},
        {"kind": "generate", "request": request, "response": {"images": []}, "route": route},
    ]
    cassette.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with rt.images.use_cassette(MediaCassette(cassette, "replay")):
        e = err(rt.call("GenerateImage", {"prompt": "x"}), "image_generation_failed")
    assert "no image" in e["message"]
    assert _generated(rt) == []


# ---------------------------------------------------------------- WebFetch: IPv6 forms embedding a private IPv4

EMBEDDING_PRIVATE = [
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:5::",  # 6to4 of 10.0.0.5
    "2002:a9fe:a9fe::1",  # 6to4 of the metadata address
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    "2001:0:7f00:1::1",  # Teredo, server 127.0.0.1
    "::ffff:0:7f00:1",  # IPv4-translated 127.0.0.1 (::ffff:0:0:0/96)
    "::ffff:0:c0a8:1",  # IPv4-translated 192.168.0.1
    "64:ff9b::a00:5",  # NAT64 of 10.0.0.5
]


@pytest.mark.parametrize("address", EMBEDDING_PRIVATE)
def test_web_fetch_refuses_ipv6_forms_of_private_ipv4(rt: Runtime, address: str) -> None:
    with LocalServer() as server:
        server.routes["/"] = page("reached")
        # every address the policy lets through is dialled on the local server: a miss shows as a request
        rt.web = WebService(lambda: rt.settings, dial=lambda a: "127.0.0.1")
        e = err(rt.call("WebFetch", {"url": f"http://[{address}]:{server.port}/"}), "network_denied")
        assert e["details"]["blocked_ips"]
        assert server.paths() == []


@pytest.mark.parametrize(
    "address", ["2002:5db8:d822::1", "2001:0:4136:e378:8000:63bf:a247:dd87", "::ffff:0:5db8:d822", "2606:4700::1"]
)
def test_ipv6_forms_of_public_ipv4_are_not_refused(address: str) -> None:
    assert blocked_reason(address) is None


# ---------------------------------------------------------------- stale final brief

REF = "scripted@default/scripted"
FINAL = {"reason": "review", "wake": "system", "delivery": "final"}


class _Interjecting:
    """A scripted provider whose second request first queues an operator interjection (fencing the wait)."""

    def __init__(self, rt: Runtime, inner: ScriptedProvider):
        self.rt, self.inner, self.route_ref = rt, inner, inner.route_ref

    async def complete_turn(self, req: TurnRequest) -> Any:
        if self.inner.request_count() == 1:
            self.rt.turns.interject("stop, change of plan")
        return await self.inner.complete_turn(req)


def test_a_refused_final_brief_is_not_the_turns_final_text(rt: Runtime) -> None:
    inner = ScriptedProvider([Step.tool_use("w1", "WaitFor", FINAL), Step.text("STALE BRIEF: waiting on review.")])
    rt.providers.register(REF, _Interjecting(rt, inner))
    r = rt.run_turn("go", model=REF)
    assert r.terminal == "aborted" and "interjection_arrived" in r.reason
    assert rt.store.query("SELECT * FROM briefs") == []  # the brief was not published ...
    assert "STALE BRIEF" not in r.final_text  # ... so it is not the turn's final text either
    row = rt.conversations.turn(r.turn_id)
    assert "STALE BRIEF" not in (row["final_text"] or "")


def test_an_abandoned_brief_attempt_is_not_the_turns_final_text(rt: Runtime) -> None:
    steps = [
        Step.tool_use("w1", "WaitFor", FINAL),
        Step.response([TextBlock("BRIEF ATTEMPT 1"), ToolUseBlock("g1", "GetAgent", {})], "tool_use"),
        Step.response([TextBlock("BRIEF ATTEMPT 2"), ToolUseBlock("g2", "GetAgent", {})], "tool_use"),
    ]
    rt.providers.register(REF, ScriptedProvider(steps))
    r = rt.run_turn("go", model=REF)
    assert r.terminal == "aborted" and r.reason.startswith("final_brief_protocol_abandoned")
    assert "BRIEF ATTEMPT" not in r.final_text, r.final_text
