"""Kernels started ahead (``--holon-nb-start-ahead``, issue 30), through real pytest runs: while a notebook runs,
the next notebook's kernel starts, and each notebook still gets a fresh kernel of its own with the settings a
kernel started in its turn gets (its private copy of the folder as working directory, its own holon home, the
same environment). A kernel started for a notebook that never runs (``-x``) is shut down, its folders removed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest
from _support import eventually

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads kernel start times from /proc"),
]

# the kernel's facts, its start and the end of the notebook's last cell on the boot-time clock /proc uses
FIRST = """\
import json, os, time
from pathlib import Path
fresh = "leftover" not in globals()
leftover = True
_stat = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()
facts = {"pid": os.getpid(), "cwd": os.getcwd(), "fresh": fresh, "env": dict(os.environ),
         "kernel_start": int(_stat[19]) / os.sysconf("SC_CLK_TCK")}
"""
LAST = """\
facts["end"] = time.clock_gettime(time.CLOCK_BOOTTIME)
Path(os.environ["AHEAD_REPORT"], NAME + ".json").write_text(json.dumps(facts))
"""


def _book(path: Path, *middle: str, restart: bool = False) -> None:
    """FIRST, the ``middle`` cells, LAST; with ``restart``, a cell before FIRST and FIRST tagged
    ``holon-restart-kernel`` (the kernel restarts there: FIRST describes the new one)."""
    nb = nbformat.v4.new_notebook()
    sources = [*(["before = 1"] if restart else []), FIRST, *middle, f"NAME = {path.stem!r}\n" + LAST]
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    if restart:
        nb.cells[1].metadata["tags"] = ["holon-restart-kernel"]
    nbformat.write(nb, path)


def _suite(folder: Path) -> Path:
    folder.mkdir()
    _book(folder / "n1.ipynb", "import time\ntime.sleep(2)")
    _book(
        folder / "n2.ipynb", "%load_ext holon_nb", "import holon_nb\nfacts['home'] = str(holon_nb.get_runtime().home)"
    )
    _book(folder / "n3.ipynb", "x = 3", restart=True)  # a kernel started ahead restarts as any other
    (folder / "data.txt").write_text("fixture\n")
    return folder


def _pytest(folder: Path, tmp: Path, report: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    report.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOLON_NB_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--holon-nb", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=folder,
        env={**base, "AHEAD_REPORT": str(report), "TMPDIR": str(tmp), **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _facts(report: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(report.glob("*.json"))}


# what differs between any two kernels of any runs: the holon home, the launching process, the run's temp dirs
VARYING = ("HOLON_NB_HOME", "JPY_PARENT_PID", "TMPDIR", "AHEAD_REPORT")


def test_the_next_kernel_starts_while_a_notebook_runs_fresh_and_with_the_same_settings(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    runs = {}
    for mode in ("on", "off"):
        proc = _pytest(suite, tmp_path / f"tmp-{mode}", tmp_path / f"report-{mode}", f"--holon-nb-start-ahead={mode}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        runs[mode] = _facts(tmp_path / f"report-{mode}")
        assert sorted(runs[mode]) == ["n1", "n2", "n3"], runs[mode].keys()
        assert list((tmp_path / f"tmp-{mode}").iterdir()) == []  # every copy and holon home removed
    on, off = runs["on"], runs["off"]
    # ahead: n2's kernel started while n1 still ran (n1 sleeps 2 s); in turn: after n1's end. (n3's facts are
    # its restarted kernel's: fresh, started in its turn either way)
    assert on["n2"]["kernel_start"] < on["n1"]["end"], on
    assert off["n2"]["kernel_start"] > off["n1"]["end"] and off["n3"]["kernel_start"] > off["n2"]["end"], off
    assert on["n3"]["kernel_start"] > on["n2"]["end"], on
    for facts in (on, off):
        assert len({f["pid"] for f in facts.values()}) == 3 and all(f["fresh"] for f in facts.values())
        homes = {f["env"]["HOLON_NB_HOME"] for f in facts.values()}
        assert len(homes) == 3 and all(Path(h).name == "home" for h in homes), homes
        assert facts["n2"]["home"] == facts["n2"]["env"]["HOLON_NB_HOME"]
        for f in facts.values():  # a private copy of the suite's folder, fixtures included
            cwd = Path(f["cwd"])
            assert cwd.name == "suite" and cwd.parent.name.startswith("holon-nb-copy-"), cwd
            assert cwd.parent.parent == Path(f["env"]["TMPDIR"]), cwd
    for name in ("n1", "n2", "n3"):
        same_on = {k: v for k, v in on[name]["env"].items() if k not in VARYING}
        same_off = {k: v for k, v in off[name]["env"].items() if k not in VARYING}
        assert same_on == same_off, {k for k in same_on.keys() | same_off.keys() if same_on.get(k) != same_off.get(k)}


def _kernels_with(mark: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if f"AHEAD_MARK={mark}".encode() in (proc / "environ").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def test_a_kernel_started_for_a_notebook_that_never_runs_is_shut_down(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    _book(suite / "n1.ipynb", "import time\ntime.sleep(2)", "raise ValueError('n1 fails')")
    mark = uuid.uuid4().hex
    proc = _pytest(suite, tmp_path / "tmp", tmp_path / "report", "-x", AHEAD_MARK=mark)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout + proc.stderr
    assert _facts(tmp_path / "report") == {}  # n2 never ran (its kernel was started while n1 ran)
    eventually(lambda: _kernels_with(mark) == [], timeout=30)
    assert list((tmp_path / "tmp").iterdir()) == []
