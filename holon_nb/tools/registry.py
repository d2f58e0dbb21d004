"""The registry: the ordered tuple of tool declarations and lookups over it."""

from __future__ import annotations

from typing import Iterable, Iterator

from .spec import PROFILE_FAMILIES, Family, Profile, ToolSpec

__all__ = ["Registry", "REGISTRY"]


class Registry:
    """An ordered, name-unique collection of :class:`ToolSpec`.

    Args:
        specs: The declarations, in presentation order.

    Raises:
        ValueError: if two specs share a name.
    """

    def __init__(self, specs: Iterable[ToolSpec]):
        self._specs: tuple[ToolSpec, ...] = tuple(specs)
        self._by_name = {s.name: s for s in self._specs}
        if len(self._by_name) != len(self._specs):
            raise ValueError("duplicate tool names in registry")

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> ToolSpec | None:
        """Return the spec called ``name`` (hidden aliases included), or None."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """All registered names, in order."""
        return [s.name for s in self._specs]

    def model_facing(self, profile: Profile = Profile.PUBLIC_NAMED) -> list[ToolSpec]:
        """The tools advertised to a model of ``profile`` (agents spec §1.3 rule 1)."""
        allowed = PROFILE_FAMILIES[profile]
        return [s for s in self._specs if s.model_facing and s.family in allowed]

    def by_family(self, family: Family) -> list[ToolSpec]:
        """The tools of one family."""
        return [s for s in self._specs if s.family is family]

    def with_specs(self, *extra: ToolSpec) -> "Registry":
        """Return a new registry with ``extra`` appended (tests use this)."""
        return Registry((*self._specs, *extra))


def _builtin() -> Registry:
    from .builtin import agents; from .builtin import apply_patch; from .builtin import commands; from .builtin import memory; from .builtin import messages; from .builtin import models; from .builtin import tasks; from .builtin import timers; from .builtin import waiting; from .builtin import work_items; from .builtin import workspaces
    from .builtin import agent_creation; from .builtin import sleep
    from .builtin import images
    from .builtin.external import triggers, web

    return Registry((
        *commands.SPECS, *tasks.SPECS, *apply_patch.SPECS, *workspaces.SPECS,
        *work_items.SPECS, *waiting.SPECS, *timers.SPECS, *messages.MESSAGE_SPECS, *agents.SPECS, *agent_creation.SPECS,
        *memory.SPECS, *models.SPECS, *web.SPECS, *sleep.SPECS, *images.SPECS, *triggers.SPECS,
    ))


REGISTRY: Registry = _builtin()
