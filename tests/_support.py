"""Assertion helpers shared by the tests."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from holon_nb.runtime import ToolResult


def ok(result: ToolResult) -> dict[str, Any]:
    """Assert a success envelope (no ``error`` key) and return its result."""
    env = result.envelope
    assert env["status"] == "success", json.dumps(env, indent=1)[:2000]
    assert "error" not in env
    return env["result"]


def err(result: ToolResult, kind: str) -> dict[str, Any]:
    """Assert an error envelope of ``kind`` (and its JSON receipt) and return the error."""
    env = result.envelope
    assert env["status"] == "error", json.dumps(env, indent=1)[:2000]
    assert "result" not in env
    assert env["error"]["kind"] == kind, env["error"]
    assert env["summary_text"] == env["error"]["message"]
    receipt = json.loads(result.full_receipt)
    assert receipt["ok"] is False and receipt["kind"] == kind and receipt["tool_name"] == env["tool_name"]
    return env["error"]


def store_state(path: Path) -> dict[str, list]:
    """Every table of a holon home's SQLite store except the tool-execution log and the (derived) memory
    index, rows sorted: what a read-only call may not change."""
    import sqlite3

    db = sqlite3.connect(path)
    try:
        names = [
            r[0]
            for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if r[0] != "tool_executions" and not r[0].startswith(("memory_", "sqlite_"))
        ]
        return {n: sorted(map(repr, db.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
    finally:
        db.close()


def eventually(check: Callable[[], Any], timeout: float = 20.0, step: float = 0.02) -> Any:
    """Poll ``check`` until it returns a truthy value; fail after ``timeout`` seconds (not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached within {timeout} s")
        time.sleep(step)


def write_nb(path: Path, *cells: str | tuple[str, list[str]], metadata: dict[str, Any] | None = None) -> Path:
    """Write a notebook of code cells, each ``source`` or ``(source, tags)``, with ``metadata``; return ``path``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for cell in cells:
        source, tags = (cell, []) if isinstance(cell, str) else cell
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": tags} if tags else {}))
    nb.metadata.update(metadata or {})
    nbformat.write(nb, path)
    return path


def execute(kc: Any, code: str, timeout: float = 60) -> list[dict[str, Any]]:
    """Run ``code`` through a jupyter_client kernel client; return its IOPub messages up to its idle status.

    Raises:
        TimeoutError: when the kernel is not idle again within ``timeout`` seconds.
    """
    msg_id = kc.execute(code)
    msgs = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        msgs.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return msgs
    raise TimeoutError(code)


@contextmanager
def holon_kernel(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A real IPython kernel (this interpreter) with holon_nb loaded, its home under ``tmp_path``.

    Yields:
        ``(kernel manager, started kernel client)``; the kernel is shut down at the end.
    """
    from jupyter_client.manager import KernelManager

    from holon_nb.testing._kernels import INTERPRETER_KERNEL, InterpreterKernelSpecManager, kernel_env

    km = KernelManager(kernel_name=INTERPRETER_KERNEL, kernel_spec_manager=InterpreterKernelSpecManager())
    km.start_kernel(env=kernel_env(str(tmp_path / "home"), None), cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        execute(kc, "%load_ext holon_nb")
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def read_db(db_path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows read with a connection of its own, as another kernel on the home would (WAL readers never wait)."""
    db = sqlite3.connect(db_path)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def tutorial_names(notebooks: Path) -> list[str]:
    """The tutorials in ``notebooks`` (``0*.ipynb``), not the executed copies ``holon-nb run`` saves beside
    them (the README's main job leaves ``01-quickstart.executed.ipynb`` there)."""
    return sorted(p.name for p in notebooks.glob("0*.ipynb") if not p.name.endswith(".executed.ipynb"))


TUTORIALS_DIR = Path(__file__).resolve().parents[1] / "notebooks"


def check_tutorial(name: str, timeout: float = 120) -> Any:
    """Run tutorial ``notebooks/<name>`` once as ``holon-nb test`` does (:func:`~holon_nb.testing.check.
    check_notebook`: a fresh kernel and holon home, a private copy of its folder, model calls replayed from its
    cassettes) and return the :class:`~holon_nb.testing.check.NotebookCheck`; ``check.executed`` is the run's
    notebook. A tutorial's test module shares this one run between its receipt checks and the comparison with
    the committed outputs, so each tutorial runs once in Python per test run (issue 23); the module is an
    xdist group so that its tests run on one worker."""
    from holon_nb.testing.check import CheckOptions, check_notebook

    path = TUTORIALS_DIR / name
    before = path.read_bytes()
    check = check_notebook(path, CheckOptions(timeout=timeout))
    assert path.read_bytes() == before  # the tutorial itself is never modified
    assert check.executed is not None
    return check


def receipt_text_drift(check: Any) -> list[str]:
    """Cells of a checked tutorial holding a receipt whose saved ``text/plain`` is not what this run's renderer
    wrote for the same receipt JSON (issue 26 item 12; :func:`~holon_nb.testing._compare.receipt_text_differs`):
    the comparison reads only a receipt's JSON, so a renderer change would otherwise leave stale text in the
    committed notebook. Text is compared after the runtime's masks (ids, durations, paths)."""
    import nbformat

    from holon_nb.testing._compare import compared_cells, receipt_text_differs
    from holon_nb.testing.normalize import Normalizer, Roots

    saved = nbformat.read(check.path, as_version=4)
    home = (check.summary.holon_home,) if check.summary.holon_home else ()
    norm = Normalizer(Roots.current(workspace=Path(check.path).resolve().parent).merged(Roots(home=home)))
    return [
        f"cell {i} ({saved.cells[i].source.splitlines()[0][:60]}): saved text/plain differs from the current renderer's"
        for i in compared_cells(saved)
        if receipt_text_differs(saved.cells[i], check.executed.cells[i], norm)
    ]
