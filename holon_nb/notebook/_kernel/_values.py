"""Bounded, hostile-proof summaries of the kernel's variables (issue 28: ListVariables, InspectVariable).

A user's object may do anything in ``__repr__``: raise, loop for ever, return 100 MB, or refer to itself.
Every call into it here runs under :func:`bounded_call`: in a daemon thread with a deadline (on expiry the
thread is sent a ``KeyboardInterrupt`` and abandoned; the caller gets a note, the kernel never hangs), and
every text is cut to its budget. Known types are summarised without calling into them at all: builtins by
``len``/``sys.getsizeof``; a pandas DataFrame by shape, dtypes and ``head()``; a numpy array by shape, dtype
and ``nbytes`` (pandas and numpy are only looked up in ``sys.modules``, never imported here).
"""

from __future__ import annotations

import builtins
import ctypes
import reprlib
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["bounded_call", "safe_repr", "summarise", "describe", "interrupt_thread", "type_name", "REPR_TIMEOUT_S"]

#: Seconds one ``__repr__`` (or other call into a user object) may take.
REPR_TIMEOUT_S = 1.0
#: Characters of a variable's short repr in ListVariables.
SHORT_CHARS = 120

T = TypeVar("T")

_BUILTIN_SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range)
_SCALARS = (int, float, complex, bool, type(None))


def interrupt_thread(thread: threading.Thread, exc: type[BaseException] = KeyboardInterrupt) -> bool:
    """Raise ``exc`` asynchronously in ``thread`` (at its next bytecode); True when it was delivered."""
    ident = thread.ident
    if ident is None or not thread.is_alive():
        return False
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc))
    return bool(done == 1)


