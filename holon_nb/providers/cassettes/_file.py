"""The cassette file: JSON Lines records, reading and atomic writing (turn-loop spec §4.3 "File").

One record per line, in the order they happened::

    {"kind":"header","format":"holon_nb.cassette","version":1,"route_ref":…,"transport":…,
     "schema_contract":…,"tools_fingerprint":"sha256:…","id_seed":…,"tools":{name: "sha256:…"},
     "tool_specs":[…],"provider":{…},"recorded_at":…}
    {"kind":"interaction","seq":0,"round":1,"attempt":1,"key":"sha256:…","components":{…},
     "request":{…},"outcome":{"type":"error",…}|{"type":"response","response":{…}},
     "timing":{"started_at":…,"duration_ms":…,"backoff_ms":…}}
    {"kind":"tool","seq":2,"round":1,"tool_use_id":…,"name":…,"input_sha256":…,"envelope":{…},
     "receipt":"…","is_error":false,"timing":{"duration_ms":…}}
    {"kind":"footer","interactions":2,"tools":1,"terminal":"completed"}

``tools`` (per-tool fingerprints, to name what changed), ``tool_specs`` (the normalized, lowered
tools), ``provider`` (the recorded provider's capability answers, so a replay without the real
provider answers the same) and ``recorded_at`` are holon_nb additions to the abridged header of
turn-loop spec §4.3. An interaction whose request carries the header's tools stores ``"tools":
"<tools_fingerprint>"`` instead of repeating them; :func:`read_cassette` puts them back. Files are UTF-8, ``\\n``-separated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import CassetteFormatError

__all__ = ["FORMAT", "CassetteFile", "CassetteWriter", "cassette_path", "read_cassette"]

#: The ``format`` of every header.
FORMAT = "holon_nb.cassette"
#: Major versions this code reads.
READABLE_VERSIONS = frozenset({1})


def cassette_path(notebook: str | os.PathLike[str], cell_id: str) -> Path:
    """Where the cassette of one cell lives: ``<dir>/<stem>.holon/cassettes/<cell-id>.jsonl`` beside the notebook
    (``demo.ipynb`` → ``demo.holon/cassettes/``; turn-loop spec §4.3).

    Raises:
        ValueError: when ``cell_id`` is empty or not a plain file name (nbformat ≥ 4.5 ids are
            ``[a-zA-Z0-9-_]{1,64}``).
    """
    if not cell_id or "/" in cell_id or "\\" in cell_id or cell_id in {".", ".."}:
        raise ValueError(f"not a cell id: {cell_id!r}")
    nb = Path(notebook)
    stem = nb.name[: -len(".ipynb")] if nb.name.endswith(".ipynb") else nb.stem
    return nb.parent / f"{stem}.holon" / "cassettes" / f"{cell_id}.jsonl"


@dataclass
class CassetteFile:
    """A parsed cassette.

    Attributes:
        path: Where it was read from.
        header: The header record.
        interactions: Interaction records in file order.
        tools: Tool records in file order.
        footer: The footer record, or None when the file has none.
    """

    path: Path
    header: dict[str, Any]
    interactions: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    footer: dict[str, Any] | None = None


def read_cassette(path: str | os.PathLike[str]) -> CassetteFile:
    """Read and check a cassette file.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        CassetteFormatError: on a line that is not a JSON object, a missing or foreign header, an
            unreadable major version, or an unknown record kind.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    header: dict[str, Any] | None = None
    out: CassetteFile | None = None
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CassetteFormatError(f"{p}:{lineno}: not JSON ({exc.msg})", path=str(p)) from None
        if not isinstance(rec, dict):
            raise CassetteFormatError(f"{p}:{lineno}: a record must be a JSON object", path=str(p))
        kind = rec.get("kind")
        if header is None:
            header = _check_header(p, rec)
            out = CassetteFile(p, header)
            continue
        assert out is not None
        if kind == "interaction":
            out.interactions.append(rec)
        elif kind == "tool":
            out.tools.append(rec)
        elif kind == "footer":
            out.footer = rec
        else:
            raise CassetteFormatError(f"{p}:{lineno}: unknown record kind {kind!r}", path=str(p))
    if out is None:
        raise CassetteFormatError(f"{p}: empty cassette (no header)", path=str(p))
    specs, fingerprint = out.header.get("tool_specs"), out.header.get("tools_fingerprint")
    for rec in out.interactions:  # a request whose tools are the header's stores only their fingerprint
        request = rec.get("request")
        if (
            isinstance(request, dict)
            and isinstance(request.get("tools"), str)
            and specs is not None
            and request["tools"] == fingerprint
        ):
            request["tools"] = specs
    return out


def _check_header(p: Path, rec: dict[str, Any]) -> dict[str, Any]:
    if rec.get("kind") != "header" or rec.get("format") != FORMAT:
        raise CassetteFormatError(f"{p}: first line is not a {FORMAT} header", path=str(p))
    version = rec.get("version")
    if not isinstance(version, int) or version not in READABLE_VERSIONS:
        raise CassetteFormatError(
            f"{p}: cassette version {version!r} is not readable by this holon_nb (reads {sorted(READABLE_VERSIONS)})",
            path=str(p),
        )
    return rec


class CassetteWriter:
    """Writes records to ``<path>.recording`` and renames it over ``path`` on :meth:`commit`, so an
    interrupted recording never replaces a good cassette.

    Args:
        path: The cassette file (parent directories are created).
        transform: Applied to every record before it is written (D6 scrubbing, then the ``redact_hook``).
    """

    def __init__(self, path: str | os.PathLike[str], transform: Callable[[dict[str, Any]], dict[str, Any]]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".recording")
        self._fh = self._tmp.open("w", encoding="utf-8", newline="\n")
        self._transform = transform
        self.count = 0

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        """Transform, write and flush one record; returns the record as written."""
        rec = self._transform(record)
        self._fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
        self._fh.flush()
        self.count += 1
        return rec

    def commit(self) -> None:
        """Close the file and move it into place (idempotent)."""
        if self._fh.closed:
            return
        self._fh.close()
        os.replace(self._tmp, self.path)
