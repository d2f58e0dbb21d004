"""Explicit wiring (issue 27 item 1): one composition root, each plane built with the ports it declares.

Read from the source with ``ast``: the planes below the agents never name the runtime (``RuntimeHost``), each
declares what it consumes in its own ``ports.py`` (protocols only), no code sets an attribute on another
object's service after construction, and only the facade builds the plane services.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import holon_nb

RUNTIME = Path(holon_nb.__file__).resolve().parent / "runtime"
#: planes built with their ports only (the agent and turn planes still see the runtime as ``RuntimeHost``)
PORTED = ("tasks", "work", "workspaces", "memory", "models", "images", "web", "triggers")
#: the plane services and who may build them: the composition root (``Runtime._compose``) and nobody else
SERVICES = (
    "TaskService",
    "WorkService",
    "WorkspaceService",
    "MemoryService",
    "ImagePlane",
    "TriggerService",
    "WebService",
    "ApprovalBroker",
    "AgentPlane",
)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


@pytest.mark.parametrize("plane", PORTED)
def test_plane_never_names_the_runtime(plane: str) -> None:
    named = [
        f"{p.relative_to(RUNTIME)}:{node.lineno}"
        for p in sorted((RUNTIME / plane).glob("*.py"))
        for node in ast.walk(_tree(p))
        if isinstance(node, ast.Name)
        and node.id == "RuntimeHost"
        or isinstance(node, ast.ImportFrom)
        and any(a.name == "RuntimeHost" for a in node.names)
    ]
    assert not named, f"runtime/{plane} names RuntimeHost (declare what it needs in its ports.py): {named}"


@pytest.mark.parametrize("plane", PORTED)
def test_plane_declares_its_ports_as_protocols(plane: str) -> None:
    path = RUNTIME / plane / "ports.py"
    assert path.exists(), f"runtime/{plane} has no ports.py"
    classes = [n for n in _tree(path).body if isinstance(n, ast.ClassDef)]
    assert classes, f"runtime/{plane}/ports.py declares no protocol"
    for cls in classes:
        bases = {ast.unparse(b) for b in cls.bases}
        assert "Protocol" in bases, f"runtime/{plane}/ports.py: {cls.name} is not a Protocol"
        assert ast.get_docstring(cls), f"runtime/{plane}/ports.py: {cls.name} has no docstring"


def _attribute_chain(node: ast.expr) -> list[str]:
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def test_no_service_is_changed_once_built() -> None:
    """``rt.tasks.x = ...`` / ``self.store.y = ...``: a service's attribute set by another object (a hook
    installed after construction) instead of given to its constructor."""
    found = []
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                chain = _attribute_chain(target) if isinstance(target, ast.Attribute) else []
                # self.<service>.<attr> = ... or rt.<service>.<attr> = ...
                if (
                    len(chain) >= 3
                    and chain[0] in ("self", "rt", "runtime")
                    and chain[1]
                    in (
                        "tasks",
                        "store",
                        "work",
                        "workspaces",
                        "memory",
                        "triggers",
                        "agents",
                        "images",
                        "web",
                        "approvals",
                    )
                ):
                    found.append(f"{path.relative_to(RUNTIME)}:{node.lineno}: {'.'.join(chain)}")
    assert not found, f"attributes set on a service after construction (pass them to its constructor): {found}"


def test_only_the_facade_builds_plane_services() -> None:
    built: dict[str, list[str]] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SERVICES:
                built.setdefault(node.func.id, []).append(str(path.relative_to(RUNTIME)))
    outside = {name: where for name, where in built.items() if set(where) != {"facade.py"}}
    assert not outside, f"plane services built outside the composition root (runtime/facade.py): {outside}"
    assert set(built) == set(SERVICES), f"services the facade does not build: {set(SERVICES) - set(built)}"
