"""External trigger records in the runtime's SQLite store (workspace spec §14).

One table holds the capabilities, a second the tokens of each capability, a third the audit trail
(``external_trigger_created``, ``external_trigger_token_added``, ``external_trigger_revoked``).
A token is a bearer secret (issue 25): at rest only its SHA-256 (``token_hash``) is kept, so a
delivery is looked up by the hash of the token it carries and the hashes are compared in constant
time; the token itself lives only in the memory of the process that minted it. The ``token`` column
of homes written before is emptied when the table is opened. Nothing here logs a token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core._store import Store

__all__ = ["PUBLIC_FIELDS", "TriggerRecords", "new_token", "token_hash"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS external_triggers (
    id TEXT PRIMARY KEY,
    target_agent_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    delivery_mode TEXT NOT NULL,
    status TEXT NOT NULL,
    token TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    last_delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS external_triggers_agent ON external_triggers(target_agent_id, status);
CREATE TABLE IF NOT EXISTS external_trigger_tokens (
    token_hash TEXT PRIMARY KEY,
    external_trigger_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS external_trigger_tokens_trigger ON external_trigger_tokens(external_trigger_id);
CREATE TABLE IF NOT EXISTS external_trigger_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    external_trigger_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    event TEXT NOT NULL,
    at TEXT NOT NULL
);
"""

#: The record fields a caller may see (CancelExternalTrigger result; never ``token``/``token_hash``).
PUBLIC_FIELDS = (
    "external_trigger_id",
    "target_agent_id",
    "scope",
    "delivery_mode",
    "status",
    "delivery_count",
    "created_at",
    "revoked_at",
    "last_delivered_at",
)


def new_token() -> str:
    """A fresh capability token ``cb_<64 hex>`` (256 random bits)."""
    return "cb_" + secrets.token_hex(32)


