"""The pytest plugin: notebooks as regression tests (notebook-tests spec §2).

Registered through the ``pytest11`` entry point (``holon_nb``) and inert unless
asked: ``pytest --holon-nb [PATHS]`` collects every ``*.ipynb`` under PATHS
(executed copies ``*.executed.ipynb`` and ``.ipynb_checkpoints`` excepted); a
``holon_nb_paths`` line list in the pytest configuration turns it on for the
notebooks under those paths and adds them to a run that uses the default
arguments. ``holon-nb test`` is ``pytest --holon-nb``.

Options:

- ``--holon-nb-per-cell``: one item per code cell (``path::cell_3``) instead of one per notebook
  (``path::notebook``); the notebook still runs once per process (use ``--dist loadfile``
  under pytest-xdist so a notebook's cells stay on one worker).
- ``--holon-nb-update``: rewrite the saved notebook's mismatching cells with the fresh outputs
  (never a cell that raised unexpectedly); the terminal summary lists the cells rewritten.
- ``--holon-nb-repeat N``: run each notebook N times; any difference between runs fails. Under
  pytest-timeout the item's limit is N times the configured one.
- ``--holon-nb-timeout SECONDS`` (default 120), ``--holon-nb-kernel NAME`` (a kernelspec; default a
  kernel on this interpreter) and ``--holon-nb-cassettes MODE`` (default ``replay``: model calls
  answered from ``<stem>.holon/cassettes/``, network blocked).
- ``--holon-nb-mimetypes LIST`` / ini ``holon_nb_mimetypes``: compare exactly these mimetypes of display
  outputs; ``--holon-nb-ignore-mimetypes LIST`` / ini ``holon_nb_ignore_mimetypes``: never these.
- ``--holon-nb-image-fraction F`` (default 0) and ``--holon-nb-image-pixel P`` (default 0.1): images
  differ when more than F of their pixels differ by more than P (:mod:`holon_nb.testing._images`).
- ``--holon-nb-strict-images``: compare also images the saved notebook and this run drew with different
  software (listed as not compared by default) and raster images beside ``text/latex``.
- ``--holon-nb-mask LIST`` / ini ``holon_nb_masks``: masks applied to user output too (``timestamps``,
  ``durations``, ``addresses``, ``uuids``, ``tmp``); by default user output keeps them, receipts never.
- ``--holon-nb-sanitize-with FILE``: an nbval sanitize file's ``regex:``/``replace:`` pairs, added to the
  user normalisers.
- ``--holon-nb-strict-unrun``: compare also the cells saved without running (no outputs and no execution
  count); by default they are skipped, as nbval does, and the terminal summary lists them.
- ``--holon-nb-compare-ansi``: compare ANSI colour sequences in user output instead of removing them.
- ``--holon-nb-shard K/N``, ``--holon-nb-durations FILE``, ``--holon-nb-store-durations``, ``--holon-nb-order``:
  shards and order by recorded durations (:mod:`holon_nb.testing._suites._order`); ``--holon-nb-gateway URL`` and
  ``--holon-nb-gateway-token``: kernels on a Jupyter gateway (:mod:`holon_nb.testing._suites._gateway`);
  ``--holon-nb-start-ahead auto|on|off``: the next notebook's kernel started while one runs (:class:`FirstRun
  <holon_nb.testing.check.FirstRun>`; auto, the default: on); see docs/large-suites.md.
- ini ``holon_nb_normalize``: user normalisers, one per line, ``REGEX => REPLACEMENT`` or a JSON object
  ``{"regex": …, "replace": …}``, applied after the notebook's own ``metadata.holon_nb.normalize``.

Each test runs its notebook in a fresh kernel with its own temporary holon home, in a private copy of the
notebook's folder unless the notebook sets ``metadata.holon_nb.shared_dir: true``
(:mod:`holon_nb.testing._workdir`), so
pytest-xdist workers (``-n auto``) never share state; when ``HOLON_NB_HOME`` is set, each worker
uses ``$HOLON_NB_HOME/<worker id>`` (``gw0``, ``gw1``, …). Collection order is the sorted file
order pytest uses (on xdist workers: longest first by recorded durations), so ``pytest-split`` can shard a
suite deterministically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..tools._errors import HolonNBError

__all__ = ["NotebookFile", "NotebookItem", "CellItem", "NotebookFailure"]

_STATE = pytest.StashKey[dict]()


class NotebookFailure(HolonNBError):
    """A notebook test failed; ``str()`` is the readable report."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("holon-nb", "notebooks as regression tests (holon_nb)")
    group.addoption(
        "--holon-nb",
        action="store_true",
        default=False,
        help="collect *.ipynb files and test them against their saved outputs",
    )
    group.addoption(
        "--holon-nb-per-cell",
        action="store_true",
        default=False,
        help="one test item per code cell instead of one per notebook",
    )
    group.addoption(
        "--holon-nb-update",
        action="store_true",
        default=False,
        help="rewrite mismatching cells' saved outputs with this run's (not cells that raised)",
    )
    group.addoption(
        "--holon-nb-repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each notebook N times and fail on any difference between runs",
    )
    group.addoption(
        "--holon-nb-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="per-cell timeout (default 120; a run stops at 10x)",
    )
    group.addoption(
        "--holon-nb-kernel",
        default=None,
        metavar="NAME",
        help="kernelspec to run notebooks in (default: a kernel on this interpreter); a spec with a "
        "kernel provisioner runs them remotely",
    )
    group.addoption(
        "--holon-nb-cassettes",
        choices=("replay", "record", "auto", "off"),
        default="replay",
        help="model-call cassettes: replay (default; no network), record, auto, off",
    )
    group.addoption(
        "--holon-nb-mimetypes",
        default=None,
        metavar="LIST",
        help="comma-separated mimetypes of display outputs to compare, e.g. text/plain,text/html "
        "(default: text/plain, and text/html when text/plain is a placeholder repr)",
    )
    group.addoption(
        "--holon-nb-ignore-mimetypes",
        default=None,
        metavar="LIST",
        help="comma-separated mimetypes never compared (image/* for every image type)",
    )
    group.addoption(
        "--holon-nb-image-fraction",
        type=float,
        default=0.0,
        metavar="F",
        help="images differ when more than this fraction of pixels differ (default 0: any pixel)",
    )
    group.addoption(
        "--holon-nb-image-pixel",
        type=float,
        default=0.1,
        metavar="P",
        help="a pixel differs when a channel differs by more than this fraction of 255 (default 0.1)",
    )
    group.addoption(
        "--holon-nb-strict-images",
        action="store_true",
        default=False,
        help="compare also images the saved notebook and this run drew with different software (as the images "
        "name it), and raster images beside text/latex; by default those are listed as not compared",
    )
    group.addoption(
        "--holon-nb-mask",
        default=None,
        metavar="LIST",
        help="comma-separated masks for user output too: timestamps, durations, addresses, uuids, tmp "
        "(receipts always get them all)",
    )
    group.addoption(
        "--holon-nb-sanitize-with",
        default=None,
        metavar="FILE",
        help="nbval sanitize file: [section] headers and 'regex: R' / 'replace: S' line pairs, applied to all "
        "compared text after the built-in masks",
    )
    group.addoption(
        "--holon-nb-strict-unrun",
        action="store_true",
        default=False,
        help="compare also cells saved without running (no outputs, no execution count); skipped by default",
    )
    group.addoption(
        "--holon-nb-compare-ansi",
        action="store_true",
        default=False,
        help="compare ANSI escape sequences (colours) in user output instead of removing them",
    )
    _add_suite_options(group)
    parser.addini("holon_nb_masks", type="linelist", default=[], help="masks for user output too (see --holon-nb-mask)")
    parser.addini("holon_nb_mimetypes", type="linelist", default=[], help="mimetypes of display outputs to compare")
    parser.addini("holon_nb_ignore_mimetypes", type="linelist", default=[], help="mimetypes never compared")
    parser.addini(
        "holon_nb_paths",
        type="linelist",
        default=[],
        help="notebook files or folders tested by the holon_nb plugin (turns it on)",
    )
    parser.addini(
        "holon_nb_normalize",
        type="linelist",
        default=[],
        help="normalisers, one per line: 'REGEX => REPLACEMENT' or a JSON {regex, replace} object",
    )


