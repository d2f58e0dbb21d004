"""The memory index: a documents table plus an SQLite FTS5 index (agents spec §5.17).

Tables (in the runtime's store, created by :func:`ensure_schema`):

- ``memory_documents`` — one row per ``(agent_id, source_ref)``: kind, scope,
  workspace, title, metadata, ``updated_at``, a change ``fingerprint`` and, for
  namespaces that only the index holds (briefs, work items, …), the ``body``.
- ``memory_fts`` — FTS5 (``unicode61``) over ``title``, the bounded search
  ``body`` and ``grams`` (CJK bigrams); its rowid is the document's id.
- ``memory_cursors`` — how far each runtime table has been indexed.

Search ranks by ``bm25`` ascending, then ``updated_at`` descending; the query
is expanded with CJK bigrams, each whitespace-separated term quoted (so FTS
operators are neutralised) and the terms OR-ed (agents spec §5.17 rule 2).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...tools._errors import HolonNBError

__all__ = [
    "Doc",
    "MemoryIndexUnavailable",
    "fts5_available",
    "ensure_schema",
    "upsert",
    "delete",
    "document_count",
    "forget_executions",
    "search",
    "fts_query",
    "cjk_bigrams",
    "snippet",
    "root_words",
    "safe_text",
    "SEARCH_TEXT_MAX_CHARS",
    "Prepared",
    "batch_payload",
    "prepare",
    "write",
    "write_many",
]

#: Characters of a document's text that go into the full-text index.
SEARCH_TEXT_MAX_CHARS = 32_000
_TITLE_WEIGHT, _BODY_WEIGHT, _GRAMS_WEIGHT = 4.0, 1.0, 1.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_documents (
    id INTEGER PRIMARY KEY, agent_id TEXT NOT NULL, source_ref TEXT NOT NULL, kind TEXT NOT NULL,
    scope_kind TEXT NOT NULL, workspace_id TEXT, source_path TEXT, title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '', metadata TEXT NOT NULL DEFAULT '{}', updated_at TEXT NOT NULL,
    fingerprint TEXT, UNIQUE(agent_id, source_ref)
);
CREATE INDEX IF NOT EXISTS memory_documents_kind ON memory_documents(agent_id, kind);
CREATE TABLE IF NOT EXISTS memory_cursors (
    source TEXT PRIMARY KEY, position INTEGER NOT NULL, updated_at TEXT NOT NULL
);
"""
_FTS = "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(title, body, grams, tokenize='unicode61')"


class MemoryIndexUnavailable(HolonNBError, RuntimeError):
    """The Python ``sqlite3`` module here was built without FTS5, so memory search cannot run."""


