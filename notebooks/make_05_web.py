"""Write notebooks/05-web-and-triggers.ipynb and the scripted model beside it.

    python notebooks/make_05_web.py

The notebook serves the project's README as a small website on 127.0.0.1 (real prose in a page with
the navigation, header and footer every site has), fetches it under the web policy, shows SSRF
attempts refused, searches it through a local SearXNG-compatible endpoint, and wakes a waiting
agent by POSTing to its external trigger URL with curl.

The agent's model is a scripted file (``05-web-and-triggers.holon/ci-callback.yaml``), not a
cassette: a replayed turn does not run its tools, so a replayed ``WaitFor`` would register no wait
for the trigger to wake (and ``%%agent --follow`` refuses cassettes, which hold one turn). The
scripted model's tool calls run for real.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from _tutorial import tutorial_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

HERE = Path(__file__).resolve().parent
OUT = HERE / "05-web-and-triggers.ipynb"
SCRIPT = "05-web-and-triggers.holon/ci-callback.yaml"

SCRIPT_TEXT = """\
# The scripted model of notebooks/05-web-and-triggers.ipynb (written by notebooks/make_05_web.py).
format: holon_nb.script/v1
route_ref: scripted@default/scripted
steps:
  - tool_use: {id: call_1, name: WebSearch, input: {query: "command line notebooks", max_results: 3}}
    usage: {input: 820, output: 40}
  - tool_use: {id: call_2, name: WaitFor, input: {reason: "CI runs the notebook tests and calls back",
                                                  wake: external, delivery: silent}}
    usage: {input: 1100, output: 45}
    expect: {last_message: {tool_results: [{tool_use_id: call_1, is_error: false}]}}
  - text: "CI called back through the external trigger: the notebook tests ran. The docs' Command line section
      says to run a notebook headless with `holon-nb run NOTEBOOK`, so that is what CI runs."
    usage: {input: 1300, output: 60}
