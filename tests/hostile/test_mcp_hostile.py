"""Hostile MCP servers (issue 29): a 50 MB answer, malformed JSON-RPC, a hang on start and on a call."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _mcp_support import stdio_entry
from _support import err, ok

from holon_nb import Runtime
from holon_nb.runtime import RuntimeSettings

RAW = str(Path(__file__).parents[1] / "_mcp_raw_server.py")


def _rt(tmp_path: Path, **servers: dict) -> Runtime:
    return Runtime(home=tmp_path / "home", workspace=tmp_path, settings=RuntimeSettings(mcp_servers=servers))


def test_a_50_mb_answer_is_cut_to_a_bounded_result(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [RAW], "max_result_chars": 100_000}
    with _rt(tmp_path, raw=entry) as rt:
        r = rt.call("mcp__raw__huge", {})
        result = ok(r)
        assert result["truncated"] is True and result["original_chars"] >= 50 * 1024 * 1024
        assert sum(len(b.get("text", "")) for b in result["content"]) <= 100_000
        assert len(r.full_receipt) < 200_000 and "(truncated: the server answered" in r.full_receipt
        [(envelope,)] = rt.store.query("SELECT envelope FROM tool_executions WHERE id=?", (r.execution_id,))
        assert len(envelope) < 300_000  # the record is bounded too


def test_an_answer_over_the_line_limit_is_refused_without_being_kept() -> None:
    import anyio

    from holon_nb.runtime.mcp._stdio import bounded_stdio

    async def main() -> list[object]:
        script = 'import sys; sys.stdout.write(\'{"jsonrpc": "2.0", "id": 7, "result": "\' + \'x\' * 300000 + \'"}\\n\'); sys.stdout.flush()'
        with open(os.devnull, "w") as errlog:
            async with bounded_stdio(sys.executable, ["-c", script], dict(os.environ), None, errlog, 100_000) as (
                read,
                _,
            ):
                return [await read.receive()]

    [message] = anyio.run(main)
    error = message.message  # type: ignore[attr-defined]
    assert error.id == 7 and "over the 100000 byte limit" in error.error.message


def test_malformed_json_rpc_is_a_tool_error_and_the_runtime_survives(tmp_path: Path) -> None:
    with _rt(tmp_path, raw={"command": sys.executable, "args": [RAW], "tool_timeout_s": 10}) as rt:
        e = err(rt.call("mcp__raw__garble", {}), "mcp_tool_error")
        assert "not a tool result" in e["message"]
        ok(rt.call("ExecCommand", {"cmd": "true"}))


def test_a_server_that_hangs_on_start_times_out_with_a_clear_receipt(tmp_path: Path) -> None:
    entry = stdio_entry(startup_timeout_s=1)
    entry["args"] = [*entry["args"], "--hang-on-start"]
    with _rt(tmp_path, slow=entry) as rt:
        e = err(rt.call("mcp__slow__add", {"a": 1, "b": 2}), "mcp_server_unavailable")
        assert "did not start and initialise within 1 s" in e["message"]
        assert rt.mcp.status()[0]["state"] == "failed"
        e = err(rt.call("mcp__slow__add", {"a": 1, "b": 2}), "mcp_server_unavailable")  # retried after a backoff


def test_a_call_that_hangs_times_out_and_the_server_keeps_serving(tmp_path: Path) -> None:
    with _rt(tmp_path, demo=stdio_entry(tool_timeout_s=1)) as rt:
        e = err(rt.call("mcp__demo__hang", {"seconds": 30}), "mcp_timeout")
        assert e["retryable"] is True and e["details"]["timeout_s"] == 1
        assert ok(rt.call("mcp__demo__echo", {"text": "x"}))["content"][0]["text"] == "x"
