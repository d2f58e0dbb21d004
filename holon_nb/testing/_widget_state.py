"""What a saved notebook keeps of its widgets: the state of the models its outputs still show.

nbclient records every widget model a run created in ``metadata.widgets``; :func:`drop_unshown_widget_state`
keeps the ones a shown view or a link reaches (used by :func:`holon_nb.testing._harness.run_notebook`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from nbformat import NotebookNode

__all__ = ["drop_unshown_widget_state"]

_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def drop_unshown_widget_state(nb: NotebookNode) -> None:
    """Keep in ``metadata.widgets`` only the state of widgets an output still shows (and the models they use).

    nbclient records every widget the run created, also those whose display was replaced by static
    output when their work ended (and then closed); their state would only weigh down the file.
    A model stays when any shown view or link reaches it (:func:`_reachable_models`). The entry is
    left exactly as nbclient wrote it when nothing is dropped (an empty ``state`` included), and
    removed only when every model it held was dropped.
    """
    state = ((nb.metadata.get("widgets") or {}).get(_WIDGET_STATE) or {}).get("state")
    if not isinstance(state, dict) or not state:
        return
    keep = _reachable_models(nb, state)
    if len(keep) == len(state):
        return
    if keep:
        nb.metadata["widgets"][_WIDGET_STATE]["state"] = {k: v for k, v in state.items() if k in keep}
    else:
        del nb.metadata["widgets"]


_LINK_MODELS = ("LinkModel", "DirectionalLinkModel")  # jslink / jsdlink: never shown, alive all the same


def _reachable_models(nb: NotebookNode, state: dict[str, Any]) -> set[str]:
    """The ids of the models in ``state`` that a shown view or a link reaches.

    The roots are the models of the widget views the cells' outputs show and the link models
    (``jslink``, ``jsdlink``). From a model, its state's ``IPY_MODEL_<id>`` references (children,
    layouts, styles, a link's source and target) and the widget views inside it (the outputs an
    ``Output`` widget holds) are followed.
    """
    todo = [m for c in nb.cells for o in c.get("outputs", []) for m in _view_ids(o)]
    todo += [k for k, v in state.items() if isinstance(v, dict) and v.get("model_name") in _LINK_MODELS]
    keep: set[str] = set()
    while todo:
        model_id = todo.pop()
        if model_id in keep or model_id not in state:
            continue
        keep.add(model_id)
        todo += re.findall(r"IPY_MODEL_([0-9a-zA-Z_-]+)", json.dumps(state[model_id]))
        todo += _view_ids(state[model_id])
    return keep


def _view_ids(obj: Any) -> list[str]:
    """The model ids of the widget views anywhere inside ``obj`` (an output, a model's saved state)."""
    found: list[str] = []
    if isinstance(obj, dict):
        view = obj.get(_WIDGET_VIEW)
        if isinstance(view, dict) and isinstance(view.get("model_id"), str):
            found.append(view["model_id"])
        for value in obj.values():
            found += _view_ids(value)
    elif isinstance(obj, list):
        for value in obj:
            found += _view_ids(value)
    return found
