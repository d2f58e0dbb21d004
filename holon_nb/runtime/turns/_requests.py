"""The request of each round of one turn: :class:`RequestBuilder` (turn-loop spec §1.4, §1.10).

Split from the turn service (issue 27 item 5): the builder belongs to one turn and owns what it keeps
between that turn's rounds: the estimate of the tool list, each round's estimate and recap lines
(valid until the round gains a follow-up), and how many of the oldest rounds the recap covers (only
grows within a turn, so requests keep a stable prefix between compactions).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...providers.base import AssistantBlocks, Message, PromptFrame, TurnRequest, UserText, UserToolResults, to_dict
from ._prompts import STALE_WORK_ITEM_ROUNDS, stale_work_item_reminder
from ._recap import KEEP_EXACT_ROUNDS, recap_header, recap_text, round_lines

if TYPE_CHECKING:
    from ._loop import TurnLoop

__all__ = ["RequestBuilder", "estimate", "round_messages"]


def estimate(values: list[Any]) -> int:
    """``(chars + 3) // 4`` of the values' compact JSON (turn-loop spec §1.7 rule 3's estimate)."""
    text = json.dumps(to_dict(values), separators=(",", ":"), ensure_ascii=False)
    return (len(text) + 3) // 4


def round_messages(rnd: Any) -> list[Message]:
    """One exact round as request messages: assistant blocks, tool results, follow-up texts."""
    out: list[Message] = [AssistantBlocks(rnd.blocks)]
    if rnd.tool_calls:
        out.append(UserToolResults(tuple(c.block() for c in rnd.tool_calls)))
    out += [UserText(text) for _, text in rnd.follow_ups]
    return out


