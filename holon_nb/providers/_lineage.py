"""The lineage wrapper: retries, backoff, the attempt timeline and the pending fallback (turn-loop spec §2.3).

:class:`LineageProvider` only ever calls the **head** candidate of its lineage: up to 3 attempts, a retry only after a
``retryable`` failure, sleeping ``200 ms × attempt`` in between (through an injectable ``sleep``, so cassette replay
advances a virtual clock). It never calls the next candidate in the same turn: on final failure it raises
:class:`LineageFailed` naming ``pending_fallback_model_ref`` (candidate #2) and marks the last attempt
``advanced_to_fallback``; the turn loop settles ``deferred_to_fallback`` / ``provider_failed_needs_recovery`` and
the next turn starts at that fallback (a new ``LineageProvider`` whose head is it, ``requested_model_ref`` the
original head).

Each attempt's request carries the model hint ``Runtime: active_model=<compact ref>`` (plus ``requested_model=…``
when the active candidate differs), appended to the system prompt after a blank line and, when structured system
blocks exist, as a ``turn_scoped`` block with ``cache_breakpoint=true`` (turn-loop spec §1.4). The turn loop must not add it again.

Example::

    lineage = LineageProvider([LineageCandidate("openai@default/gpt-5.4", "openai", provider)])
    response, timeline = await lineage.complete_turn_with_diagnostics(request)
    timeline.to_dict()["attempts"][0]["outcome"]        # "succeeded"
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import anyio

from ._errors import format_failure
from ._refs import parse_model_ref
from .base import ContextBlock, PromptFrame, Provider, ProviderTransportError, TokenUsage, TurnRequest, TurnResponse

__all__ = [
    "LineageProvider",
    "LineageCandidate",
    "LineageFailed",
    "ProviderAttemptRecord",
    "ProviderAttemptTimeline",
    "MAX_ATTEMPTS",
    "BASE_BACKOFF_MS",
    "model_hint",
    "with_model_hint",
]

#: Attempts per candidate (2 retries, turn-loop spec §1.9).
MAX_ATTEMPTS = 3
#: Backoff before attempt n+1 is ``BASE_BACKOFF_MS × n`` (ms, turn-loop spec §1.9).
BASE_BACKOFF_MS = 200
_FAILURE_PREFIX = "all configured providers failed for this turn: "


@dataclass(frozen=True)
class LineageCandidate:
    """One lineage entry: only the head needs a ``provider`` (fallbacks are named, never called in-turn)."""

    model_ref: str
    provider_name: str
    provider: Provider | None = None


@dataclass
class ProviderAttemptRecord:
    """One attempt (turn-loop spec §2.3). Times are RFC 3339 UTC strings; ``duration_ms`` and ``backoff_ms`` are milliseconds."""

    provider: str
    model_ref: str
    attempt: int
    max_attempts: int
    started_at: str | None = None
    completed_at: str | None = None
    duration_ms: int | None = None
    failure_kind: str | None = None
    disposition: str | None = None
    outcome: str = "succeeded"  # retrying | retries_exhausted | fail_fast_aborted | succeeded
    advanced_to_fallback: bool = False
    backoff_ms: int | None = None
    token_usage: TokenUsage | None = None
    transport_diagnostics: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``token_usage`` as ``{input_tokens, output_tokens, total_tokens}`` or None)."""
        out = dataclasses.asdict(self)
        out["token_usage"] = None if self.token_usage is None else self.token_usage.to_dict()
        return out


@dataclass
class ProviderAttemptTimeline:
    """Every attempt of one provider round plus the lineage outcome (turn-loop spec §2.3).

    ``aggregated_token_usage`` sums every attempt that reported usage (failed empty responses included); agent
    totals must add only the winning attempt's usage (the response's own).
    """

    attempts: list[ProviderAttemptRecord] = field(default_factory=list)
    requested_model_ref: str = ""
    active_model_ref: str | None = None
    winning_model_ref: str | None = None
    pending_fallback_model_ref: str | None = None

    @property
    def aggregated_token_usage(self) -> TokenUsage:
        """Sum of the usage of every attempt that reported any."""
        total = TokenUsage()
        for a in self.attempts:
            if a.token_usage is not None:
                total = total + a.token_usage
        return total

    def to_dict(self) -> dict[str, Any]:
        """JSON form, ``aggregated_token_usage`` included."""
        return {
            "attempts": [a.to_dict() for a in self.attempts],
            "requested_model_ref": self.requested_model_ref,
            "active_model_ref": self.active_model_ref,
            "winning_model_ref": self.winning_model_ref,
            "pending_fallback_model_ref": self.pending_fallback_model_ref,
            "aggregated_token_usage": self.aggregated_token_usage.to_dict(),
        }


