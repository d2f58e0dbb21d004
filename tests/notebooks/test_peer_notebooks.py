"""NT-11: notebooks of other Jupyter projects pass against their own saved outputs under the plugin.

The notebooks (tests/notebooks/peer/, sources and licences in its README.md and SOURCES.md) do not
use holon_nb; the harness still loads it before their first cell. Each runs once in a real kernel
through :func:`~holon_nb.testing.check.check_notebook`, exactly what ``holon-nb test`` does per notebook.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from holon_nb.testing.check import CheckOptions, check_notebook

PEER = Path(__file__).resolve().parent / "peer"

#: Notebooks expected to fail, and why (anything else must pass).
EXPECTED_FAILURES = {
    # nbclient's negative control: an untagged error in cell 0; it must fail under any runner
    "nbclient/Skip Exceptions.ipynb": "cell 0 (# üñîçø∂é): error",
}
#: Not run here, and why.
LEFT_OUT = {
    # saved without outputs (nothing to compare with); and its `with out: display(widget)` cell makes
    # nbclient wait a full iopub timeout (~60 s) now and then, in plain nbclient too.
    # Checked by hand: --holon-nb-update then --holon-nb-repeat 3 passes.
    "ipywidgets/Output Widget.ipynb",
}

NOTEBOOKS = sorted(str(p.relative_to(PEER)) for p in PEER.glob("*/*.ipynb"))


def test_the_collection_is_complete() -> None:
    assert len(NOTEBOOKS) == 20
    assert set(EXPECTED_FAILURES) | LEFT_OUT <= set(NOTEBOOKS)


@pytest.mark.parametrize("name", [n for n in NOTEBOOKS if n not in LEFT_OUT])
def test_peer_notebook_against_its_saved_outputs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOLON_NB_HOME", raising=False)
    folder = tmp_path / Path(name).parent.name
    shutil.copytree(PEER / Path(name).parent, folder)  # its images beside it; never writes into the repo
    check = check_notebook(folder / Path(name).name, CheckOptions(timeout=60))
    if name in EXPECTED_FAILURES:
        assert check.failed and EXPECTED_FAILURES[name] in check.report(), check.report()
    else:
        assert not check.failed, check.report()
