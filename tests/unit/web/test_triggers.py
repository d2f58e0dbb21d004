"""External triggers (workspace spec §14, §15 cases 50-52): a real callback server, POSTs from other processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from _support import err, eventually, ok

from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.turns._follow import TurnFollower

REF = "scripted@default/scripted"
URL = re.compile(r"^http://127\.0\.0\.1:\d+/api/callbacks/wake/cb_[0-9a-f]{64}$")


def post(url: str, body: bytes = b"{}") -> tuple[int, dict[str, Any]]:
    """POST from a separate process (curl when present, else Python's urllib)."""
    code = (
        "import sys, urllib.request, urllib.error, json\n"
        "req = urllib.request.Request(sys.argv[1], data=sys.stdin.buffer.read(), method='POST',"
        " headers={'content-type': 'application/json'})\n"
        "try:\n    r = urllib.request.urlopen(req, timeout=10); print(r.status); print(r.read().decode())\n"
        "except urllib.error.HTTPError as e:\n    print(e.code); print(e.read().decode())\n"
    )
    out = subprocess.run([sys.executable, "-c", code, url], input=body, capture_output=True, timeout=30, check=True)
    status, _, text = out.stdout.decode().partition("\n")
    return int(status), json.loads(text)


def test_create_is_idempotent_and_normalises_the_mode(rt: Runtime) -> None:
    first = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "enqueue_message", "description": "ci"}))
    second = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    third = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_only"}))
    assert first == second == third
    assert first["delivery_mode"] == "wake_hint" and first["status"] == "active"
    assert first["target_agent_id"] == "default" and re.fullmatch(r"trigger_[0-9a-f]{15}", first["external_trigger_id"])
    assert URL.match(first["trigger_url"])
    err(rt.call("CreateExternalTrigger", {}), "invalid_tool_input")
    err(rt.call("CreateExternalTrigger", {"delivery_mode": "push"}), "invalid_tool_input")
    assert rt.triggers.records.audit(first["external_trigger_id"]) == ["external_trigger_created"]


def test_hidden_from_every_tool_list_yet_dispatchable_by_public_and_private_agents(rt: Runtime) -> None:
    from holon_nb.tools._inventory import generate_inventory
    from holon_nb.tools._spec import Profile

    names = {"CreateExternalTrigger", "CancelExternalTrigger"}
    for profile in Profile:
        assert not names & {t.name for t in rt.turns.advertised_tools(profile)}
    inv = generate_inventory()
    assert not names & {t["name"] for t in inv["tools"]}
    assert names <= {t["name"] for t in inv["hidden_tools"]}
    rt.store.ensure_agent("child", "private_child", name="child", parent_id="default")
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}, agent="child"))
    assert made["target_agent_id"] == "child"
    assert (
        ok(rt.call("CancelExternalTrigger", {"external_trigger_id": made["external_trigger_id"]}, agent="child"))[
            "status"
        ]
        == "revoked"
    )


def test_a_model_round_calling_a_trigger_tool_is_not_exposed(rt: Runtime) -> None:
    rt.providers.register(
        REF,
        ScriptedProvider(
            [Step.tool_use("c1", "CreateExternalTrigger", {"delivery_mode": "wake_hint"}), Step.text("ok")]
        ),
    )
    result = rt.run_turn("make a trigger", model=REF)
    assert result.tool_calls[0].envelope["error"]["kind"] == "tool_not_exposed_for_round"
    assert rt.triggers.list("default") == []


def test_cancel_revokes_hides_the_token_and_is_idempotent(rt: Runtime) -> None:
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    tid, url = made["external_trigger_id"], made["trigger_url"]
    assert post(url)[0] == 202
    result = rt.call("CancelExternalTrigger", {"external_trigger_id": f"  {tid} "})
    rec = ok(result)
    assert rec["status"] == "revoked" and rec["revoked_at"] and rec["delivery_count"] == 1
    assert "token" not in rec and "token_hash" not in rec and "cb_" not in result.full_receipt
    assert ok(rt.call("CancelExternalTrigger", {"external_trigger_id": tid})) == rec
    assert rt.triggers.records.audit(tid) == ["external_trigger_created", "external_trigger_revoked"]
    status, body = post(url)
    assert status == 404 and body == {"error": "not_found"}
    renewed = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    assert renewed["external_trigger_id"] != tid and renewed["trigger_url"] != url


