"""Every exception class holon_nb defines, importable from one place: ``from holon_nb.errors import StoreBusy``.

All of them derive from :class:`HolonNBError`, so ``except holon_nb.errors.HolonNBError`` catches every error
of holon_nb's own and nothing else (a malformed argument to a Python helper may still raise a plain
``ValueError`` or ``TypeError``, as Python's own functions do). Those that are also a kind of built-in error keep that base too
(``ModelRefError`` is a ``ValueError``, ``StoreBusy`` a ``sqlite3.OperationalError``, ``SwappedPath`` an
``OSError``), so code that caught the built-in kind still does. The tree::

    HolonNBError
    ├── RuntimeClosed, RuntimeStartupError, RuntimeDied          the runtime's life (Runtime, %load_ext)
    ├── NotLoaded, WrongThread                                  used before %load_ext; a blocking call on
    │                                                           the runtime's own thread
    ├── ToolCallError ── CommandFailed                          Runtime.call(raise_on_error=True), %exec --raise
    ├── AgentTurnFailed, TurnError, TurnCancelled               %%agent turns
    ├── ToolFailure                                             a handler's typed error; dispatch() turns it
    │                                                           into an error envelope, it never escapes
    ├── StoreBusy                                               another process held the home's write lock
    ├── MemoryIndexUnavailable, ObservationError                memory index, image observations
    ├── ProviderConfigError, ModelRefError                      model configuration
    ├── ProviderTransportError ── ToolSchemaRejected, LineageFailed, ScriptExhausted
    ├── CassetteError ── CassetteFormatError, CassetteMissing, CassetteDrift, CassetteExhausted, NetworkBlocked
    ├── ScriptError, ScriptedFailure, ScriptExpectationError    scripted models (tests, tutorials)
    ├── SchemaDefinitionError, ToolSchemaInvalid                lowering tool schemas for a provider
    ├── MediaCallError, ProviderError                           image generation, web search providers
    ├── ChangedOnDisk, CommitError, SwappedPath                 ApplyPatch's commit step
    ├── IntegerTooLong, SourceRefError                          tool input coercion, source references
    └── HarnessUsageError, NotebookFailure, FolderTooLarge      holon-nb run / test (holon_nb.testing)

Inside a tool call nothing is raised to the caller: a failure is an error envelope (``ToolError``), whose
``kind`` names it. The classes load on first access (``import holon_nb.errors`` imports none of the planes).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - the names as mypy and editors see them
    from .providers.base import ProviderTransportError
    from .providers.cassettes.errors import (
        CassetteDrift,
        CassetteError,
        CassetteExhausted,
        CassetteFormatError,
        CassetteMissing,
        NetworkBlocked,
    )
    from .providers.catalog import ProviderConfigError
    from .providers.errors import ToolSchemaRejected
    from .providers.lineage import LineageFailed
    from .providers.media.calls import MediaCallError
    from .providers.modelref import ModelRefError
    from .providers.schema_lowering import SchemaDefinitionError, ToolSchemaInvalid
    from .providers.scripted import ScriptedFailure, ScriptError, ScriptExhausted, ScriptExpectationError
    from .runtime.core.locking import StoreBusy
    from .runtime.images.observation import ObservationError
    from .runtime.memory.index import MemoryIndexUnavailable
    from .runtime.turns.calls import TurnCancelled
    from .runtime.turns.records import TurnError
    from .runtime.web.search_providers import ProviderError
    from .testing.harness import HarnessUsageError
    from .testing.plugin import NotebookFailure
    from .testing.workdir import FolderTooLarge
    from .tools.coerce import IntegerTooLong
    from .tools.errors import (
        AgentTurnFailed,
        CommandFailed,
        HolonNBError,
        NotLoaded,
        RuntimeClosed,
        RuntimeDied,
        RuntimeStartupError,
        ToolCallError,
        ToolFailure,
        WrongThread,
    )
    from .tools.patching.commit import ChangedOnDisk, CommitError, SwappedPath
    from .tools.source_refs import SourceRefError

#: public name -> module (below ``holon_nb``) that defines it
_WHERE = {
    "HolonNBError": "tools.errors",
    "RuntimeClosed": "tools.errors",
    "NotLoaded": "tools.errors",
    "WrongThread": "tools.errors",
    "RuntimeStartupError": "tools.errors",
    "RuntimeDied": "tools.errors",
    "ToolCallError": "tools.errors",
    "CommandFailed": "tools.errors",
    "AgentTurnFailed": "tools.errors",
    "ToolFailure": "tools.errors",
    "IntegerTooLong": "tools.coerce",
    "SourceRefError": "tools.source_refs",
    "ChangedOnDisk": "tools.patching.commit",
    "CommitError": "tools.patching.commit",
    "SwappedPath": "tools.patching.commit",
    "ProviderTransportError": "providers.base",
    "ToolSchemaRejected": "providers.errors",
    "LineageFailed": "providers.lineage",
    "ProviderConfigError": "providers.catalog",
    "ModelRefError": "providers.modelref",
    "MediaCallError": "providers.media.calls",
    "SchemaDefinitionError": "providers.schema_lowering",
    "ToolSchemaInvalid": "providers.schema_lowering",
    "ScriptError": "providers.scripted",
    "ScriptExhausted": "providers.scripted",
    "ScriptedFailure": "providers.scripted",
    "ScriptExpectationError": "providers.scripted",
    "CassetteError": "providers.cassettes.errors",
    "CassetteFormatError": "providers.cassettes.errors",
    "CassetteMissing": "providers.cassettes.errors",
    "CassetteDrift": "providers.cassettes.errors",
    "CassetteExhausted": "providers.cassettes.errors",
    "NetworkBlocked": "providers.cassettes.errors",
    "StoreBusy": "runtime.core.locking",
    "ObservationError": "runtime.images.observation",
    "MemoryIndexUnavailable": "runtime.memory.index",
    "TurnCancelled": "runtime.turns.calls",
    "TurnError": "runtime.turns.records",
    "ProviderError": "runtime.web.search_providers",
    "HarnessUsageError": "testing.harness",
    "NotebookFailure": "testing.plugin",
    "FolderTooLarge": "testing.workdir",
}

__all__ = [
    "AgentTurnFailed",
    "CassetteDrift",
    "CassetteError",
    "CassetteExhausted",
    "CassetteFormatError",
    "CassetteMissing",
    "ChangedOnDisk",
    "CommandFailed",
    "CommitError",
    "FolderTooLarge",
    "HarnessUsageError",
    "HolonNBError",
    "IntegerTooLong",
    "LineageFailed",
    "MediaCallError",
    "MemoryIndexUnavailable",
    "ModelRefError",
    "NetworkBlocked",
    "NotLoaded",
    "NotebookFailure",
    "ObservationError",
    "ProviderConfigError",
    "ProviderError",
    "ProviderTransportError",
    "RuntimeClosed",
    "RuntimeDied",
    "RuntimeStartupError",
    "SchemaDefinitionError",
    "ScriptError",
    "ScriptExhausted",
    "ScriptExpectationError",
    "ScriptedFailure",
    "SourceRefError",
    "StoreBusy",
    "SwappedPath",
    "ToolCallError",
    "ToolFailure",
    "ToolSchemaInvalid",
    "ToolSchemaRejected",
    "TurnCancelled",
    "TurnError",
    "WrongThread",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"holon_nb.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
