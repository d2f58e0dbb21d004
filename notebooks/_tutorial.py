"""What the tutorial generators (``make_0*.py``) share: the notebook they write around their cells."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_notebook


def tutorial_notebook(cells: list) -> nbformat.NotebookNode:
    """A Python 3 notebook of ``cells`` with stable cell ids (``cell-00``, …), so regenerating it changes
    only what changed."""
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:02d}"
    return nb