def bounded_call(fn: Callable[[], T], timeout_s: float = REPR_TIMEOUT_S) -> tuple[T | None, str | None]:
    """Run ``fn`` in a daemon thread for at most ``timeout_s`` seconds.

    Returns:
        ``(value, None)``, or ``(None, problem)`` where problem says it raised (``"ValueError: …"``) or
        timed out (``"timed out after 1 s"``; the thread is interrupted and abandoned).
    """
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - a hostile object may raise anything, SystemExit included
            box["error"] = f"{type(exc).__name__}: {_first_line(exc)}"

    thread = threading.Thread(target=work, name="holon-nb-repr", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        interrupt_thread(thread)
        return None, f"timed out after {timeout_s:g} s"
    if "error" in box:
        return None, str(box["error"])
    return box.get("value"), None


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - even str() of the exception may be hostile
        return "(unprintable)"
    return text.splitlines()[0][:200] if text else ""


def _cut(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[: max(0, limit - 30)] + f"… [{len(text) - limit + 30} more chars]", True


class _Repr(reprlib.Repr):
    """reprlib with room for a useful look: a few levels deep, a few items per container."""

    def __init__(self, chars: int):
        super().__init__()
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdeque = 12
        self.maxdict = 12
        self.maxstring = min(chars, 2000)
        self.maxother = min(chars, 2000)
        self.maxlong = 60

    def repr_instance(self, x: Any, level: int) -> str:
        """An object of another type: its own repr, cut; a failing one named (reprlib would print an address)."""
        try:
            text = builtins.repr(x)
        except BaseException as exc:  # noqa: BLE001 - a hostile __repr__ may raise anything
            return f"<{type(x).__name__} object: repr {type(exc).__name__}: {_first_line(exc)}>"
        if not isinstance(text, str):
            return f"<{type(x).__name__} object: repr returned {type(text).__name__}>"
        return text if len(text) <= self.maxother else text[: self.maxother - 3] + "..."


def safe_repr(value: Any, limit: int) -> tuple[str, bool]:
    """``(text, truncated)``: a repr of ``value`` of at most ``limit`` characters, never raising or hanging
    (a cycle shows as ``[...]``; a failing or slow ``__repr__`` as ``<repr failed: …>``)."""
    text, problem = bounded_call(lambda: _Repr(limit).repr(value))
    if problem is not None:
        return f"<{type(value).__name__} object: repr {problem}>", False
    return _cut(str(text), limit)


def _known(value: Any, module: str, name: str) -> bool:
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return isinstance(cls, type) and isinstance(value, cls)


def summarise(name: str, value: Any, chars: int = SHORT_CHARS) -> dict[str, Any]:
    """One ListVariables entry: ``{name, type, repr, shape?, len?, dtype?, size_bytes?}``; bounded cost."""
    kind = type(value)
    out: dict[str, Any] = {"name": name, "type": type_name(kind)}
    if _known(value, "pandas", "DataFrame"):
        shape, problem = bounded_call(lambda: [int(n) for n in value.shape])
        out["shape"] = shape if problem is None else None
        size, _ = bounded_call(lambda: int(value.memory_usage(index=True, deep=False).sum()))
        if size is not None:
            out["size_bytes"] = size
        cols, _ = bounded_call(lambda: ", ".join(f"{c}: {t}" for c, t in list(value.dtypes.items())[:8]))
        out["repr"], _ = _cut(f"DataFrame {shape} columns {{{cols or ''}}}", chars)
        return out
    if _known(value, "pandas", "Series"):
        out["len"], _ = bounded_call(lambda: int(len(value)))
        out["dtype"], _ = bounded_call(lambda: str(value.dtype))
        size, _ = bounded_call(lambda: int(value.memory_usage(index=True, deep=False)))
        if size is not None:
            out["size_bytes"] = size
        out["repr"], _ = _cut(f"Series name={value.name!r} len={out['len']} dtype={out['dtype']}", chars)
        return out
    if _known(value, "numpy", "ndarray"):
        out["shape"] = [int(n) for n in value.shape]
        out["dtype"] = str(value.dtype)
        out["size_bytes"] = int(value.nbytes)
        out["repr"], _ = safe_repr(value, chars) if value.size <= 50 else (f"array shape={out['shape']}", False)
        return out
    if isinstance(value, _BUILTIN_SIZED) and kind in _BUILTIN_SIZED:  # exact builtins: len cannot be hostile
        out["len"] = len(value)
    if kind in _BUILTIN_SIZED or kind in _SCALARS:
        out["size_bytes"] = sys.getsizeof(value)
    out["repr"], _ = safe_repr(value, chars)
    return out


def type_name(kind: type) -> str:
    """``module.Qualname`` of a type (``builtins`` and ``__main__`` left out)."""
    module = getattr(kind, "__module__", "") or ""
    qual = getattr(kind, "__qualname__", kind.__name__)
    return qual if module in ("builtins", "__main__") else f"{module}.{qual}"


def describe(value: Any, max_chars: int) -> tuple[str, bool]:
    """InspectVariable's text of ``value``: a DataFrame's shape, dtypes, head and null counts; a Series'
    head; an array's shape, dtype and a thresholded print; else a bounded repr. ``(text, truncated)``."""
    if _known(value, "pandas", "DataFrame"):

        def frame() -> str:
            lines = [f"shape: {tuple(value.shape)}", "dtypes:"]
            lines += [f"  {c}: {t}" for c, t in list(value.dtypes.items())[:50]]
            nulls = value.isna().sum()
            lines.append("nulls: " + ", ".join(f"{c}={int(n)}" for c, n in list(nulls.items())[:50]))
            lines += ["head:", value.head(5).to_string(max_cols=20, max_colwidth=40)]
            return "\n".join(lines)

        text, problem = bounded_call(frame, 5 * REPR_TIMEOUT_S)
        return _cut(str(text) if problem is None else f"<DataFrame: {problem}>", max_chars)
    if _known(value, "pandas", "Series"):
        text, problem = bounded_call(
            lambda: f"len: {len(value)}\ndtype: {value.dtype}\nhead:\n{value.head(10).to_string()}",
            5 * REPR_TIMEOUT_S,
        )
        return _cut(str(text) if problem is None else f"<Series: {problem}>", max_chars)
    if _known(value, "numpy", "ndarray"):
        numpy = sys.modules["numpy"]

        def array() -> str:
            body = numpy.array2string(value, threshold=100, edgeitems=3, max_line_width=100)
            return f"shape: {value.shape}\ndtype: {value.dtype}\nnbytes: {value.nbytes}\n{body}"

        text, problem = bounded_call(array, 5 * REPR_TIMEOUT_S)
        return _cut(str(text) if problem is None else f"<ndarray: {problem}>", max_chars)
    return safe_repr(value, max_chars)