class LineageFailed(ProviderTransportError):
    """The head candidate failed for this turn (retries exhausted or fail-fast).

    Carries the last attempt's classification (``kind``, ``disposition``, ``status``, ``code``, ``tool_name``) and:

    Attributes:
        timeline: The attempt timeline (``pending_fallback_model_ref`` set when a fallback is pending).
        pending_fallback_model_ref: Candidate #2, or None (no fallback, or a ``context_length_exceeded`` failure).
        cause: The last attempt's error.
    """

    def __init__(self, message: str, *, cause: BaseException, timeline: ProviderAttemptTimeline):
        kind = cause.kind if isinstance(cause, ProviderTransportError) else "unknown"
        super().__init__(
            kind,
            message,
            disposition=cause.disposition if isinstance(cause, ProviderTransportError) else "fail_fast",
            status=getattr(cause, "status", None),
            code=getattr(cause, "code", None),
            diagnostics=getattr(cause, "diagnostics", None),
            token_usage=getattr(cause, "token_usage", None),
            tool_name=getattr(cause, "tool_name", None),
        )
        self.timeline = timeline
        self.pending_fallback_model_ref = timeline.pending_fallback_model_ref
        self.cause = cause


def _compact(model_ref: str) -> str:
    try:
        return parse_model_ref(model_ref).compact
    except ValueError:
        return model_ref


def model_hint(active_model_ref: str, requested_model_ref: str) -> str:
    """``Runtime: active_model=<compact>`` plus `` requested_model=<compact>`` when they differ (turn-loop spec §1.4)."""
    active, requested = _compact(active_model_ref), _compact(requested_model_ref)
    hint = f"Runtime: active_model={active}"
    return hint + (f" requested_model={requested}" if requested and requested != active else "")


def with_model_hint(req: TurnRequest, hint: str) -> TurnRequest:
    """``req`` with the hint appended to the system prompt (blank-line separated) and, when system blocks exist,
    as a ``turn_scoped`` block with ``cache_breakpoint=True`` (turn-loop spec §1.4)."""
    frame = req.prompt_frame
    prompt = f"{frame.system_prompt}\n\n{hint}" if frame.system_prompt else hint
    blocks = frame.system_blocks
    if blocks:
        blocks = (*blocks, ContextBlock(hint, stability="turn_scoped", cache_breakpoint=True))
    return dataclasses.replace(req, prompt_frame=PromptFrame(prompt, blocks, frame.context_blocks))


def _now_utc() -> datetime:
    return datetime.now(timezone.utc)