"""

SITE = r'''import html, http.server, importlib.metadata, json, re, threading
from pathlib import Path
import holon_nb

# this project's README, real prose: the copy taken when this tutorial was written (so editing the README
# does not change what this notebook is expected to show), else the README beside the package's source or
# the checkout around this notebook, or (holon_nb installed from PyPI or a wheel) its package metadata's copy
for readme in (Path("05-web-and-triggers.holon", "site.md"), Path(holon_nb.__file__).resolve().parents[1] / "README.md",
               Path("..", "README.md")):
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        break
else:
    text = importlib.metadata.metadata("holon_nb")["Description"]
sections = re.split(r"(?m)^## ", text)[1:]

def to_html(markdown):
    """A small Markdown-to-HTML step: headings, fenced code, tables, lists and paragraphs."""
    out, code, items = [], None, []
    for block in re.split(r"\n\s*\n", markdown):
        if code is not None or block.lstrip().startswith("```"):
            code = (code or []) + [block]
            if "\n".join(code).count("```") % 2 == 0:
                body = "\n\n".join(code).strip().strip("`").split("\n", 1)[-1].rsplit("```", 1)[0]
                out.append(f"<pre><code>{html.escape(body)}</code></pre>")
                code = None
        elif block.lstrip().startswith("- "):
            lis = "".join(f"<li>{html.escape(i.strip())}</li>" for i in re.split(r"(?m)^- ", block.strip()) if i.strip())
            out.append(f"<ul>{lis}</ul>")
        elif block.lstrip().startswith("|"):
            rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block.strip().splitlines()
                    if not re.fullmatch(r"[|\s:-]+", line)]
            head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
            body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif block.startswith("### "):
            out.append(f"<h3>{html.escape(block[4:].strip())}</h3>")
        elif block.strip():
            out.append(f"<p>{html.escape(' '.join(block.split()))}</p>")
    return "\n".join(out)

pages = {}
for section in sections:
    title, _, body = section.partition("\n")
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    pages[slug] = (title.strip(), body)
nav = "".join(f'<li><a href="/{s}.html">{html.escape(t)}</a></li>' for s, (t, _) in pages.items())
site = {f"/{s}.html": (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(t)} - holon_nb docs</title>"
                       f"</head><body><header><a href='/'>holon_nb docs</a> | <a href='/search'>Search</a></header>"
                       f"<nav class='sidebar'><ul>{nav}</ul></nav><main><article><h1>{html.escape(t)}</h1>"
                       f"{to_html(b)}</article></main><footer>Built from README.md. Copyright the holon_nb authors."
                       f"</footer></body></html>")
        for s, (t, b) in pages.items()}

class Docs(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path == "/search":   # the JSON API of SearXNG (format=json), over these pages
            words = set(re.findall(r"\w+", html.unescape(query.split("q=", 1)[-1].split("&")[0]).replace("+", " ").lower()))
            hits = sorted(((sum(b.lower().count(w) for w in words), s, t, b) for s, (t, b) in pages.items()), reverse=True)
            results = [{"title": t, "url": f"{base}/{s}.html", "content": " ".join(b.split())[:160], "engine": "local"}
                       for n, s, t, b in hits if n]
            self._send(200, "application/json", json.dumps({"query": query, "results": results}).encode())
        elif path == "/moved":  # a page that redirects to the cloud metadata address
            self.send_response(302); self.send_header("location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("content-length", "0"); self.end_headers()
        elif path in site:
            self._send(200, "text/html; charset=utf-8", site[path].encode())
        else:
            self._send(404, "text/plain", b"not found")
    def _send(self, status, ctype, body):
        self.send_response(status); self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Docs)
threading.Thread(target=server.serve_forever, daemon=True).start()
HOST = f"127.0.0.1:{server.server_address[1]}"
base = f"http://{HOST}"
print("serving", len(site), "pages at", base, "-", ", ".join(sorted(site)))'''


def build() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# Reading the web, searching, and waking an agent from outside\n\n"
            "Three web tools and a wake URL, all runnable offline against a server this notebook starts on "
            "127.0.0.1:\n\n"
            "- **WebFetch** (`%web fetch`) reads one page under the runtime's web policy and returns its main content "
            "as Markdown;\n"
            "- **WebSearch** (`%web search`) asks the configured search providers (here a local SearXNG-compatible "
            "endpoint);\n"
            "- **external triggers** (`%trigger`) give an agent a URL that anything outside the kernel (a CI job, a "
            "webhook) can POST to, to wake it.\n\n"
            "An agent calls the same tools during its turns; everything a page says is untrusted data."
        ),
        new_markdown_cell(
            "## A small documentation site\n\nThe project's own README (the copy in "
            "`05-web-and-triggers.holon/site.md`, taken when this tutorial was written), served as one "
            "page per section, each with the navigation sidebar, header and footer a real site has."
        ),
        new_code_cell(SITE),
        new_code_cell(
            "holon_nb.clear_home()  # this notebook's own holon home starts empty: each run shows only its own state\n%load_ext holon_nb\nrt = holon_nb.get_runtime()"
        ),
        new_markdown_cell(
            "## The web policy refuses local addresses by default\n\n"
            "WebFetch refuses private, loopback and link-local addresses (and URLs with credentials) unless the "
            "operator allowlists the host, so a model cannot be talked into reading the kernel's own network:"
        ),
        new_code_cell("%web fetch {base}/command-line.html"),
        new_markdown_cell("Allowlist exactly this server (`host:port`; a rule without a port allows every port):"),
        new_code_cell("%config HolonNB.web_allowed_hosts = [HOST]\n%web fetch {base}/command-line.html"),
        new_markdown_cell(
            "`auto` (the default) kept the article — heading, paragraphs, code blocks — as Markdown and dropped the "
            "sidebar, header and footer. `--mode text` strips the tags of the whole page instead; `--mode raw` "
            "returns it as sent:"
        ),
        new_code_cell("%web fetch {base}/command-line.html --mode text --max-chars 300"),
        new_markdown_cell(
            "## SSRF attempts are refused\n\n"
            "Cloud metadata addresses are refused even when allowlisted (here the metadata address is allowlisted on "
            "purpose), and every redirect hop is checked again: "
            "`/moved` redirects to the metadata address, and the second hop is refused before any connection. "
            "Connections go to the addresses that were checked (no second DNS lookup), so DNS rebinding cannot "
            "swap the target either."
        ),
        new_code_cell(
            '%config HolonNB.web_allowed_hosts = [HOST, "169.254.169.254"]\n'
            "%web fetch http://169.254.169.254/latest/meta-data/"
        ),
        new_code_cell("%web fetch {base}/moved"),
        new_markdown_cell(
            "## Searching\n\n"
            "With no provider configured WebSearch scrapes DuckDuckGo Lite (which needs internet access). Point it "
            "at the local SearXNG-compatible endpoint instead; Brave, Tavily and Exa take their API key from "
            "`BRAVE_API_KEY`, `TAVILY_API_KEY`, `EXA_API_KEY`, and a `command` provider runs any program that prints "
            "JSON results."
        ),
        new_code_cell(
            '%config HolonNB.web_search = {"providers": ["docs"], "provider_configs": '
            '{"docs": {"kind": "searxng", "base_url": base}}}\n'
            "%web search command line notebooks --max 3"
        ),
        new_markdown_cell(
            "## Waking a waiting agent from outside\n\n"
            "`%trigger create` gives the agent its wake URL (CreateExternalTrigger). The URL is a bearer secret: it "
            "goes into the Python variable `trigger_url`, never into the notebook's outputs, and commands the agent "
            "runs see it as `$HOLON_EXTERNAL_TRIGGER_URL`. Behind JupyterHub, expose the callback server with "
            "jupyter-server-proxy and set `HolonNB.callback_base_url` (see the README)."
        ),
        new_code_cell("%trigger create"),
        new_markdown_cell(
            "The agent searches the docs, then waits for an external wake (`WaitFor` with `wake: external`). "
            f"Its model is the scripted file `{SCRIPT}`, so this runs offline; `--follow 1` runs the turn a wake "
            "starts in the same view. The cell returns at once; the agent keeps waiting."
        ),
        new_code_cell(
            f"%%agent --model scripted/{SCRIPT} --follow 1\n"
            "Search our docs for how notebooks run from the command line, then wait until CI calls back."
        ),
        new_markdown_cell(
            "Now be the CI job: once the agent is waiting, POST to its URL with curl. The answer says "
            "the delivery woke the wait:"
        ),
        new_code_cell(
            "import time\n"
            "deadline = time.monotonic() + 60\n"
            'while rt.call("GetAgent", {}).result["agent"]["active_wait_count"] == 0 and time.monotonic() < deadline:\n'
            "    time.sleep(0.05)\n"
            "import subprocess  # curl with the URL as one argument (IPython's ! would also try to expand the JSON)\n"
            'answer = subprocess.run(["curl", "-s", "-X", "POST", trigger_url, "-H", "content-type: application/json",\n'
            '                         "-d", \'{"job": "notebooks", "status": "passed"}\'], capture_output=True, text=True)\n'
            "print(answer.stdout)"
        ),
        new_code_cell("%holon wait"),
        new_code_cell(
            "for turn in holon_nb.agent_turns():\n"
            "    calls = [c.name for r in turn.rounds for c in r.tool_calls]\n"
            "    print(turn.terminal, turn.reason, calls)\n"
            "print(holon_nb.agent_turns()[-1].final_text)"
        ),
        new_markdown_cell("A revoked URL wakes nothing (404); `%trigger create` would mint a new one."),
        new_code_cell("%trigger list"),
        new_code_cell(
            'tid = rt.triggers.list("default")[0]["external_trigger_id"]\n%trigger cancel $tid\n'
            'print(subprocess.run(["curl", "-s", "-X", "POST", trigger_url], capture_output=True, text=True).stdout)'
        ),
        new_code_cell("server.shutdown()"),
    ]
    # the local servers listen on ports the system picks: the comparison reads any of them as <port>
    return tutorial_notebook(cells, normalize=[{"regex": r"127\.0\.0\.1:\d+", "replace": "127.0.0.1:<port>"}])


if __name__ == "__main__":
    (HERE / SCRIPT).parent.mkdir(parents=True, exist_ok=True)
    (HERE / SCRIPT).write_text(SCRIPT_TEXT, encoding="utf-8")
    # the site's text, frozen: the notebook's expected outputs (search hits, fetched pages) follow this copy
    (HERE / SCRIPT).with_name("site.md").write_text(
        (HERE.parent / "README.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    nbformat.write(build(), OUT)
    print("wrote", OUT, "and", HERE / SCRIPT)
