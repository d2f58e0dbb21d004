"""The pytest plugin is imported by every pytest run where holon_nb is installed (its ``pytest11`` entry
point), with or without ``--holon-nb``: it must stay cheap (issue 23, import cost)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("nbclient", "nbformat", "jupyter_client", "IPython", "holon_nb.runtime._facade", "holon_nb.testing._harness")


def test_loading_the_plugin_imports_no_kernel_machinery() -> None:
    code = f"import sys, holon_nb.testing.plugin\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == ""


def test_the_harness_names_still_import_from_the_package() -> None:
    from holon_nb import testing
    from holon_nb.testing._harness import run_notebook
    from holon_nb.testing._summary import RunSummary

    assert testing.run_notebook is run_notebook and testing.RunSummary is RunSummary
    assert set(testing.__all__) <= set(dir(testing))
