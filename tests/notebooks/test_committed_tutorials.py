"""The committed tutorials as files (no kernel): nothing in them names a folder of the machine that ran them
(issue 26 item 12), and binder/requirements.txt installs every module they import (issue 26 item 10)."""

from __future__ import annotations

import ast
import re
import sys
import sysconfig
import tempfile
from pathlib import Path

import nbformat
import pytest
from _support import TUTORIALS_DIR, tutorial_names

ROOT = TUTORIALS_DIR.parent
TUTORIALS = tutorial_names(TUTORIALS_DIR)


def _machine_paths() -> list[str]:
    """Absolute folders of this machine a saved output could leak: home, checkouts, temp dir, interpreter."""
    found = {str(Path.home()), "/root", "/work", str(ROOT), tempfile.gettempdir(), "/tmp", sys.prefix}
    found |= {sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib")}
    return sorted(p for p in found if p and p != "/")


LEAK = re.compile(
    "|".join(re.escape(p) + r"(?=[/\"'\s\\,;:)\]}]|$)" for p in _machine_paths()) + r"|[/\\]site-packages[/\\]"
)


@pytest.mark.parametrize("name", TUTORIALS)
def test_no_absolute_path_of_this_machine(name: str) -> None:
    text = (TUTORIALS_DIR / name).read_text(encoding="utf-8")
    leaks = sorted({m.group(0) for m in LEAK.finditer(text)})
    where = [text[max(0, m.start() - 60) : m.end() + 40] for m in LEAK.finditer(text)][:3]
    assert not leaks, f"{name} names {leaks}; e.g. {where} (regenerate: python notebooks/make_all.py)"


def test_leak_pattern_finds_what_an_old_save_held() -> None:
    """The check above would have caught what the tutorials held before item 12."""
    assert LEAK.search('"recorded_roots": {"repo": ["/work/main"]}')
    assert LEAK.search("/work/venv/lib/python3.11/site-packages/ipykernel/resources/logo-64x64.png")
    assert LEAK.search("task log /tmp/holon-nb-run-szny1jpl/home/agents/default/task-output/x.log")
    assert not LEAK.search("work item work_40a3be9b76bc89c at <TMP>/<tmp>/plan.md in <site-packages>/ipykernel")


def _modules(source: str) -> set[str]:
    """Top-level modules a cell imports, asks ``find_spec`` for, or runs with ``python -m``."""
    found = {m.group(1) for m in re.finditer(r"-m\s+([A-Za-z_]\w*)", source)}
    found |= {m.group(1) for m in re.finditer(r"find_spec\(\s*[\"']([A-Za-z_]\w*)", source)}
    python = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    if source.lstrip().startswith("%%"):
        return found
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(requirements: list[str]) -> set[str]:
    """Distributions ``pip install -r`` of these lines installs, read from this environment's metadata
    (``.`` is this project: its ``pyproject.toml`` dependencies)."""
    from importlib import metadata

    import tomllib
    from packaging.requirements import Requirement

    todo: list[str] = []
    for line in requirements:
        if line == ".":
            todo += tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        else:
            todo.append(line)
    seen: set[str] = set()
    while todo:
        req = Requirement(todo.pop())
        name = _canon(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            todo += metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            pass
    return seen


def test_binder_requirements_cover_every_tutorial_import() -> None:
    """Each module a tutorial imports or runs (``-m pytest``) comes from binder/requirements.txt: the
    standard library, holon_nb itself, or a distribution its requirements install."""
    from importlib import metadata

    lines = [ln.split("#")[0].strip() for ln in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    installed = _closure([ln for ln in lines if ln])
    providers = metadata.packages_distributions()
    missing = {}
    for name in TUTORIALS:
        nb = nbformat.read(TUTORIALS_DIR / name, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for module in _modules(cell.source):
                if module in sys.stdlib_module_names or module == "holon_nb":
                    continue
                dists = {_canon(d) for d in providers.get(module, [module])}
                if not dists & installed:
                    missing.setdefault(module, set()).add(name)
    assert not missing, f"binder/requirements.txt does not install: {missing}"


GENERATORS = sorted(p.name for p in TUTORIALS_DIR.glob("make_0*.py"))


@pytest.mark.parametrize("script", GENERATORS)
def test_generator_builds_the_committed_cells(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``make_0*.py`` still runs and builds the cells that are committed: a generator left behind by a
    rename (it read a moved file) or a cell edited in the notebook but not in its generator fails here, not
    at the next ``python notebooks/make_all.py``."""
    import importlib.util

    monkeypatch.syspath_prepend(str(TUTORIALS_DIR))  # the generators import notebooks/_tutorial.py
    spec = importlib.util.spec_from_file_location(f"_gen_{script[:-3]}", TUTORIALS_DIR / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = module.build()
    committed = nbformat.read(module.OUT, as_version=4)
    # tutorial 07's agent inserts a cell while it runs (EditNotebook): that one is the run's, not the generator's
    kept = [c for c in committed.cells if c.metadata.get("holon_nb", {}).get("inserted_by") != "agent"]
    assert [(c.cell_type, c.source) for c in built.cells] == [(c.cell_type, c.source) for c in kept], (
        f"{module.OUT.name} differs from what {script} builds (regenerate: python notebooks/make_all.py)"
    )
    assert built.metadata.get("holon_nb") == committed.metadata.get("holon_nb")
