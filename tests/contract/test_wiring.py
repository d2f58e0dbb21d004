"""Explicit wiring (issue 27 item 1): one composition root, each plane built with the ports it declares.

Read from the source with ``ast``: no plane names the runtime (``Runtime``, or the ``RuntimeHost`` protocol that
handed every plane the whole runtime until the agent and turn planes got their ports), no constructor or
function of a plane takes the runtime, each plane declares what it consumes in its own ``ports.py`` (protocols
only), the plane services take keyword-only ports, the agent plane never imports the turn plane above it (not
even for type checking: it starts turns through its ``TurnStarter`` port), no code sets an attribute on another
object's service after construction, and only the facade builds the plane services.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import holon_nb

RUNTIME = Path(holon_nb.__file__).resolve().parent / "runtime"
#: planes built with their ports only: every plane of the runtime
PORTED = ("tasks", "work", "workspaces", "memory", "models", "images", "web", "triggers", "agents", "turns")
#: names of the runtime itself, which no plane may name (``RuntimeHost`` was the protocol of the whole runtime)
RUNTIME_NAMES = frozenset({"Runtime", "RuntimeHost"})
#: parameter names that meant "the whole runtime" (``rt: RuntimeHost``): allowed only typed by a port protocol
RUNTIME_PARAMS = frozenset({"rt", "runtime"})
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
    "TurnService",
    "ToolPlanes",
)
#: services built with keyword-only ports (``TriggerService``, ``WebService`` and ``ModelCatalogService`` still take
#: theirs by position)
KEYWORD_ONLY = (
    "TaskService",
    "WorkService",
    "WorkspaceService",
    "MemoryService",
    "ImagePlane",
    "ApprovalBroker",
    "AgentPlane",
    "AgentLifecycle",
    "InvocationRuns",
    "TurnService",
)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _runtime_names(tree: ast.Module) -> list[int]:
    """Lines that name the runtime: ``RuntimeHost``/``Runtime`` as a name, an import or an annotation string."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in RUNTIME_NAMES:
            lines.add(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(a.name in RUNTIME_NAMES for a in node.names):
            lines.add(node.lineno)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            words = set(ast.unparse(node.annotation).replace(".", " ").replace("[", " ").replace("|", " ").split())
            if words & RUNTIME_NAMES:
                lines.add(node.lineno)
    return sorted(lines)


@pytest.mark.parametrize("plane", (*PORTED, "core"))
def test_plane_never_names_the_runtime(plane: str) -> None:
    named = [
        f"{p.relative_to(RUNTIME)}:{line}"
        for p in sorted((RUNTIME / plane).glob("*.py"))
        for line in _runtime_names(_tree(p))
    ]
    assert not named, f"runtime/{plane} names the runtime (declare what it needs in its ports.py): {named}"


def _port_names(plane: str) -> set[str]:
    path = RUNTIME / plane / "_ports.py"
    return {n.name for n in _tree(path).body if isinstance(n, ast.ClassDef)} if path.exists() else set()


@pytest.mark.parametrize("plane", (*PORTED, "core"))
def test_no_plane_function_takes_the_runtime(plane: str) -> None:
    """A constructor or function with an ``rt``/``runtime`` parameter is given the whole runtime, unless
    the parameter is typed by a protocol of the plane's ``ports.py`` (``TurnFollower(rt: FollowedRuntime)``: what a
    follower made by its caller uses of the runtime it is given)."""
    ports = _port_names(plane)
    found = []
    for path in sorted((RUNTIME / plane).glob("*.py")):
        for node in ast.walk(_tree(path)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                typed = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                if arg.arg in RUNTIME_PARAMS and typed not in ports:
                    found.append(f"{path.relative_to(RUNTIME)}:{node.lineno} {node.name}({arg.arg}: {typed or '?'})")
    assert not found, f"runtime/{plane} takes the runtime (pass the ports of its ports.py instead): {found}"


def test_the_check_sees_a_constructor_taking_the_runtime() -> None:
    """The two checks above fail on the shape the agent and turn planes had (``def __init__(self, rt: RuntimeHost)``)."""
    tree = ast.parse("class AgentPlane:\n    def __init__(self, rt: RuntimeHost):\n        self._rt = rt\n")
    assert _runtime_names(tree) == [2]
    args = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)][0].args.args
    assert [a.arg for a in args if a.arg in RUNTIME_PARAMS] == ["rt"]


def _init_of(name: str) -> tuple[Path, ast.FunctionDef]:
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in _tree(path).body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        return path, item
    raise AssertionError(f"no class {name} with an __init__ under runtime/")


@pytest.mark.parametrize("service", KEYWORD_ONLY)
def test_plane_service_takes_keyword_only_ports(service: str) -> None:
    path, init = _init_of(service)
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    assert not positional, f"{service} ({path.relative_to(RUNTIME)}) takes ports by position: {positional}"


def test_agents_never_import_the_turn_plane() -> None:
    """The agents -> turns call goes through the ``TurnStarter`` port the composition root fills: no module of the
    agent plane imports ``runtime.turns``, not even for type checking (import-linter ignores those)."""
    found = []
    for path in sorted((RUNTIME / "agents").glob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "turns" and node.level == 2:
                found.append(f"{path.relative_to(RUNTIME)}:{node.lineno}")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(n.startswith("holon_nb.runtime.turns") for n in names):
                    found.append(f"{path.relative_to(RUNTIME)}:{node.lineno}")
    assert not found, f"the agent plane imports the turn plane: {found}"


@pytest.mark.parametrize("plane", PORTED)
def test_plane_declares_its_ports_as_protocols(plane: str) -> None:
    path = RUNTIME / plane / "_ports.py"
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
    outside = {name: where for name, where in built.items() if set(where) != {"_facade.py"}}
    assert not outside, f"plane services built outside the composition root (runtime/_facade.py): {outside}"
    assert set(built) == set(SERVICES), f"services the facade does not build: {set(SERVICES) - set(built)}"