def test_cancel_errors_and_no_cross_agent_revocation(rt: Runtime) -> None:
    err(rt.call("CancelExternalTrigger", {}), "invalid_tool_input")
    err(rt.call("CancelExternalTrigger", {"external_trigger_id": "  "}), "invalid_tool_input")
    e = err(
        rt.call("CancelExternalTrigger", {"external_trigger_id": "trigger_000000000000000"}), "tool_execution_failed"
    )
    assert e["details"]["reason"] == "external_trigger_not_found"
    theirs = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}, agent="other"))
    mine = err(
        rt.call("CancelExternalTrigger", {"external_trigger_id": theirs["external_trigger_id"]}),
        "tool_execution_failed",
    )
    assert mine["details"]["reason"] == "external_trigger_not_found"
    assert mine["message"] == f"external trigger {theirs['external_trigger_id']} not found"
    assert rt.triggers.records.get(theirs["external_trigger_id"])["status"] == "active"


def test_unknown_tokens_and_other_paths_wake_nothing(rt: Runtime) -> None:
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    base = made["trigger_url"].rsplit("/api/", 1)[0]
    assert post(f"{base}/api/callbacks/wake/cb_{'0' * 64}")[0] == 404
    assert post(f"{base}/api/callbacks/wake/")[0] == 404
    assert post(f"{base}/elsewhere")[0] == 404
    assert httpx.get(made["trigger_url"]).status_code == 405
    assert httpx.post(made["trigger_url"], content=b"x" * (65 * 1024)).status_code == 413
    assert rt.messages(kind="callback_event") == []
    assert rt.triggers.records.get(made["external_trigger_id"])["delivery_count"] == 0


def test_deliveries_coalesce_into_one_pending_hint(rt: Runtime) -> None:
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    answers = [post(made["trigger_url"], b'{"n": %d}' % i)[1] for i in range(3)]
    assert [a["coalesced"] for a in answers] == [False, True, True]
    [msg] = rt.messages(kind="callback_event")
    assert msg["authority"] == "integration_signal" and msg["metadata"]["delivery_surface"] == "http_callback_wake"
    assert msg["metadata"]["admission_context"] == "external_trigger_capability"
    assert rt.triggers.records.get(made["external_trigger_id"])["delivery_count"] == 3


def test_a_waiting_follow_run_resumes_on_a_post_from_another_process(rt: Runtime) -> None:
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    provider = ScriptedProvider(
        [
            Step.tool_use(
                "w1", "WaitFor", {"reason": "the CI job calls back", "wake": "external", "delivery": "silent"}
            ),
            Step.text("CI called back; checking the result now"),
        ]
    )
    rt.providers.register(REF, provider)
    follower = TurnFollower(rt, max_wakes=2, timeout_s=60)
    box: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: box.setdefault("results", follower.run("wait for CI", model=REF)), daemon=True
    )
    thread.start()
    eventually(lambda: len(follower.results) == 1 and follower.open_waits() == 1)
    status, answer = post(made["trigger_url"], b'{"job": "build", "status": "passed"}')
    assert status == 202 and answer["woke_wait"] is True and answer["coalesced"] is False
    thread.join(60)
    results = box["results"]
    assert [r.terminal for r in results] == ["completed", "completed"]
    assert results[1].final_text == "CI called back; checking the result now"
    woke = "\n".join(getattr(item, "text", "") for item in provider.requests()[1].conversation[1:])
    assert made["external_trigger_id"] in woke and "passed" not in woke  # the payload stays opaque
    assert follower.ended_because == "idle"