def _add_suite_options(group: Any) -> None:
    """Options of suites beyond one process and one machine (issue 30; docs/large-suites.md)."""
    group.addoption(
        "--holon-nb-shard",
        default=None,
        metavar="K/N",
        help="run the K-th of N shards of the collected notebooks, balanced by recorded durations",
    )
    group.addoption(
        "--holon-nb-durations",
        default=None,
        metavar="FILE",
        help="read recorded durations from FILE ({node id: seconds}, pytest-split's format) instead of the "
        "pytest cache",
    )
    group.addoption(
        "--holon-nb-store-durations",
        action="store_true",
        default=False,
        help="write this run's durations into --holon-nb-durations FILE (the pytest cache is always updated)",
    )
    group.addoption(
        "--holon-nb-order",
        choices=("auto", "durations", "file"),
        default="auto",
        help="notebook order: longest first by recorded durations (durations), pytest's file order (file), "
        "or longest first under pytest-xdist only (auto, the default)",
    )
    group.addoption(
        "--holon-nb-start-ahead",
        choices=("auto", "on", "off"),
        default="auto",
        help="start the next notebook's kernel while the current notebook runs (local kernels): on, off, or auto "
        "(the default: on, except with --holon-nb-update or a gateway, where it is always off)",
    )
    group.addoption(
        "--holon-nb-gateway",
        default=None,
        metavar="URL",
        help="run each notebook's kernel on this Jupyter Kernel Gateway or Enterprise Gateway",
    )
    group.addoption(
        "--holon-nb-gateway-token",
        default=None,
        metavar="TOKEN",
        help="the gateway's auth token (default: $JUPYTER_GATEWAY_AUTH_TOKEN)",
    )


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("holon_nb", False) or config.getini("holon_nb_paths"))


