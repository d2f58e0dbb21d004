"""Recorded outcomes of failed attempts: classified errors to JSON and back (turn-loop spec §4.3 "Replay").

A failed attempt is an interaction whose outcome is the error's JSON form
(:meth:`~holon_nb.providers.base.ProviderTransportError.to_dict` plus ``diagnostics`` (redacted),
``class`` (``module:qualname``) and ``attrs`` (extra JSON attributes such as
``ToolSchemaRejected.provider_message``)). Replay raises the same class again, so the lineage
wrapper classifies it and rebuilds the same attempt timeline. An untyped exception (``untyped:
true``) is recorded as ``unknown``/``fail_fast`` (turn-loop spec §2.1) and replayed as its own class when that is a
holon_nb (or builtin) exception constructible from its message, else as a ``ProviderTransportError``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..base import ProviderTransportError
from ._normalize import redact_json

__all__ = ["error_outcome", "rebuild_error"]

#: Modules whose exception classes a replay may rebuild by name (never arbitrary code named by a file).
_REBUILDABLE_PREFIX = "holon_nb."


def error_outcome(exc: Exception) -> dict[str, Any]:
    """The outcome record of a failed attempt (module docstring)."""
    cls = f"{type(exc).__module__}:{type(exc).__qualname__}"
    if isinstance(exc, ProviderTransportError):
        out = exc.to_dict()
        out["diagnostics"] = redact_json(exc.diagnostics or {})
        base = set(ProviderTransportError("unknown", "").__dict__)
        out["attrs"] = {k: v for k, v in exc.__dict__.items() if k not in base and _jsonable(v)}
    else:  # untyped: the lineage classifies it unknown/fail_fast (turn-loop spec §2.1)
        out = {
            "type": "error",
            "kind": "unknown",
            "disposition": "fail_fast",
            "status": None,
            "code": None,
            "message": str(exc),
            "tool_name": None,
            "token_usage": None,
            "diagnostics": {},
            "untyped": True,
        }
    out["class"] = cls
    return out


def _jsonable(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, (str, int, float, bool))
        or (
            isinstance(value, (list, dict))
            and all(_jsonable(v) for v in (value.values() if isinstance(value, dict) else value))
        )
    )


def _load_class(name: str | None) -> type[Exception] | None:
    if not name or ":" not in name:
        return None
    module, _, qual = name.partition(":")
    if not (module == "builtins" or module.startswith(_REBUILDABLE_PREFIX)):
        return None
    try:
        obj: Any = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj if isinstance(obj, type) and issubclass(obj, Exception) else None


def rebuild_error(outcome: Mapping[str, Any]) -> Exception:
    """The exception a recorded error outcome stands for (its own class when that can be rebuilt)."""
    base = ProviderTransportError.from_dict(dict(outcome))
    base.diagnostics = dict(outcome.get("diagnostics") or {})
    cls = _load_class(outcome.get("class"))
    if outcome.get("untyped"):
        if cls is not None and not issubclass(cls, ProviderTransportError):
            try:
                return cls(outcome.get("message", ""))
            except Exception:  # noqa: BLE001 - a class we cannot rebuild replays as a classified error
                return base
        return base
    if cls is None or cls is ProviderTransportError or not issubclass(cls, ProviderTransportError):
        return base
    err = cls.__new__(cls)
    Exception.__init__(err, base.message)
    err.__dict__.update(base.__dict__)
    err.__dict__.update(outcome.get("attrs") or {})
    return err
