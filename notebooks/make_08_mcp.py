"""Write notebooks/08-mcp.ipynb, and (``--record``) record its MCP cassette.

    python notebooks/make_08_mcp.py            # the notebook only
    python notebooks/make_08_mcp.py --record   # also re-record 08-mcp.holon/cassettes/mcp.jsonl

The tutorial runs offline: its MCP server is ``holon_nb.runtime.mcp._demo`` (built on the SDK's MCPServer,
shipped with holon_nb), started over stdio by the runtime itself; the last section replays calls from the
committed cassette, and the served direction starts ``holon-nb mcp serve`` on a temporary home.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from _tutorial import tutorial_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "notebooks"
OUT = HERE / "08-mcp.ipynb"
CASSETTE = "08-mcp.holon/cassettes/mcp.jsonl"

SERVE = """import os, tempfile
from mcp import ClientSession, StdioServerParameters, stdio_client

HOLON_NB = str(Path(sys.executable).with_name("holon-nb"))
scratch = Path(tempfile.mkdtemp(prefix="holon-nb-08-serve-"))

async def ask_holon_nb():
    params = StdioServerParameters(
        command=HOLON_NB, args=["mcp", "serve", "--home", str(scratch / "home"), "--workspace", str(scratch)]
    )
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            ran = await client.call_tool("ExecCommand", {"cmd": "echo hello from an MCP client"})
            wrong = await client.call_tool("ExecCommand", {"cmd": "true", "bogus": 1})
            return tools, ran, wrong

