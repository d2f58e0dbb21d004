"""In a real kernel: ``%exec true`` vs IPython's ``!true``.

Both are run inside one kernel started by the headless harness, timed with
``time.perf_counter`` around ``run_line_magic("exec", "true")`` (which also
displays the receipt) and ``system("true")`` (what ``!true`` runs). Reports
the medians and their ratio. Run: ``python benchmarks/bench_magic_in_kernel.py [RUNS]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import nbformat
from _common import save
from nbformat.v4 import new_code_cell, new_notebook

from holon_nb.testing import run_notebook

CELL = """
import json, statistics, time
ip = get_ipython()
def med(fn, n):
    for _ in range(3):
        fn()
    s = []
    for _ in range(n):
        t = time.perf_counter(); fn(); s.append((time.perf_counter() - t) * 1000)
    return statistics.median(s)
exec_ms = med(lambda: ip.run_line_magic("exec", "true"), {runs})
exec_sh_ms = med(lambda: ip.run_line_magic("exec", "--shell sh --no-login true"), {runs})
bang_ms = med(lambda: ip.system("true"), {runs})
import holon_nb
# a command promoted to a task (a stalled login shell) makes later calls "already_running": no timing then
assert not holon_nb.get_runtime().active_tasks(), "a command was promoted to a task: the timings are not valid"
from IPython.display import clear_output
clear_output()
print("BENCH" + json.dumps({{"exec_true_ms": exec_ms, "exec_true_sh_nologin_ms": exec_sh_ms, "bang_true_ms": bang_ms}}))
"""


def main(runs: int = 30) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench.ipynb"
        nbformat.write(new_notebook(cells=[new_code_cell(CELL.format(runs=runs))]), src)
        summary = run_notebook(src, output=Path(tmp) / "out.ipynb", timeout=600)
        assert summary.exit_code == 0, summary
        nb = nbformat.read(Path(tmp) / "out.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    data = json.loads(text.split("BENCH", 1)[1].splitlines()[0])
    data = {k: round(v, 2) for k, v in data.items()}
    save(
        "magic_in_kernel",
        {
            "runs": runs,
            **data,
            "ratio_exec_to_bang": round(data["exec_true_ms"] / data["bang_true_ms"], 3),
            "ratio_exec_sh_nologin_to_bang": round(data["exec_true_sh_nologin_ms"] / data["bang_true_ms"], 3),
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
