"""A published MCP server package from the registry inside holon_nb (issue 29): ``mcp-server-time`` (the
reference servers' time server, built on the same SDK 2.x), started over stdio by the MCP plane.

It needs no network: the tests convert a wall-clock time between two zones without daylight saving time.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from _support import err, ok

from holon_nb import Runtime
from holon_nb.runtime import RuntimeSettings
from holon_nb.tools._spec import Family

pytest.importorskip("mcp_server_time", reason="mcp-server-time (the test extra) is not installed")


@pytest.fixture(scope="module")
def trt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    base = tmp_path_factory.mktemp("mcp-time")
    entry = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    runtime = Runtime(home=base / "home", workspace=base, settings=RuntimeSettings(mcp_servers={"time": entry}))
    try:
        yield runtime
    finally:
        runtime.close()


def test_its_tools_join_the_registry_under_the_server_name(trt: Runtime) -> None:
    result = ok(
        trt.call(
            "mcp__time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
    )
    [text] = [c["text"] for c in result["content"] if c["type"] == "text"]
    converted = json.loads(text)
    assert converted["source"]["timezone"] == "UTC" and converted["target"]["timezone"] == "Asia/Tokyo"
    assert converted["source"]["datetime"].endswith("T12:00:00+00:00")
    assert converted["target"]["datetime"].endswith("T21:00:00+09:00")  # Tokyo keeps no daylight saving time
    names = {s.name for s in trt.registry if s.family is Family.MCP}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= names
    [row] = trt.mcp.status()
    assert row["server"] == "time" and row["state"] == "ready"


def test_its_schema_is_enforced_before_the_server_sees_the_call(trt: Runtime) -> None:
    error = err(trt.call("mcp__time__get_current_time", {"timezone": "UTC", "zone": "UTC"}), "invalid_tool_input")
    assert error["details"]["parse_error"] == "unknown field `zone`"
    error = err(trt.call("mcp__time__convert_time", {"source_timezone": "UTC", "time": "12:00"}), "invalid_tool_input")
    assert "target_timezone" in error["details"]["parse_error"]


def test_its_own_tool_error_comes_back_as_an_error_envelope(trt: Runtime) -> None:
    error = err(trt.call("mcp__time__get_current_time", {"timezone": "Mars/Olympus_Mons"}), "mcp_tool_error")
    assert "Invalid timezone" in error["message"]
