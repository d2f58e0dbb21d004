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
    ├── McpConfigError                                          an mcpServers entry that cannot be used
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
    from .providers._catalog import ProviderConfigError
    from .providers._errors import ToolSchemaRejected
    from .providers._lineage import LineageFailed
    from .providers._modelref import ModelRefError
    from .providers._schema_lowering import SchemaDefinitionError, ToolSchemaInvalid
    from .providers.base import ProviderTransportError
    from .providers.cassettes._errors import (
        CassetteDrift,
        CassetteError,
        CassetteExhausted,
        CassetteFormatError,
        CassetteMissing,
        NetworkBlocked,
    )
    from .providers.media._calls import MediaCallError
    from .providers.scripted import ScriptedFailure, ScriptError, ScriptExhausted, ScriptExpectationError
    from .runtime.core._locking import StoreBusy
    from .runtime.images._observation import ObservationError
    from .runtime.mcp._config import McpConfigError
    from .runtime.memory._index import MemoryIndexUnavailable
    from .runtime.turns._calls import TurnCancelled
    from .runtime.turns._records import TurnError
    from .runtime.web._search_providers import ProviderError
    from .testing._harness import HarnessUsageError
    from .testing._workdir import FolderTooLarge
    from .testing.plugin import NotebookFailure
    from .tools._coerce import IntegerTooLong
    from .tools._errors import (
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
    from .tools._source_refs import SourceRefError
    from .tools.patching._commit import ChangedOnDisk, CommitError, SwappedPath

#: public name -> module (below ``holon_nb``) that defines it
_WHERE = {
    "HolonNBError": "tools._errors",
    "RuntimeClosed": "tools._errors",
    "NotLoaded": "tools._errors",
    "WrongThread": "tools._errors",
    "RuntimeStartupError": "tools._errors",
    "RuntimeDied": "tools._errors",
    "ToolCallError": "tools._errors",
    "CommandFailed": "tools._errors",
    "AgentTurnFailed": "tools._errors",
    "ToolFailure": "tools._errors",
    "IntegerTooLong": "tools._coerce",
    "SourceRefError": "tools._source_refs",
    "ChangedOnDisk": "tools.patching._commit",
    "CommitError": "tools.patching._commit",
    "SwappedPath": "tools.patching._commit",
    "ProviderTransportError": "providers.base",
    "ToolSchemaRejected": "providers._errors",
    "LineageFailed": "providers._lineage",
    "ProviderConfigError": "providers._catalog",
    "ModelRefError": "providers._modelref",
    "MediaCallError": "providers.media._calls",
    "SchemaDefinitionError": "providers._schema_lowering",
    "ToolSchemaInvalid": "providers._schema_lowering",
    "ScriptError": "providers.scripted",
    "ScriptExhausted": "providers.scripted",
    "ScriptedFailure": "providers.scripted",
    "ScriptExpectationError": "providers.scripted",
    "CassetteError": "providers.cassettes._errors",
    "CassetteFormatError": "providers.cassettes._errors",
    "CassetteMissing": "providers.cassettes._errors",
    "CassetteDrift": "providers.cassettes._errors",
    "CassetteExhausted": "providers.cassettes._errors",
    "NetworkBlocked": "providers.cassettes._errors",
    "StoreBusy": "runtime.core._locking",
    "ObservationError": "runtime.images._observation",
    "MemoryIndexUnavailable": "runtime.memory._index",
    "McpConfigError": "runtime.mcp._config",
    "TurnCancelled": "runtime.turns._calls",
    "TurnError": "runtime.turns._records",
    "ProviderError": "runtime.web._search_providers",
    "HarnessUsageError": "testing._harness",
    "NotebookFailure": "testing.plugin",
    "FolderTooLarge": "testing._workdir",
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
    "McpConfigError",
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
