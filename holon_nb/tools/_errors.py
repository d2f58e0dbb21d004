"""Errors of holon_nb.

Two worlds (style.md §2.6): inside ``dispatch()`` nothing raises — failures
become :class:`~holon_nb.tools._envelope.ToolError` envelopes. Outside it,
programmer-facing errors come from one tree rooted here; :mod:`holon_nb.errors` exports all of it
and draws it whole. The classes defined here::

    HolonNBError                 base of everything raised to Python callers
    ├── RuntimeClosed            the runtime was used after close()
    ├── RuntimeStartupError      the runtime thread or store could not start
    ├── RuntimeDied              the runtime's loop thread ended unexpectedly (names the cause)
    ├── ToolCallError            Runtime.call(..., raise_on_error=True) got an error envelope
    │   └── CommandFailed        ``%exec --raise``: the command ran and failed (non-zero exit, signal)
    └── AgentTurnFailed          a ``%%agent --wait`` turn failed (provider error, cassette drift, exception)

:class:`ToolFailure` is the one exception handlers raise to produce a typed
error envelope; ``dispatch()`` catches it and never lets it escape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ._envelope import ToolError

__all__ = [
    "AgentTurnFailed",
    "CommandFailed",
    "HolonNBError",
    "NotLoaded",
    "RuntimeClosed",
    "RuntimeDied",
    "RuntimeStartupError",
    "ToolCallError",
    "ToolFailure",
    "WrongThread",
]


class HolonNBError(Exception):
    """Base class of every programmer-facing holon_nb error."""


class RuntimeClosed(HolonNBError):
    """Raised when a closed runtime is used (after ``Runtime.close()``)."""


class NotLoaded(HolonNBError, RuntimeError):
    """Raised by ``holon_nb.get_runtime()``, ``holon_nb.agent_turns()`` and ``wait_and_report()`` before
    ``%load_ext holon_nb`` (or after ``%unload_ext``). Also a ``RuntimeError``, as it was before."""


class WrongThread(HolonNBError, RuntimeError):
    """Raised when a blocking runtime method (``Runtime.call``, ``close``) is called on the runtime's own
    loop thread (a subscriber callback, a tool handler), where it would deadlock: use the async API there.
    Also a ``RuntimeError``, as it was before."""


class RuntimeStartupError(HolonNBError):
    """Raised by ``Runtime()`` when its loop thread or store cannot start."""


class RuntimeDied(HolonNBError):
    """Raised by every call after the runtime's loop thread ended without ``close()``.

    Background work is supervised (a failure is logged and retried, never fatal), so this
    means something escaped that supervision. ``%reload_ext holon_nb`` or a new ``Runtime``
    on the same home recovers (its tasks are reconciled as after a restart, D7).

    Attributes:
        cause: The exception that ended the loop (None when it ended without one).
    """

    def __init__(self, cause: BaseException | None):
        what = f"{type(cause).__name__}: {cause}" if cause is not None else "the loop thread ended"
        super().__init__(
            f"the holon runtime's loop thread died ({what}); run %reload_ext holon_nb "
            "(or create a new Runtime) to recover"
        )
        self.cause = cause


class ToolCallError(HolonNBError):
    """Raised when a caller asked for an error envelope to raise.

    Attributes:
        envelope: the canonical envelope (plain dict) of the failed call.
    """

    def __init__(self, envelope: dict[str, Any]):
        err = envelope.get("error") or {}
        super().__init__(f"{envelope.get('tool_name')}: {err.get('kind')}: {err.get('message')}")
        self.envelope = envelope


class CommandFailed(ToolCallError):
    """Raised by ``%exec --raise`` / ``%%exec --raise`` when the call succeeded but a command failed.

    A command that exits non-zero, or is killed by a signal, is a *successful* ExecCommand call (the
    contract's ``status: success``, its ``exit_status`` saying how it ended): the model reads it and
    goes on. A notebook test asks ``--raise`` to stop there instead, as ``subprocess.run(check=True)``.

    Attributes:
        envelope: the canonical (scrubbed) envelope of the call.
        failures: ``[(command, how it ended)]``, e.g. ``[("make test", "exit status 2")]``.
    """

    def __init__(self, envelope: dict[str, Any], failures: list[tuple[str, str]]):
        HolonNBError.__init__(
            self, f"{envelope.get('tool_name')}: " + "; ".join(f"{cmd!r} failed ({how})" for cmd, how in failures)
        )
        self.envelope = envelope
        self.failures = failures


class AgentTurnFailed(HolonNBError):
    """Raised by ``%%agent --wait`` (after the live view shows it) when the turn failed: a provider error,
    cassette drift or an exception — so a headless notebook run fails, as a regression test should.
    A turn the model ended, or one stopped at ``--max-rounds``, is not a failure.

    IPython shows it as one line (``_render_traceback_``): the view above already shows the cause, and
    the frames of the magic that raised it say nothing more."""

    def _render_traceback_(self) -> list[str]:
        """The traceback IPython shows: the one line ``AgentTurnFailed: <message>``."""
        return [f"{type(self).__name__}: {self}"]


class ToolFailure(HolonNBError):
    """Raised inside a handler to return a typed :class:`ToolError` envelope.

    Never escapes ``dispatch()``.
    """

    def __init__(self, error: ToolError):
        super().__init__(error.message)
        self.error = error
