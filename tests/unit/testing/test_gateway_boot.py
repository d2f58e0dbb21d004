"""What the harness sends a gateway kernel and runs in it first (holon_nb.testing._suites._gateway; issue 30)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from holon_nb.testing._suites._gateway import BOOT, CLEAN, gateway_env, where


def test_settings_travel_as_kernel_variables_and_the_home_stays_behind() -> None:
    env = {"HOLON_NB_HOME": "/here/home", "HOLON_NB_HEADLESS": "1", "HOLON_NB_CASSETTE_MODE": "replay", "PATH": "/x"}
    sent = gateway_env(env)
    assert sent["KERNEL_HOLON_NB_HEADLESS"] == "1" and sent["KERNEL_HOLON_NB_CASSETTE_MODE"] == "replay"
    assert "KERNEL_HOLON_NB_HOME" not in sent and "PATH" not in sent and "KERNEL_PATH" not in sent
    assert (
        len(sent["KERNEL_HOLON_NB_RUN"]) == 16
        and gateway_env(env)["KERNEL_HOLON_NB_RUN"] != sent["KERNEL_HOLON_NB_RUN"]
    )


def test_boot_applies_them_in_the_kernel_and_clean_removes_the_home(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    code = BOOT + "\nimport json, os\nprint(json.dumps([_holon_nb_where, dict(os.environ)]))\n"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "TMPDIR": str(tmp_path),
        "KERNEL_HOLON_NB_HEADLESS": "1",
        "KERNEL_HOLON_NB_RUN": "abc123",
        "KERNEL_WORKING_DIR": str(work),
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd="/")
    booted, seen = json.loads(out.stdout)
    home = tmp_path / "holon-nb-gateway-abc123"
    assert booted["home"] == str(home) and home.is_dir() and booted["cwd"] == str(work)
    assert seen["HOLON_NB_HOME"] == str(home) and seen["HOLON_NB_HEADLESS"] == "1"
    # again (after a kernel restart): the same home; then CLEAN removes it
    code = BOOT + CLEAN
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert not home.exists()
    # a working directory the kernel's machine does not have: the kernel stays where it started
    env["KERNEL_WORKING_DIR"] = str(tmp_path / "missing")
    out = subprocess.run(
        [sys.executable, "-c", BOOT + "\nprint(_holon_nb_where['cwd'])"],
        env=env,
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(tmp_path)


def test_where_names_the_gateway_the_kernel_and_its_host() -> None:
    class Km:
        kernel_id = "k-1"

    line = where("http://gw:8888", Km(), {"host": "node-7", "pid": 42})
    assert line == "gateway http://gw:8888 kernel k-1 on node-7 (pid 42)"
    assert where("http://gw:8888", Km(), None) == "gateway http://gw:8888 kernel k-1 on ? (pid ?)"
