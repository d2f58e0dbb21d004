"""``holon-nb`` as a real subprocess: verbs, output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import holon_nb
from holon_nb.tools.inventory import inventory_text

REPO = Path(holon_nb.__file__).resolve().parents[1]


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m holon_nb.cli ARGS`` in ``cwd`` and return the completed process."""
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "holon_nb.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def home_env(tmp_path: Path) -> dict[str, str]:
    return {"HOLON_NB_HOME": str(tmp_path / "home")}


def test_call_prints_the_envelope_and_exits_0(tmp_path: Path, home_env: dict[str, str]) -> None:
    proc = cli("call", "ExecCommand", '{"cmd":"echo hi"}', cwd=tmp_path, env=home_env)
    assert proc.returncode == 0, proc.stderr
    env = json.loads(proc.stdout)
    assert env["status"] == "success" and env["result"]["stdout_preview"] == "hi"
    assert list(env)[:2] == ["tool_name", "status"]
    assert (tmp_path / "home" / "holon.sqlite3").exists()  # $HOLON_NB_HOME was used


def test_call_defaults_to_dot_holon_in_the_cwd(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HOLON_NB_HOME"}
    proc = subprocess.run(
        [sys.executable, "-m", "holon_nb.cli", "call", "ExecCommand", '{"cmd":"pwd"}'],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"]["stdout_preview"] == str(tmp_path.resolve())
    assert (tmp_path / ".holon" / "holon.sqlite3").exists()


def test_bad_json_is_an_error_envelope_not_a_usage_error(tmp_path: Path, home_env: dict[str, str]) -> None:
    proc = cli("call", "ExecCommand", "{not json", cwd=tmp_path, env=home_env)
    assert proc.returncode == 1, proc.stderr
    env = json.loads(proc.stdout)
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_tool_input"


def test_unknown_tool_exits_1(tmp_path: Path, home_env: dict[str, str]) -> None:
    proc = cli("call", "RunShell", "{}", cwd=tmp_path, env=home_env)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["kind"] == "unknown_tool"


@pytest.mark.parametrize(
    "args", [("call",), (), ("nope",), ("run",), ("call", "ExecCommand", "{}", "--context", "[1]")]
)
def test_usage_errors_exit_2(tmp_path: Path, home_env: dict[str, str], args: tuple[str, ...]) -> None:
    proc = cli(*args, cwd=tmp_path, env=home_env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr


def test_receipt_flag_prints_the_model_visible_receipt(tmp_path: Path, home_env: dict[str, str]) -> None:
    proc = cli("call", "ExecCommand", '{"cmd":"echo hi"}', "--receipt", cwd=tmp_path, env=home_env)
    assert proc.returncode == 0
    assert "hi" in proc.stdout and not proc.stdout.lstrip().startswith("{")


def test_secrets_never_print(tmp_path: Path, home_env: dict[str, str]) -> None:
    secret = "s3cr3t-value-123456"
    env = {**home_env, "MY_API_TOKEN": secret}
    for extra in ((), ("--receipt",)):
        proc = cli("call", "ExecCommand", '{"cmd":"echo $MY_API_TOKEN"}', *extra, cwd=tmp_path, env=env)
        assert proc.returncode == 0 and secret not in proc.stdout and "[redacted]" in proc.stdout


def test_a_promoted_task_is_stopped_when_the_cli_exits(tmp_path: Path, home_env: dict[str, str]) -> None:
    # login=false: killing a login shell while its profile runs can leave tool locks behind (e.g. pyenv's)
    proc = cli("call", "ExecCommand", '{"cmd":"sleep 30","yield_time_ms":0,"login":false}', cwd=tmp_path, env=home_env)
    assert proc.returncode == 0, proc.stderr
    task_id = json.loads(proc.stdout)["result"]["task_handle"]["task_id"]
    assert task_id in proc.stderr and "stopped" in proc.stderr
    status = cli("call", "TaskStatus", json.dumps({"task_id": task_id}), cwd=tmp_path, env=home_env)
    assert json.loads(status.stdout)["result"]["task"]["status"] in ("cancelled", "interrupted")


def test_tools_lists_the_registry(tmp_path: Path) -> None:
    proc = cli("tools", cwd=tmp_path)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "FAMILY", "STABILITY", "MODEL-FACING", "RENDERING"]
    assert any(
        line.split()[:5] == ["ExecCommand", "local_environment", "stable", "yes", "custom_text_receipt"]
        for line in lines
    )
    assert any(line.split()[:4] == ["TaskList", "core_agent", "hidden", "no"] for line in lines)


def test_inventory_check_passes_on_the_checked_in_file(tmp_path: Path) -> None:
    proc = cli("inventory", "--check", cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_inventory_writes_and_detects_staleness(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "inv.json"
    assert cli("inventory", "--output", str(target), cwd=tmp_path).returncode == 0
    assert target.read_text(encoding="utf-8") == inventory_text()
    target.write_text(inventory_text().replace('"cmd"', '"command"', 1), encoding="utf-8")
    proc = cli("inventory", "--check", "--output", str(target), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("---") and "+" in proc.stdout and "holon-nb inventory" in proc.stderr
    missing = cli("inventory", "--check", "--output", str(tmp_path / "absent.json"), cwd=tmp_path)
    assert missing.returncode == 1
