"""Turn-local recap: older rounds of a long turn as deterministic lines (turn-loop spec §1.10).

When a turn's own messages no longer fit the prompt budget, the request keeps the newest rounds
exact (at least :data:`KEEP_EXACT_ROUNDS`) and replaces the older ones with one runtime-authored
user text built here from the round records: the assistant's text (a preview), each tool call's
name, status and ``summary_text``, the ids a later round may need (tasks, work items, agents,
waits, timers, worktrees, artifacts, ``output_ref``) and, for errors, ``kind``, message and
recovery hint, each call with a short preview of its input (a command's ``cmd``). Stdout and
output previews of old rounds are left out (they are in the task logs and artifacts the ids
point to). No model call is made; the same rounds always give the same text.

Per holon-run/holon ``docs/rfcs/turn-local-context-compaction.md``. Not done (the RFC's optional
step): the runtime-private checkpoint round asked of the model on first compaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["KEEP_EXACT_ROUNDS", "RECAP_HEADER", "recap_header", "recap_text", "round_lines"]

#: Completed rounds always kept exact at the end of the request (the compaction RFC's section 8: "at least 2").
KEEP_EXACT_ROUNDS = 2
#: First line of the recap text, so the model does not take it for an operator message (the compaction RFC's section 13).
RECAP_HEADER = "[Runtime-generated turn-local recap]"

_TEXT_PREVIEW = 240  # characters of an old round's assistant text
_FIELD_PREVIEW = 200  # characters of a summary, error message or hint
_FOLLOW_UP_PREVIEW = 500  # characters of an operator interjection or runtime prompt
_INPUT_PREVIEW = 120  # characters of a call's input (its ``cmd`` for commands)
#: Result keys whose values a later round may refer to (the compaction RFC's section 9: handles and ids are preserved).
_ID_KEYS = (
    "task_id",
    "work_item_id",
    "agent_id",
    "child_agent_id",
    "wait_id",
    "timer_id",
    "worktree_path",
    "output_ref",
    "artifact_path",
    "path",
    "branch",
)


def _clip(text: Any, limit: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _ids(value: Any, out: dict[str, str], depth: int = 0) -> None:
    """Collect the first value of each id key in a result (depth-limited, strings only)."""
    if depth > 4 or len(out) >= 6:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _ID_KEYS and isinstance(item, str) and item and key not in out:
                out[key] = _clip(item, 160)
            elif isinstance(item, (dict, list)):
                _ids(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value[:8]:
            _ids(item, out, depth + 1)


def _input_preview(value: Any) -> str:
    # the command digest of the compaction RFC's section 11
    if isinstance(value, dict) and isinstance(value.get("cmd"), str):
        return _clip(value["cmd"], _INPUT_PREVIEW)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
    return "" if text in ("{}", "null") else _clip(text, _INPUT_PREVIEW)


def _call_line(call: Any) -> str:
    env = call.envelope or {}
    status = env.get("status") or ("error" if call.is_error else "success")
    shown = _input_preview(call.input)
    parts = [f"{call.name}({shown}) {status}" if shown else f"{call.name} {status}"]
    error = env.get("error") or {}
    summary = env.get("summary_text")
    if summary and not (isinstance(error, dict) and summary == error.get("message")):
        parts.append(_clip(summary, _FIELD_PREVIEW))
    if isinstance(error, dict) and error:
        parts.append(f"error {error.get('kind', '?')}: {_clip(error.get('message'), _FIELD_PREVIEW)}")
        if error.get("recovery_hint"):
            parts.append(f"hint: {_clip(error['recovery_hint'], _FIELD_PREVIEW)}")
    found: dict[str, str] = {}
    _ids(env.get("result"), found)
    parts += [f"{key} {value}" for key, value in found.items()]
    return "; ".join(parts)


def round_lines(rnd: Any) -> str:
    """The recap lines of one round (``- Round N: …`` and its ``operator said`` / ``runtime said`` lines)."""
    parts = []
    if (rnd.text or "").strip():
        parts.append(f'said "{_clip(rnd.text, _TEXT_PREVIEW)}"')
    parts += [_call_line(c) for c in rnd.tool_calls]
    if not parts:
        parts.append(f"no text, no tool call (stop reason {rnd.stop_reason or 'none'})")
    lines = [f"- Round {rnd.round}: " + " | ".join(parts)]
    for reason, text in rnd.follow_ups:
        who = "operator said" if reason == "interjection" else "runtime said"
        lines.append(f"  {who}: {_clip(text, _FOLLOW_UP_PREVIEW)}")
    return "\n".join(lines)


def recap_header(first: int, last: int) -> str:
    """The first lines of a recap of rounds ``first``..``last``."""
    span = f"round {first}" if first == last else f"rounds {first}-{last}"
    return (
        f"{RECAP_HEADER}\nThe following {span} happened earlier in this same turn and were compacted to keep "
        "the request within its context budget; their full outputs remain in task logs, artifacts and memory "
        "(MemorySearch / MemoryGet with an output_ref):"
    )


def recap_text(rounds: Iterable[Any], scrub: Any = None, lines: Iterable[str] | None = None) -> str:
    """One user text standing for ``rounds`` (older rounds of the current turn), the compaction RFC's sections 9 and 13.

    Args:
        rounds: :class:`~holon_nb.runtime.turns._records.RoundRecord` objects, oldest first (at least one).
        scrub: ``scrub(text) -> text`` applied to the whole recap (D6), or None.
        lines: The rounds' :func:`round_lines`, when the caller has them already (a cache).

    Returns:
        ``[Runtime-generated turn-local recap]`` then a line per round: ``- Round N: <text preview>;
        <Tool> <status>; <summary>; …``, with operator interjections and runtime prompts of those
        rounds as ``operator said:`` / ``runtime said:`` lines.
    """
    rounds = list(rounds)
    body = list(lines) if lines is not None else [round_lines(rnd) for rnd in rounds]
    text = "\n".join([recap_header(rounds[0].round, rounds[-1].round), *body])
    return scrub(text) if scrub is not None else text