tools, ran, wrong = await ask_holon_nb()
names = {t.name for t in tools}
print("served:", sorted(n for n in names if n in {"ExecCommand", "ApplyPatch", "TaskStatus", "CreateWorkItem"}))
print("hidden trigger tools served:", "CreateExternalTrigger" in names)
print(ran.content[0].text)
print("schema error -> isError:", wrong.is_error, "|", wrong.structured_content["error"]["details"]["parse_error"])"""


def build() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# MCP both ways\n\n"
            "The [Model Context Protocol](https://modelcontextprotocol.io) is how agent tooling connects: an MCP\n"
            "*server* offers tools, an MCP *client* calls them. holon_nb is both.\n\n"
            "1. **MCP servers' tools inside holon_nb.** Configure servers in the `mcpServers` shape of Claude Code\n"
            "   and Codex (`HolonNB.mcp_servers`, `.mcp.json`, or `[tool.holon_nb.mcpServers]` in `pyproject.toml`);\n"
            "   their tools join the registry as `mcp__<server>__<tool>`, with the same input rules, receipts,\n"
            "   profile gate and approvals as the built-in tools.\n"
            "2. **holon_nb as an MCP server.** `holon-nb mcp serve` offers the contract's tools (commands, tasks,\n"
            "   patches, work items, memory) to any MCP client over stdio, or over streamable HTTP on 127.0.0.1\n"
            "   with a bearer token.\n\n"
            "Everything here is offline: the MCP server is a small one shipped with holon_nb\n"
            "(`holon_nb/runtime/mcp/_demo.py`, written with the official `mcp` SDK), started by the runtime itself."
        ),
        new_code_cell(
            "import sys\nfrom pathlib import Path\nimport holon_nb\nholon_nb.clear_home()  # this notebook's own holon home starts empty\n%load_ext holon_nb\nrt = holon_nb.get_runtime()"
        ),
        new_markdown_cell(
            "## Configure a server\n\n"
            "A stdio server is a `command` with `args` (and `env`); a streamable HTTP server is a `url` (and\n"
            "`headers`). Nothing starts yet: a server starts on first use. Its stderr goes to a log file under\n"
            "the holon home, never into the cell."
        ),
        new_code_cell(
            '%config HolonNB.mcp_servers = {"demo": {"command": sys.executable, "args": ["-m", "holon_nb.runtime.mcp._demo"]}}'
        ),
        new_markdown_cell(
            "`%holon mcp` starts the configured servers and lists them: state, restarts, tools and where the\n"
            "server's stderr goes. A tool name with path characters (`files/read..me`) is namespaced safely."
        ),
        new_code_cell("%holon mcp"),
        new_markdown_cell(
            "## Call its tools\n\n"
            "Any tool magic calls them (`%tool`, `rt.call`), and an agent turn is offered them like any tool.\n"
            "The receipt is the one envelope; images come back inline and resource links by name."
        ),
        new_code_cell('%tool mcp__demo__add {"a": 2, "b": 40}'),
        new_code_cell("%tool mcp__demo__pixel"),
        new_code_cell("%tool mcp__demo__link"),
        new_markdown_cell(
            "## The same input rules\n\n"
            "Arguments are checked against the server's own schema before it sees them, with the built-in\n"
            "parser's rules: a missing field or an unknown field is an `invalid_tool_input` receipt (unknown\n"
            "fields are refused unless the schema allows them). A recursive schema (`$ref` cycles) is followed as\n"
            "deep as the value goes."
        ),
        new_code_cell('%tool mcp__demo__add {"a": 1, "c": 3}'),
        new_code_cell(
            '%tool mcp__demo__tree {"root": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}}'
        ),
        new_markdown_cell(
            "## Timeouts and crashes\n\n"
            "`tool_timeout_s` bounds each call (`startup_timeout_s` the start): a hang becomes a retryable\n"
            "`mcp_timeout` receipt. A server that exits is restarted on its next call, after a backoff.\n"
            "Changing a server's entry restarts it with the new settings."
        ),
        new_code_cell(
            '%config HolonNB.mcp_servers = {"demo": {"command": sys.executable, "args": ["-m", "holon_nb.runtime.mcp._demo"], "tool_timeout_s": 2}}\n'
            '%tool mcp__demo__hang {"seconds": 60}'
        ),
        new_code_cell('%tool mcp__demo__crash\n%tool mcp__demo__echo {"text": "back again"}'),
        new_markdown_cell(
            "## Offline: record and replay\n\n"
            "With `HolonNB.mcp_cassette` set, calls are recorded to (or replayed from) a JSON-lines cassette, as\n"
            "model calls are: `holon-nb test` replays, so a notebook that uses an MCP tool is a regression test\n"
            "that never starts the server. This cassette was recorded by `notebooks/make_08_mcp.py --record`."
        ),
        new_code_cell(f'%config HolonNB.mcp_cassette = "{CASSETTE}"\n%tool mcp__demo__add {{"a": 2, "b": 40}}'),
        new_code_cell('%config HolonNB.mcp_cassette = ""'),
        new_markdown_cell(
            "## holon_nb as an MCP server\n\n"
            "`holon-nb mcp serve [--home DIR] [--workspace DIR] [--profile NAME]` serves the tools a model of that\n"
            "profile is offered (hidden tools stay hidden) over stdio; `--http` serves streamable HTTP on\n"
            "127.0.0.1 and refuses any request without its bearer token. Claude Code, for example:\n\n"
            "```json\n"
            '{"mcpServers": {"holon": {"command": "holon-nb", "args": ["mcp", "serve", "--workspace", "."]}}}\n'
            "```\n\n"
            "Here the SDK's own client talks to it. A schema error comes back as a tool error (`isError`), not\n"
            "a protocol failure. `%holon mcp serve` does the same from inside this kernel, over HTTP."
        ),
        new_code_cell(SERVE),
    ]
    return tutorial_notebook(cells)


def record() -> None:
    from holon_nb import Runtime
    from holon_nb.runtime import RuntimeSettings

    path = HERE / CASSETTE
    shutil.rmtree(path.parent.parent, ignore_errors=True)
    home = tempfile.mkdtemp()
    settings = RuntimeSettings(
        mcp_servers={"demo": {"command": sys.executable, "args": ["-m", "holon_nb.runtime.mcp._demo"]}},
        mcp_cassette=str(path),
        mcp_cassette_mode="record",
    )
    with Runtime(home=home, workspace=HERE, settings=settings) as rt:
        print(rt.call("mcp__demo__add", {"a": 2, "b": 40}, raise_on_error=True).receipt)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    nbformat.write(build(), OUT)
    print("wrote", OUT)
    if "--record" in sys.argv:
        record()