def token_hash(token: str) -> str:
    """The SHA-256 hex digest a token is stored and looked up by."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _public(row: Any) -> dict[str, Any]:
    rec = dict(row)
    rec["external_trigger_id"] = rec.pop("id")
    return {k: rec[k] for k in PUBLIC_FIELDS}


class TriggerRecords:
    """SQL over the trigger tables of one store.

    Args:
        store: The runtime's :class:`~holon_nb.runtime.store.Store` (``tx()`` and ``query()``).
    """

    def __init__(self, store: Store):
        self.store = store
        with store.tx() as db:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
        if store.query("SELECT 1 FROM external_triggers WHERE token <> '' LIMIT 1"):
            self._forget_stored_tokens()

    def _forget_stored_tokens(self) -> None:
        """Homes written before kept each token in plain text: keep only its hash (overwriting the freed
        bytes, so the database file no longer holds the token)."""
        with self.store.tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO external_trigger_tokens(token_hash, external_trigger_id, created_at)"
                " SELECT token_hash, id, created_at FROM external_triggers"
            )
            db.execute("PRAGMA secure_delete=ON")
            db.execute("UPDATE external_triggers SET token='' WHERE token <> ''")
            db.execute("PRAGMA secure_delete=OFF")

    def active_default(self, agent_id: str) -> dict[str, Any] | None:
        """The agent's active default trigger (its row: no token, only the first token's hash), or None."""
        rows = self.store.query(
            "SELECT * FROM external_triggers WHERE target_agent_id=? AND status='active' "
            "ORDER BY created_at DESC LIMIT 1",
            (agent_id,),
        )
        return dict(rows[0]) if rows else None

    def create(self, trigger_id: str, agent_id: str, token: str, now: str) -> dict[str, Any]:
        """Insert an active trigger, its token's hash and its ``external_trigger_created`` audit row;
        return the row (without the token)."""
        row = {
            "id": trigger_id,
            "target_agent_id": agent_id,
            "scope": "agent",
            "delivery_mode": "wake_hint",
            "status": "active",
            "token": "",
            "token_hash": token_hash(token),
            "delivery_count": 0,
            "created_at": now,
            "revoked_at": None,
            "last_delivered_at": None,
        }
        with self.store.tx() as db:
            db.execute(
                "INSERT INTO external_triggers(id, target_agent_id, scope, delivery_mode, status, token,"
                " token_hash, delivery_count, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (trigger_id, agent_id, "agent", "wake_hint", "active", "", row["token_hash"], 0, now),
            )
            db.execute(
                "INSERT INTO external_trigger_tokens(token_hash, external_trigger_id, created_at) VALUES (?,?,?)",
                (row["token_hash"], trigger_id, now),
            )
            db.execute(
                "INSERT INTO external_trigger_audit(external_trigger_id, agent_id, event, at) VALUES (?,?,?,?)",
                (trigger_id, agent_id, "external_trigger_created", now),
            )
        return row

    def add_token(self, trigger_id: str, agent_id: str, token: str, now: str) -> None:
        """Give an active trigger one more token (its hash; audited ``external_trigger_token_added``).

        A process that did not mint the trigger's token cannot rebuild its URL (only the hash is kept):
        it adds a token of its own, and the earlier URLs keep working until the trigger is revoked.
        """
        with self.store.tx() as db:
            db.execute(
                "INSERT INTO external_trigger_tokens(token_hash, external_trigger_id, created_at) VALUES (?,?,?)",
                (token_hash(token), trigger_id, now),
            )
            db.execute(
                "INSERT INTO external_trigger_audit(external_trigger_id, agent_id, event, at) VALUES (?,?,?,?)",
                (trigger_id, agent_id, "external_trigger_token_added", now),
            )

    def known(self, token: str) -> bool:
        """True when ``token`` is a token of some trigger (active or not; compared by hash, in constant time)."""
        return self._trigger_of(token_hash(token)) is not None

    def has_token(self, trigger_id: str, token: str) -> bool:
        """True when ``token`` is a token of ``trigger_id`` (compared by hash, in constant time)."""
        return self._trigger_of(token_hash(token)) == trigger_id

    def _trigger_of(self, digest: str) -> str | None:
        """The trigger a token hash belongs to, or None; the stored hash is compared in constant time."""
        rows = self.store.query(
            "SELECT token_hash, external_trigger_id FROM external_trigger_tokens WHERE token_hash=?", (digest,)
        )
        if rows and hmac.compare_digest(str(rows[0][0]), digest):
            return str(rows[0][1])
        return None

    def get(self, trigger_id: str) -> dict[str, Any] | None:
        """The public record of ``trigger_id`` (no token), or None."""
        rows = self.store.query("SELECT * FROM external_triggers WHERE id=?", (trigger_id,))
        return _public(rows[0]) if rows else None

    def owned_by(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's triggers (public records), newest first."""
        rows = self.store.query(
            "SELECT * FROM external_triggers WHERE target_agent_id=? ORDER BY created_at DESC", (agent_id,)
        )
        return [_public(r) for r in rows]

    def revoke(self, trigger_id: str, now: str) -> dict[str, Any]:
        """Mark an active trigger revoked (audited); an already revoked one is returned unchanged."""
        with self.store.tx() as db:
            cur = db.execute(
                "UPDATE external_triggers SET status='revoked', revoked_at=? WHERE id=? AND status='active'",
                (now, trigger_id),
            )
            if cur.rowcount:
                agent = db.execute("SELECT target_agent_id FROM external_triggers WHERE id=?", (trigger_id,)).fetchone()
                db.execute(
                    "INSERT INTO external_trigger_audit(external_trigger_id, agent_id, event, at) VALUES (?,?,?,?)",
                    (trigger_id, agent[0], "external_trigger_revoked", now),
                )
        rec = self.get(trigger_id)
        assert rec is not None
        return rec

    def record_delivery(self, token: str, now: str) -> dict[str, Any] | None:
        """Count a delivery to an active trigger by its token; None when no active trigger has that token.

        The token is looked up by its SHA-256, and the stored hash found is compared with it in constant
        time (``hmac.compare_digest``); the token itself is neither stored nor logged.
        """
        trigger_id = self._trigger_of(token_hash(token))
        if trigger_id is None:
            return None
        with self.store.tx() as db:
            cur = db.execute(
                "UPDATE external_triggers SET delivery_count = delivery_count + 1, last_delivered_at=?"
                " WHERE id=? AND status='active'",
                (now, trigger_id),
            )
            if not cur.rowcount:
                return None
            row = db.execute("SELECT * FROM external_triggers WHERE id=?", (trigger_id,)).fetchone()
        return _public(row)

    def any_active(self) -> bool:
        """True when some trigger of this home is active."""
        return bool(self.store.query("SELECT 1 FROM external_triggers WHERE status='active' LIMIT 1"))

    def audit(self, trigger_id: str) -> list[str]:
        """The audit events of one trigger, oldest first."""
        rows = self.store.query(
            "SELECT event FROM external_trigger_audit WHERE external_trigger_id=? ORDER BY seq", (trigger_id,)
        )
        return [r[0] for r in rows]
