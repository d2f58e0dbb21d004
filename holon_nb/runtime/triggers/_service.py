"""External triggers (workspace spec §14): capabilities, their URL, deliveries as coalescing wake hints.

``CreateExternalTrigger`` returns the caller's one default capability (idempotent); its URL is
``<callback base>/api/callbacks/wake/<token>``. The local callback server starts when the first
active trigger exists. A POST to the URL wakes the agent: when it waits on an ``external`` wake
(``WaitFor`` with ``wake = "external"``) the delivery queues a ``callback_event`` correlated with
that wait, which wakes it (a following ``%%agent --follow`` run resumes); otherwise one hint
message stays queued and further deliveries coalesce into it. A delivery never completes a
WorkItem. The token appears only in the in-memory result returned to the caller of
CreateExternalTrigger (``trigger_url``) and in command tasks' ``HOLON_EXTERNAL_TRIGGER_URL``; it is never
logged, and everything shown or stored has it as ``cb_[redacted]`` (D6, issue 25). At rest only its hash
is kept: the process that minted a token keeps it in memory to rebuild the URL (an idempotent create,
the command variable); a later process adds a token of its own to the active trigger when it is asked
for the URL (:meth:`TriggerService.create`), and the earlier URLs keep working until revocation.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ..core._clock import fmt, utcnow
from ._records import TriggerRecords, new_token
from ._server import CallbackServer

if TYPE_CHECKING:
    from ..core._store import Store
    from ._ports import TriggerSettings, TriggerWork

__all__ = ["TriggerService", "wake_hint_text"]

log = logging.getLogger("holon_nb.runtime.triggers")


def wake_hint_text(trigger_id: str, body: bytes, content_type: str | None) -> str:
    """The text of a wake-hint message: which trigger fired and how big its (opaque) payload was."""
    kind = f", {content_type}" if content_type else ""
    return (
        f"External trigger {trigger_id} was delivered (wake hint; payload {len(body)} bytes{kind}, not "
        "shown). Something outside the runtime asked you to look again: check the state you were waiting on."
    )


class TriggerService:
    """The trigger plane of one runtime.

    Args:
        store: The runtime's store.
        work: The work plane as :class:`~.ports.TriggerWork` (``enqueue``, ``waits_of``, ``queued``): the one
            path that wakes waits.
        settings: The runtime's current settings (``callback_base_url``, ``callback_port``).
        start_soon: Starts a background coroutine in the runtime's task group (loop thread only).
        from_thread: ``(fn, *args)`` runs ``fn`` on the loop from another thread and waits (the loop's portal);
            :meth:`start` uses it to start the server for triggers of an earlier session.
    """

    def __init__(
        self,
        store: Store,
        work: TriggerWork,
        settings: Callable[[], TriggerSettings],
        start_soon: Callable[..., None],
        from_thread: Callable[..., Any] | None = None,
    ):
        self.store = store
        self.work = work
        self._settings = settings
        self.records = TriggerRecords(store)
        self._start_soon = start_soon
        self._from_thread = from_thread
        self.server = CallbackServer(self.deliver, start_soon)
        #: the tokens this process minted, by trigger id (memory only: the store keeps their hashes)
        self._tokens: dict[str, str] = {}

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """At runtime start, serve again when triggers of an earlier session are still active (their URLs
        keep working across a kernel restart when ``callback_port`` is fixed); otherwise the server starts
        with the first trigger (:meth:`ensure_server`)."""
        if self.records.any_active() and self._from_thread is not None:
            self._from_thread(self._start_soon, self._serve_existing)

    async def _serve_existing(self) -> None:
        try:
            await self.ensure_server()
        except OSError as exc:
            log.warning("the callback server for existing external triggers could not start: %s", exc)

    async def close(self) -> None:
        """Stop the callback server."""
        await self.server.stop()

    async def ensure_server(self) -> int:
        """Start the callback server if it is not serving; return its port."""
        return await self.server.ensure_started(int(self._settings().callback_port or 0))

    def base_url(self) -> str:
        """``callback_base_url`` without a trailing ``/``, else ``http://127.0.0.1:<port>`` of the server."""
        base = str(self._settings().callback_base_url or "").strip().rstrip("/")
        if base:
            return base
        port = self.server.port or int(self._settings().callback_port or 0)
        return f"http://127.0.0.1:{port}"

    def url_for(self, token: str) -> str:
        """The capability URL of ``token`` (workspace spec §14.1 rule 3)."""
        return f"{self.base_url()}/api/callbacks/wake/{token}"

    # ------------------------------------------------------------ tools
    async def create(self, agent_id: str) -> dict[str, Any]:
        """CreateExternalTrigger: the agent's active default trigger, minted if none (workspace spec §14.1)."""
        try:
            await self.ensure_server()
        except OSError as exc:
            raise ToolFailure(
                ToolError(
                    kind="tool_execution_failed",
                    message=f"the callback server could not listen on 127.0.0.1:{self._settings().callback_port}: {exc}",
                    details={"reason": "callback_server_unavailable", "port": self._settings().callback_port},
                    recovery_hint="Set HolonNB.callback_port to a free port (0 picks one).",
                )
            ) from None
        row = self.records.active_default(agent_id)
        if row is None:
            token = new_token()
            row = self.records.create(f"trigger_{secrets.token_hex(8)[:15]}", agent_id, token, fmt(utcnow()))
        else:
            token = self._tokens.get(row["id"], "")
            if not token or not self.records.has_token(row["id"], token):  # minted elsewhere: only its hash
                token = new_token()
                self.records.add_token(row["id"], agent_id, token, fmt(utcnow()))
        self._tokens[row["id"]] = token
        return {
            "external_trigger_id": row["id"],
            "trigger_url": self.url_for(token),
            "target_agent_id": agent_id,
            "delivery_mode": "wake_hint",
            "status": "active",
            "summary_text": f"external trigger {row['id']} is active (wake_hint)",
        }

    def cancel(self, agent_id: str, trigger_id: str) -> dict[str, Any]:
        """CancelExternalTrigger (workspace spec §14.2): revoke; idempotent; another agent's trigger is "not found"."""
        rec = self.records.get(trigger_id)
        if rec is None or rec["target_agent_id"] != agent_id:
            raise ToolFailure(
                ToolError(
                    kind="tool_execution_failed",
                    message=f"external trigger {trigger_id} not found",
                    details={"reason": "external_trigger_not_found", "external_trigger_id": trigger_id},
                    recovery_hint="Use the external_trigger_id CreateExternalTrigger returned to this agent.",
                )
            )
        if rec["status"] != "revoked":
            rec = self.records.revoke(trigger_id, fmt(utcnow()))
        return {**rec, "summary_text": f"external trigger {trigger_id} is {rec['status']}"}

    def list(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's triggers (public records, no token), newest first."""
        return self.records.owned_by(agent_id)

    def env_for(self, agent_id: str) -> dict[str, str]:
        """``{"HOLON_EXTERNAL_TRIGGER_URL": url}`` for an agent with an active trigger whose token this
        process holds (it minted it, or CreateExternalTrigger added one here), else ``{}``."""
        if not self.server.running and not self._settings().callback_base_url:
            return {}  # first: no query per command while no trigger serves (issue 12)
        row = self.records.active_default(agent_id)
        token = self._tokens.get(row["id"]) if row is not None else None
        if token is None:
            return {}
        return {"HOLON_EXTERNAL_TRIGGER_URL": self.url_for(token)}

    # ------------------------------------------------------------ deliveries
    async def deliver(self, token: str, body: bytes, content_type: str | None) -> dict[str, Any] | None:
        """Count a delivery and wake the target agent (coalescing); None for an unknown or revoked token.

        While another process holds the home's write lock, each write waits for it without blocking the
        runtime's loop (``Store.write``); the caller answers only once the delivery is recorded.

        Raises:
            StoreBusy: the lock stayed taken past ``store_busy_timeout_s``.
        """
        if not self.records.known(token):  # read first: an unknown token never waits for the lock
            return None
        rec = await self.store.write(lambda: self.records.record_delivery(token, fmt(utcnow())))
        if rec is None:
            return None
        trigger_id, agent_id = rec["external_trigger_id"], rec["target_agent_id"]
        wait_id = self._external_wait(agent_id, trigger_id)
        if wait_id is None and self._pending_hint(agent_id, trigger_id):
            return {"external_trigger_id": trigger_id, "coalesced": True, "woke_wait": False}
        text = wake_hint_text(trigger_id, body, content_type)
        metadata = {
            "delivery_surface": "http_callback_wake",
            "admission_context": "external_trigger_capability",
            "authority_class": "integration_signal",
            "delivery_mode": "wake_hint",
            "payload_bytes": len(body),
        }
        origin = {"kind": "external", "external_trigger_id": trigger_id}
        refs = {"external_trigger_id": trigger_id, **({"wait_id": wait_id} if wait_id else {})}
        msg = await self.store.write(
            lambda: self.work.enqueue(
                agent_id,
                "callback_event",
                text,
                origin=origin,
                authority="integration_signal",
                source_refs=refs,
                metadata=metadata,
            )
        )
        return {"external_trigger_id": trigger_id, "coalesced": False, "woke_wait": bool(msg.get("triggered_wait_id"))}

    def _external_wait(self, agent_id: str, trigger_id: str) -> str | None:
        """The agent's most recent active wait on an ``external`` wake this trigger may wake, or None."""
        waits = sorted(
            self.work.waits_of(agent_id, ("active",)), key=lambda w: (w["updated_at"], w["seq"]), reverse=True
        )
        for wait in waits:
            sources = wait.get("wake_sources") or []
            if isinstance(sources, list) and any(
                s.get("kind") == "external_ingress" and s.get("external_trigger_id") in (None, trigger_id)
                for s in sources
                if isinstance(s, dict)
            ):
                return str(wait["id"])
        return None

    def _pending_hint(self, agent_id: str, trigger_id: str) -> bool:
        """True when a hint of this trigger is still queued (a further delivery coalesces into it)."""
        return any(
            isinstance(m.get("source_refs"), dict) and m["source_refs"].get("external_trigger_id") == trigger_id
            for m in self.work.queued(agent_id)
            if m["kind"] == "callback_event"
        )
