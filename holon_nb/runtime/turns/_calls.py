"""The records of one tool call in a turn, and what a result means for the loop.

Turn-loop spec §1.5 (every call answered once, batch stop), turn-loop spec §1.7 rule 4 (the loop reads only the
envelope), turn-loop spec §1.8.3 (text-only obligations); agents spec §2, §5.1 rule 7, §5.16 rule 1.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...providers.base import ToolResultBlock, ToolUseBlock
from ...tools._errors import HolonNBError
from ..work._waiting import StagedWait

__all__ = [
    "CallEffect",
    "Obligation",
    "ToolCallRecord",
    "ToolOutcome",
    "TurnCall",
    "TurnCancelled",
    "call_effect",
    "find_cause",
    "outcome_of",
    "report_candidate",
    "unique_call_ids",
]


@dataclass
class ToolOutcome:
    """One executed (or refused, or synthetic) call as the loop needs it.

    Unpacks as ``envelope, receipt, is_error`` (the cassette seam's triple).

    Attributes:
        envelope: The canonical envelope (status ``success``, ``error`` or ``deferred``).
        receipt: Exactly the text sent to the model (rendered, scrubbed, projected).
        is_error: True for an error envelope.
        execution_id: The tool execution id, or None when nothing was dispatched (synthetic).
        duration_ms: Wall time of the call.
        display_envelope: The scrubbed envelope (D12), for events and the notebook.
    """

    envelope: dict[str, Any]
    receipt: str
    is_error: bool
    execution_id: str | None = None
    duration_ms: int = 0
    display_envelope: dict[str, Any] | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.envelope, self.receipt, self.is_error))


@dataclass
class ToolCallRecord:
    """One tool call of a round, with its result (what ``TurnResult.rounds`` lists).

    Attributes:
        tool_use_id: The provider's call id.
        name: The tool name as called.
        input: The normalized input (``{"_raw": …}`` for unparseable arguments).
        envelope: The canonical envelope the call returned (before any later settlement).
        receipt: The text the model got.
        is_error: Whether the result block was an error.
        execution_id: The tool execution id (None for a synthetic, not-executed result).
        duration_ms: Wall time.
        status: The execution's status now: ``success``, ``error``, ``deferred``, ``interrupted``
            or ``not_executed``.
        settled_envelope: For a deferred call, the envelope after its commit (or the error
            that interrupted it); None otherwise.
    """

    tool_use_id: str
    name: str
    input: Any
    envelope: dict[str, Any]
    receipt: str
    is_error: bool
    execution_id: str | None
    duration_ms: int
    status: str
    display_envelope: dict[str, Any] = field(default_factory=dict)
    settled_envelope: dict[str, Any] | None = None

    @classmethod
    def not_executed(cls, block: ToolUseBlock, outcome: ToolOutcome) -> ToolCallRecord:
        """The record of a call the loop answered without running it (a synthetic error ``outcome``)."""
        return cls(
            block.id,
            block.name,
            block.input,
            outcome.envelope,
            outcome.receipt,
            True,
            None,
            0,
            "not_executed",
            outcome.display_envelope or {},
        )

    def block(self) -> ToolResultBlock:
        """The result block sent back to the provider."""
        return ToolResultBlock(
            self.tool_use_id,
            self.receipt,
            is_error=self.is_error,
            error=self.envelope.get("error") if self.is_error else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form (events, notebook)."""
        return {
            "tool_use_id": self.tool_use_id,
            "name": self.name,
            "input": self.input,
            "envelope": self.display_envelope or self.envelope,
            "receipt": self.receipt,
            "is_error": self.is_error,
            "execution_id": self.execution_id,
            "duration_ms": self.duration_ms,
            "status": self.status,
            "settled_envelope": self.settled_envelope,
        }


@dataclass
class Obligation:
    """A pending text-only round (turn-loop spec §1.8.3).

    Attributes:
        kind: ``final_brief`` (WaitFor ``delivery=final``) or ``completion`` (CompleteWorkItem).
        tool_use_id: The deferred call.
        execution_id: Its tool execution id.
        staged: The staged wait (``final_brief``), or None.
        work_item_id: The work item to complete (``completion``), or None.
        seen_revision: That item's revision when the call was validated.
        request_id: ``wait_request_id`` or ``completion_request_id``.
        corrective_sent: Whether the one corrective prompt was already sent.
    """

    kind: str
    tool_use_id: str = ""
    execution_id: str = ""
    staged: StagedWait | None = None
    work_item_id: str | None = None
    seen_revision: int | None = None
    request_id: str = ""
    corrective_sent: bool = False


class TurnCancelled(HolonNBError):
    """Raised by the tool executor when the turn was cancelled before the call could run (while it waited for
    the user's approval, or right after); the loop answers the call ``turn_cancelled`` (not executed).

    Attributes:
        reason: The cancel reason.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class CallEffect:
    """What a result means for the loop (read from the envelope alone, turn-loop spec §1.7 rule 4).

    Attributes:
        batch_stop: Later calls of the response are not executed.
        ends_turn: The call settled the turn (silent wait, committed completion, terminal transition,
            ``task_result_queued``).
        obligation: ``final_brief`` or ``completion`` for a deferral, else None.
        yielding: A legacy ``Sleep`` result.
        final_text, reason: How the turn ends when the call ended it but did not settle it itself (a
            replayed result: the tool did not run, so its transaction wrote no terminal record); None
            means "the round's text, ``terminal_transition``".
    """

    batch_stop: bool = False
    ends_turn: bool = False
    obligation: str | None = None
    yielding: bool = False
    final_text: str | None = None
    reason: str | None = None


def call_effect(env: dict[str, Any]) -> CallEffect:
    """Classify an envelope (turn-loop spec §1.5 batch stop; agents spec §2, §5.1 rule 7, §5.16)."""
    name, status = env.get("tool_name"), env.get("status")
    result = env.get("result") or {}
    if status == "deferred":
        kind = "final_brief" if result.get("disposition") == "awaiting_final_brief" else "completion"
        return CallEffect(batch_stop=True, obligation=kind)
    if status != "success":
        return CallEffect()
    if name == "Sleep":
        return CallEffect(yielding=True)
    if name == "WaitFor":
        if result.get("disposition") == "task_result_already_consumed":
            return CallEffect()
        if result.get("delivery") == "silent" and "disposition" not in result:  # a registered silent wait
            return CallEffect(batch_stop=True, ends_turn=True, final_text="", reason="wait_for_silent")
        return CallEffect(batch_stop=True, ends_turn=True)
    if name == "CompleteWorkItem" and result.get("completed_transition"):
        report = ((result.get("work_item") or {}).get("completion_report") or {}).get("text")
        return CallEffect(batch_stop=True, ends_turn=True, final_text=report, reason="work_item_completed")
    if result.get("terminal_transition") is True:
        return CallEffect(batch_stop=True, ends_turn=True)
    return CallEffect()


def unique_call_ids(blocks: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[tuple[str, str]]]:
    """Give every tool call of one response its own id, so each is executed and answered once (turn-loop spec §1.5).

    Some OpenAI-compatible servers repeat an id within one response (``call_0`` twice). Executing both
    under one id would answer that id twice, which providers reject on the next request. A repeated id
    becomes ``<id>_<n>`` (n = 2, 3, …, skipping ids already present) in the round's blocks, so the
    assistant message sent back and the results agree. Renaming is deterministic: a replayed cassette
    renames the same way.

    Args:
        blocks: The response's blocks (text, thinking, tool calls) in order.

    Returns:
        ``(blocks, renamed)``: the blocks (the same tuple when nothing repeats) and ``(old, new)`` pairs.
    """
    ids = [b.id for b in blocks if isinstance(b, ToolUseBlock)]
    if len(set(ids)) == len(ids):
        return blocks, []
    taken, seen, renamed, out = set(ids), set(), [], []
    for block in blocks:
        if isinstance(block, ToolUseBlock):
            if block.id in seen:
                n = 2
                while f"{block.id}_{n}" in taken:
                    n += 1
                new = f"{block.id}_{n}"
                taken.add(new)
                renamed.append((block.id, new))
                block = dataclasses.replace(block, id=new)
            seen.add(block.id)
        out.append(block)
    return tuple(out), renamed


def report_candidate(blocks: tuple[Any, ...], call_index: int) -> str:
    """CompleteWorkItem rule 1 (agents spec §5.16): the text blocks after the previous tool_use block
    and before the call at ``blocks[call_index]``, trimmed, blanks dropped, joined by a blank line."""
    texts: list[str] = []
    for block in blocks[:call_index]:
        if isinstance(block, ToolUseBlock):
            texts = []
        elif getattr(block, "type", None) == "text" and block.text.strip():
            texts.append(block.text.strip())
    return "\n\n".join(texts)


@dataclass(frozen=True)
class TurnCall:
    """A tool call as the tool runner gets it (``id``/``name``/``input`` like a ``ToolUseBlock``).

    Attributes:
        id: The provider's call id (also ``tool_use_id``).
        name: The tool name.
        input: The normalized input.
        round: The 1-based round.
        stop_reason: The response's stop reason.
        report: For CompleteWorkItem, the same-round preceding text (agents spec §5.16 rule 1); else None.
        kind: ``function`` or ``custom``.
    """

    id: str
    name: str
    input: Any
    round: int
    stop_reason: str | None = None
    report: str | None = None
    kind: str = "function"

    @property
    def tool_use_id(self) -> str:
        """Alias of ``id``."""
        return self.id

    @property
    def block(self) -> ToolUseBlock:
        """The provider block this call came from."""
        return ToolUseBlock(self.id, self.name, self.input, self.kind)


def outcome_of(value: Any) -> ToolOutcome:
    """A runner's answer as a :class:`ToolOutcome` (a cassette returns the bare triple)."""
    if isinstance(value, ToolOutcome):
        return value
    envelope, receipt, is_error = value
    return ToolOutcome(dict(envelope), str(receipt), bool(is_error))


def find_cause(exc: BaseException, cls: type[BaseException]) -> Any:
    """``exc`` or the first error of class ``cls`` in its cause chain (``.cause`` of a lineage failure)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, cls):
            return cur
        seen.add(id(cur))
        cur = getattr(cur, "cause", None) or cur.__cause__ or cur.__context__
    return None