def test_command_tasks_get_the_url_and_notebook_displays_never_show_the_token(rt: Runtime) -> None:
    assert "HOLON_EXTERNAL_TRIGGER_URL" not in rt.triggers.env_for("default")
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    out = ok(rt.call("ExecCommand", {"cmd": 'printf %s "$HOLON_EXTERNAL_TRIGGER_URL" | wc -c'}))
    assert str(len(made["trigger_url"])) in json.dumps(out)
    token = made["trigger_url"].rsplit("/", 1)[1]
    result = rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"})
    assert result.result["trigger_url"] == made["trigger_url"]  # the in-memory result carries trigger_url
    assert token not in result.receipt and "cb_[redacted]" in result.receipt  # issue 25: never in a receipt
    bundle = result._repr_mimebundle_()
    assert token not in json.dumps(bundle) and "cb_[redacted]" in bundle["text/plain"]


def test_callback_base_url_and_fixed_port(rt: Runtime, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rt.settings = rt.settings.replace(callback_port=port, callback_base_url="https://hub.example.org/user/me/proxy/9/")
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    assert made["trigger_url"].startswith("https://hub.example.org/user/me/proxy/9/api/callbacks/wake/cb_")
    token = made["trigger_url"].rsplit("/", 1)[1]
    # what jupyter-server-proxy forwards: the path after /proxy/<port>, or the whole path in absolute mode
    assert post(f"http://127.0.0.1:{port}/api/callbacks/wake/{token}")[0] == 202
    assert post(f"http://127.0.0.1:{port}/user/me/proxy/absolute/{port}/api/callbacks/wake/{token}")[0] == 202


def test_the_server_starts_with_the_first_trigger_and_stops_with_the_runtime(tmp_path: Path) -> None:
    with Runtime(home=tmp_path / "h", workspace=tmp_path) as runtime:
        assert not runtime.triggers.server.running
        url = ok(runtime.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))["trigger_url"]
        assert runtime.triggers.server.running
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, timeout=5)


def test_the_token_never_reaches_the_logs(rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG)
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    token = made["trigger_url"].rsplit("/", 1)[1]
    post(made["trigger_url"])
    post(made["trigger_url"] + "/extra")
    post(made["trigger_url"].replace(token, "cb_" + "1" * 64))
    rt.call("CancelExternalTrigger", {"external_trigger_id": made["external_trigger_id"]})
    post(made["trigger_url"])
    assert token not in caplog.text  # (a client logging the URL is caught here: the check is live)


def test_get_agent_lists_active_triggers_without_the_token(rt: Runtime) -> None:
    assert ok(rt.call("GetAgent", {}))["agent"]["active_external_triggers"] == []
    made = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))
    result = rt.call("GetAgent", {})
    [listed] = ok(result)["agent"]["active_external_triggers"]
    assert listed["external_trigger_id"] == made["external_trigger_id"] and listed["status"] == "active"
    assert "cb_" not in result.full_receipt
    rt.call("CancelExternalTrigger", {"external_trigger_id": made["external_trigger_id"]})
    assert ok(rt.call("GetAgent", {}))["agent"]["active_external_triggers"] == []


def test_active_triggers_work_again_after_a_restart(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from holon_nb.runtime import RuntimeSettings

    settings = RuntimeSettings(callback_port=port)  # e.g. $HOLON_NB_CALLBACK_PORT, read when the kernel starts
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as first:
        url = ok(first.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))["trigger_url"]
    with Runtime(home=tmp_path / "h", workspace=tmp_path, settings=settings) as second:
        eventually(lambda: second.triggers.server.running)
        assert post(url)[0] == 202
        # only the token's hash is kept (issue 25): this process adds a token of its own to the same trigger
        assert second.triggers.env_for("default") == {}
        renewed = ok(second.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))["trigger_url"]
        assert renewed != url and renewed.rsplit("/", 2)[0] == url.rsplit("/", 2)[0]
        assert post(url)[0] == 202 and post(renewed)[0] == 202
        assert second.triggers.env_for("default") == {"HOLON_EXTERNAL_TRIGGER_URL": renewed}