def _rfc3339(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class LineageProvider:
    """Retry/backoff wrapper over the head of a model lineage (turn-loop spec §2.3); itself a :class:`Provider`.

    Args:
        candidates: The lineage, head first (deduplicated by ``model_ref``); only the head needs a provider.
        requested_model_ref: The turn's requested model (default: the head) — a recovery turn that starts at
            a fallback passes the original head so the hint says ``requested_model=…``.
        sleep: ``await sleep(seconds)`` used for backoff (default ``anyio.sleep``; a cassette passes a
            virtual clock).
        now: Wall clock for ``started_at``/``completed_at`` (default UTC now).
        monotonic: Seconds counter for ``duration_ms`` (default ``time.monotonic``).
        max_attempts: Attempts per turn round (default 3).
        base_backoff_ms: Backoff unit (default 200).
        honor_retry_after: ⚑ Sleep ``diagnostics.retry_after_ms`` instead when larger (off: parity).
        add_model_hint: Append the ``Runtime: active_model=…`` hint to each attempt's request (default on).

    Raises:
        ValueError: no candidates, or the head has no provider.
    """

    def __init__(
        self,
        candidates: Sequence[LineageCandidate],
        *,
        requested_model_ref: str | None = None,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        now: Callable[[], datetime] | None = None,
        monotonic: Callable[[], float] | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        base_backoff_ms: int = BASE_BACKOFF_MS,
        honor_retry_after: bool = False,
        add_model_hint: bool = True,
    ):
        seen: list[LineageCandidate] = []
        for c in candidates:
            if all(c.model_ref != s.model_ref for s in seen):
                seen.append(c)
        if not seen or seen[0].provider is None:
            raise ValueError("a lineage needs a head candidate with a provider")
        self.candidates = tuple(seen)
        self.requested_model_ref = requested_model_ref or seen[0].model_ref
        self._sleep = sleep or anyio.sleep
        self._now = now or _now_utc
        self._monotonic = monotonic or time.monotonic
        self.max_attempts = max_attempts
        self.base_backoff_ms = base_backoff_ms
        self.honor_retry_after = honor_retry_after
        self.add_model_hint = add_model_hint
        self.last_timeline: ProviderAttemptTimeline | None = None

    @property
    def head(self) -> LineageCandidate:
        """The candidate this turn talks to."""
        return self.candidates[0]

    @property
    def route_ref(self) -> str:
        """The head's model ref."""
        return self.head.model_ref

    @property
    def pending_fallback_model_ref(self) -> str | None:
        """Candidate #2's model ref, or None."""
        return self.candidates[1].model_ref if len(self.candidates) > 1 else None

    async def aclose(self) -> None:
        """Close the head provider when it has ``aclose`` (SDK clients hold pooled connections; close them on
        the loop they ran on)."""
        close = getattr(self.head.provider, "aclose", None)
        if close is not None:
            await close()

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """:class:`Provider` face: the response only (timeline in :attr:`last_timeline`).

        Raises:
            LineageFailed: as :meth:`complete_turn_with_diagnostics`.
        """
        response, _ = await self.complete_turn_with_diagnostics(req)
        return response

    async def complete_turn_with_diagnostics(self, req: TurnRequest) -> tuple[TurnResponse, ProviderAttemptTimeline]:
        """Run the attempts for one provider round.

        Returns:
            ``(response, timeline)``; ``timeline.winning_model_ref`` is the head.

        Raises:
            LineageFailed: the head's retries are exhausted or it failed fast; message
                ``all configured providers failed for this turn: <route>: …`` (turn-loop spec §2.3), ``.timeline`` attached.
        """
        head = self.head
        timeline = ProviderAttemptTimeline(
            requested_model_ref=self.requested_model_ref, active_model_ref=head.model_ref
        )
        self.last_timeline = timeline
        attempt_req = req
        if self.add_model_hint:
            attempt_req = with_model_hint(req, model_hint(head.model_ref, self.requested_model_ref))
        assert head.provider is not None
        for attempt in range(1, self.max_attempts + 1):
            started, t0 = self._now(), self._monotonic()
            try:
                response = await head.provider.complete_turn(attempt_req)
            except Exception as exc:  # noqa: BLE001 - every failure is classified (turn-loop spec §2.1: others are unknown)
                record = self._failure_record(head, attempt, started, t0, exc)
                timeline.attempts.append(record)
                if record.outcome == "retrying":
                    await self._sleep(record.backoff_ms / 1000)  # type: ignore[operator]
                    continue
                self._settle_failure(timeline, record, exc)
                raise LineageFailed(
                    _FAILURE_PREFIX + format_failure(head.model_ref, attempt, exc), cause=exc, timeline=timeline
                ) from None
            timeline.attempts.append(
                ProviderAttemptRecord(
                    head.provider_name,
                    head.model_ref,
                    attempt,
                    self.max_attempts,
                    _rfc3339(started),
                    _rfc3339(self._now()),
                    self._elapsed_ms(t0),
                    outcome="succeeded",
                    token_usage=TokenUsage(response.input_tokens, response.output_tokens),
                )
            )
            timeline.winning_model_ref = head.model_ref
            return response, timeline
        raise AssertionError("unreachable")  # pragma: no cover

    def _elapsed_ms(self, t0: float) -> int:
        return max(0, int(round((self._monotonic() - t0) * 1000)))

    def _failure_record(
        self, head: LineageCandidate, attempt: int, started: datetime, t0: float, exc: Exception
    ) -> ProviderAttemptRecord:
        if isinstance(exc, ProviderTransportError):
            kind, disposition = exc.kind, exc.disposition
            usage, diag = exc.token_usage, (exc.diagnostics or None)
        else:
            kind, disposition, usage, diag = "unknown", "fail_fast", None, {"source_chain": [repr(exc)[:300]]}
        retry = disposition == "retryable" and attempt < self.max_attempts
        backoff = self.base_backoff_ms * attempt if retry else None
        if retry and self.honor_retry_after and diag and isinstance(diag.get("retry_after_ms"), int):
            backoff = max(backoff or 0, diag["retry_after_ms"])
        outcome = "retrying" if retry else ("retries_exhausted" if disposition == "retryable" else "fail_fast_aborted")
        return ProviderAttemptRecord(
            head.provider_name,
            head.model_ref,
            attempt,
            self.max_attempts,
            _rfc3339(started),
            _rfc3339(self._now()),
            self._elapsed_ms(t0),
            kind,
            disposition,
            outcome,
            False,
            backoff,
            usage,
            diag,
        )

    def _settle_failure(self, timeline: ProviderAttemptTimeline, record: ProviderAttemptRecord, exc: Exception) -> None:
        # a context-length failure aborts the turn without a fallback (turn-loop spec §1.8)
        if getattr(exc, "code", None) == "context_length_exceeded":
            return
        fallback = self.pending_fallback_model_ref
        if fallback is not None:
            timeline.pending_fallback_model_ref = fallback
            record.advanced_to_fallback = True
