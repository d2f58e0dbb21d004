"""Durable conversations: turn records, transcripts and per-agent token totals in SQLite (D7).

Tables (created here, ``CREATE TABLE IF NOT EXISTS``):

- ``turns`` — one row per turn: ``id`` (``turn_…``), ``agent_id``, ``turn_index`` (1-based per agent),
  ``status`` (``running`` | ``settled``), the terminal record (``terminal_kind``, ``terminal_reason``,
  ``final_text`` — scrubbed of secret values (D6), ``ended_at``), ``model_ref``, ``source_message_id``, the
  turn's winning-attempt usage and round count, ``detail`` (JSON), ``started_at`` (the turn's clock: a
  cassette replay's virtual one) and ``admitted_at`` (the wall clock when the runtime started the turn;
  NULL in homes written before it existed).
- ``transcript`` — the messages a model saw, in order per agent (``seq``): the operator message,
  each assistant round, each round's tool results, follow-up texts (``reason``: ``max_output_tokens``,
  ``completion_report_expected``, ``final_brief_expected``, ``interjection``). Payloads are the JSON
  form of :mod:`holon_nb.providers.base` messages, scrubbed of secret values (D6).
- ``agent_turn_totals`` — ``total_input_tokens``, ``total_output_tokens``, ``total_model_rounds``
  per agent (turn-loop spec §2.3: winning attempts only).

A later turn of the same agent starts from :meth:`ConversationStore.history`, so a conversation
continues after a kernel restart; ``history_since`` limits it to turns admitted at or after an instant
(a replayed cassette's turn must see only the turns of its own replay pass). Every turn gets exactly one terminal record (turn-loop spec §1.1):
:meth:`ConversationStore.settle` only moves a ``running`` turn.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from ...providers.base import (
    AssistantBlocks,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    UserToolResults,
    message_from_dict,
    to_dict,
)
from ..core._store import Store

__all__ = ["ConversationStore", "TERMINAL_KINDS", "normalize_instant"]

#: ``TurnTerminalKind`` values (turn-loop spec §1.1).
TERMINAL_KINDS = (
    "completed",
    "aborted",
    "baseline_over_budget",
    "deferred_to_fallback",
    "provider_failed_needs_recovery",
)

_DDL = """
CREATE TABLE IF NOT EXISTS turns (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, turn_index INTEGER NOT NULL, status TEXT NOT NULL,
    terminal_kind TEXT, terminal_reason TEXT, final_text TEXT, model_ref TEXT, source_message_id TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
    rounds INTEGER NOT NULL DEFAULT 0, started_at TEXT NOT NULL, ended_at TEXT,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS turns_agent_index ON turns(agent_id, turn_index);
CREATE TABLE IF NOT EXISTS transcript (
    agent_id TEXT NOT NULL, seq INTEGER NOT NULL, turn_id TEXT NOT NULL, round INTEGER NOT NULL,
    kind TEXT NOT NULL, reason TEXT, payload TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE INDEX IF NOT EXISTS transcript_turn ON transcript(turn_id, seq);
CREATE TABLE IF NOT EXISTS agent_turn_totals (
    agent_id TEXT PRIMARY KEY, total_input_tokens INTEGER NOT NULL DEFAULT 0,
    total_output_tokens INTEGER NOT NULL DEFAULT 0, total_model_rounds INTEGER NOT NULL DEFAULT 0
);
"""

#: The text a tool call left unanswered in a stored transcript gets when history is replayed.
UNANSWERED_RESULT = (
    '{"kind":"turn_ended_before_result","message":"the turn ended before this call ran; '
    'it was not executed","ok":false}'
)


class ConversationStore:
    """Turns, transcripts and token totals of one holon home.

    Args:
        store: The runtime's SQLite store (tables are created here).
        scrub: ``value -> value`` replacing secret values in a JSON value (D6).
    """

    def __init__(self, store: Store, scrub: Callable[[Any], Any] = lambda v: v):
        self.store = store
        self.scrub = scrub
        with store.tx() as db:
            for stmt in _DDL.split(";"):
                if stmt.strip():
                    db.execute(stmt)
            columns = {r[1] for r in db.execute("PRAGMA table_info(turns)")}
            if "admitted_at" not in columns:  # homes written before the wall-clock start was recorded
                db.execute("ALTER TABLE turns ADD COLUMN admitted_at TEXT")

    # ------------------------------------------------------------ turns
    def abort_orphans(self, now: str) -> list[str]:
        """Settle turns left ``running`` by a runtime that died (``aborted``, reason ``runtime_restarted``).

        Returns:
            Their ids.
        """
        with self.store.tx() as db:
            rows = db.execute("SELECT id FROM turns WHERE status='running'").fetchall()
            db.execute(
                "UPDATE turns SET status='settled', terminal_kind='aborted', terminal_reason=?,"
                " ended_at=? WHERE status='running'",
                ("runtime_restarted", now),
            )
        return [r[0] for r in rows]

    def begin(
        self,
        db: sqlite3.Connection,
        *,
        turn_id: str,
        agent_id: str,
        model_ref: str,
        source_message_id: str | None,
        now: str,
        detail: dict[str, Any] | None = None,
        admitted_at: str | None = None,
    ) -> int:
        """Insert a ``running`` turn inside the open transaction ``db``; return its ``turn_index``.

        ``now`` is the turn's clock (``started_at``); ``admitted_at`` the wall clock (default: the real now).
        """
        index = db.execute("SELECT COALESCE(MAX(turn_index),0)+1 FROM turns WHERE agent_id=?", (agent_id,)).fetchone()[
            0
        ]
        db.execute(
            "INSERT INTO turns(id, agent_id, turn_index, status, model_ref, source_message_id, started_at,"
            " detail, admitted_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                turn_id,
                agent_id,
                index,
                "running",
                model_ref,
                source_message_id,
                now,
                json.dumps(detail or {}),
                admitted_at or _wall_now(),
            ),
        )
        return int(index)

    def settle(
        self, db: sqlite3.Connection, turn_id: str, kind: str, final_text: str | None, reason: str | None, now: str
    ) -> bool:
        """Write the turn's one terminal record inside the open transaction ``db`` (``final_text`` is stored
        scrubbed of secret values, D6).

        Returns:
            False when the turn was already settled (nothing written).

        Raises:
            ValueError: for a kind outside :data:`TERMINAL_KINDS`.
        """
        if kind not in TERMINAL_KINDS:
            raise ValueError(f"not a turn terminal kind: {kind!r}")
        stored = self.scrub(final_text) if isinstance(final_text, str) else final_text
        cur = db.execute(
            "UPDATE turns SET status='settled', terminal_kind=?, final_text=?, terminal_reason=?,"
            " ended_at=? WHERE id=? AND status='running'",
            (kind, stored, reason, now, turn_id),
        )
        return cur.rowcount == 1

    def turn(self, turn_id: str) -> dict[str, Any] | None:
        """A turn row (``detail`` parsed), or None."""
        rows = self.store.query("SELECT * FROM turns WHERE id=?", (turn_id,))
        return _turn_row(rows[0]) if rows else None

    def turns(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's turns, oldest first."""
        return [
            _turn_row(r)
            for r in self.store.query("SELECT * FROM turns WHERE agent_id=? ORDER BY turn_index", (agent_id,))
        ]

    # ------------------------------------------------------------ transcript and usage
    def append(
        self,
        db: sqlite3.Connection,
        *,
        agent_id: str,
        turn_id: str,
        round: int,
        messages: Iterable[tuple[Message, str | None]],
        now: str,
    ) -> None:
        """Append ``(message, reason)`` pairs to the agent's transcript inside ``db`` (payloads scrubbed)."""
        seq = db.execute("SELECT COALESCE(MAX(seq),0) FROM transcript WHERE agent_id=?", (agent_id,)).fetchone()[0]
        for message, reason in messages:
            seq += 1
            payload = json.dumps(self.scrub(to_dict(message)), ensure_ascii=False)
            db.execute(
                "INSERT INTO transcript(agent_id, seq, turn_id, round, kind, reason, payload, created_at)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (agent_id, seq, turn_id, round, message.type, reason, payload, now),
            )

    @staticmethod
    def add_usage(
        db: sqlite3.Connection, agent_id: str, turn_id: str, input_tokens: int, output_tokens: int, rounds: int = 1
    ) -> None:
        """Add a winning attempt's usage to the agent totals and the turn's counters (turn-loop spec §2.3)."""
        db.execute("INSERT INTO agent_turn_totals(agent_id) VALUES (?) ON CONFLICT(agent_id) DO NOTHING", (agent_id,))
        db.execute(
            "UPDATE agent_turn_totals SET total_input_tokens=total_input_tokens+?,"
            " total_output_tokens=total_output_tokens+?, total_model_rounds=total_model_rounds+?"
            " WHERE agent_id=?",
            (input_tokens, output_tokens, rounds, agent_id),
        )
        db.execute(
            "UPDATE turns SET input_tokens=input_tokens+?, output_tokens=output_tokens+?, rounds=rounds+? WHERE id=?",
            (input_tokens, output_tokens, rounds, turn_id),
        )

    def totals(self, agent_id: str) -> dict[str, int]:
        """``{total_input_tokens, total_output_tokens, total_model_rounds, turns}`` of the agent (zeros if none);
        ``turns`` counts its turn records (a running one included): the highest ``turn_index``."""
        return self.read_totals(self.store, agent_id)

    @staticmethod
    def read_totals(store: Store, agent_id: str) -> dict[str, int]:
        """:meth:`totals` read from ``store`` without creating anything (zeros when the tables do not exist yet):
        what GetAgent uses, since building a summary must not change state (agents spec §5.2 rule 2)."""
        out = {"total_input_tokens": 0, "total_output_tokens": 0, "total_model_rounds": 0, "turns": 0}
        try:
            out["turns"] = int(
                store.query("SELECT COALESCE(MAX(turn_index), 0) FROM turns WHERE agent_id=?", (agent_id,))[0][0]
            )
            rows = store.query(
                "SELECT total_input_tokens, total_output_tokens, total_model_rounds"
                " FROM agent_turn_totals WHERE agent_id=?",
                (agent_id,),
            )
        except sqlite3.OperationalError:  # no turn has run in this home yet
            return out
        if rows:
            out.update(
                total_input_tokens=int(rows[0][0]),
                total_output_tokens=int(rows[0][1]),
                total_model_rounds=int(rows[0][2]),
            )
        return out

    def transcript(self, agent_id: str, turn_id: str | None = None) -> list[dict[str, Any]]:
        """Stored transcript rows ``{seq, turn_id, round, kind, reason, payload}`` (payload parsed), in order."""
        sql = "SELECT seq, turn_id, round, kind, reason, payload FROM transcript WHERE agent_id=?"
        params: tuple[Any, ...] = (agent_id,)
        if turn_id is not None:
            sql += " AND turn_id=?"
            params += (turn_id,)
        rows = self.store.query(sql + " ORDER BY seq", params)
        return [{**dict(r), "payload": json.loads(r["payload"])} for r in rows]

    def history(self, agent_id: str, history_since: str | None = None) -> list[Message]:
        """The agent's earlier conversation as provider messages, oldest first.

        Every ``tool_use`` gets exactly one result: a call whose result was never stored (the
        kernel died mid-round) gets a synthetic error result, so the replayed history is one a
        provider accepts.

        Args:
            agent_id: The agent.
            history_since: See :meth:`history_turns`.
        """
        return [m for turn in self.history_turns(agent_id, history_since) for m in turn]

    def history_turns(self, agent_id: str, history_since: str | None = None) -> list[list[Message]]:
        """:meth:`history` grouped by turn, oldest turn first (a prompt budget drops whole old turns).

        Args:
            agent_id: The agent.
            history_since: RFC 3339 instant (any offset); when given, only turns the runtime started at or after
                it are history (compared with the wall-clock ``admitted_at``, else ``started_at`` for rows written
                before it existed). A cassette replay passes the start of its replay pass (the notebook: the
                kernel session's start), so an earlier replay of the same agent in the same home is not history.

        Raises:
            ValueError: ``history_since`` is not an RFC 3339 timestamp with an offset.
        """
        allowed: set[str] | None = None
        if history_since is not None:
            since = normalize_instant(history_since)
            allowed = {
                r[0]
                for r in self.store.query(
                    "SELECT id FROM turns WHERE agent_id=? AND COALESCE(admitted_at, started_at) >= ?",
                    (agent_id, since),
                )
            }
        turns: dict[str, list[Message]] = {}
        for row in self.transcript(agent_id):
            if allowed is not None and row["turn_id"] not in allowed:
                continue
            try:
                turns.setdefault(row["turn_id"], []).append(message_from_dict(row["payload"]))
            except (KeyError, TypeError, ValueError):
                continue  # a row written by a newer version: skip rather than fail the turn
        return [_answer_every_call(messages) for messages in turns.values()]


def normalize_instant(value: str) -> str:
    """An RFC 3339 timestamp (``Z`` or any offset, optional fraction) in the store's form
    (``2026-11-30T03:17:44.123456Z``), which compares as text.

    Raises:
        ValueError: not a str, not a timestamp, or no offset.
    """
    if not isinstance(value, str):
        raise ValueError(f"history_since must be an RFC 3339 string, got {type(value).__name__}")
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"history_since is not an RFC 3339 timestamp: {value[:80]!r}") from None
    if parsed.tzinfo is None:
        raise ValueError(f"history_since needs an offset (e.g. Z): {value[:80]!r}")
    return parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _wall_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _turn_row(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["detail"] = json.loads(out.get("detail") or "{}")
    return out


def _answer_every_call(messages: list[Message]) -> list[Message]:
    fixed: list[Message] = []
    for i, msg in enumerate(messages):
        fixed.append(msg)
        if not isinstance(msg, AssistantBlocks):
            continue
        calls = [b for b in msg.blocks if isinstance(b, ToolUseBlock)]
        if not calls:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        answered = {r.tool_use_id for r in nxt.results} if isinstance(nxt, UserToolResults) else set()
        missing = [c for c in calls if c.id not in answered]
        if not missing:
            continue
        synthetic = tuple(ToolResultBlock(c.id, UNANSWERED_RESULT, is_error=True) for c in missing)
        if isinstance(nxt, UserToolResults):
            messages[i + 1] = UserToolResults(nxt.results + synthetic)
        else:
            fixed.append(UserToolResults(synthetic))
    return fixed
