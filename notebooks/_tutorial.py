"""What the tutorial generators (``make_0*.py``) share: the notebook they write around their cells."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_notebook


def ignore_output(cell: nbformat.NotebookNode, why: str) -> nbformat.NotebookNode:
    """Tag ``cell`` ``holon-ignore-output``: run by the notebook tests, its outputs not compared (``why`` says
    what makes them differ from run to run; it is for the reader of the generator)."""
    cell.metadata.setdefault("tags", []).append("holon-ignore-output")
    return cell


def tutorial_notebook(cells: list, normalize: list | None = None, shared_dir: bool = False) -> nbformat.NotebookNode:
    """A Python 3 notebook of ``cells`` with stable cell ids (``cell-00``, …), so regenerating it changes
    only what changed; ``normalize`` (``[{"regex", "replace"}]``) goes to ``metadata.holon_nb.normalize``
    for the notebook tests (docs/notebook-tests.md); ``shared_dir`` sets ``metadata.holon_nb.shared_dir``
    (the tests run the tutorial in ``notebooks/`` itself, not in a private copy: it needs its git checkout)."""
    nb = new_notebook(cells=cells)
    if normalize:
        nb.metadata["holon_nb"] = {"normalize": normalize}
    if shared_dir:
        nb.metadata.setdefault("holon_nb", {})["shared_dir"] = True
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:02d}"
    return nb
