"""``--holon-nb-gateway``: the tutorials' kernels run on a real Jupyter Kernel Gateway (issue 30).

A ``jupyter kernelgateway`` on 127.0.0.1 (a free port, a token) runs the kernels of tutorials 01 and 03 through
``holon-nb test --holon-nb-gateway URL --holon-nb-gateway-token TOKEN``; both compare equal with their committed
outputs (03 restarts its kernel on the gateway half-way), the plugin says per notebook where its kernel ran (the
terminal summary and the JUnit XML property ``holon_nb_kernel``), and the holon homes the kernels made on their
side are gone afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _gateway import kernel_gateway

pytestmark = [pytest.mark.kernel, pytest.mark.slow, pytest.mark.xdist_group("kernel-gateway")]

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ["notebooks/01-quickstart.ipynb", "notebooks/03-work-items-waits-timers.ipynb"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOLON_NB_", "JUPYTER_GATEWAY"))}


def _homes() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("holon-nb-gateway-*")}


@pytest.mark.timeout(900)
def test_tutorials_01_and_03_pass_with_their_kernels_on_a_kernel_gateway(tmp_path: Path) -> None:
    before = _homes()
    with kernel_gateway(tmp_path) as (url, token):
        xml = tmp_path / "junit.xml"
        proc = subprocess.run(
            [sys.executable, "-m", "holon_nb.cli", "test", "-p", "no:cacheprovider", f"--junitxml={xml}"]
            + ["--holon-nb-gateway", url, "--holon-nb-gateway-token", token, *TUTORIALS],
            cwd=ROOT,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=800,
        )
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "2 passed" in proc.stdout
        section = proc.stdout.split("holon-nb kernels", 1)[1]
        for name in TUTORIALS:
            assert f"{name}::notebook: gateway {url} kernel " in section, section
        where = {
            case.get("classname"): prop.get("value")
            for case in ET.parse(xml).getroot().iter("testcase")
            for prop in case.iter("property")
            if prop.get("name") == "holon_nb_kernel"
        }
        assert len(where) == 2 and all(v.startswith(f"gateway {url} kernel ") for v in where.values()), where

        # without the token the gateway refuses: the notebook fails, saying the kernel did not start
        proc = subprocess.run(
            [sys.executable, "-m", "holon_nb.cli", "test", "-p", "no:cacheprovider"]
            + ["--holon-nb-gateway", url, TUTORIALS[0]],
            cwd=ROOT,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 1, proc.stdout[-3000:]
        assert "the kernel did not start: HTTPError: HTTP 401: Unauthorized" in proc.stdout, proc.stdout[-3000:]
    assert _homes() <= before  # the holon homes lived with the kernels, and went with them