def safe_text(text: str) -> str:
    """Text SQLite can store: lone surrogates become U+FFFD and NUL characters are dropped."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", "")


def root_words(home: str | os.PathLike[str] | None, workspace: str | os.PathLike[str] | None) -> Callable[[str], str]:
    """A function that writes the run's own roots as fixed words in text about to be indexed.

    BM25 counts a document's tokens, so a path under a random folder name (a ``mkdtemp`` home
    ``/tmp/holon-nb-run-x_1k/home``: the ``_`` makes two tokens of one name) changed every score of
    a search from one run to the next. The holon home becomes ``$HOLON_HOME``, the workspace
    ``$WORKSPACE``, and a folder directly in the system temporary directory ``$TMPDIR`` (the most
    specific root first). MemoryGet still returns the documents' own text.
    """
    pairs: list[tuple[str, str]] = []
    for value, word in ((home, "$HOLON_HOME"), (workspace, "$WORKSPACE")):
        if value:
            pairs += [(p, word) for p in {str(value).rstrip("/"), os.path.realpath(str(value))} if p]
    pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
    words = dict(pairs)
    tmp = sorted({tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}, key=len, reverse=True)
    alternatives = [re.escape(p) for p, _ in pairs]
    roots = re.compile(f"(?:{'|'.join(alternatives)})(?![^/\\s\"'`:,;)\\]}}])") if alternatives else None
    temp = re.compile(f"(?:{'|'.join(re.escape(t.rstrip('/')) for t in tmp)})/[^/\\s\"'`:,;)\\]}}]+")

    def rewrite(text: str) -> str:
        if roots is not None:
            text = roots.sub(lambda m: words[m.group(0)], text)
        return temp.sub("$TMPDIR", text)

    return rewrite


def _statements(script: str) -> list[str]:
    return [stmt.strip() for stmt in script.split(";") if stmt.strip()]


def fts5_available(execute: Callable[[str], Any]) -> bool:
    """True when this SQLite build has the FTS5 extension (probed with a temporary table).

    Args:
        execute: Runs one SQL statement outside any transaction (``Store.query``).
    """
    try:
        execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.holon_fts5_probe USING fts5(x)")
        execute("DROP TABLE IF EXISTS temp.holon_fts5_probe")
        return True
    except sqlite3.OperationalError:
        return False


def ensure_schema(execute: Callable[[str], Any]) -> bool:
    """Create the memory tables if missing; return whether the FTS5 index exists.

    Args:
        execute: Runs one SQL statement outside any transaction (``Store.query``).

    Without FTS5 the documents table is still created (MemoryGet keeps working)
    and search raises :class:`MemoryIndexUnavailable`.
    """
    for stmt in _statements(_SCHEMA):
        execute(stmt)
    if not fts5_available(execute):
        return False
    execute(_FTS)
    return True


@dataclass
class Doc:
    """One memory document (agents spec §5.17/§5.18 result fields).

    Attributes:
        agent_id: Owner; only the owner can find or fetch it.
        source_ref: Its ``source_ref`` (agents spec §6).
        kind: Result ``kind`` (``brief``, ``tool_command_output``, …).
        scope_kind: ``agent`` or ``workspace``.
        title: Short title.
        body: What MemoryGet returns as ``content``.
        updated_at: RFC 3339 time of the source's last change.
        metadata: Provenance (``governance_surface``, ``trust_class``, ids…).
        workspace_id: Workspace of a workspace-scoped document, if known.
        source_path: File behind the document (agent memory Markdown), if any.
        search_text: What is indexed; None means ``body``.
        fingerprint: Change detector for file-backed sources.
    """

    agent_id: str
    source_ref: str
    kind: str
    scope_kind: str
    title: str
    body: str
    updated_at: str
    metadata: dict[str, Any] = field(default_factory=dict)
    workspace_id: str | None = None
    source_path: str | None = None
    search_text: str | None = None
    fingerprint: str | None = None

    def result(self, max_chars: int) -> dict[str, Any]:
        """The MemoryGet ``memory`` object, ``content`` cut to ``max_chars`` characters."""
        content = self.body[:max_chars]
        out: dict[str, Any] = {
            "kind": self.kind,
            "source_ref": self.source_ref,
            "scope_kind": self.scope_kind,
            "agent_id": self.agent_id,
            "title": self.title,
            "content": content,
            "truncated": len(self.body) > max_chars,
            "updated_at": self.updated_at,
            "metadata": self.metadata,
        }
        if self.workspace_id is not None:
            out["workspace_id"] = self.workspace_id
        if self.source_path is not None:
            out["source_path"] = self.source_path
        return out


_CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2CEAF))


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


_CJK_RUN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]{2,}")


def cjk_bigrams(text: str) -> str:
    """Space-separated bigrams of adjacent CJK characters (``混合搜索`` → ``混合 合搜 搜索``).

    Runs of CJK characters are found with one regular expression, so text without CJK costs one scan.
    """
    grams = [run[i : i + 2] for m in _CJK_RUN.finditer(text) for run in (m.group(),) for i in range(len(run) - 1)]
    return " ".join(grams)


def fts_query(query: str) -> str:
    """The FTS5 MATCH expression for a user query (agents spec §5.17 rule 2).

    The query plus its CJK bigrams is split on whitespace; each term becomes a
    quoted phrase (``"`` doubled) and the phrases are OR-ed.
    """
    text = safe_text(query)
    terms = (text + "\n" + cjk_bigrams(text)).split()
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


@dataclass(frozen=True)
class Prepared:
    """A document ready to write: every value computed (cut, made storable, CJK bigrams), so the write
    transaction only runs SQL (issue 9: tokenising inside the transaction held the lock for seconds)."""

    agent_id: str
    source_ref: str
    values: tuple[Any, ...]
    title: str
    text: str
    grams: str


#: ``json.dumps(metadata, default=str)``, with the encoder made once, not once per document (issue 27 item 7)
_METADATA_JSON = json.JSONEncoder(default=str).encode


def prepare(doc: Doc, *, keep_body: bool) -> Prepared:
    """Compute what :func:`write` stores for ``doc``, outside any transaction.

    The searchable text is cut to :data:`SEARCH_TEXT_MAX_CHARS` *before* it is made storable
    and tokenised, so the cost is bounded whatever the document's size.
    """
    title = safe_text(doc.title[:4096])
    body = safe_text(doc.body) if keep_body else ""
    values = (
        doc.kind,
        doc.scope_kind,
        doc.workspace_id,
        doc.source_path,
        title,
        body,
        _METADATA_JSON(doc.metadata),
        doc.updated_at,
        doc.fingerprint,
    )
    raw = doc.search_text if doc.search_text is not None else doc.body
    text = safe_text(raw[:SEARCH_TEXT_MAX_CHARS])
    return Prepared(doc.agent_id, doc.source_ref, values, title, text, cjk_bigrams(title + "\n" + text))


def upsert(db: sqlite3.Connection, doc: Doc, *, fts: bool, keep_body: bool) -> None:
    """Insert or replace ``doc`` (and its FTS row) inside the open transaction ``db``.

    Args:
        fts: Whether the FTS5 table exists.
        keep_body: Store ``body`` (for namespaces resolved from the index itself).
    """
    write(db, prepare(doc, keep_body=keep_body), fts=fts)


def write(db: sqlite3.Connection, doc: Prepared, *, fts: bool) -> None:
    """Insert or replace a :func:`prepare`-d document (and its FTS row) inside the open transaction ``db``."""
    values, title = doc.values, doc.title
    row = db.execute(
        "SELECT id FROM memory_documents WHERE agent_id=? AND source_ref=?", (doc.agent_id, doc.source_ref)
    ).fetchone()
    if row is not None:
        doc_id = row[0]
        db.execute(
            "UPDATE memory_documents SET kind=?, scope_kind=?, workspace_id=?, source_path=?, title=?,"
            " body=?, metadata=?, updated_at=?, fingerprint=? WHERE id=?",
            (*values, doc_id),
        )
        if fts:
            db.execute("DELETE FROM memory_fts WHERE rowid=?", (doc_id,))
    else:
        cur = db.execute(
            "INSERT INTO memory_documents(agent_id, source_ref, kind, scope_kind, workspace_id,"
            " source_path, title, body, metadata, updated_at, fingerprint)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (doc.agent_id, doc.source_ref, *values),
        )
        doc_id = cur.lastrowid
    if fts:
        db.execute(
            "INSERT INTO memory_fts(rowid, title, body, grams) VALUES (?,?,?,?)", (doc_id, title, doc.text, doc.grams)
        )


def _col(i: int) -> str:
    return f"json_extract(j.value, '$[{i}]')"


_UPSERT_MANY = (
    "INSERT INTO memory_documents(agent_id, source_ref, kind, scope_kind, workspace_id, source_path, title, body,"
    " metadata, updated_at, fingerprint) SELECT "
    + ", ".join(_col(i) for i in range(11))
    + " FROM json_each(?) AS j WHERE true ON CONFLICT(agent_id, source_ref) DO UPDATE SET kind=excluded.kind,"
    " scope_kind=excluded.scope_kind, workspace_id=excluded.workspace_id, source_path=excluded.source_path,"
    " title=excluded.title, body=excluded.body, metadata=excluded.metadata, updated_at=excluded.updated_at,"
    " fingerprint=excluded.fingerprint"
)
_JOIN = (
    " FROM json_each(?) AS j JOIN memory_documents AS d ON d.agent_id = " + _col(0) + " AND d.source_ref = " + _col(1)
)
_FTS_DELETE_MANY = "DELETE FROM memory_fts WHERE rowid IN (SELECT d.id" + _JOIN + ")"
_FTS_INSERT_MANY = (
    "INSERT INTO memory_fts(rowid, title, body, grams) SELECT d.id, "
    + _col(6)
    + ", "
    + _col(11)
    + ", "
    + _col(12)
    + _JOIN
)


def batch_payload(docs: list[Prepared]) -> str | None:
    """The JSON array :func:`write_many` sends to SQLite (build it before the transaction); None when empty.

    A ``source_ref`` given twice keeps its last document.
    """
    latest: dict[tuple[str, str], Prepared] = {}
    for doc in docs:
        latest[(doc.agent_id, doc.source_ref)] = doc
    if not latest:
        return None
    return json.dumps([[d.agent_id, d.source_ref, *d.values, d.text, d.grams] for d in latest.values()])


def write_many(db: sqlite3.Connection, docs: list[Prepared] | str | None, *, fts: bool) -> None:
    """Upsert many :func:`prepare`-d documents inside the open transaction ``db``, in three statements.

    The batch goes to SQLite as one JSON array (``json_each``; pass :func:`batch_payload`'s text to
    build it outside the transaction), so the transaction runs three statements whatever the batch
    size: the writing thread gives up Python's GIL three times instead of three times per document,
    and another busy thread cannot stretch the lock hold (issue 9).
    """
    payload = docs if isinstance(docs, str) or docs is None else batch_payload(docs)
    if payload is None:
        return
    if fts:
        db.execute(_FTS_DELETE_MANY, (payload,))
    db.execute(_UPSERT_MANY, (payload,))
    if fts:
        db.execute(_FTS_INSERT_MANY, (payload,))


def delete(db: sqlite3.Connection, agent_id: str, source_ref: str, *, fts: bool) -> None:
    """Remove a document and its FTS row inside the open transaction ``db``."""
    row = db.execute(
        "SELECT id FROM memory_documents WHERE agent_id=? AND source_ref=?", (agent_id, source_ref)
    ).fetchone()
    if row is None:
        return
    db.execute("DELETE FROM memory_documents WHERE id=?", (row[0],))
    if fts:
        db.execute("DELETE FROM memory_fts WHERE rowid=?", (row[0],))


def forget_executions(db: Any, records: list[tuple[str, str]]) -> None:
    """Delete the documents indexed from execution records ``(id, agent_id)`` (``source_ref``
    ``tool_execution:<id>…``) inside the open transaction ``db``; no memory tables yet is not an error."""
    ranges = [(agent, f"tool_execution:{rid}", f"tool_execution:{rid}~") for rid, agent in records]
    try:
        db.executemany(
            "DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_documents WHERE agent_id=?"
            " AND source_ref >= ? AND source_ref < ?)",
            ranges,
        )
    except sqlite3.OperationalError:  # no full-text index here (FTS5 missing, or never built)
        pass
    try:
        db.executemany("DELETE FROM memory_documents WHERE agent_id=? AND source_ref >= ? AND source_ref < ?", ranges)
    except sqlite3.OperationalError:  # the memory tables are made on first use
        pass


def document_count(read: Callable[[str, tuple[Any, ...]], list[Any]], agent_id: str, kind: str) -> int:
    """How many documents of ``kind`` (``brief``, ``execution``, ...) the agent has; 0 when no memory tables exist."""
    try:
        return int(read("SELECT COUNT(*) FROM memory_documents WHERE agent_id=? AND kind=?", (agent_id, kind))[0][0])
    except sqlite3.OperationalError:  # no memory tables (a runtime without the memory service)
        return 0


def search(
    read: Callable[[str, tuple[Any, ...]], list[Any]],
    query: str,
    *,
    agent_id: str,
    limit: int,
    workspace_id: str | None,
    all_workspaces: bool,
) -> list[dict[str, Any]]:
    """Ranked documents of ``agent_id`` matching ``query`` (agents spec §5.17 rules 2-3).

    Args:
        read: Runs one read query and returns its rows (``Store.query``).

    Visibility: only ``agent_id``'s documents; agent-scoped ones always;
    workspace-scoped ones when ``all_workspaces``, when their workspace is
    ``workspace_id``, or when their workspace is unknown (NULL).

    Returns:
        Up to ``limit`` results ``{kind, source_ref, scope_kind, workspace_id?, agent_id,
        source_path?, title, snippet, score, updated_at, metadata}``.
    """
    match = fts_query(query)
    if not match:
        return []
    rows = read(
        "SELECT d.id, d.source_ref, d.kind, d.scope_kind, d.workspace_id, d.agent_id, d.source_path, d.title,"
        " d.metadata, d.updated_at, bm25(memory_fts, ?, ?, ?) AS score"
        " FROM memory_fts JOIN memory_documents d ON d.id = memory_fts.rowid"
        " WHERE memory_fts MATCH ? AND d.agent_id = ?"
        "   AND (d.scope_kind = 'agent' OR d.workspace_id IS NULL OR ? OR d.workspace_id = ?)"
        " ORDER BY score ASC, d.updated_at DESC LIMIT ?",
        (_TITLE_WEIGHT, _BODY_WEIGHT, _GRAMS_WEIGHT, match, agent_id, int(all_workspaces), workspace_id, limit),
    )
    if not rows:
        return []
    ids = [r[0] for r in rows]
    texts = {
        r[0]: r[1]
        for r in read(f"SELECT rowid, body FROM memory_fts WHERE rowid IN ({','.join('?' * len(ids))})", tuple(ids))
    }
    terms = _terms(query)
    out = []
    for r in rows:
        item: dict[str, Any] = {
            "kind": r[2],
            "source_ref": r[1],
            "scope_kind": r[3],
            "agent_id": r[5],
            "title": r[7],
            "snippet": snippet(texts.get(r[0]) or r[7], terms),
            "score": r[10],
            "updated_at": r[9],
            "metadata": json.loads(r[8] or "{}"),
        }
        if r[4] is not None:
            item["workspace_id"] = r[4]
        if r[6] is not None:
            item["source_path"] = r[6]
        out.append(item)
    return out


def _terms(query: str) -> list[str]:
    text = safe_text(query)
    words = [w for w in re.split(r"\W+", text.lower()) if w]
    return sorted(set(words) | set(cjk_bigrams(text).split()), key=len, reverse=True)


_SNIPPET_RADIUS = 120


def snippet(text: str, terms: Iterable[str]) -> str:
    """About 240 characters of ``text`` around the first query term found (whitespace collapsed).

    Without any term in the text, the first 48 words (upstream's excerpt).
    """
    flat = " ".join(text.split())
    pattern = "|".join(
        rf"(?<!\w){re.escape(t)}(?!\w)" if t.isalnum() and t.isascii() else re.escape(t) for t in terms if t
    )
    found = re.search(pattern, flat, re.IGNORECASE) if pattern else None
    if found is None:
        return " ".join(flat.split(" ")[:48])
    start = max(0, found.start() - _SNIPPET_RADIUS)
    end = min(len(flat), found.start() + _SNIPPET_RADIUS)
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")
