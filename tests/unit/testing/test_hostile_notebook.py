"""Hostile input in a real kernel (issue 9): a lone surrogate in a magic, a secret printed in two writes."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from holon_nb.runtime import RESULT_MIMETYPE
from holon_nb.testing import format_summary, run_notebook


def write_nb(path: Path, *sources: str) -> Path:
    """Write a notebook of code cells."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)
    return path


pytestmark = pytest.mark.usefixtures("own_home")


def test_a_lone_surrogate_in_a_magic_shows_an_error_receipt(tmp_path: Path) -> None:
    src = write_nb(
        tmp_path / "surrogate.ipynb",
        '%tool ExecCommand {"cmd": "echo \\ud800"}',
        '%tool TaskOutput {"task_id": "\\ud800"}',
        "print('after')",
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    assert summary.error_kinds == {"invalid_tool_input": 2}
    nb = nbformat.read(summary.output, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code[:2]:
        data = [o["data"] for o in cell.outputs if o["output_type"] == "display_data"]
        assert data and data[0][RESULT_MIMETYPE]["error"]["kind"] == "invalid_tool_input", cell.outputs
        assert "lone surrogate" in data[0]["text/plain"] or "invalid_tool_input" in data[0]["text/plain"]
    assert code[2].outputs[0]["text"] == "after\n"


def test_a_secret_written_in_two_stream_writes_is_scrubbed_in_the_saved_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "split-across-writes-7Qz4"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    src = write_nb(
        tmp_path / "split.ipynb",
        "import os, sys, time\ns = os.environ['MY_SERVICE_TOKEN']\n"
        "sys.stdout.write('key=' + s[:9]); sys.stdout.flush(); time.sleep(0.5)\n"
        "sys.stdout.write(s[9:] + ' done\\n'); sys.stdout.flush()",
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    saved = summary.output.read_text(encoding="utf-8")
    assert secret[:9] not in saved and secret[9:] not in saved
    cell = [c for c in nbformat.read(summary.output, as_version=4).cells if c.cell_type == "code"][0]
    streams = [o for o in cell.outputs if o["output_type"] == "stream"]
    assert len(streams) >= 2, streams  # two outputs, scrubbed as one text
    assert "".join(o["text"] for o in streams) == "key=[redacted] done\n"