def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config):
        return
    if config.getoption("holon_nb_repeat") < 1:
        raise pytest.UsageError("--holon-nb-repeat must be 1 or more")
    from .normalize import parse_rules

    lines = config.getini("holon_nb_normalize")
    try:
        rules = parse_rules(json.loads(line) if line.lstrip().startswith("{") else line for line in lines)
    except ValueError as exc:
        raise pytest.UsageError(f"holon_nb_normalize: {exc}") from None
    sanitize = config.getoption("holon_nb_sanitize_with")
    if sanitize:
        from .normalize import read_sanitize_file

        try:
            rules += read_sanitize_file(sanitize)
        except ValueError as exc:
            raise pytest.UsageError(f"--holon-nb-sanitize-with: {exc}") from None
    worker, home = os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get("HOLON_NB_HOME")
    if worker and home:  # a fixed holon home: each xdist worker gets its own folder in it (notebook-tests spec §2)
        os.environ["HOLON_NB_HOME"] = os.path.join(home, worker)
    root = config.rootpath
    paths = [(root / p).resolve() for p in config.getini("holon_nb_paths")]
    masks = _listed(config, "holon_nb_mask", "holon_nb_masks") or ()
    from .normalize import MASK_PRESETS

    unknown = sorted(set(masks) - set(MASK_PRESETS))
    if unknown:
        raise pytest.UsageError(f"--holon-nb-mask: unknown {', '.join(unknown)}; choose from {', '.join(MASK_PRESETS)}")
    config.stash[_STATE] = {"rules": rules, "paths": paths, "compare": _compare_options(config), "masks": masks}
    config.stash[_STATE].update(shard=_shard(config), measured={}, ran={}, ahead=None, next=None)
    config.pluginmanager.register(_Recorder(config.stash[_STATE]), "holon_nb_recorder")
    if paths and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = list(config.args) + [str(p) for p in paths if str(p) not in config.args]


