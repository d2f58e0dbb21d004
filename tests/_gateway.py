"""A real Jupyter Kernel Gateway (``jupyter kernelgateway``, from the test extra) on 127.0.0.1 for the tests and
benchmarks, and a fresh git repository of this checkout's files for the tutorials they run there."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _support import eventually


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str, token: str) -> bool:
    request = urllib.request.Request(f"{url}/api/kernelspecs", headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@contextmanager
def kernel_gateway(
    folder: Path, *, max_kernels: int | None = None, cwd: Path | None = None, kernel_env: dict[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """Start ``jupyter kernelgateway`` on a free port of 127.0.0.1 with a random token, in ``cwd`` (default
    ``folder``; its kernels start there), its log in ``folder/gateway.log``; yield ``(url, token)``; stop it at
    the end. ``kernel_env``: variables set in the gateway's environment and passed on to its kernels."""
    port, token = free_port(), secrets.token_hex(16)
    args = [sys.executable, "-m", "kernel_gateway", "--KernelGatewayApp.ip=127.0.0.1"]
    args += [f"--KernelGatewayApp.port={port}", "--KernelGatewayApp.port_retries=0"]
    # list_kernels: JupyterLab on a gateway lists its kernels (/api/kernels, which a Kernel Gateway refuses by default)
    args += [f"--KernelGatewayApp.auth_token={token}", "--JupyterWebsocketPersonality.list_kernels=True"]
    if max_kernels:
        args.append(f"--KernelGatewayApp.max_kernels={max_kernels}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOLON_NB_", "KG_"))}
    if kernel_env:
        env |= kernel_env | {"KG_ENV_PROCESS_WHITELIST": ",".join(kernel_env)}
    log = open(folder / "gateway.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(args, cwd=cwd or folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        eventually(lambda: proc.poll() is not None or _answers(url, token), timeout=120, step=0.2)
        assert proc.poll() is None, (folder / "gateway.log").read_text()
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


REPO = Path(__file__).resolve().parents[1]


def clone_checkout(root: Path) -> Path:
    """This checkout's tracked files, as they are in the working tree, as a fresh git repository (branch ``main``,
    one commit) at ``root``; returns ``root``. The tutorials run git in their checkout (01 shows its status, 02
    clones it), and a linked worktree or a copy outside git changes what they show."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    git = ["git", "-c", "user.name=Holon Test", "-c", "user.email=test@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "copy"], cwd=root, check=True)
    return root
