"""Command output as a terminal shows it, from real programs: colour codes and ``\\r`` progress frames.

What a model reads (the receipt, ``ToolResult.envelope``) and what a notebook saves as
text carry no escape sequences; progress lines drawn with ``\\r`` show their last
frame; ``\\b`` steps back; colour survives only in the HTML card; counts in
truncation notices are of the visible characters.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from holon_nb import Runtime
from holon_nb.render._ansi import strip_ansi, terminal_text
from holon_nb.render._card import render_card

PY = sys.executable
#: The foreground window for real programs (git, pytest, pip, Python): these tests read a completed command's
#: result, and the default 10 s window is not always enough on a loaded machine (the command would become a
#: background task and the result would have no exit status). The call still returns when the command ends.
WINDOW_MS = 240_000


def _git_repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    for i in range(3):
        (path / f"f{i}").write_text(f"{i}\n")
        subprocess.run(["git", "add", "."], cwd=path, check=True)
        subprocess.run(
            ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", f"c{i}"], cwd=path, check=True
        )
    return path


def _no_escapes(result) -> None:
    assert "\x1b" not in result.receipt
    assert "\x1b" not in result.full_receipt
    assert "\x1b" not in str(result.envelope)
    assert "\x1b" not in result.display_text
    assert "\r" not in result.display_text and "\r" not in result.receipt


def test_git_log_with_colour_forced(rt: Runtime, tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo")
    raw = subprocess.run(
        ["git", "-c", "color.ui=always", "log", "--oneline"], cwd=repo, capture_output=True, text=True
    ).stdout
    assert "\x1b[" in raw  # the program really colours
    r = rt.call(
        "ExecCommand", {"cmd": f"cd {repo} && git -c color.ui=always log --oneline", "yield_time_ms": WINDOW_MS}
    )
    _no_escapes(r)
    assert r.result["stdout_preview"] == strip_ansi(raw).strip()
    assert r.result["stdout_chars"] == len(strip_ansi(raw).strip())
    assert "\x1b[" in r.display_envelope["result"]["stdout_preview"]  # kept for the card only
    card = render_card(r.display_envelope, r.full_receipt, r.duration_ms)
    assert "<span style='color:" in card and "\x1b" not in card


def test_git_clone_progress_shows_the_last_frame(rt: Runtime, tmp_path: Path) -> None:
    src = _git_repo(tmp_path / "src")
    raw = subprocess.run(
        ["git", "clone", "--progress", "--no-local", str(src), str(tmp_path / "probe")], capture_output=True
    ).stderr.decode()  # bytes: text=True would turn \r into \n
    assert "\r" in raw and "Counting objects:  11%" in raw  # frames drawn over each other
    r = rt.call(
        "ExecCommand", {"cmd": f"git clone --progress --no-local {src} {tmp_path / 'dst'}", "yield_time_ms": WINDOW_MS}
    )
    _no_escapes(r)
    err = r.result["stderr_preview"]
    assert "Counting objects:  11%" not in err  # an overwritten frame is gone
    assert "Counting objects: 100% (9/9), done." in err
    assert sum(line.count("Counting objects") for line in err.splitlines()) == 1


def test_pytest_with_colour(rt: Runtime, tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_ok():\n    assert True\n")
    r = rt.call(
        "ExecCommand",
        {
            "cmd": f"cd {tmp_path} && {PY} -m pytest -p no:cacheprovider --color=yes test_x.py",
            "yield_time_ms": WINDOW_MS,
        },
    )
    assert r.result["disposition"] == "completed" and r.result["exit_status"] == 0
    _no_escapes(r)
    assert "1 passed" in r.result["stdout_preview"]
    assert "\x1b[" in r.display_envelope["result"]["stdout_preview"]


@pytest.mark.skipif(
    importlib.util.find_spec("pip") is None, reason="no pip in this environment (e.g. a venv made by uv)"
)
def test_pip_with_force_color(rt: Runtime) -> None:
    r = rt.call(
        "ExecCommand",
        {"cmd": f"FORCE_COLOR=1 {PY} -m pip install --no-index no-such-package-zzz", "yield_time_ms": WINDOW_MS},
    )
    assert r.result["exit_status"] != 0
    _no_escapes(r)
    assert "ERROR: No matching distribution found for no-such-package-zzz" in r.result["stderr_preview"]


def test_backspace_and_carriage_return_per_line(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "printf 'ab\\bc\\n0%%\\r50%%\\r100%%\\nabc\\rX\\n'"})
    assert r.result["stdout_preview"] == "ac\n100%\nXbc"
    _no_escapes(r)


def test_truncation_counts_visible_characters(rt: Runtime) -> None:
    script = "import sys; sys.stdout.write(''.join(f'\\x1b[31m{i:05d}\\x1b[0m\\n' for i in range(4000)))"
    r = rt.call("ExecCommand", {"cmd": f'{PY} -c "{script}"', "max_output_tokens": 200, "yield_time_ms": WINDOW_MS})
    res = r.result
    assert res["truncated"] is True
    assert res["stdout_chars"] == 4000 * 6 - 1  # "00000\n" x 4000, stripped: escape bytes never counted
    notice = next(line for line in r.display_text.splitlines() if "stdout truncated" in line)
    omitted = res["stdout_chars"] - res["stdout_kept_chars"]
    assert f"{omitted} of {res['stdout_chars']} characters not shown" in notice
    _no_escapes(r)


def test_task_output_of_a_promoted_progress_command(rt: Runtime) -> None:
    script = "import sys,time\nfor p in range(0,101,20):\n    sys.stderr.write(f'\\r\\x1b[32m{p}%\\x1b[0m'); time.sleep(0.05)\nprint()"
    path = Path(rt.workspace) / "progress.py"
    path.write_text(script)
    r = rt.call("ExecCommand", {"cmd": f"{PY} progress.py", "yield_time_ms": 0})
    task = r.result["task_handle"]["task_id"]
    out = rt.call("TaskOutput", {"task_id": task, "timeout_ms": WINDOW_MS})
    assert out.result["task"]["status"] == "completed"
    assert out.result["task"]["output_preview"].strip() == "100%"
    _no_escapes(out)


@pytest.mark.skipif(os.name != "posix", reason="POSIX shell commands")
def test_terminal_text_keeps_colour_only_where_no_overwrite() -> None:
    assert terminal_text("\x1b[31mred\x1b[0m", keep_colour=True) == "\x1b[31mred\x1b[0m"
    assert terminal_text("\x1b[31m1\x1b[0m\r\x1b[31m2\x1b[0m", keep_colour=True) == "2"
    assert terminal_text("a\x1b]8;;http://x\x07link\x1b]8;;\x07") == "alink"
    assert terminal_text("line\r\nnext\r\n") == "line\nnext\n"