def _shard(config: pytest.Config) -> Any:
    text = config.getoption("holon_nb_shard")
    if text is None:
        return None
    from ._suites._order import parse_shard

    return parse_shard(text)


def _recorded(config: pytest.Config) -> dict[str, float]:
    """The recorded durations: ``--holon-nb-durations FILE``, else the pytest cache (none without it)."""
    from ._suites._order import CACHE_KEY, clean, read_durations

    path = config.getoption("holon_nb_durations")
    if path:
        return read_durations(Path(path))
    cache = getattr(config, "cache", None)
    return clean(cache.get(CACHE_KEY, {})) if cache is not None else {}


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--holon-nb-shard K/N`` keeps one shard of the notebook items; under pytest-xdist (or with
    ``--holon-nb-order durations``) they run longest first (:mod:`holon_nb.testing._suites._order`). Other
    tests keep their places."""
    if _STATE not in config.stash:
        return
    shard = config.stash[_STATE]["shard"]
    order = config.getoption("holon_nb_order")
    # an xdist worker is told by its config (``workerinput``), not by $PYTEST_XDIST_WORKER, which a pytest run
    # started from inside a worker's test inherits without being a worker
    reorder = order == "durations" or (order == "auto" and hasattr(config, "workerinput"))
    if shard is None and not reorder:
        return
    from ._suites._order import arrange

    slots = [i for i, item in enumerate(items) if isinstance(item, _Item)]
    notebooks = [(items[i].nodeid, items[i].nodeid.rsplit("::", 1)[0]) for i in slots]
    sizes: dict[str, int] = {}
    for i, (_, group) in zip(slots, notebooks, strict=True):
        if group not in sizes:
            try:
                sizes[group] = items[i].path.stat().st_size
            except OSError:
                sizes[group] = 1
    locks = {
        group: parent.lock if isinstance(parent := items[i].parent, NotebookFile) else None
        for i, (_, group) in zip(slots, notebooks, strict=True)
    }
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    kept, deselected = arrange(notebooks, _recorded(config), sizes, shard, reorder, locks, workers)
    if deselected:
        config.hook.pytest_deselected(items=[items[slots[k]] for k in deselected])
    queue = iter([items[slots[k]] for k in kept])
    taken = set(slots)
    arranged: list[pytest.Item] = []
    for i, item in enumerate(items):
        if i not in taken:
            arranged.append(item)
        elif (chosen := next(queue, None)) is not None:
            arranged.append(chosen)
    items[:] = arranged


class _Recorder:
    """Notes each notebook item's duration (setup + call + teardown) and where its kernel ran, from the reports
    (an xdist controller gets its workers' reports)."""

    def __init__(self, state: dict) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if ".ipynb::" not in report.nodeid:
            return
        measured = self.state["measured"]
        measured[report.nodeid] = round(measured.get(report.nodeid, 0.0) + report.duration, 3)
        for name, value in report.user_properties:
            if name == "holon_nb_kernel":
                self.state["ran"][report.nodeid] = str(value)


def _store_durations(config: pytest.Config) -> None:
    """Merge this run's notebook durations into the pytest cache and, with ``--holon-nb-store-durations``, into
    ``--holon-nb-durations FILE``. Only the process that saw every report writes: never an xdist worker."""
    measured = config.stash[_STATE]["measured"]
    if not measured or hasattr(config, "workerinput"):
        return
    from ._suites._order import CACHE_KEY, clean, read_durations, write_durations

    cache = getattr(config, "cache", None)
    if cache is not None:
        cache.set(CACHE_KEY, {**clean(cache.get(CACHE_KEY, {})), **measured})
    path = config.getoption("holon_nb_durations")
    if path and config.getoption("holon_nb_store_durations"):
        write_durations(Path(path), {**read_durations(Path(path)), **measured})


def _listed(config: pytest.Config, option: str, ini: str) -> tuple[str, ...] | None:
    """A comma-separated command-line list, else the ini line list; None when neither is given."""
    value = config.getoption(option)
    if value is not None:
        return tuple(v.strip() for v in value.split(",") if v.strip())
    lines = [v.strip() for line in config.getini(ini) for v in line.split(",") if v.strip()]
    return tuple(lines) if lines else None


def _compare_options(config: pytest.Config) -> Any:
    from ._compare import CompareOptions
    from ._images import ImageTolerance

    return CompareOptions(
        mimetypes=_listed(config, "holon_nb_mimetypes", "holon_nb_mimetypes"),
        ignore_mimetypes=_listed(config, "holon_nb_ignore_mimetypes", "holon_nb_ignore_mimetypes") or (),
        image=ImageTolerance(
            pixel=config.getoption("holon_nb_image_pixel"),
            fraction=config.getoption("holon_nb_image_fraction"),
            strict=config.getoption("holon_nb_strict_images"),
        ),
    )


def _wanted(config: pytest.Config, file_path: Path) -> bool:
    if file_path.suffix != ".ipynb" or file_path.name.endswith(".executed.ipynb"):
        return False
    if ".ipynb_checkpoints" in file_path.parts:
        return False
    if config.getoption("holon_nb", False):
        return True
    resolved = file_path.resolve()
    return any(resolved == p or p in resolved.parents for p in config.stash[_STATE]["paths"])


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if _STATE in config.stash and _wanted(config, file_path):
        return NotebookFile.from_parent(parent, path=file_path)
    return None


_SECTION = "holon-nb update"


_UNRUN_SECTION = "holon-nb cells not compared"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the update and unrun sections of the items' reports (they come from xdist workers too)."""
    for name, content in report.sections:
        if _SECTION in name:
            _UPDATED.append(content)
        elif _UNRUN_SECTION in name:
            _UNRUN.append(content)


_UPDATED: list[str] = []
_UNRUN: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Note which item this process runs next (pytest and pytest-xdist's workers know it): its notebook's kernel
    may start while this item's notebook runs (:func:`_start_ahead`)."""
    state = item.config.stash.get(_STATE, None)
    if state is not None:
        state["next"] = nextitem
    yield


def _start_ahead(file: NotebookFile) -> Any:
    """The ``on_ready`` of ``file``'s check when kernels start ahead (``--holon-nb-start-ahead``, issue 30): once
    ``file``'s kernel is ready, make the next item's notebook's first run ready and start its kernel
    (:class:`~holon_nb.testing.check.FirstRun`), so that no kernel start is waited for between notebooks. None when
    off: ``off``; with ``--holon-nb-update`` (the saved notebook is rewritten after its run, which the next
    notebook's folder copy, taken ahead, would miss) and with a gateway. ``auto`` is on (measured on an idle 2-core
    machine, 24 notebooks: serial 2-7 % shorter, ``-n 2`` 14-17 % shorter; docs/large-suites.md)."""
    opt = file.config.getoption
    mode = opt("holon_nb_start_ahead")
    if mode == "off" or opt("holon_nb_update") or opt("holon_nb_gateway"):
        return None
    state = file.config.stash[_STATE]

    async def start_next(private: bool) -> None:
        from .check import FirstRun

        nxt = state.get("next")
        parent = getattr(nxt, "parent", None)
        if not isinstance(parent, NotebookFile) or parent.path == file.path or parent._check is not None:
            return
        _drop_ahead(state)
        try:
            # a notebook working in its own folder (not private) may still change it: no copy of it taken now
            busy = None if private else file.path.resolve().parent
            ahead = FirstRun.ahead(parent.path, _check_options(file.config), busy)
        except Exception:  # that notebook cannot run (not a notebook, its folder too large): its check says so
            return
        if ahead is None:
            return
        try:
            await ahead.start()
        except Exception:  # it starts when its turn comes, as without this
            await ahead.aclose()
            return
        state["ahead"] = ahead

    return start_next


def _drop_ahead(state: dict) -> None:
    ahead, state["ahead"] = state.get("ahead"), None
    if ahead is not None:
        ahead.discard()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A collected file that is not a Python notebook makes the run a usage error (exit status 4). A kernel started
    ahead for a notebook that did not run (``-x``, an interrupted run) is shut down."""
    state = session.config.stash.get(_STATE, None)
    if state:
        _drop_ahead(state)
        _store_durations(session.config)
    if state and state.get("usage_errors"):
        session.exitstatus = pytest.ExitCode.USAGE_ERROR


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _STATE not in config.stash:
        return
    ran = config.stash[_STATE]["ran"]
    if config.getoption("holon_nb_gateway") and ran:  # where each notebook's kernel ran (issue 30)
        terminalreporter.section("holon-nb kernels")
        for node, where in sorted(ran.items()):
            terminalreporter.write_line(f"{node}: {where}")
    if _UNRUN:
        terminalreporter.section(_UNRUN_SECTION)
        lines = sorted({line for content in _UNRUN for line in content.splitlines()})
        for line in lines:
            terminalreporter.write_line(line)
        if any("saved without running" in line for line in lines):
            terminalreporter.write_line("(--holon-nb-strict-unrun compares them)")
        if any(" saved by " in line for line in lines):
            terminalreporter.write_line(
                "(images drawn by other software than the saved ones: --holon-nb-update re-records them, "
                "--holon-nb-strict-images compares them)"
            )
    if not config.getoption("holon_nb_update"):
        return
    terminalreporter.section(_SECTION)
    lines = sorted(set(_UPDATED))
    if not lines:
        terminalreporter.write_line("no saved outputs changed")
    for line in lines:
        terminalreporter.write_line(line)


def _scale_timeout(item: pytest.Item) -> None:
    """Under ``--holon-nb-repeat N``, give the item N times pytest-timeout's configured limit (``--timeout`` or
    the ``timeout`` ini value): one item runs its notebook N times, and a limit chosen for one run would
    end a deterministic notebook's repeat half-way. An item's own ``timeout`` marker is left alone."""
    repeat = item.config.getoption("holon_nb_repeat")
    if repeat <= 1 or not item.config.pluginmanager.hasplugin("timeout") or item.get_closest_marker("timeout"):
        return
    try:
        base = float(item.config.getoption("timeout", None) or item.config.getini("timeout") or 0)
    except (TypeError, ValueError):
        return
    if base > 0:
        item.add_marker(pytest.mark.timeout(base * repeat))


class NotebookFile(pytest.File):
    """A notebook collected by the plugin; runs it at most once per process."""

    _check: Any = None
    _reported = False
    #: The folder whose lock the notebook's run holds (a ``shared_dir`` notebook, or one recording cassettes,
    #: runs in its folder, one at a time: :func:`~holon_nb.testing._workdir.folder_lock`); None: a private copy.
    lock: str | None = None

    def report(self, item: pytest.Item) -> None:
        """Attach what this file's check has to say beyond pass or fail to ``item``'s report, once per file:
        the cells the update rewrote, and the cells saved without running (not compared)."""
        check = self._check
        if check is None or self._reported:
            return
        self._reported = True
        if check.updated_cells:
            item.add_report_section(
                "call", _SECTION, f"{self.path}: rewrote cells {', '.join(map(str, check.updated_cells))}"
            )
        lines: list[str] = []
        if check.never_executed:  # one line (a failure's report says it already when strict)
            from .check import never_executed_note

            if not check.failed:
                lines.append(never_executed_note(self.path))
        elif check.unrun:
            lines.append(f"{self.path}: cells {', '.join(map(str, check.unrun))} saved without running, not compared")
        lines += [f"{self.path}: {note}" for note in check.not_compared]
        if lines:
            item.add_report_section("call", _UNRUN_SECTION, "\n".join(lines))

    def collect(self) -> Iterator[pytest.Item]:
        from ._harness import HarnessUsageError, read_notebook

        try:  # a file that is not a notebook, or a notebook of another language: one line, pytest's usage code
            nb = read_notebook(self.path, self.config.getoption("holon_nb_kernel"))
        except HarnessUsageError as exc:
            self.config.stash[_STATE]["usage_errors"] = self.config.stash[_STATE].get("usage_errors", 0) + 1
            raise NotebookFailure(str(exc)) from None
        from ._workdir import shared_dir

        if shared_dir(nb.metadata) or self.config.getoption("holon_nb_cassettes") in ("record", "auto"):
            self.lock = str(self.path.resolve().parent)  # as check_notebook decides where it runs
        items: list[pytest.Item]
        if self.config.getoption("holon_nb_per_cell"):
            code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
            items = [CellItem.from_parent(self, name=f"cell_{i}", index=i, last=i == code[-1]) for i in code]
        else:
            items = [NotebookItem.from_parent(self, name="notebook")]
        for item in items:
            _scale_timeout(item)
            yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """One line for a notebook that cannot be tested (:class:`NotebookFailure`); pytest's report else."""
        if isinstance(excinfo.value, NotebookFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def check(self) -> Any:
        """Run and compare the notebook (once); the :class:`~holon_nb.testing.check.NotebookCheck`."""
        if self._check is None:
            from .check import check_notebook

            state = self.config.stash[_STATE]
            first = state.get("ahead")
            if first is not None and first.path == self.path:
                state["ahead"] = None
            else:  # none, or made for another notebook (an xdist worker's next item went elsewhere)
                first = None
                _drop_ahead(state)
            options = _check_options(self.config)
            try:
                self._check = check_notebook(self.path, options, first=first, on_ready=_start_ahead(self))
            except ValueError as exc:  # HarnessUsageError, a malformed normaliser
                text = str(exc)
                raise NotebookFailure(text if str(self.path) in text else f"notebook {self.path}: {text}") from None
        return self._check


def _check_options(config: pytest.Config) -> Any:
    """The session's :class:`~holon_nb.testing.check.CheckOptions` (made once: a notebook's first run made ready
    ahead is used only with the very options it was made with)."""
    state = config.stash[_STATE]
    if state.get("options") is None:
        from .check import CheckOptions

        opt = config.getoption
        state["options"] = CheckOptions(
            timeout=opt("holon_nb_timeout"),
            cassettes=opt("holon_nb_cassettes"),
            update=opt("holon_nb_update"),
            repeat=opt("holon_nb_repeat"),
            rules=state["rules"],
            kernel_name=opt("holon_nb_kernel"),
            compare=state["compare"],
            masks=state["masks"],
            compare_ansi=opt("holon_nb_compare_ansi"),
            strict_unrun=opt("holon_nb_strict_unrun"),
            gateway=(opt("holon_nb_gateway"), opt("holon_nb_gateway_token")) if opt("holon_nb_gateway") else None,
        )
    return state["options"]


class _Item(pytest.Item):
    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, NotebookFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


class NotebookItem(_Item):
    """A whole notebook as one test."""

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, NotebookFile)
        check = parent.check()
        parent.report(self)
        self.user_properties.append(("holon_nb_kernel", check.summary.ran_on))
        if check.failed:
            raise NotebookFailure(check.report())


class CellItem(_Item):
    """One code cell of a notebook as a test (``--holon-nb-per-cell``)."""

    def __init__(self, *, index: int, last: bool, **kwargs: Any):
        super().__init__(**kwargs)
        self.index, self.last = index, last

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, NotebookFile)
        check = parent.check()
        parent.report(self)
        if self.last:
            self.user_properties.append(("holon_nb_kernel", check.summary.ran_on))
        problems = check.for_cell(self.index)
        notebook_level = check.problems if self.last else []
        if problems or notebook_level:
            raise NotebookFailure(check.report(problems, notebook_level=bool(notebook_level)))
        if self.index in check.not_run:
            pytest.skip(f"not run: an earlier cell of {self.path.name} failed")
        if self.index in check.unrun:
            pytest.skip("saved without running: not compared (--holon-nb-strict-unrun compares it)")
