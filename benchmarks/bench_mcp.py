"""An MCP tool call through holon_nb vs the ``mcp`` SDK's client calling the same server directly (issue 29).

Both call ``add`` on holon_nb's demo server (``holon_nb.runtime.mcp._demo``, the SDK's MCPServer) over stdio,
each with a server process of its own: holon_nb through ``Runtime.call("mcp__demo__add", …)`` (dispatch, the
schema check, the envelope, the receipt and the execution record included), the SDK through
``ClientSession.call_tool`` driven from this thread by a blocking portal (as ``Runtime.call`` drives the
runtime's loop). The rounds are interleaved (``_common.interleaved_ms``); the goal is a ratio ≤ 1.3.
Prints figures; asserts nothing about speed. Run: ``python benchmarks/bench_mcp.py [RUNS]``.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

from _common import interleaved_ms, save

from holon_nb import Runtime
from holon_nb.runtime import RuntimeSettings

ARGS = {"a": 2, "b": 40}
SERVER = [sys.executable, "-m", "holon_nb.runtime.mcp._demo"]


def main(runs: int = 300) -> None:
    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, StdioServerParameters, stdio_client

    tmp = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    settings = RuntimeSettings(mcp_servers={"demo": {"command": SERVER[0], "args": SERVER[1:]}})
    with (
        Runtime(home=tmp / "home", workspace=tmp, settings=settings) as rt,
        start_blocking_portal() as portal,
        contextlib.ExitStack() as stack,
    ):
        errlog = stack.enter_context(open(tmp / "direct.log", "w"))
        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
        read, write = stack.enter_context(portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)))
        session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
        portal.call(session.initialize)

        def direct() -> None:
            result = portal.call(session.call_tool, "add", ARGS)
            assert result.content[0].text == "42"

        def through_holon_nb() -> None:
            result = rt.call("mcp__demo__add", ARGS)
            assert result.ok and result.envelope["result"]["content"][0]["text"] == "42", result.receipt

        through_holon_nb()  # starts the server (not timed)
        medians = interleaved_ms({"sdk_direct": direct, "holon_nb": through_holon_nb}, runs, warmup=20)
    ratio = medians["holon_nb"] / medians["sdk_direct"]
    save(
        "bench_mcp",
        {
            "runs": runs,
            "sdk_direct_ms": round(medians["sdk_direct"], 3),
            "holon_nb_ms": round(medians["holon_nb"], 3),
            "ratio": round(ratio, 3),
            "goal_ratio": 1.3,
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
