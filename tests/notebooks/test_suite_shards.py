"""``--holon-nb-shard K/N`` and the recorded durations, through real pytest runs (issue 30; docs/large-suites.md):
the shards partition the notebooks, each shard's JUnit XML holds its own notebooks, a run records its durations
in the pytest cache, and the next split and order follow them (or a pytest-split durations file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def _book(path: Path, pad: int) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('ok')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok\n")]
    cell.execution_count = 1
    nb.cells = [cell]
    nb.metadata["padding"] = "p" * pad  # file size: the weight when no duration is recorded
    nbformat.write(nb, path)


def _pytest(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOLON_NB_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--holon-nb", "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _collected(folder: Path, *args: str) -> list[str]:
    proc = _pytest(folder, "--collect-only", *args, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for i in range(6):
        _book(tmp_path / f"n{i}.ipynb", 1000 * (i + 1))
    return tmp_path


def test_shards_partition_the_notebooks_balanced_by_file_size_without_durations(suite: Path) -> None:
    shards = [_collected(suite, "-p", "no:cacheprovider", f"--holon-nb-shard={k}/3") for k in (1, 2, 3)]
    names = sorted(n for s in shards for n in s)
    assert names == [f"n{i}.ipynb::notebook" for i in range(6)]
    # sizes 6,5,4,3,2,1 (thousands): greedy longest-first gives {6,1} {5,2} {4,3}
    assert [sorted(s) for s in shards] == [
        ["n0.ipynb::notebook", "n5.ipynb::notebook"],
        ["n1.ipynb::notebook", "n4.ipynb::notebook"],
        ["n2.ipynb::notebook", "n3.ipynb::notebook"],
    ]
    again = _collected(suite, "-p", "no:cacheprovider", "--holon-nb-shard=2/3")
    assert again == shards[1]


def test_a_bad_shard_is_a_usage_error(suite: Path) -> None:
    proc = _pytest(suite, "--collect-only", "-p", "no:cacheprovider", "--holon-nb-shard=4/3")
    assert proc.returncode == 4 and "K must be between 1 and N" in proc.stderr


def test_runs_record_durations_that_the_next_split_and_order_follow(suite: Path) -> None:
    # shards on CI machines all read one durations file (here: none recorded yet), never each its own cache
    fixed = suite / "durations.json"
    fixed.write_text("{}")
    shard_xml = [suite / f"shard-{k}.xml" for k in (1, 2)]
    for k, xml in zip((1, 2), shard_xml, strict=True):
        proc = _pytest(suite, f"--holon-nb-shard={k}/2", f"--holon-nb-durations={fixed}", f"--junitxml={xml}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = [{(c.get("classname"), c.get("name")) for c in ET.parse(x).getroot().iter("testcase")} for x in shard_xml]
    assert [len(c) for c in cases] == [3, 3] and len(cases[0] | cases[1]) == 6  # JUnit XML: each notebook once
    assert fixed.read_text() == "{}"  # read, not written without --holon-nb-store-durations
    cached = json.loads((suite / ".pytest_cache" / "v" / "holon_nb" / "durations").read_text())
    assert sorted(cached) == [f"n{i}.ipynb::notebook" for i in range(6)]  # both shards merged into the cache
    assert all(v > 0 for v in cached.values())

    # the recorded durations rule now: make n3 by far the longest, n5 the next
    cached |= {"n3.ipynb::notebook": 50.0, "n5.ipynb::notebook": 20.0}
    (suite / ".pytest_cache" / "v" / "holon_nb" / "durations").write_text(json.dumps(cached))
    assert _collected(suite, "--holon-nb-shard=1/2") == ["n3.ipynb::notebook"]
    order = _collected(suite, "--holon-nb-order=durations")
    assert order[:2] == ["n3.ipynb::notebook", "n5.ipynb::notebook"]
    assert _collected(suite)[:2] == ["n0.ipynb::notebook", "n1.ipynb::notebook"]  # serial default: file order

    # a pytest-split durations file (other tests' entries in it are ignored)
    split = suite / ".test_durations"
    split.write_text(
        json.dumps({"tests/test_unit.py::test_a": 1.0, "n1.ipynb::notebook": 99.0, "n2.ipynb::notebook": 1})
    )
    # n1 99 s, n2 1 s, the others their mean (50 s): {n1, n2} {n0, n4} {n3, n5}
    shard = _collected(suite, f"--holon-nb-durations={split}", "--holon-nb-shard=1/3")
    assert shard == ["n1.ipynb::notebook", "n2.ipynb::notebook"]
    proc = _pytest(suite, f"--holon-nb-durations={split}", "--holon-nb-store-durations", "n1.ipynb", "n2.ipynb")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stored = json.loads(split.read_text())
    assert set(stored) == {"tests/test_unit.py::test_a", "n1.ipynb::notebook", "n2.ipynb::notebook"}
    assert stored["n1.ipynb::notebook"] < 99.0
