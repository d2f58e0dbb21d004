"""The README's examples, pasted as written, run in a real kernel through ``holon-nb run``.

"A first session" is one cell (its trailing ``# comments`` included); the scripted-model
example's ``hello.yaml`` is saved beside the notebook and its ``%%agent`` cell runs with
cassettes in replay mode, as ``holon-nb test`` runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

README = Path(__file__).resolve().parents[2] / "README.md"
RESULT = "application/vnd.holon.tool-result+json"


def _block(heading: str, lang: str, nth: int = 0) -> str:
    """The ``nth`` ````` ```lang ````` block under the README's ``## heading``."""
    text = README.read_text()
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)[nth]


def test_readme_first_session_and_scripted_model_run_as_written(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first commit"], cwd=repo, check=True)
    (repo / "hello.yaml").write_text(_block("A scripted model", "yaml"))
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(_block("A first session", "python")))
    nb.cells.append(nbformat.v4.new_code_cell(_block("A scripted model", "python")))
    nbformat.write(nb, repo / "first.ipynb")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLON_NB_")}
    env["HOLON_NB_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        [sys.executable, "-m", "holon_nb.cli", "run", "first.ipynb", "--cassettes", "replay", "--timeout", "300"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    executed = nbformat.read(repo / "first.executed.ipynb", as_version=4)
    for cell in executed.cells:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
    receipts = [o["data"][RESULT] for o in executed.cells[0].outputs if RESULT in o.get("data", {})]
    (search,) = [r for r in receipts if r["tool_name"] == "MemorySearch"]
    assert search["status"] == "success" and search["result"]["query"] == "release notes"  # not the comment
    shown = "".join(o.get("data", {}).get("text/plain", "") for o in executed.cells[1].outputs)
    assert "turn completed" in shown, shown