class RequestBuilder:
    """Builds the requests of one turn's rounds (module docstring).

    Args:
        loop: The turn.
        budget: The prompt budget in effect, read at each request (estimated tokens; None: unlimited).
        scrub: The runtime's scrubber for text (D6): the recap is scrubbed as it is written.

    Attributes:
        recapped_rounds: How many of the oldest rounds the last request sent as one recap text.
    """

    def __init__(self, loop: TurnLoop, *, budget: Callable[[], int | None], scrub: Callable[[str], str]):
        self._loop = loop
        self._budget = budget
        self._scrub = scrub
        self.recapped_rounds = 0
        self._tools_cost: int | None = None
        self._reminded_at: int | None = None  # the round count when the stale work-item reminder was last sent
        #: round number -> ((round, follow-ups), estimate of its messages, its recap lines, their estimate)
        self._rounds: dict[int, tuple[tuple[int, int], int, Any, int]] = {}

    def build(self) -> TurnRequest | None:
        """The request of the loop's next round (turn-loop spec §1.4, §1.10): history (whole old turns, newest kept
        under the budget), the operator message, the runtime reminder if any, a turn-local recap of older
        rounds when the turn no longer fits, then each exact round (assistant blocks, tool results,
        follow-ups).

        Under a budget, old turns are dropped first (newest kept). When the turn's own rounds still do not
        fit, the oldest rounds are compacted into one recap text (:mod:`~holon_nb.runtime.turns._recap`),
        keeping at least the newest ``KEEP_EXACT_ROUNDS`` exact; the compacted prefix only grows within a
        turn (:attr:`recapped_rounds`), so requests keep a stable prefix between compactions. Each
        compaction emits ``turn_local_recap{rounds, exact_rounds, estimated_tokens, budget}``.

        Returns:
            None when even the minimum (message, recap, newest exact rounds, tools, system prompt) exceeds
            the budget (``baseline_over_budget``).

        """
        loop, state = self._loop, self._loop.state
        head: list[Message] = [UserText(loop.message), *(UserText(t) for t in state.pre_turn)]
        reminder = self.reminder() if state.rounds else None
        if reminder:
            head.append(UserText(reminder))
        rounds = [round_messages(rnd) for rnd in state.rounds]
        history = loop.history
        budget = self._budget()
        recapped = min(self.recapped_rounds, len(rounds))
        recap: UserText | None = None  # built once when a compaction measures it exactly
        if budget is not None:
            if self._tools_cost is None:
                self._tools_cost = estimate(list(loop.tools))
            tools_cost, system_cost = self._tools_cost, len(loop.system_prompt) // 4
            head_cost = estimate(head)
            fixed = tools_cost + system_cost + head_cost
            costs, lines = [], []
            for rnd, msgs in zip(state.rounds, rounds, strict=False):  # per round, cached until its follow-ups change
                key = (rnd.round, len(rnd.follow_ups))
                if self._rounds.get(rnd.round, (None,))[0] != key:
                    line = round_lines(rnd)
                    line_cost = (len(json.dumps(line, ensure_ascii=False)) + 4) // 4
                    self._rounds[rnd.round] = (key, estimate(msgs), line, line_cost)
                costs.append(self._rounds[rnd.round][1])
                lines.append(self._rounds[rnd.round])

            def recap_cost(n: int) -> int:  # the recap's estimate from cached line sizes (≈ exact)
                return 0 if n == 0 else 16 + len(recap_header(1, n)) // 4 + sum(c[3] for c in lines[:n])

            tail = sum(costs[recapped:])
            used = fixed + recap_cost(recapped) + tail
            limit = len(rounds) - KEEP_EXACT_ROUNDS
            if used > budget:
                line_sum = recap_cost(recapped)
                while used > budget * 3 // 4 and recapped < limit:  # compact down to a target below the budget
                    tail -= costs[recapped]
                    recapped += 1
                    line_sum = recap_cost(recapped) if recapped == 1 else line_sum + lines[recapped - 1][3]
                    used = fixed + line_sum + tail
                if recapped:  # the exact figure, now that the recap is chosen
                    recap = UserText(self.recap(recapped))
                    used = fixed + estimate([recap]) + tail
                if used > budget:
                    exact = len(rounds) - recapped
                    state.error = (
                        f"the request needs about {used} estimated tokens (tools {tools_cost}, system prompt "
                        f"{system_cost}, message {head_cost}, recap and newest {exact} round(s) "
                        f"{used - fixed}) but the prompt budget is {budget} "
                        "(HolonNB.prompt_budget_tokens / $HOLON_PROMPT_BUDGET_TOKENS)"
                    )
                    return None
                loop.emit(
                    "turn_local_recap",
                    rounds=recapped,
                    exact_rounds=len(rounds) - recapped,
                    estimated_tokens=used,
                    budget=budget,
                )
            self.recapped_rounds = recapped
            kept: list[list[Message]] = []
            for turn in reversed(history):
                cost = estimate(turn)
                if used + cost > budget:
                    break
                kept.insert(0, turn)
                used += cost
            history = kept
        current = list(head)
        if recapped:
            current.append(recap or UserText(self.recap(recapped)))
        current += [m for msgs in rounds[recapped:] for m in msgs]
        conversation = tuple(m for turn in history for m in turn) + tuple(current)
        return TurnRequest(
            conversation=conversation,
            tools=loop.tools,
            prompt_frame=PromptFrame(system_prompt=loop.system_prompt),
            continuation_scope_id=loop.agent_id,
        )

    def reminder(self) -> str | None:
        """The runtime reminder of the next request (turn-loop spec §1.4): after ``STALE_WORK_ITEM_ROUNDS`` rounds
        without a work-item update while a work item is current, once per ``STALE_WORK_ITEM_ROUNDS`` rounds."""
        loop, state = self._loop, self._loop.state
        done = len(state.rounds)
        if done - state.last_work_update_round < STALE_WORK_ITEM_ROUNDS:
            return None
        if self._reminded_at is not None and done - self._reminded_at < STALE_WORK_ITEM_ROUNDS:
            return None
        summary = loop.service.work.agent_summary(loop.agent_id)
        current = state.binding.get("work_item_id") or summary.get("current_work_item_id")
        if not current:
            return None
        self._reminded_at = done
        return stale_work_item_reminder(done - state.last_work_update_round, current)

    def recap(self, n: int) -> str:
        """The recap text of the turn's oldest ``n`` rounds (their cached lines where they are cached)."""
        rounds = self._loop.state.rounds[:n]
        lines = [self._rounds[r.round][2] if r.round in self._rounds else round_lines(r) for r in rounds]
        return recap_text(rounds, scrub=self._scrub, lines=lines)
