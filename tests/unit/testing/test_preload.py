"""holon_nb is preloaded in a run's kernel only when the notebook may use it (:func:`needs_holon`).

A notebook that never names holon_nb runs in a kernel without it, as nbval and a plain Jupyter kernel run it
(the preload cost ~0.4 s a notebook); one with ``%load_ext holon_nb``, a holon magic used without it, or an
``%%agent`` turn runs as before. Either way the saved notebook is scrubbed of the same secrets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from holon_nb.runtime import RESULT_MIMETYPE
from holon_nb.testing import format_summary, run_notebook
from holon_nb.testing._kernel_code import HOLON_MAGICS, needs_holon

pytestmark = pytest.mark.usefixtures("own_home")

# a cell that tells whether anything of holon_nb was imported in the kernel, without naming it (which would
# have it preloaded)
IMPORTED = "import sys\nprint('imported:', sorted(m for m in sys.modules if m.startswith('hol' 'on_nb')))"


def notebook(*sources: str, **cell_fields: Any) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("%load_ext holon_nb (markdown runs nothing)")]
    nb.cells += [nbformat.v4.new_code_cell(s, **cell_fields) for s in sources]
    return nb


def stdout(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize(
    "source",
    [
        "%load_ext holon_nb",
        "import holon_nb\nholon_nb.get_runtime()",
        "%exec echo hi",  # a holon magic without %load_ext: ran under the preload before, still does
        "%%agent --model scripted/script.yaml --wait\nhi",
        "listed = %tasks",
        "%%time\n%workitems",
        "%config HolonNB.raise_on_tool_error = True",
        "import os\nos.environ['HOLON_NB_PROVIDERS'] = '{}'",
        "get_ipython().run_line_magic('exec', 'echo hi')",
        "!holon-nb --version",
    ],
)
def test_a_notebook_that_may_use_holon_nb_has_it_preloaded(source: str) -> None:
    assert needs_holon(notebook("x = 1", source))


def test_a_notebook_that_never_names_holon_nb_is_not_preloaded() -> None:
    nb = notebook("import numpy as np\nnp.arange(3)", "%time x = 1", "%%timeit\nsum(range(9))", "print('50%')")
    nb.metadata["holon_nb"] = {"masks": ["uuids"], "normalize": ["a => b"], "shared_dir": True, "lax": True}
    nb.cells[1].metadata["tags"] = ["holon-ignore-output", "raises-exception"]
    assert not needs_holon(nb)


def test_holon_nb_metadata_outputs_and_the_restart_tag_have_it_preloaded() -> None:
    receipt = nbformat.v4.new_output("display_data", data={RESULT_MIMETYPE: {}, "text/plain": "ok"})
    assert needs_holon(notebook("x = 1", outputs=[receipt]))
    assert needs_holon(notebook("x = 1", metadata={"tags": ["holon-restart-kernel"]}))
    assert needs_holon(notebook("x = 1", metadata={"holon_nb": {"trailing_outputs_from": 0}}))
    assert needs_holon(notebook("x = 1", metadata={"nbmake": {"post_cell_execute": ["import holon_nb"]}}))
    nb = notebook("x = 1")
    nb.metadata["holon_nb"] = {"masks": [], "something_new": True}  # a key the harness does not know
    assert needs_holon(nb)


def test_the_magic_list_is_what_the_extension_registers(tmp_path: Path) -> None:
    code = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "before = {k: set(v) for k, v in ip.magics_manager.magics.items()}\n"
        "ip.run_line_magic('load_ext', 'holon_nb')\n"
        "new = sorted({n for k, v in ip.magics_manager.magics.items() for n in set(v) - before[k]})\n"
        "ip.run_line_magic('unload_ext', 'holon_nb')\n"
        "print(__import__('json').dumps(new))\n"
    )
    env = {**os.environ, "HOLON_NB_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == sorted(HOLON_MAGICS)


def write(path: Path, nb: nbformat.NotebookNode) -> Path:
    nbformat.write(nb, path)
    return path


def test_a_plain_notebook_runs_without_holon_nb_in_its_kernel(tmp_path: Path) -> None:
    src = write(tmp_path / "plain.ipynb", notebook(IMPORTED, "print('done')"))
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0, format_summary(summary)
    assert not summary.preloaded
    assert stdout(nbformat.read(summary.output, as_version=4)) == "imported: []\ndone\n"


def test_a_notebook_using_holon_nb_has_it_loaded_with_or_without_its_own_load_ext(tmp_path: Path) -> None:
    loads = write(tmp_path / "loads.ipynb", notebook("%load_ext holon_nb", IMPORTED))
    summary = run_notebook(loads, timeout=60)
    assert summary.exit_code == 0 and summary.preloaded, format_summary(summary)
    saved = nbformat.read(summary.output, as_version=4)
    assert saved.cells[1].outputs == []  # the preload makes the notebook's own %load_ext silent
    assert "'holon_nb.notebook'" in stdout(saved)
    (tmp_path / "script.yaml").write_text("format: holon_nb.script/v1\nsteps:\n  - text: all is well\n")
    magics = write(
        tmp_path / "magics.ipynb",
        notebook("%exec echo from-exec", "%%agent --model scripted/script.yaml --wait\nHow is it going?"),
    )
    summary = run_notebook(magics, timeout=60)
    assert summary.exit_code == 0 and summary.preloaded, format_summary(summary)
    saved = nbformat.read(summary.output, as_version=4)
    assert "from-exec" in json.dumps(saved.cells[1].outputs) and RESULT_MIMETYPE in json.dumps(saved.cells[1].outputs)
    assert "all is well" in json.dumps(saved.cells[2].outputs)
    assert summary.receipts_by_status.get("success", 0) >= 1


def test_a_plain_notebook_is_scrubbed_of_the_same_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Secret-named variables, from the start or set in a cell, are scrubbed without any runtime; a variable only
    holon_nb's configuration names as a key (``auth.env`` of ``$HOLON_NB_PROVIDERS``) is scrubbed too, as a
    preloaded runtime's scrubber did: the harness then loads holon_nb at the end to ask it."""
    monkeypatch.setenv("MY_SERVICE_TOKEN", "from-the-start-0042")
    src = write(
        tmp_path / "secrets.ipynb",
        notebook(
            "import os\nos.environ['LATE_API_TOKEN'] = 'set-in-a-' + 'cell-9f31'",
            "print(os.environ['MY_SERVICE_TOKEN'], os.environ['LATE_API_TOKEN'])",
            "print(os.environ.get('MYCORP_LLM_AUTH', 'unset-corp'))",
        ),
    )
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0 and not summary.preloaded, format_summary(summary)
    text = stdout(nbformat.read(summary.output, as_version=4))
    assert text == "[redacted] [redacted]\nunset-corp\n"

    auth = {"source": "env", "env": "MYCORP_LLM_AUTH"}
    providers = {"corp": {"transport": "openai_chat_completions", "base_url": "http://127.0.0.1:9/v1", "auth": auth}}
    monkeypatch.setenv("HOLON_NB_PROVIDERS", json.dumps(providers))
    monkeypatch.setenv("MYCORP_LLM_AUTH", "corp-key-not-secret-named")
    summary = run_notebook(src, timeout=60)
    assert summary.exit_code == 0 and not summary.preloaded, format_summary(summary)
    text = stdout(nbformat.read(summary.output, as_version=4))
    assert text == "[redacted] [redacted]\n[redacted]\n"
