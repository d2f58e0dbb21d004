"""Which kernel a headless run uses, and the environment it starts with.

By default a run uses a kernel that executes *this* interpreter
(``sys.executable -m ipykernel_launcher``, ipykernel's own kernelspec
as ``ipykernel.kernelspec.get_kernel_dict()`` builds it), so the ``holon_nb`` and
``ipykernel`` the kernel imports are the ones the harness runs with — never a
``python3`` kernelspec installed elsewhere on the machine that happens to
point at another Python. The kernelspec is built in memory and served by a
:class:`~jupyter_client.kernelspec.KernelSpecManager` subclass given to the
run's own kernel manager: nothing is installed, no ``JUPYTER_PATH`` or other
global state changes. ``--kernel NAME`` uses the normal kernelspec lookup.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import zmq
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager

if TYPE_CHECKING:
    from ._summary import RunSummary

__all__ = [
    "kernel_log_tail",
    "lost_its_ports",
    "reap_tasks",
    "HEADLESS_ENV",
    "INTERPRETER_KERNEL",
    "InterpreterKernelSpecManager",
    "NoSuchKernel",
    "kernel_manager",
    "kernel_env",
]

#: Name of the in-memory kernelspec that runs the current interpreter.
INTERPRETER_KERNEL = "holon-nb-python3"
#: Set to ``1`` in the environment of a headless run's kernel (``holon-nb run``, notebook tests).
HEADLESS_ENV = "HOLON_NB_HEADLESS"


class InterpreterKernelSpecManager(KernelSpecManager):
    """Kernelspecs as usual, plus :data:`INTERPRETER_KERNEL` for ``sys.executable``."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        """Return the spec called ``kernel_name``.

        Raises:
            NoSuchKernel: if the name is neither :data:`INTERPRETER_KERNEL` nor installed.
        """
        if kernel_name == INTERPRETER_KERNEL:
            from ipykernel.kernelspec import get_kernel_dict  # ipykernel's own spec, argv[0] = sys.executable

            spec = get_kernel_dict()
            spec["display_name"] = f"Python {sys.version_info.major}.{sys.version_info.minor} (holon-nb run)"
            return KernelSpec(name=INTERPRETER_KERNEL, resource_dir="", **spec)
        return super().get_kernel_spec(kernel_name)


class _KernelManager(AsyncKernelManager):
    """A kernel manager that counts :data:`INTERPRETER_KERNEL` as an IPython kernel.

    nbclient gives ``--HistoryManager.hist_file=:memory:`` only to kernels whose manager says
    ``ipykernel`` (jupyter_client: names ``python``, ``python2``, ``python3``); without it a run
    writes ``history.sqlite`` into the user's IPython directory.
    """

    @property
    def ipykernel(self) -> bool:
        return self.kernel_name == INTERPRETER_KERNEL or super().ipykernel

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Wait until the kernel process has ended, looking every 5 ms (jupyter_client's 100 ms made every
        run wait ~0.1 s after the harness killed its kernel, which is gone within milliseconds)."""
        await super()._async_wait(pollinterval=min(pollinterval, 0.005))


def kernel_manager(kernel_name: str | None) -> AsyncKernelManager:
    """Return an unstarted kernel manager for ``kernel_name`` (None: this interpreter).

    Raises:
        NoSuchKernel: if ``kernel_name`` names no installed kernelspec.
    """
    specs = InterpreterKernelSpecManager()
    name = kernel_name or INTERPRETER_KERNEL
    specs.get_kernel_spec(name)  # fail early, before any process starts
    # CurveZMQ keys when both sides support them ("auto" applies only to specs that declare it).
    encryption = "auto" if zmq.has("curve") else "disabled"
    return _KernelManager(kernel_name=name, kernel_spec_manager=specs, transport_encryption=encryption)


def _site_dirs() -> set[Path]:
    dirs = list(site.getsitepackages()) + [site.getusersitepackages()]
    return {Path(d).resolve() for d in dirs}


#: What configures the outer pytest run (its options) or changes from test to test; a notebook's kernel does
#: not inherit them. pytest-xdist's ``PYTEST_XDIST_WORKER`` stays: it says where the notebook runs, and a
#: notebook may use it to keep its ports or folders apart from another worker's.
OUTER_PYTEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST")


def kernel_env(holon_home: str, kernel_name: str | None) -> dict[str, str]:
    """Return the environment of the run's kernel.

    It is this process's environment with ``HOLON_NB_HOME`` set to
    ``holon_home`` and :data:`HEADLESS_ENV` set to ``1`` (a cell can tell a headless run, where the
    harness restarts the kernel at a ``holon-restart-kernel`` cell, from a person's run). For the default kernel, when ``holon_nb`` is imported from a
    source checkout rather than from site-packages, the checkout is prepended
    to ``PYTHONPATH`` so the kernel imports the same code.

    Inside a pytest run (``holon-nb test``, the pytest plugin) the variables that configure or describe
    that outer run's options (:data:`OUTER_PYTEST_ENV`) are left out: a CI that sets ``PYTEST_ADDOPTS=--junitxml=…``
    would otherwise reach a notebook's own ``%exec pytest`` and change its output.

    Args:
        holon_home: The run's holon home (absolute path).
        kernel_name: The ``--kernel`` name, or None for this interpreter.
    """
    env = dict(os.environ)
    if "PYTEST_VERSION" in env:  # set by pytest (8.2+) for the length of its run
        for name in OUTER_PYTEST_ENV:
            env.pop(name, None)
    env["HOLON_NB_HOME"] = holon_home
    env[HEADLESS_ENV] = "1"  # no person at the keyboard: a notebook may shorten what waits for one
    if kernel_name is None:
        root = Path(__file__).resolve().parents[2]
        if root not in _site_dirs():
            parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
            if str(root) not in parts:
                env["PYTHONPATH"] = os.pathsep.join([str(root), *parts])
    return env


def lost_its_ports(summary: RunSummary, log: Path) -> bool:
    """True when the kernel never started because a port chosen for it was taken (zmq's EADDRINUSE)."""
    if not summary.kernel_died or not any(p.startswith("the kernel did not start") for p in summary.problems):
        return False
    try:
        return "Address already in use" in log.read_text(errors="replace")
    except OSError:
        return False


def kernel_log_tail(path: Path, lines: int = 15) -> list[str]:
    """The last ``lines`` non-blank lines of a kernel's log, each prefixed ``kernel log: `` (a summary's problems)."""
    try:
        tail = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return []
    return [f"kernel log: {line}" for line in tail if line.strip()]


def reap_tasks(home: str, workspace: Path) -> list[str]:
    """After a kernel death, kill the task process groups it left behind (D7 restart reconciliation).

    Returns:
        The ids of the tasks that were still live (now ``interrupted``).
    """
    if not (Path(home) / "holon.sqlite3").exists():
        return []
    from ..runtime import Runtime

    try:
        rt = Runtime(home=home, workspace=workspace)
    except Exception:  # best effort: the summary already says the kernel died
        return []
    rt.close()
    return list(rt.interrupted_at_start)
