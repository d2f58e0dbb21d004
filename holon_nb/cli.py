"""``holon-nb``: the command line (argparse and exit codes only).

Verbs:

- ``holon-nb call NAME [JSON]`` — one tool call through a :class:`~holon_nb.Runtime`
  (holon home ``$HOLON_NB_HOME`` or ``./.holon``, workspace = the current
  directory); prints the scrubbed envelope (D12), or ``--receipt`` the
  model-visible receipt. The call is not followed by any wait: when it
  promotes a command to a background task, the task is stopped when the
  runtime closes right after printing (a CLI process never leaves work
  running silently); use ``yield_time_ms`` to wait longer in the call itself.
- ``holon-nb tools`` — the registry as a table.
- ``holon-nb inventory [--check] [--output PATH]`` — write or check
  ``docs/model-tool-schema-inventory.json`` (D8).
- ``holon-nb run NOTEBOOK ...`` — execute a notebook headless
  (notebook-tests spec §1; logic in :mod:`holon_nb.testing._harness`).
- ``holon-nb prune [--home DIR] [--dry-run]`` — remove old command artifacts and
  ended tasks' logs by the home's policy (D13; :mod:`holon_nb.runtime.housekeeping._prune`)
  and print what was removed.
- ``holon-nb test [PATHS] [pytest options]`` — ``pytest --holon-nb``: test notebooks against
  their saved outputs (notebook-tests spec §2; :mod:`holon_nb.testing.plugin`); exits with pytest's status.

Exit status:

===========  ===========================================================
verb         0 / 1 / 2 / 3
===========  ===========================================================
call         success or deferred / error envelope or runtime failure /
             usage error / —
tools        listed / — / usage error / —
inventory    written or up to date / stale or missing (diff printed) /
             usage error / —
run          no unexpected cell error / a cell raised outside a
             ``raises-exception`` cell, a cell timed out, the run hit its
             overall limit, holon_nb did not load or the final wait
             failed / usage error (missing notebook, bad -p, unknown
             kernel, OUT = input, a file that is not a notebook) / the
             kernel died
prune        pruned (or nothing to prune) / — / usage error (no holon
             home there, a negative limit) / —
test         pytest's: 0 passed / 1 failed / 2 interrupted / 3 internal
             error; 4 usage (also a named file that is not a notebook,
             or a notebook of another language: one line), 5 none
===========  ===========================================================

Example::

    holon-nb call ExecCommand '{"cmd": "echo hi"}'
    holon-nb run notebooks/01-commands-and-tasks.ipynb -p n=3
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_KERNEL_DIED = 0, 1, 2, 3


def _parameter(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value


def build_parser() -> argparse.ArgumentParser:
    """Return the ``holon-nb`` argument parser (argparse exits 2 on a usage error)."""
    parser = argparse.ArgumentParser(prog="holon-nb", description="Holon's agent tools, headless and in notebooks.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)

    p = sub.add_parser("call", help="call one tool and print its envelope")
    p.add_argument("name", metavar="NAME", help="tool name, e.g. ExecCommand")
    p.add_argument(
        "args",
        metavar="JSON",
        nargs="?",
        default="{}",
        help="arguments as JSON text (default {}); text that is not JSON becomes an "
        "invalid_tool_input envelope, exactly as for a model",
    )
    shown = p.add_mutually_exclusive_group()
    shown.add_argument(
        "--receipt", action="store_true", help="print the model-visible receipt instead of the result record (JSON)"
    )
    shown.add_argument(
        "--text",
        action="store_true",
        help="print the receipt a person reads (what a notebook shows) instead of the JSON",
    )
    p.add_argument(
        "--context",
        metavar="JSON",
        default=None,
        help="what a model's turn would know besides the arguments, as a JSON object: e.g. "
        '\'{"brief": "…"}\' for WaitFor delivery=final, \'{"report": "…"}\' for CompleteWorkItem',
    )

    sub.add_parser("tools", help="list the registered tools")

    p = sub.add_parser("mcp", help="serve this holon home's tools to MCP clients (Claude Code, Codex, …)")
    mcp_sub = p.add_subparsers(dest="mcp_verb", metavar="ACTION", required=True)
    p = mcp_sub.add_parser("serve", help="serve the profile's tools over stdio (default) or streamable HTTP")
    p.add_argument(
        "--home", metavar="DIR", type=Path, default=None, help="the holon home (default $HOLON_NB_HOME or ./.holon)"
    )
    p.add_argument("--workspace", metavar="DIR", type=Path, default=None, help="the workspace (default: the cwd)")
    p.add_argument(
        "--profile",
        choices=("public_named", "private_child"),
        default="public_named",
        help="the tools served and the agent calls run as (default public_named)",
    )
    p.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 with a bearer token, not stdio")
    p.add_argument("--port", type=int, default=0, help="with --http: the port (default: a free one)")
    p.add_argument(
        "--token-file",
        metavar="PATH",
        type=Path,
        default=None,
        help="with --http: where {url, token} are written, owner-readable (default <home>/mcp-serve.json); "
        "the token is $HOLON_NB_MCP_TOKEN when set, else a new random one",
    )

    p = sub.add_parser("inventory", help="write or check docs/model-tool-schema-inventory.json")
    p.add_argument("--check", action="store_true", help="exit 1 with a unified diff when the file is stale")
    p.add_argument(
        "--output",
        metavar="PATH",
        type=Path,
        default=None,
        help="inventory file (default: docs/model-tool-schema-inventory.json of the checkout)",
    )

    p = sub.add_parser("prune", help="remove old command artifacts and ended tasks' logs from a holon home")
    p.add_argument(
        "--home", metavar="DIR", type=Path, default=None, help="the holon home (default $HOLON_NB_HOME or ./.holon)"
    )
    p.add_argument(
        "--max-home-bytes",
        metavar="N",
        type=int,
        default=None,
        help="size cap of the home in bytes (default $HOLON_NB_MAX_HOME_BYTES or 1 GiB; 0: no cap)",
    )
    p.add_argument(
        "--max-age-days",
        metavar="DAYS",
        type=float,
        default=None,
        help="remove files older than this (default $HOLON_NB_ARTIFACT_MAX_AGE_DAYS or 14; 0: no limit)",
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be removed; remove nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser("run", help="execute a notebook headless and print a summary")
    p.add_argument("notebook", metavar="NOTEBOOK", type=Path)
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        type=Path,
        default=None,
        help="where to save the executed notebook (default <stem>.executed.ipynb beside it; "
        "a directory: that name inside it); checked before the run",
    )
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=120.0,
        help="per-cell timeout in seconds (default 120); the whole run stops at 10x this",
    )
    p.add_argument(
        "--kernel",
        metavar="NAME",
        default=None,
        help="kernelspec name (default: a python3 kernel running this interpreter)",
    )
    p.add_argument(
        "--cassettes",
        choices=["replay", "record", "auto", "off"],
        default=None,
        help="model calls of %%%%agent turns: replay from <stem>.holon/cassettes/ (no network), record "
        "them, auto (replay what exists, record the rest) or off (call the provider); default: "
        "the notebook's own setting",
    )
    p.add_argument(
        "-p",
        "--parameter",
        metavar="NAME=VALUE",
        dest="parameters",
        action="append",
        type=_parameter,
        default=[],
        help="inject a parameter after the cell tagged 'parameters' (VALUE parsed as JSON when it parses)",
    )
    p.add_argument(
        "--cwd",
        metavar="DIR",
        type=Path,
        default=None,
        help="kernel working directory (default: the notebook's directory)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="run every cell even after one failed (default: stop at the first failed cell)",
    )

    p = sub.add_parser(
        "test",
        help="test notebooks against their saved outputs (pytest --holon-nb)",
        description="Runs pytest --holon-nb with the remaining arguments: notebook paths and any "
        "pytest or plugin option (--holon-nb-update, --holon-nb-repeat N, "
        "--holon-nb-per-cell, -n auto, -k …).",
    )
    p.add_argument("pytest_args", metavar="[PATHS] [pytest options]", nargs=argparse.REMAINDER)
    return parser


def _cmd_test(ns: argparse.Namespace) -> int:
    import pytest

    from .testing._harness import HarnessUsageError, read_notebook

    kernel = _option_value(ns.pytest_args, "--holon-nb-kernel")
    for arg in ns.pytest_args:  # a notebook named on the command line that cannot be tested: one line
        path = Path(arg.split("::", 1)[0])
        if path.suffix == ".ipynb" and path.is_file():
            try:
                read_notebook(path, kernel)
            except HarnessUsageError as exc:
                print(f"holon-nb test: {exc}", file=sys.stderr)
                return int(pytest.ExitCode.USAGE_ERROR)

    # holon_nb is imported already (this command is part of it): pytest cannot rewrite its asserts, and says so
    return int(pytest.main(["-W", "ignore::pytest.PytestAssertRewriteWarning", "--holon-nb", *ns.pytest_args]))


def _option_value(args: Sequence[str], option: str) -> str | None:
    """The value of ``option`` in ``args`` (``--opt VALUE`` or ``--opt=VALUE``; the last one wins)."""
    value = None
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(option + "="):
            value = arg.split("=", 1)[1]
    return value


def _cmd_call(ns: argparse.Namespace) -> int:
    from .render import dumps_envelope
    from .runtime import Runtime
    from .tools._errors import HolonNBError

    context = None
    if ns.context is not None:
        try:
            context = json.loads(ns.context)
        except ValueError as exc:
            print(f"holon-nb call: --context is not JSON: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not isinstance(context, dict):
            print("holon-nb call: --context must be a JSON object", file=sys.stderr)
            return EXIT_USAGE
    try:
        rt = Runtime(workspace=os.getcwd())
    except (HolonNBError, OSError) as exc:
        print(f"holon-nb call: cannot start the runtime: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        result = rt.call(ns.name, ns.args, context=context)
        live = rt.active_tasks()
    except HolonNBError as exc:
        print(f"holon-nb call: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        rt.close()  # stops any task the call promoted; a CLI call never leaves work running
    if ns.text:
        print(result.display_text)
    else:
        print(result.receipt if ns.receipt else dumps_envelope(result.display_envelope, indent=2))
    if live:
        print(
            f"holon-nb call: stopped {len(live)} background task(s) on exit: {', '.join(live)} "
            "(the CLI keeps nothing running; raise yield_time_ms to wait in the call)",
            file=sys.stderr,
        )
    return EXIT_OK if result.ok else EXIT_FAILED


def _facing(spec: Any) -> str:
    """``yes``/``no``; the Notebook family of issue 28 is ``opt-in`` (HolonNB.notebook_tools), ``ask`` when its
    calls are asked first."""
    if spec.family.value == "notebook":
        return "opt-in,asks" if spec.asks_approval else "opt-in"
    return "yes" if spec.model_facing else "no"


def _cmd_tools(ns: argparse.Namespace) -> int:
    from .tools._registry import REGISTRY

    rows = [("NAME", "FAMILY", "STABILITY", "MODEL-FACING", "RENDERING")]
    rows += [(s.name, s.family.value, s.stability.value, _facing(s), s.rendering.value) for s in REGISTRY]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip())
    return EXIT_OK


def _cmd_inventory(ns: argparse.Namespace) -> int:
    from .tools._inventory import default_inventory_path, inventory_text

    path: Path = ns.output or default_inventory_path()
    fresh = inventory_text()
    if not ns.check:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote {path}")
        return EXIT_OK
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    if current == fresh:
        print(f"{path} is up to date")
        return EXIT_OK
    sys.stdout.writelines(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            fresh.splitlines(keepends=True),
            fromfile=f"{path} (checked in)",
            tofile=f"{path} (generated)",
        )
    )
    print(
        f"\n{path} is stale or missing; regenerate it with: holon-nb inventory"
        + (f" --output {path}" if ns.output else ""),
        file=sys.stderr,
    )
    return EXIT_FAILED


def _cmd_run(ns: argparse.Namespace) -> int:
    from .testing._harness import HarnessUsageError, format_summary, run_notebook

    try:
        summary = run_notebook(
            ns.notebook,
            output=ns.output,
            timeout=ns.timeout,
            kernel_name=ns.kernel,
            parameters=dict(ns.parameters),
            cwd=ns.cwd,
            keep_going=ns.keep_going,
            cassettes=ns.cassettes,
        )
    except HarnessUsageError as exc:
        print(f"holon-nb run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(format_summary(summary))
    return summary.exit_code


def _cmd_prune(ns: argparse.Namespace) -> int:
    from .runtime.core._settings import RuntimeSettings, resolve_home
    from .runtime.core._store import Store
    from .runtime.housekeeping import PrunePolicy, prune_home
    from .runtime.housekeeping._prune import StoreReader, record_task_pruned

    home = resolve_home(ns.home)
    if not (home / "holon.sqlite3").is_file():
        print(f"holon-nb prune: {home} is not a holon home (no holon.sqlite3)", file=sys.stderr)
        return EXIT_USAGE
    settings = RuntimeSettings()
    cap = settings.max_home_bytes if ns.max_home_bytes is None else ns.max_home_bytes
    days = settings.artifact_max_age_days if ns.max_age_days is None else ns.max_age_days
    if cap < 0 or days < 0:
        print("holon-nb prune: --max-home-bytes and --max-age-days must be 0 (no limit) or more", file=sys.stderr)
        return EXIT_USAGE
    store = Store(home / "holon.sqlite3")  # a running kernel's live tasks are read from the same store
    try:
        report = prune_home(
            home,
            StoreReader(store),
            PrunePolicy(cap, days * 86400 if days else None),
            dry_run=ns.dry_run,
            record=lambda task_id, info: record_task_pruned(store, task_id, info),
        )
    finally:
        store.close()
    print(json.dumps(report.to_dict(), indent=1) if ns.json else report.text(limit=1000))
    return EXIT_OK


def _cmd_mcp(ns: argparse.Namespace) -> int:
    import os

    import anyio

    from .runtime import Runtime
    from .runtime.mcp._serve import build_server, new_token, serve_http, serve_stdio

    rt = Runtime(home=ns.home, workspace=ns.workspace)
    try:
        server = build_server(rt, ns.profile)
        if not ns.http:
            anyio.run(serve_stdio, server)
            return EXIT_OK
        token = os.environ.get("HOLON_NB_MCP_TOKEN", "").strip() or new_token()
        token_file = ns.token_file or rt.home / "mcp-serve.json"
        print(f"holon-nb mcp serve: token in {token_file}", file=sys.stderr)
        serve_http(
            server,
            token,
            ns.port,
            token_file,
            lambda url: print(f"holon-nb mcp serve: {url}", file=sys.stderr, flush=True),
        )
    except KeyboardInterrupt:
        pass
    finally:
        rt.close()
    return EXIT_OK


_VERBS = {
    "call": _cmd_call,
    "mcp": _cmd_mcp,
    "tools": _cmd_tools,
    "inventory": _cmd_inventory,
    "run": _cmd_run,
    "prune": _cmd_prune,
    "test": _cmd_test,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``holon-nb`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Raises:
        SystemExit: with status 2 for an argparse usage error (and 0 for ``--help``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["test"] and not {"-h", "--help"} & set(args[1:2]):
        return _cmd_test(argparse.Namespace(pytest_args=args[1:]))  # every option is pytest's
    ns = build_parser().parse_args(args)
    return _VERBS[ns.verb](ns)


if __name__ == "__main__":
    sys.exit(main())
