"""The runtime's own texts in a turn: continuation, corrective and reminder prompts, notices (turn-loop spec §1.4,
§1.8.2-§1.8.4)."""

from __future__ import annotations

__all__ = [
    "CONTINUE_PROMPT",
    "CORRECTIVE_PROMPTS",
    "INTERJECTION_HEADER",
    "STALE_WORK_ITEM_ROUNDS",
    "CONTEXT_LENGTH_NOTICE",
    "MAX_OUTPUT_RECOVERIES",
    "WORK_ITEM_UPDATES",
    "interjection_text",
    "stale_work_item_reminder",
]

#: Follow-up after a text-only round cut at the output limit (reason ``max_output_tokens``, turn-loop spec §1.8.2).
CONTINUE_PROMPT = (
    "[Runtime: your previous reply stopped at the output limit] Continue exactly where it stopped. "
    "Do not restart or repeat what you already wrote."
)
#: Corrective prompts of the text-only protocol (turn-loop spec §1.8.3), by obligation kind: (reason, text).
CORRECTIVE_PROMPTS = {
    "completion": (
        "completion_report_expected",
        "[Runtime: completion report expected] CompleteWorkItem is waiting for its completion report. "
        "Reply with the operator-facing report as plain text only, with no tool calls.",
    ),
    "final_brief": (
        "final_brief_expected",
        "[Runtime: final brief expected] WaitFor (delivery=final) is waiting for its final brief. "
        "Reply with the operator-facing brief as plain text only, with no tool calls.",
    ),
}
#: First line of an operator interjection (turn-loop spec §1.8.4).
INTERJECTION_HEADER = "[Operator message received while this turn was in progress]"
#: First line of an operator message queued while no turn ran; it opens the next turn (⚑ holon_nb).
PRE_TURN_HEADER = "[Operator message sent before this turn started]"
#: Output-limit recoveries per turn (turn-loop spec §1.8.2).
MAX_OUTPUT_RECOVERIES = 2
#: Rounds without a work-item update before the stale work-item reminder, and its cooldown (turn-loop spec §1.4).
STALE_WORK_ITEM_ROUNDS = 10
#: Tools whose success counts as a work-item update for the reminder.
WORK_ITEM_UPDATES = frozenset({"CreateWorkItem", "UpdateWorkItem", "PickWorkItem", "CompleteWorkItem"})
#: Final text of a turn the provider refused for context length (turn-loop spec §1.8).
CONTEXT_LENGTH_NOTICE = (
    "Turn stopped because the provider rejected the request with context_length_exceeded. "
    "This usually means the configured model context window or prompt budget is too large for "
    "the current provider path."
)


def interjection_text(message_id: str, body: str, *, before_turn: bool = False) -> str:
    """An operator interjection as user text (turn-loop spec §1.8.4): header, metadata lines, blank line, body.

    ``before_turn``: the message was queued while no turn ran (``%holon say``), so it opens the next turn
    (header :data:`PRE_TURN_HEADER`, ``admission_context=pre_turn``) instead of following a round.
    """
    header, context = (PRE_TURN_HEADER, "pre_turn") if before_turn else (INTERJECTION_HEADER, "interjection")
    return (
        f"{header}\nmessage_id={message_id}\norigin=operator\n"
        f"authority_class=operator_instruction\ndelivery_surface=notebook\n"
        f"admission_context={context}\n\n{body.strip()}"
    )


def stale_work_item_reminder(rounds_without_update: int, work_item_id: str) -> str:
    """The stale work-item reminder (turn-loop spec §1.4)."""
    return (
        f"[Runtime reminder] {rounds_without_update} rounds passed without an update to work item "
        f"{work_item_id}. Record progress with UpdateWorkItem (todo_list, plan), or finish it with "
        f"CompleteWorkItem when it is done."
    )
