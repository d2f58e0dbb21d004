"""Memory sources, FTS5 search and source_ref resolution (agents spec §5.17-§5.18, §6).

Two ways documents reach the index (tables: :mod:`.memory_index`):

- Producers whose records only the index holds — briefs, work items, plans —
  call :meth:`MemoryService.index` inside the transaction that changed the
  source, so search never sees a half-applied state.
- The runtime's own records — tool executions, tasks, messages — and the
  agent's memory notes are indexed by a catch-up pass that each MemorySearch
  runs first ("pending index work is consumed best-effort first", agents spec §5.17 rule
  1): it reads rows past a stored cursor (``tool_executions`` rowid, ``tasks``
  and ``messages`` ``seq``), so nothing is missed across restarts and no
  other module has to call in.

MemoryGet resolves runtime records from their own tables (never the index),
and index-held namespaces from the documents table; a document of another
agent is indistinguishable from a missing one (agents spec §5.18 rule 3).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ...tools._source_refs import SourceRef, parse_source_ref
from ..core._rows import JOURNALS
from ..core._store import Store, is_busy, now_rfc3339
from ._index import (
    SEARCH_TEXT_MAX_CHARS,
    Doc,
    MemoryIndexUnavailable,
    Prepared,
    batch_payload,
    delete,
    ensure_schema,
    prepare,
    root_words,
    safe_text,
    search,
    upsert,
    write,
    write_many,
)
from ._sources import (
    AGENT_MEMORY_NOTES,
    agent_memory_doc,
    execution_doc,
    execution_docs,
    message_doc,
    task_doc,
)

if TYPE_CHECKING:
    from pathlib import Path

    from ...tools._context import CallContext
    from ._ports import MemoryLoop, MemorySettings, Scrub, WorkspaceStates

__all__ = ["MemoryService", "MemoryView", "MemoryIndexUnavailable", "INDEX_RESOLVED"]

log = logging.getLogger("holon_nb.memory")

#: Namespaces whose authoritative text is the document given to :meth:`MemoryService.index`.
INDEX_RESOLVED = frozenset({"brief", "work_item", "turn", "episode", "workspace_profile"})
#: Rows of each runtime table one search indexes at most before answering.
CATCH_UP_LIMIT = 5000
#: Rows and characters of searchable text one catch-up transaction writes at most (issue 9 target: no
#: write transaction holds the home's lock longer than 50 ms; a full batch takes about 10 ms here).
BATCH_ROWS = 100
BATCH_CHARS = 64_000
#: Longest a MemorySearch spends catching up before it answers (seconds); the background indexer
#: does the rest and ``index_status`` says so.
SEARCH_CATCH_UP_BUDGET_S = 0.5
#: Longest the final indexing pass of a closing runtime runs (seconds).
FLUSH_BUDGET_S = 4.0
#: Longest one background indexing pass runs before it sleeps briefly (seconds).
BACKGROUND_PASS_BUDGET_S = 0.25
#: The background indexer waits until no tool call has run for this long (seconds; issue 27 item 7): in one process
#: its Python work and a call's share the GIL, and a burst of short commands ran ~15 % slower beside it.
QUIET_S = 0.2
#: ... but never longer than this after it first found records to index (seconds): a busy runtime's index lags
#: by at most this much (a MemorySearch catches up on its own first anyway).
MAX_DEFER_S = 5.0
#: Secret values longer than this may be cut rather than scrubbed at the index's cut (characters).
_SCRUB_MARGIN = 4096


def _task_docs(row: dict[str, Any]) -> list[Doc]:
    return [task_doc(Store.task_row(row))]


def _message_docs(row: dict[str, Any]) -> list[Doc]:
    return [message_doc(row)]


#: Catch-up sources: name → (rows after a position, highest position, documents of a row); the statements are the
#: store's journals (:data:`~holon_nb.runtime.core._rows.JOURNALS`).
_SOURCES: dict[str, tuple[str, str, Callable[[dict[str, Any]], list[Doc]]]] = {
    name: (*JOURNALS[name], build)
    for name, build in (("tool_executions", execution_docs), ("tasks", _task_docs), ("messages", _message_docs))
}


def _default_title(text: str, source_ref: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= 120 else line[:119] + "…"
    return source_ref


class MemoryService:
    """Memory sources, FTS5 search and source_ref resolution (agents spec §5.17-§5.18, §6).

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        store: The runtime's store (the index's tables live in it).
        home: The holon home (agent memory documents live under it).
        workspace: The notebook's working directory (with the home, written as fixed words in the index).
        settings: Returns the runtime's current settings (``memory_index_interval_s``).
        loop: The runtime's loop thread (the background indexer runs there).
        scrub: D6: replaces secret values in what the index keeps.
        workspaces: The workspace plane's stored agent state (a search's active workspace).

    The tables are created on construction. When this Python's SQLite lacks
    FTS5, documents are still stored and MemoryGet works, but search raises
    :class:`MemoryIndexUnavailable` (MemorySearch answers ``memory_index_unavailable``).
    """

    def __init__(
        self,
        *,
        store: Store,
        home: Path,
        workspace: Path,
        settings: Callable[[], MemorySettings],
        loop: MemoryLoop,
        scrub: Scrub,
        workspaces: WorkspaceStates,
    ):
        self._store = store
        self.home = home
        self._settings = settings
        self._loop = loop
        self._scrub = scrub
        self.workspaces = workspaces
        self._catch_up_lock = threading.Lock()
        self.fts = ensure_schema(self._store.query)
        self._root_words = root_words(home, workspace)
        self._scope: anyio.CancelScope | None = None
        self._wake: anyio.Event | None = None
        self.batch_sizes: list[tuple[int, float]] = []  #: (rows, seconds) of the last catch-up transactions

    def start(self) -> None:
        """Start the background indexer (``settings.memory_index_interval_s``; 0 leaves it to searches)."""
        if float(self._settings().memory_index_interval_s) > 0:
            self._loop.portal_call(self._loop.start_soon, self._background)

    def bind(self, call: CallContext) -> MemoryView:
        """The view one tool call sees: its agent's documents only."""
        return MemoryView(self, call)

    async def close(self) -> None:
        """Stop the background indexer (what is left is indexed by :meth:`flush`)."""
        if self._scope is not None:
            self._scope.cancel()

    async def _background(self) -> None:
        """Keep the index caught up: a short pass every ``memory_index_interval_s`` seconds while there is
        lag (issue 9: a search no longer catches up 500 commands inside one transaction), once no tool call has
        run for :data:`QUIET_S` (at most :data:`MAX_DEFER_S` late: issue 27 item 7). Failures
        (a locked store) are logged once per streak and retried with backoff; nothing escapes."""
        interval = float(self._settings().memory_index_interval_s)
        failures = 0
        deferred_since: float | None = None  # when records to index were first left for a quiet moment
        with anyio.CancelScope() as scope:
            self._scope = scope
            while True:
                delay = interval
                try:
                    if self._lag() > 0:
                        now, quiet = time.monotonic(), self._loop.quiet_for()
                        deferred_since = now if deferred_since is None else deferred_since
                        if quiet < QUIET_S and now - deferred_since < MAX_DEFER_S:  # calls are running: wait
                            await anyio.sleep(max(0.05, QUIET_S - quiet))
                            continue
                        deferred_since = None
                        status = await anyio.to_thread.run_sync(self._background_pass)
                        if status is not None and status.get("lag"):
                            delay = 0.05  # more to do: a short breath for others, then go on
                    failures = 0
                except Exception as exc:  # noqa: BLE001 - the indexer retries; it never ends the loop
                    failures += 1
                    if failures == 1:
                        log.warning("memory: background indexing failed; retrying", exc_info=not is_busy(exc))
                    delay = min(30.0, interval * 2**failures)
                await anyio.sleep(delay)

    def _background_pass(self) -> dict[str, Any] | None:
        with self._store.patience(0.5):  # a locked home: give up soon, the next pass retries
            return self.catch_up(budget_s=BACKGROUND_PASS_BUDGET_S, wait=False)

    def _lag(self) -> int:
        cursor = high = 0
        for source, (_, high_sql, _) in _SOURCES.items():
            cursor += self._cursor(source)
            high += int(self._store.query(high_sql)[0][0])
        return max(0, high - cursor)

    async def flush(self) -> None:
        """Index what this process recorded before it goes away (best effort; the runtime calls it last when it
        closes, after live tasks ended).

        D6: an index pass in a later process scrubs with *that* process's secrets, so raw text this one
        still knows to be secret (task log heads, message bodies) would be indexed in clear there.
        """
        try:
            # bounded, so it ends well inside the runtime's 10 s stop window (the store closes after it)
            status = await anyio.to_thread.run_sync(lambda: self.catch_up(budget_s=FLUSH_BUDGET_S))
        except Exception:  # noqa: BLE001 - closing must go on; the next search catches up instead
            log.warning("memory: indexing at close failed; the next search catches up", exc_info=True)
            return
        if status and status.get("lag"):
            log.info("memory: %d records were left for the next runtime to index", status["lag"])

    # ------------------------------------------------------------ producers
    def index(
        self,
        db: Any,
        *,
        agent_id: str,
        source_ref: str,
        source_kind: str,
        text: str,
        title: str | None = None,
        updated_at: str | None = None,
        workspace_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Add or replace one searchable document inside the caller's open transaction ``db``.

        Producers (work items, plans, briefs, notes) call this in the same transaction as
        the write that changed the source, so search never sees a half-applied state. For
        ``brief``, ``work_item``, ``turn``, ``episode`` and ``workspace_profile`` refs the
        ``text`` is also what MemoryGet returns as ``content``.

        Args:
            db: The open transaction (``with rt.store.tx() as db:``).
            agent_id: The owning agent; only it can find or fetch the document.
            source_ref: Its ref per agents spec §6 (``work_item:work_…``, ``brief:brief_…``).
            source_kind: The result ``kind`` (``work_item``, ``brief``, …).
            text: The document text.
            title: Short title; None means the first non-blank line of ``text``.
            updated_at: RFC 3339 time of the change; None means now.
            workspace_id: Workspace of a workspace-scoped document; None means visible
                from every workspace.
            metadata: Extra provenance merged into the result's ``metadata``.

        Raises:
            ValueError: when ``source_ref`` does not follow the agents spec §6 grammar (a producer bug).
        """
        ref = parse_source_ref(source_ref)
        doc = Doc(
            agent_id=agent_id,
            source_ref=str(ref),
            kind=source_kind,
            scope_kind=ref.scope_kind,
            title=title or _default_title(text, str(ref)),
            body=text,
            updated_at=updated_at or now_rfc3339(),
            workspace_id=workspace_id,
            metadata={"governance_surface": "runtime_evidence", "trust_class": "runtime_evidence", **(metadata or {})},
        )
        upsert(db, self._scrubbed(doc), fts=self.fts, keep_body=True)

    def unindex(self, db: Any, *, agent_id: str, source_ref: str) -> None:
        """Remove a document inside the caller's open transaction (no error when absent)."""
        delete(db, agent_id, source_ref, fts=self.fts)

    # ------------------------------------------------------------ catch-up
    def _scrubbed(self, doc: Doc) -> Doc:
        """``doc`` with secret values (D6) removed from what the index stores and snippets show, and the
        run's roots written as fixed words (:func:`~holon_nb.runtime.memory._index.root_words`).

        Runtime records keep canonical text; the index is written once, so a later
        process that no longer knows a secret cannot reveal it through a snippet.
        """
        scrub = self._scrub
        # only what the index keeps is scrubbed: cut first with a margin, so a secret that starts
        # before the index's cut is still whole when scrubbed (bounded cost for a 16 MB text)
        text = doc.search_text if doc.search_text is not None else doc.body
        doc.title, text = doc.title[:_SCRUB_MARGIN], text[: SEARCH_TEXT_MAX_CHARS + _SCRUB_MARGIN]
        doc.title, text = scrub(doc.title), scrub(text)
        # scores must not depend on where this run's roots are (issue 24): the roots become fixed words
        doc.title, doc.search_text = self._root_words(doc.title), self._root_words(text)
        return doc

    def _cursor(self, source: str) -> int:
        rows = self._store.query("SELECT position FROM memory_cursors WHERE source=?", (source,))
        return int(rows[0][0]) if rows else 0

    def catch_up(
        self, limit: int = CATCH_UP_LIMIT, *, budget_s: float | None = None, wait: bool = True
    ) -> dict[str, Any] | None:
        """Index runtime records written since the last pass; return the ``index_status``.

        Documents are built, scrubbed and tokenised outside any transaction, then written in
        small transactions (at most :data:`BATCH_ROWS` rows each, three statements, advancing the
        cursor past the rows it holds), so another kernel on the home never waits long for
        the write lock. At most ``limit`` rows per source are consumed, and no more than
        ``budget_s`` seconds are spent when given; the rest wait for the next pass and the
        status says so (``consumption_was_limited``, ``lag``).

        Args:
            limit: Rows per source at most.
            budget_s: Seconds to spend at most (None: no time limit).
            wait: False returns None at once when another pass is running.
        """
        if not self._catch_up_lock.acquire(blocking=wait):
            return None
        try:
            deadline = None if budget_s is None else time.monotonic() + budget_s
            limited = False
            skipped = 0
            for source, (select, _, build) in _SOURCES.items():
                pos = self._cursor(source)
                if deadline is not None and time.monotonic() >= deadline:
                    limited = True
                    break
                rows = self._store.query(select, (pos, limit))
                if not rows:
                    continue
                prepared: list[tuple[int, list[Prepared]]] = []
                for row in rows:
                    try:
                        docs = [prepare(self._scrubbed(d), keep_body=False) for d in build(dict(row))]
                    except Exception:  # one malformed record must not block the index
                        skipped += 1
                        docs = []
                        log.exception("memory: could not index %s row at %s", source, row["pos"])
                    prepared.append((row["pos"], docs))
                    if deadline is not None and time.monotonic() >= deadline:
                        break
                done = self._write_batches(source, prepared)
                limited |= len(rows) >= limit or done < len(rows)
            return self.index_status(limited=limited, skipped=skipped)
        finally:
            self._catch_up_lock.release()

    def _write_batches(self, source: str, prepared: list[tuple[int, list[Prepared]]]) -> int:
        """Write prepared rows in small transactions (at most :data:`BATCH_ROWS` rows and about
        :data:`BATCH_CHARS` characters each, three statements per transaction); return rows written.

        Each transaction also advances the source's cursor past the rows it holds.
        """
        i = 0
        while i < len(prepared):
            first, chars, docs = i, 0, []
            while i < len(prepared) and (i == first or (i - first < BATCH_ROWS and chars < BATCH_CHARS)):
                docs += prepared[i][1]
                chars += sum(len(d.text) + len(d.values[5]) for d in prepared[i][1])
                i += 1
            payload = batch_payload(docs)  # encoded before the transaction
            with self._store.tx(unversioned=True) as db:  # no cached read depends on the index
                started = time.perf_counter()
                write_many(db, payload, fts=self.fts)
                db.execute(
                    "INSERT INTO memory_cursors(source, position, updated_at) VALUES (?,?,?)"
                    " ON CONFLICT(source) DO UPDATE SET position=excluded.position,"
                    " updated_at=excluded.updated_at",
                    (source, prepared[i - 1][0], now_rfc3339()),
                )
            self.batch_sizes = [*self.batch_sizes[-99:], (i - first, time.perf_counter() - started)]
        return i

    def index_status(self, *, limited: bool = False, skipped: int = 0) -> dict[str, Any]:
        """``index_status`` of MemorySearch (agents spec §5.17): cursors and high watermarks summed over sources."""
        cursor = high = 0
        for source, (_, high_sql, _) in _SOURCES.items():
            cursor += self._cursor(source)
            high += int(self._store.query(high_sql)[0][0])
        lag = max(0, high - cursor)
        status: dict[str, Any] = {
            "freshness": "fresh" if lag == 0 else "stale",
            "cursor": cursor,
            "high_watermark": high,
            "lag": lag,
        }
        if lag:
            status.update(indexing_needed=True, results_may_be_incomplete=True)
            if limited:
                status["consumption_was_limited"] = True
        if skipped:
            status["skipped_error_count"] = skipped
        last = self._store.query("SELECT MAX(updated_at) FROM memory_cursors")[0][0]
        if last:
            status["last_indexed_at"] = last
        return status

    def refresh_notes(self, agent_id: str) -> None:
        """Re-index ``agent_id``'s memory notes whose files changed, appeared or vanished."""
        for name in AGENT_MEMORY_NOTES:
            ref = f"agent_memory:{name}"
            doc = agent_memory_doc(self.home, agent_id, name)
            rows = self._store.query(
                "SELECT fingerprint FROM memory_documents WHERE agent_id=? AND source_ref=?", (agent_id, ref)
            )
            stored = rows[0][0] if rows else None
            if doc is None and rows:
                with self._store.tx() as db:
                    delete(db, agent_id, ref, fts=self.fts)
            elif doc is not None and (not rows or stored != doc.fingerprint):
                ready = prepare(self._scrubbed(doc), keep_body=False)  # tokenised outside the transaction
                with self._store.tx() as db:
                    write(db, ready, fts=self.fts)

    # ------------------------------------------------------------ reads
    def search(
        self, agent_id: str, query: str, *, limit: int, workspace_id: str | None = None, all_workspaces: bool = False
    ) -> dict[str, Any]:
        """Catch up, then search ``agent_id``'s documents (agents spec §5.17).

        Returns:
            ``{results: [...], index_status: {...}}``.

        Raises:
            MemoryIndexUnavailable: when SQLite lacks FTS5.
        """
        if not self.fts:
            raise MemoryIndexUnavailable(
                "this Python's sqlite3 module was built without the FTS5 extension, so memory search is "
                "unavailable; use a Python whose SQLite has FTS5 (python.org and most distribution builds do)"
            )
        status = self.catch_up(budget_s=SEARCH_CATCH_UP_BUDGET_S)
        assert status is not None
        self.refresh_notes(agent_id)
        results = search(
            self._store.query,
            safe_text(query),
            agent_id=agent_id,
            limit=limit,
            workspace_id=workspace_id,
            all_workspaces=all_workspaces,
        )
        return {"results": results, "index_status": status}

    def resolve(self, agent_id: str, ref: SourceRef) -> Doc | None:
        """The document ``ref`` names if ``agent_id`` owns it, else None (agents spec §5.18 rule 3)."""
        if ref.prefix == "tool_execution":
            row = self._store.execution(ref.id)
            return execution_doc(row, ref) if row and row["agent_id"] == agent_id else None
        if ref.prefix == "task":
            rec = self._store.task(ref.id)
            return task_doc(rec) if rec and rec["agent_id"] == agent_id else None
        if ref.prefix == "message":
            msg = self._store.message(ref.id)
            return message_doc(msg) if msg is not None and msg["agent_id"] == agent_id else None
        if ref.prefix == "agent_memory":
            return agent_memory_doc(self.home, agent_id, ref.id)
        rows = self._store.query(
            "SELECT * FROM memory_documents WHERE agent_id=? AND source_ref=?", (agent_id, str(ref))
        )
        if not rows or ref.prefix not in INDEX_RESOLVED:
            return None
        r = rows[0]
        return Doc(
            agent_id=r["agent_id"],
            source_ref=r["source_ref"],
            kind=r["kind"],
            scope_kind=r["scope_kind"],
            title=r["title"],
            body=r["body"],
            updated_at=r["updated_at"],
            metadata=json.loads(r["metadata"] or "{}"),
            workspace_id=r["workspace_id"],
            source_path=r["source_path"],
        )


class MemoryView:
    """One call's view of memory: the caller's documents only.

    Args:
        service: The runtime's :class:`MemoryService`.
        call: The call context (``agent_id`` decides visibility).
    """

    def __init__(self, service: MemoryService, call: CallContext):
        self._service = service
        self.call = call

    def _active_workspace_id(self) -> str | None:
        """The caller's active workspace id, read without creating workspace state (None if unknown)."""
        try:
            state = self._service.workspaces.agent_state(self.call.agent_id)
        except (TypeError, ValueError, sqlite3.Error):  # the workspace plane cannot tell:
            return None  # workspace-scoped documents of other workspaces then stay hidden
        active = (state or {}).get("active") or {}
        value = active.get("workspace_id") if isinstance(active, dict) else None
        return value if isinstance(value, str) else None

    async def search(self, query: str, *, limit: int, include_all_workspaces: bool) -> dict[str, Any]:
        """MemorySearch for the caller (runs off the loop thread).

        Raises:
            ToolFailure: ``memory_index_unavailable`` when SQLite lacks FTS5.
        """
        workspace_id = None if include_all_workspaces else self._active_workspace_id()
        try:
            return await anyio.to_thread.run_sync(
                lambda: self._service.search(
                    self.call.agent_id,
                    query,
                    limit=limit,
                    workspace_id=workspace_id,
                    all_workspaces=include_all_workspaces,
                )
            )
        except MemoryIndexUnavailable as exc:
            raise ToolFailure(
                ToolError(
                    kind="memory_index_unavailable",
                    message=str(exc),
                    details={"tool_name": "MemorySearch", "reason": "sqlite_fts5_missing"},
                    recovery_hint="MemoryGet still works for known refs; run the kernel on a Python whose SQLite has FTS5.",
                )
            ) from None

    async def get(self, ref: SourceRef) -> Doc | None:
        """The caller's document named by ``ref``, or None (missing and foreign alike)."""
        return await anyio.to_thread.run_sync(lambda: self._service.resolve(self.call.agent_id, ref))
