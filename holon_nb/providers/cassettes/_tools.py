"""The cassette tool layer: record each tool call's envelope and receipt; on replay return them without
running the tool (turn-loop spec §4.3 "Replay").

The turn loop executes a tool call through one function ``run(call, **kwargs)`` (sync or async) whose
result unpacks as ``envelope, receipt, is_error`` (a tuple, or the loop's ``ToolOutcome``).
:class:`ToolTape` wraps it::

    execute = cassette.wrap_tool_executor(run)
    envelope, receipt, is_error = await execute(call, round=1, stop_reason="tool_use")

Recording and ``verify`` return ``run``'s own result; replay returns a :class:`ReplayedTool` (same
attributes as the loop's ``ToolOutcome``) without calling ``run``, except for the tools of
:data:`LIVE_ON_REPLAY` (the opt-in Notebook family, issue 28): they act on the kernel the notebook runs in
(a variable an agent's code defines, a cell it inserts), so a replay runs them live, as ``verify`` does, and
their receipts must equal the recorded ones byte for byte (``lenient`` notes a difference as a drift). Keyword arguments go to ``run``
untouched (an int ``round``, as keyword or as the call's attribute, also numbers the tool record).

``call`` is a :class:`~holon_nb.providers.base.ToolUseBlock` or anything with ``id`` (or
``tool_use_id``), ``name`` and ``input`` attributes or keys. A call matches the next recorded tool
record when ``(tool_use_id, name, input_sha256)`` are equal, where ``input_sha256`` is the hex SHA-256
of the canonical JSON of the D6-scrubbed input (so a replay whose input came from a scrubbed recording
still matches).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...render._scrubbing import Scrubber
from ._canonical import bounded_diff, canonical_json, sha256_hex
from ._errors import RERECORD_HINT, CassetteDrift, CassetteExhausted

__all__ = ["LIVE_ON_REPLAY", "ReplayedTool", "ToolTape", "call_fields", "input_sha256"]

#: Tools a replay runs live and checks against the recording (the Notebook family of issue 28: their results
#: depend on, and change, the kernel's state; ``tests/unit/cassettes`` checks the list against the registry).
LIVE_ON_REPLAY = frozenset(
    {"ListVariables", "InspectVariable", "KernelHistory", "RunCode", "ReadNotebook", "EditNotebook", "ExecuteCell"}
)

ToolOutcome = tuple[dict[str, Any], str, bool]
ToolRunner = Callable[[Any], Awaitable[ToolOutcome] | ToolOutcome]


@dataclass
class ReplayedTool:
    """A tool outcome answered from the cassette; unpacks as ``envelope, receipt, is_error`` and carries the
    attributes of the turn loop's ``ToolOutcome`` (recorded values).

    Attributes:
        envelope: The recorded envelope (D6-scrubbed when it was written).
        receipt: The recorded receipt, byte for byte.
        is_error: The recorded flag.
        execution_id: The recorded tool execution id (None when none was recorded).
        duration_ms: The recorded duration.
        display_envelope: Same as ``envelope`` (already scrubbed).
        drifted: True when ``lenient`` mode returned it for a call that did not match.
    """

    envelope: dict[str, Any]
    receipt: str
    is_error: bool
    execution_id: str | None = None
    duration_ms: int = 0
    display_envelope: dict[str, Any] | None = None
    drifted: bool = False
    replayed: bool = True

    def __iter__(self) -> Iterator[Any]:
        return iter((self.envelope, self.receipt, self.is_error))


def call_fields(call: Any) -> tuple[str, str, Any]:
    """``(tool_use_id, name, input)`` of a tool call given as a block, an object or a dict.

    Raises:
        TypeError: when the call has no id or name.
    """

    def get(*names: str) -> Any:
        for n in names:
            if isinstance(call, dict) and n in call:
                return call[n]
            if not isinstance(call, dict) and hasattr(call, n):
                return getattr(call, n)
        return None

    tool_use_id, name = get("tool_use_id", "id"), get("name", "tool_name")
    if not isinstance(tool_use_id, str) or not isinstance(name, str):
        raise TypeError(f"a tool call needs a str id and name, got {type(call).__name__}")
    return tool_use_id, name, get("input", "arguments", "args")


def input_sha256(value: Any, scrubber: Scrubber | None = None) -> str:
    """Hex SHA-256 of the canonical JSON of a tool input after D6 scrubbing (a string input is hashed as a JSON
    string)."""
    if scrubber is not None:
        value = scrubber.value(value)
    try:
        text = canonical_json(value)
    except (TypeError, ValueError):
        text = canonical_json(repr(value))
    return sha256_hex(text)


class ToolTape:
    """Tool records of one cassette: appends while recording, consumes in order while replaying.

    Args:
        owner: The :class:`~holon_nb.providers.cassettes._cassette.CassetteProvider` (mode, records, writer, clock,
            round, drift log).
    """

    def __init__(self, owner: Any):
        self._owner = owner
        self.cursor = 0

    @property
    def left(self) -> int:
        """Recorded tool records not consumed yet (0 while recording)."""
        recorded = self._owner.recorded_tools
        return max(0, len(recorded) - self.cursor)

    async def execute(self, call: Any, run: ToolRunner | None, **kwargs: Any) -> Any:
        """Run (record, verify) or replay one call (see module docstring); ``kwargs`` go to ``run``.

        Raises:
            CassetteDrift: replay/verify, when the call differs from the next recorded one (``kind="tool"``);
                verify, when the live receipt differs byte-wise (``kind="receipt"``).
            CassetteExhausted: replay, when the cassette has no tool record left.
            ValueError: record/verify without ``run``.
        """
        owner = self._owner
        tool_use_id, name, value = call_fields(call)
        scrubber = owner.normalizer.make_scrubber()
        digest = input_sha256(value, scrubber)
        if owner.mode == "record":
            return await self._record(tool_use_id, name, digest, call, run, kwargs)
        rec = self._next(tool_use_id, name)
        drifted = False
        if (rec.get("tool_use_id"), rec.get("name"), rec.get("input_sha256")) != (tool_use_id, name, digest):
            drift = self._call_drift(rec, tool_use_id, name, digest)
            if owner.mode != "lenient":
                raise owner.note_failure(drift)
            owner.drifts.append(drift)
            owner.drifted_tool_use_ids.add(tool_use_id)
            drifted = True
        if owner.mode == "verify" or (name in LIVE_ON_REPLAY and run is not None):
            return await self._verify(rec, call, run, kwargs)
        duration = int((rec.get("timing") or {}).get("duration_ms") or 0)
        owner.clock.advance(duration / 1000)
        norm = owner.normalizer
        envelope = dict(norm.roots_in(rec.get("envelope") or {}))
        return ReplayedTool(
            envelope,
            norm.roots_in(str(rec.get("receipt", ""))),
            bool(rec.get("is_error")),
            rec.get("execution_id"),
            duration,
            envelope,
            drifted,
        )

    async def _record(
        self, tool_use_id: str, name: str, digest: str, call: Any, run: ToolRunner | None, kwargs: dict[str, Any]
    ) -> Any:
        if run is None:
            raise ValueError("recording a tool call needs the loop's executor")
        t0 = time.monotonic()
        out, (envelope, receipt, is_error) = await _run(run, call, kwargs)
        duration = getattr(out, "duration_ms", None)
        if not isinstance(duration, int):
            duration = int((time.monotonic() - t0) * 1000)
        # the loop's round when it passes one, else the cassette's count of answered provider rounds
        rnd = kwargs.get("round", getattr(call, "round", None))
        if not isinstance(rnd, int) or isinstance(rnd, bool):
            rnd = self._owner.round - 1
        self._owner.write(
            {
                "kind": "tool",
                "seq": self._owner.next_seq(),
                "round": rnd,
                "tool_use_id": tool_use_id,
                "name": name,
                "input_sha256": digest,
                "envelope": self._owner.normalizer.roots_out(envelope),
                "receipt": self._owner.normalizer.roots_out(receipt),
                "is_error": bool(is_error),
                "execution_id": getattr(out, "execution_id", None),
                "timing": {"duration_ms": duration},
            }
        )
        return out

    def _next(self, tool_use_id: str, name: str) -> dict[str, Any]:
        owner = self._owner
        recorded = owner.recorded_tools
        if self.cursor >= len(recorded):
            raise owner.note_failure(
                CassetteExhausted(
                    f"cassette {owner.path}: tool call {name} ({tool_use_id}) has no recorded result "
                    f"({len(recorded)} tool call(s) recorded); {RERECORD_HINT}",
                    seq=self.cursor,
                    recorded=len(recorded),
                    layer="tool",
                    path=str(owner.path),
                )
            )
        rec = recorded[self.cursor]
        self.cursor += 1
        return rec

    def _call_drift(self, rec: dict[str, Any], tool_use_id: str, name: str, digest: str) -> CassetteDrift:
        owner = self._owner
        recorded = {
            "input_sha256": rec.get("input_sha256"),
            "name": rec.get("name"),
            "tool_use_id": rec.get("tool_use_id"),
        }
        live = {"input_sha256": digest, "name": name, "tool_use_id": tool_use_id}
        field = next(k for k in ("tool_use_id", "name", "input_sha256") if recorded[k] != live[k])
        diff = bounded_diff(recorded, live, "tool")
        return CassetteDrift(
            f"cassette {owner.path}: tool call drift at seq {rec.get('seq')} (round {rec.get('round')}): "
            f"{field} differs (recorded {recorded[field]!r}, live {live[field]!r}); {RERECORD_HINT}\n{diff}",
            kind="tool",
            component="tool",
            seq=rec.get("seq"),
            round=rec.get("round"),
            pointer="/" + field,
            diff=diff,
            path=str(owner.path),
        )

    async def _verify(self, rec: dict[str, Any], call: Any, run: ToolRunner | None, kwargs: dict[str, Any]) -> Any:
        owner = self._owner
        if run is None:
            raise ValueError("verify mode runs tools live and needs the loop's executor")
        with owner.network_paused():
            out, (_envelope, receipt, _is_error) = await _run(run, call, kwargs)
        written = owner.normalizer.roots_out(owner.normalizer.scrub(receipt))
        if written != rec.get("receipt"):
            recorded_lines = str(rec.get("receipt", "")).splitlines()
            diff = bounded_diff(recorded_lines, written.splitlines(), "receipt")
            drift = CassetteDrift(
                f"cassette {owner.path}: receipt of {rec.get('name')} ({rec.get('tool_use_id')}) at seq "
                f"{rec.get('seq')} differs from the recording (verify compares bytes)\n{diff}",
                kind="receipt",
                component="receipt",
                seq=rec.get("seq"),
                round=rec.get("round"),
                diff=diff,
                path=str(owner.path),
            )
            if owner.mode != "lenient":
                raise owner.note_failure(drift)
            owner.drifts.append(drift)  # a live-on-replay tool in lenient mode: noted, its live result kept
        return out


async def _run(run: ToolRunner, call: Any, kwargs: dict[str, Any]) -> tuple[Any, ToolOutcome]:
    """Call the loop's executor; returns its own result (kept for the loop) and the triple."""
    out = run(call, **kwargs)
    if inspect.isawaitable(out):
        out = await out
    envelope, receipt, is_error = out
    return out, (envelope, receipt, bool(is_error))
