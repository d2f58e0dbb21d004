"""``holon-nb`` as a real subprocess: verbs, output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import holon_nb
from holon_nb.tools._inventory import inventory_text

REPO = Path(holon_nb.__file__).resolve().parents[1]


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 280
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m holon_nb.cli ARGS`` in ``cwd`` and return the completed process. ``timeout`` only guards
    against a hang (under the 300 s test timeout): a `holon-nb test` run took over 60 s at load 13."""
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
        timeout=280,
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
    # the opt-in Notebook family (issue 28), off unless HolonNB.notebook_tools
    assert any(line.split()[:4] == ["RunCode", "notebook", "experimental", "opt-in,asks"] for line in lines)
    assert any(line.split()[:4] == ["ListVariables", "notebook", "experimental", "opt-in"] for line in lines)


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


def _notebook(path: Path, source: str = "print(1)", metadata: dict | None = None, ran: bool = True) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(metadata=metadata or {})
    cell = nbformat.v4.new_code_cell(source)
    if ran:
        cell.execution_count, cell.outputs = 1, [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


R_KERNEL = {"kernelspec": {"name": "ir", "language": "R", "display_name": "R"}, "language_info": {"name": "R"}}
BASH_KERNEL = {"kernelspec": {"name": "bash", "language": "bash", "display_name": "Bash"}}


def test_test_on_a_file_that_is_not_a_notebook_prints_one_line_and_exits_4(tmp_path: Path) -> None:
    # issue 26 #11: `{}` gave a 1,162-line traceback
    (tmp_path / "empty.ipynb").write_text("{}")
    proc = cli("test", "empty.ipynb", "-p", "no:cacheprovider", cwd=tmp_path)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert [line for line in proc.stderr.splitlines() if "Warning" not in line and "warnings.warn" not in line] == [
        "holon-nb test: cannot read empty.ipynb as a notebook: the notebook object has no integer `nbformat` field"
    ]


@pytest.mark.parametrize("metadata,kernel", [(R_KERNEL, "R"), (BASH_KERNEL, "Bash")])
def test_a_notebook_of_another_language_is_refused_in_one_line(tmp_path: Path, metadata: dict, kernel: str) -> None:
    # issue 26 #11: it ran in Python and failed with a misleading NameError
    _notebook(tmp_path / "other.ipynb", "x <- c(1, 2)", metadata)
    run = cli("run", "other.ipynb", cwd=tmp_path, env={"HOLON_NB_HOME": str(tmp_path / "home")})
    assert run.returncode == 2 and run.stdout == "", run.stdout + run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"holon-nb run: other.ipynb declares the {kernel} kernel") and "Python" in line
    assert not (tmp_path / "other.executed.ipynb").exists()  # nothing ran
    test = cli("test", "other.ipynb", "-p", "no:cacheprovider", cwd=tmp_path)
    assert test.returncode == 4 and test.stdout == "", test.stdout + test.stderr
    assert f"holon-nb test: other.ipynb declares the {kernel} kernel" in test.stderr


def test_bad_notebooks_found_in_a_folder_are_one_line_collection_errors_and_exit_4(tmp_path: Path) -> None:
    (tmp_path / "empty.ipynb").write_text("{}")
    _notebook(tmp_path / "r.ipynb", "x <- 1", R_KERNEL)
    proc = cli("test", ".", "-p", "no:cacheprovider", cwd=tmp_path)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout and "nbformat/" not in proc.stdout
    assert f"\ncannot read {tmp_path / 'empty.ipynb'} as a notebook: " in proc.stdout
    assert f"\n{tmp_path / 'r.ipynb'} declares the R kernel (language R);" in proc.stdout


def test_test_on_a_never_executed_notebook_points_at_update(tmp_path: Path) -> None:
    # issue 26 #11: every cell was skipped silently, or (strict) each receipt was dumped as JSON; now one line
    # naming the fix. Not strict it still runs (a cell that raises fails it) and passes: nothing to compare
    nb = _notebook(tmp_path / "fresh.ipynb", "%exec echo hi", ran=False)
    note = (
        f"{nb} was never executed (no code cell has saved outputs): nothing was compared; "
        f"record its outputs with: holon-nb test --holon-nb-update {nb}"
    )
    for extra, code in (((), 0), (("--holon-nb-strict-unrun",), 1)):
        proc = cli("test", "fresh.ipynb", "-p", "no:cacheprovider", *extra, cwd=tmp_path)
        assert proc.returncode == code, proc.stdout + proc.stderr
        assert [line.strip() for line in proc.stdout.splitlines() if "never executed" in line][:1] == [note]
        assert '"tool_name"' not in proc.stdout and "strict-unrun compares them" not in proc.stdout
