"""Drift reports: what differs between a recording and a live run (turn-loop spec §4.3 "Drift").

(1) :func:`preflight_drift` compares the header with the live run before any model call
(major version, transport, route ref, schema contract, tools fingerprint; a tools mismatch names the
tools whose lowered schema or description changed). (2) :func:`request_drift` explains a key
mismatch: first differing component, first differing JSON pointer, ≤ 40-line unified diff of that
component. (3) :func:`unconsumed_drift` reports leftovers at cell end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._canonical import bounded_diff, first_difference, json_pointer
from ._errors import RERECORD_HINT, CassetteDrift
from ._normalize import COMPONENTS, component_fingerprints, component_values

__all__ = ["changed_tools", "preflight_drift", "request_drift", "unconsumed_drift"]

#: Header fields compared by the preflight, in this order.
_HEADER_FIELDS = ("transport", "route_ref", "schema_contract")


def changed_tools(recorded: Mapping[str, str], live: Mapping[str, str]) -> list[str]:
    """Names of tools added, removed or whose fingerprint differs (sorted)."""
    return sorted(n for n in set(recorded) | set(live) if recorded.get(n) != live.get(n))


def preflight_drift(header: Mapping[str, Any], live: Mapping[str, Any], path: str) -> CassetteDrift | None:
    """Compare the header with the live run; None when they agree.

    Args:
        header: The cassette header.
        live: ``transport``, ``route_ref``, ``schema_contract`` (each may be None: not checked),
            ``tools_fingerprint`` and ``tools`` (``{name: fingerprint}``) of the live run.
        path: The cassette file, for the message.
    """
    for name in _HEADER_FIELDS:
        want = live.get(name)
        if want is not None and header.get(name) != want:
            return CassetteDrift(
                f"cassette {path}: recorded with {name}={header.get(name)!r}, this run uses {want!r}; {RERECORD_HINT}",
                kind="preflight",
                component="contract",
                field=name,
                path=path,
            )
    live_fp = live.get("tools_fingerprint")
    if live_fp is not None and header.get("tools_fingerprint") != live_fp:
        names = changed_tools(header.get("tools") or {}, live.get("tools") or {})
        return CassetteDrift(
            f"cassette {path}: tools changed since recording: {', '.join(names) or '(order or set)'} "
            f"(lowered schema or description differs); {RERECORD_HINT}",
            kind="preflight",
            component="tools",
            tools=names,
            field="tools_fingerprint",
            path=path,
        )
    return None


def _pointer(component: str, recorded: Mapping[str, Any], live: Mapping[str, Any]) -> str:
    rec_v, live_v = component_values(recorded)[component], component_values(live)[component]
    diff = first_difference(rec_v, live_v) or []
    if component == "history_prefix":
        return json_pointer(["conversation", *diff])
    if component == "tail":
        index = max(len(live.get("conversation") or []) - 1, 0)
        return json_pointer(["conversation", index, *diff[1:]])
    return json_pointer([component, *diff])


def request_drift(record: Mapping[str, Any], live_request: Mapping[str, Any], path: str) -> CassetteDrift:
    """The drift error for a live request whose key differs from the recorded interaction ``record``."""
    recorded = record.get("request") or {}
    rec_fp = record.get("components") or component_fingerprints(recorded)
    live_fp = component_fingerprints(live_request)
    component = next((c for c in COMPONENTS if rec_fp.get(c) != live_fp[c]), "tail")
    pointer = _pointer(component, recorded, live_request)
    diff = bounded_diff(component_values(recorded)[component], component_values(live_request)[component], component)
    seq, rnd, attempt = record.get("seq"), record.get("round"), record.get("attempt")
    return CassetteDrift(
        f"cassette {path}: request drift at seq {seq} (round {rnd}, attempt {attempt}): component {component} "
        f"differs first at {pointer or '/'}; {RERECORD_HINT}\n{diff}",
        kind="mismatch",
        component=component,
        seq=seq,
        round=rnd,
        attempt=attempt,
        pointer=pointer,
        diff=diff,
        path=path,
    )


def unconsumed_drift(interactions_left: int, tools_left: int, first_seq: int | None, path: str) -> CassetteDrift:
    """Leftovers at cell end: recorded interactions/tool calls the run never reached."""
    count = interactions_left + tools_left
    return CassetteDrift(
        f"cassette {path}: {count} recorded record(s) not consumed at cell end ({interactions_left} provider "
        f"attempt(s), {tools_left} tool call(s)), first at seq {first_seq}; the run made fewer rounds than "
        f"recorded; {RERECORD_HINT}",
        kind="unconsumed",
        seq=first_seq,
        count=count,
        path=path,
    )
