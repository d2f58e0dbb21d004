"""The registry: the ordered tuple of tool declarations and lookups over it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..render._receipt import ReceiptContext, receipt_text
from ._spec import PROFILE_FAMILIES, Family, Profile, ToolSpec

__all__ = ["Registry", "REGISTRY", "render_receipt"]


class Registry:
    """An ordered, name-unique collection of :class:`ToolSpec`.

    Args:
        specs: The declarations, in presentation order.

    Raises:
        ValueError: if two specs share a name.
    """

    def __init__(self, specs: Iterable[ToolSpec[Any, Any]]):
        self._specs: tuple[ToolSpec[Any, Any], ...] = tuple(specs)
        self._by_name = {s.name: s for s in self._specs}
        if len(self._by_name) != len(self._specs):
            raise ValueError("duplicate tool names in registry")

    def __iter__(self) -> Iterator[ToolSpec[Any, Any]]:
        return iter(self._specs)

    @property
    def generation(self) -> int:
        """Changes whenever the registry's tools change; a fixed registry's is 0 (caches key on it)."""
        return 0

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> ToolSpec[Any, Any] | None:
        """Return the spec called ``name`` (hidden aliases included), or None."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """All registered names, in order."""
        return [s.name for s in self._specs]

    def model_facing(self, profile: Profile = Profile.PUBLIC_NAMED) -> list[ToolSpec[Any, Any]]:
        """The tools advertised to a model of ``profile`` (agents spec §1.3 rule 1)."""
        allowed = PROFILE_FAMILIES[profile]
        return [s for s in self._specs if s.model_facing and s.family in allowed]

    def by_family(self, family: Family) -> list[ToolSpec[Any, Any]]:
        """The tools of one family."""
        return [s for s in self._specs if s.family is family]

    def with_specs(self, *extra: ToolSpec[Any, Any]) -> Registry:
        """Return a new registry with ``extra`` appended (tests use this)."""
        return Registry((*self._specs, *extra))


#: The built-in tool modules in presentation order, each with the attribute holding its specs and
#: the names it declares (so one tool's module loads alone; ``tests/contract`` checks the names).
_BUILTIN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("_commands", "SPECS", ("ExecCommand", "ExecCommandBatch")),
    ("_tasks", "SPECS", ("ListTasks", "TaskStatus", "TaskOutput", "TaskInput", "TaskStop", "TaskList")),
    ("_apply_patch", "SPECS", ("ApplyPatch",)),
    (
        "_workspaces",
        "SPECS",
        (
            "GetWorkspaceState",
            "AttachWorkspace",
            "DetachWorkspace",
            "SwitchWorkspace",
            "CreateWorktree",
            "RemoveWorktree",
        ),
    ),
    (
        "_work_items",
        "SPECS",
        ("CreateWorkItem", "PickWorkItem", "GetWorkItem", "ListWorkItems", "UpdateWorkItem", "CompleteWorkItem"),
    ),
    ("_waiting", "SPECS", ("WaitFor",)),
    ("_timers", "SPECS", ("CreateTimer", "ListTimers", "GetTimer", "CancelTimer")),
    ("_messages", "MESSAGE_SPECS", ("Enqueue", "SendAgentMessage")),
    ("_agents", "SPECS", ("GetAgent", "AgentGet")),
    ("_agent_creation", "SPECS", ("CreateAgent", "InvokeAgent")),
    ("_memory", "SPECS", ("MemorySearch", "MemoryGet")),
    ("_models", "SPECS", ("ListModelProviders", "ListProviderModels")),
    ("external._web", "SPECS", ("WebFetch", "WebSearch", "XSearch")),
    ("_sleep", "SPECS", ("Sleep",)),
    ("images", "SPECS", ("ViewImage", "GenerateImage")),
    ("external._triggers", "SPECS", ("CreateExternalTrigger", "CancelExternalTrigger")),
    # beyond the contract: the opt-in Notebook family (issue 28), off unless HolonNB.notebook_tools
    (
        "notebook._tools",
        "SPECS",
        ("ListVariables", "InspectVariable", "KernelHistory", "RunCode", "ReadNotebook", "EditNotebook", "ExecuteCell"),
    ),
)


class _BuiltinRegistry(Registry):
    """The built-in registry, loaded lazily: ``get(name)`` imports only the module declaring ``name``;
    iterating, ``len`` or ``names`` import them all (the tool models are built then, not at import)."""

    def __init__(self) -> None:  # no super().__init__: nothing is loaded yet
        self._loaded: dict[str, tuple[ToolSpec[Any, Any], ...]] = {}
        self._module_of = {name: module for module, _, names in _BUILTIN for name in names}
        self._all: Registry | None = None
        self._found: dict[str, ToolSpec[Any, Any]] = {}  # what get() found before all were loaded (issue 27 item 7)

    def _module_specs(self, module: str) -> tuple[ToolSpec[Any, Any], ...]:
        specs = self._loaded.get(module)
        if specs is None:
            import importlib

            attr = next(a for m, a, _ in _BUILTIN if m == module)
            specs = self._loaded[module] = tuple(
                getattr(importlib.import_module(f"{__package__}.builtin.{module}"), attr)
            )
        return specs

    def _full(self) -> Registry:
        if self._all is None:
            self._all = Registry(s for module, _, _ in _BUILTIN for s in self._module_specs(module))
        return self._all

    # read-only properties in place of Registry's attributes: loading happens on first use
    @property
    def _specs(self) -> tuple[ToolSpec[Any, Any], ...]:  # type: ignore[override]
        return self._full()._specs

    @property
    def _by_name(self) -> dict[str, ToolSpec[Any, Any]]:  # type: ignore[override]
        return self._full()._by_name

    def get(self, name: str) -> ToolSpec[Any, Any] | None:
        """Return the spec called ``name`` (hidden aliases included), or None; loads only its module."""
        if self._all is None:
            spec = self._found.get(name)  # every call looks its tool up three times: once found, a dict hit
            if spec is not None:
                return spec
            module = self._module_of.get(name)
            if module is None:
                return None
            spec = next((s for s in self._module_specs(module) if s.name == name), None)
            if spec is not None:
                self._found[name] = spec
            return spec
        return self._all.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None


REGISTRY: Registry = _BuiltinRegistry()


def render_receipt(env: dict[str, Any], registry: Registry | None = None, context: ReceiptContext | None = None) -> str:
    """The model-visible text of an envelope, before scrubbing and projection (commands spec §3.4 rules 1-3).

    :func:`holon_nb.render._receipt.receipt_text` with the built-in registry by default; custom text renderers
    are called as ``spec.render_receipt(env, context)``.
    """
    return receipt_text(env, REGISTRY if registry is None else registry, context)
