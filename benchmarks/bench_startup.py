"""Start-up costs: ``import holon_nb``, ``%load_ext holon_nb``, ``holon-nb run`` against bare nbclient.

Targets (issue 12): ``import holon_nb`` <= 150 ms; ``%load_ext holon_nb`` <= 250 ms;
``holon-nb run`` on a one-cell notebook <= 1.1 x a bare nbclient run of it + 150 ms.
Each figure is the median over fresh interpreters. The package is byte-compiled
first (``compileall``), as a normal install is: this machine sets
``PYTHONDONTWRITEBYTECODE=1``, which would otherwise time the compiler.
Run: ``python benchmarks/bench_startup.py [RUNS] [PACKAGE_DIR]`` (PACKAGE_DIR: a
checkout whose ``holon_nb`` to time, default the installed one).
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import save

IMPORT = "import time; t = time.perf_counter(); import holon_nb; print((time.perf_counter() - t) * 1000)"
LOAD_EXT = """
import time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
t = time.perf_counter()
ip.run_line_magic("load_ext", "holon_nb")
print((time.perf_counter() - t) * 1000)
ip.run_line_magic("unload_ext", "holon_nb")
"""
BARE = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, kernel_name="python3", timeout=120).execute()
"""


def _one_cell_notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1 + 1)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _inner_ms(code: str, runs: int, env: dict[str, str], cwd: str) -> float:
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True)
        samples.append(float(out.stdout.strip().splitlines()[0]))
    return statistics.median(samples)


def _wall_ms(argv: list[str], runs: int, env: dict[str, str], cwd: str) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def main(runs: int = 9, package_dir: str | None = None) -> None:
    env = {**os.environ, "SHELL": "/bin/sh"}
    if package_dir:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_dir, env.get("PYTHONPATH")]))
    locate = "import holon_nb, os; print(os.path.dirname(holon_nb.__file__))"
    pkg = subprocess.run(
        [sys.executable, "-c", locate], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    compileall.compile_dir(pkg, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        env["HOLON_NB_HOME"] = f"{tmp}/home"
        nb = Path(tmp) / "one.ipynb"
        _one_cell_notebook(nb)
        import_ms = _inner_ms(IMPORT, runs, env, tmp)
        load_ms = _inner_ms(LOAD_EXT, runs, env, tmp)
        bare_ms = _wall_ms([sys.executable, "-c", BARE, str(nb)], max(3, runs // 2), env, tmp)
        run_ms = _wall_ms(
            [sys.executable, "-m", "holon_nb.cli", "run", str(nb), "-o", f"{tmp}/out.ipynb"],
            max(3, runs // 2),
            env,
            tmp,
        )
    save(
        "startup",
        {
            "runs": runs,
            "package": pkg,
            "import_holon_nb_ms": round(import_ms, 1),
            "load_ext_holon_nb_ms": round(load_ms, 1),
            "bare_nbclient_one_cell_ms": round(bare_ms, 1),
            "holon_nb_run_one_cell_ms": round(run_ms, 1),
            "run_budget_ms": round(1.1 * bare_ms + 150, 1),
            "run_within_budget": run_ms <= 1.1 * bare_ms + 150,
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9, sys.argv[2] if len(sys.argv) > 2 else None)
