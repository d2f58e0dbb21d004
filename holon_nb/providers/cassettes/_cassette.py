"""Record/replay cassettes at the provider boundary (turn-loop spec §4.3 ⚑).

:class:`CassetteProvider` wraps the provider of **one attempt** (the lineage wrapper sits above it, so
every attempt — failed ones included — is one interaction)::

    cas = CassetteProvider(None, cassette_path("demo.ipynb", cell_id), "replay",
                           workspace=rt.workspace, holon_home=rt.home)
    cas.preflight(rt.turns.advertised_tools(profile))       # optional: tools drift before the turn starts
    result = rt.turns.run_sync(message, model=ref, hooks=TurnHooks(**cas.turn_hooks()))
    cas.close(terminal=result.terminal)     # record: footer; replay: leftovers → CassetteDrift(unconsumed)

``turn_hooks()`` plugs the cassette into the loop's seams: ``wrap_provider`` (the runtime resolves the
model ref, :meth:`~CassetteProvider.attach` wraps the head's attempt provider under the lineage),
``wrap_tool_executor`` (tool calls are recorded, or answered without running), ``sleep``/``now``/
``monotonic`` (the cassette clock) and ``new_id`` (seeded ids). Without the runtime::

    lineage = LineageProvider([LineageCandidate(cas.route_ref, "openai", cas)],
                              sleep=cas.sleep, now=cas.clock.now, monotonic=cas.clock.monotonic)
    execute = cas.wrap_tool_executor(run_tool)     # run_tool(call) -> (envelope, receipt, is_error)

Modes (``mode=`` or ``$HOLON_NB_CASSETTE_MODE``, default ``replay``): ``record`` (call ``inner``, write the
file, overwriting), ``replay`` (offline; drift is an error; the network guard is on), ``auto`` (replay if the
file exists, else record), ``verify`` (replay the model, run tools live, compare receipts byte-wise),
``lenient`` (on drift return the recorded outcome and log the drift in :attr:`~CassetteProvider.drifts`;
never in CI).

Replay re-raises recorded classified errors (so the lineage rebuilds the same timeline), answers
``sleep`` with a virtual clock frozen to each interaction's recorded start, and mints ids from the
header's ``id_seed`` (:attr:`~CassetteProvider.new_id`). Files, normalization, hashing, drift
reports, error outcomes, the clock, the network guard and the tool layer live in ``cassette_file``,
``cassette_normalize``, ``cassette_canonical``, ``cassette_drift``, ``cassette_outcomes``,
``cassette_clock``, ``cassette_guard`` and ``cassette_tools``; errors in ``cassette_errors``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base import (
    ProviderToolSpec,
    TurnRequest,
    TurnResponse,
    response_from_dict,
    to_dict,
)
from ._canonical import cassette_hash
from ._clock import CassetteClock, SeededIds
from ._drift import preflight_drift, request_drift, unconsumed_drift
from ._errors import (
    RERECORD_HINT,
    CassetteError,
    CassetteExhausted,
    CassetteMissing,
)
from ._file import (
    FORMAT,
    CassetteFile,
    CassetteWriter,
    cassette_path,
    read_cassette,
)
from ._guard import NetworkGuard
from ._normalize import (
    FORMAT_VERSION,
    Normalizer,
    component_fingerprints,
    default_roots,
    redact_json,
    request_key,
    tool_fingerprints,
)
from ._outcomes import error_outcome, rebuild_error
from ._tools import ToolRunner, ToolTape

__all__ = ["MODES", "MODE_ENV", "CassetteProvider", "cassette_path", "resolve_mode"]

#: The modes of turn-loop spec §4.3.
MODES = ("record", "replay", "auto", "verify", "lenient")
#: Environment variable naming the default mode.
MODE_ENV = "HOLON_NB_CASSETTE_MODE"


def resolve_mode(mode: str | None, path: str | os.PathLike[str]) -> str:
    """The effective mode: ``mode`` or ``$HOLON_NB_CASSETTE_MODE`` or ``replay``; ``auto`` becomes ``replay``
    when ``path`` exists, else ``record``.

    Raises:
        ValueError: for a mode not in :data:`MODES`.
    """
    chosen = (mode or os.environ.get(MODE_ENV) or "replay").strip().lower()
    if chosen not in MODES:
        raise ValueError(f"cassette mode must be one of {', '.join(MODES)}, got {chosen!r}")
    if chosen == "auto":
        return "replay" if Path(path).exists() else "record"
    return chosen


class CassetteProvider:
    """A provider that records or replays one cassette file (module docstring).

    Args:
        inner: The real provider (one attempt per ``complete_turn``); needed to record (given here or by
            :meth:`attach` before the first attempt), optional otherwise (capability questions then come from the
            header).
        path: The cassette file (see :func:`cassette_path` for the notebook convention).
        mode: One of :data:`MODES`; None reads ``$HOLON_NB_CASSETTE_MODE`` (default ``replay``).
        route_ref: The model ref this run expects (checked against the header); default ``inner.route_ref``.
        transport: Wire transport name (``openai_responses`` …); default ``inner.transport``, else ``scripted``
            for ``scripted…`` refs, else ``unknown``. Decides whether tools are fingerprinted lowered.
        schema_contract: ``relaxed``/``strict``; default ``inner.schema_contract`` or ``relaxed``.
        controls: Request controls the transport adds (``reasoning``, ``stream``, ``tool_choice``), fingerprinted
            as ``request_controls``.
        workspace, holon_home: Roots normalized to ``$WORKSPACE`` / ``$HOLON_HOME`` (``roots`` overrides all).
        secrets: Extra secret values to scrub (provider API keys from the configuration).
        redact_hook: ``hook(record) -> record`` run on every record after D6 scrubbing, before it is written.
        guard_network: Block outbound connections while replaying (default True).
        taken: ``taken(id) -> bool`` for :attr:`new_id`: a seeded id already used (by an earlier replay of the
            same cassette in the same holon home) is skipped, deterministically. Through the runtime's turn loop
            this is not needed: it skips ids its store already holds (``TurnService.unused_id``); pass
            ``history_since`` to ``rt.turns.run`` so the earlier replay's turns are not history either.

    Attributes:
        new_id: The seeded id generator (``new_id("tool") -> "tool_<15 hex>"``), same ids on record and replay.
        clock: The :class:`~holon_nb.providers.cassettes._clock.CassetteClock` (``now``, ``monotonic``, ``sleep``).
        drifts: Drifts tolerated in ``lenient`` mode, in order.
        failure: The first cassette error raised (a lineage wrapper may have wrapped it), or None.

    Raises:
        ValueError: unknown mode.
        CassetteMissing: replay/verify/lenient and ``path`` does not exist.
        CassetteFormatError: the file is not a readable cassette.
    """

    def __init__(
        self,
        inner: Any | None,
        path: str | os.PathLike[str],
        mode: str | None = None,
        *,
        route_ref: str | None = None,
        transport: str | None = None,
        schema_contract: str | None = None,
        controls: Mapping[str, Any] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        holon_home: str | os.PathLike[str] | None = None,
        roots: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
        redact_hook: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        guard_network: bool = True,
        taken: Callable[[str], bool] | None = None,
    ):
        self.path = Path(path)
        self.requested_mode = mode
        self.mode = resolve_mode(mode, self.path)
        self.inner = inner
        self._route_ref = route_ref
        self._transport = transport
        self._schema_contract = schema_contract
        self.controls = dict(controls or {})
        self.normalizer = Normalizer(roots=roots or default_roots(workspace, holon_home), secrets=secrets)
        self.redact_hook = redact_hook
        self.drifts: list[CassetteError] = []
        self.drifted_tool_use_ids: set[str] = set()
        self.failure: CassetteError | None = None
        self.round, self.attempt = 1, 1
        self._seq = 0
        self._cursor = 0
        self._preflighted = False
        self._closed = False
        self._writer: CassetteWriter | None = None
        self._written: dict[str, int] = {"interaction": 0, "tool": 0}
        self._header_tools: tuple[Any, str] | None = None
        self.tape = ToolTape(self)
        self.guard = NetworkGuard()
        self._adopt_secrets(inner)
        if self.mode == "record":
            self.file: CassetteFile | None = None
            self.id_seed = secrets_token()
            self.clock = CassetteClock(live=True)
        else:
            if not self.path.exists():
                raise CassetteMissing(
                    f"no cassette at {self.path} (mode {self.mode}); {RERECORD_HINT}", path=str(self.path)
                )
            self.file = read_cassette(self.path)
            self.id_seed = str(self.file.header.get("id_seed") or "")
            self.clock = CassetteClock(live=False)
            first = (self.file.interactions[0].get("timing") or {}) if self.file.interactions else {}
            if first.get("started_at"):
                self.clock.freeze_at(first["started_at"])
            if guard_network:
                self.guard.start()
                self._finalizer = weakref.finalize(self, self.guard.stop)
        self.new_id = SeededIds(self.id_seed, taken=taken)

    # ------------------------------------------------------------ the Provider face
    @property
    def route_ref(self) -> str:
        """The model ref: explicit, else the inner provider's, else the recorded one."""
        if self._route_ref:
            return self._route_ref
        if self.inner is not None and getattr(self.inner, "route_ref", None):
            return str(self.inner.route_ref)
        return str((self.file.header if self.file else {}).get("route_ref", ""))

    @property
    def transport(self) -> str:
        """The wire transport name (constructor, inner provider, header, or a default)."""
        found = self._transport or (getattr(self.inner, "transport", None) if self.inner is not None else None)
        if found:
            return str(found)
        if self.file is not None and self.file.header.get("transport"):
            return str(self.file.header["transport"])
        return "scripted" if self.route_ref.startswith("scripted") else "unknown"

    @property
    def schema_contract(self) -> str:
        """``relaxed`` or ``strict`` (constructor, inner provider, header, or ``relaxed``)."""
        found = self._schema_contract or _inner_contract(self.inner)
        if found:
            return str(found)
        return str((self.file.header if self.file else {}).get("schema_contract") or "relaxed")

    @property
    def recorded_tools(self) -> list[dict[str, Any]]:
        """Tool records of the file being replayed ([] while recording)."""
        return self.file.tools if self.file is not None else []

    @property
    def recorded_interactions(self) -> list[dict[str, Any]]:
        """Interaction records of the file being replayed ([] while recording)."""
        return self.file.interactions if self.file is not None else []

    def prompt_capabilities(self) -> set[str]:
        """The inner provider's answer, or the recorded one."""
        return set(self._capability("prompt_capabilities", ["full_request_only"]))

    def supports_freeform_grammar_tools(self) -> bool:
        """The inner provider's answer, or the recorded one (default False)."""
        return bool(self._capability("supports_freeform_grammar_tools", False))

    def resolved_image_input_support(self) -> bool | None:
        """The inner provider's answer, or the recorded one (default None)."""
        return self._capability("resolved_image_input_support", None)

    def _capability(self, name: str, default: Any) -> Any:
        fn = getattr(self.inner, name, None) if self.inner is not None else None
        if callable(fn):
            return fn()
        return ((self.file.header if self.file else {}).get("provider") or {}).get(name, default)

    def _provider_answers(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("prompt_capabilities", "supports_freeform_grammar_tools", "resolved_image_input_support"):
            fn = getattr(self.inner, name, None)
            if callable(fn):
                value = fn()
                out[name] = sorted(value) if isinstance(value, (set, frozenset)) else value
        return out

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """One attempt: record it (calling ``inner``) or replay the next interaction.

        Raises:
            ProviderTransportError: the recorded (or live) classified failure of this attempt.
            CassetteDrift: preflight or key mismatch (not in ``lenient``).
            CassetteExhausted: replay asked for more attempts than recorded.
        """
        if self.mode == "record":
            return await self._record(req)
        return await self._replay(req)

    def attach(self, inner: Any) -> CassetteProvider:
        """Use ``inner`` as the real provider unless one was given already; returns self (the ``wrap_provider`` seam
        of the turn loop: the runtime resolves the model ref, the cassette wraps what it got)."""
        if self.inner is None:
            self.inner = inner
            self._adopt_secrets(inner)
        return self

    def _adopt_secrets(self, inner: Any) -> None:
        """Scrub the real provider's configured API keys too (D6: "provider API keys from the configuration")."""
        extra = getattr(getattr(inner, "resolved", None), "extra_secrets", None) or ()
        if extra:
            self.normalizer.secrets = tuple(self.normalizer.secrets) + tuple(str(v) for v in extra)

    def turn_hooks(self) -> dict[str, Any]:
        """The turn loop's injectable pieces for this cassette, as keyword arguments of
        ``holon_nb.runtime.turns._records.TurnHooks``::

            r = rt.turns.run_sync(msg, model=ref, hooks=TurnHooks(**cas.turn_hooks()))

        ``sleep`` (virtual on replay), ``new_id`` (seeded), ``now``/``monotonic`` (the cassette clock),
        ``wrap_provider`` (:meth:`attach`) and ``wrap_tool_executor``.
        """
        return {
            "sleep": self.sleep,
            "new_id": self.new_id,
            "now": self.clock.now,
            "monotonic": self.clock.monotonic,
            "wrap_provider": self.attach,
            "wrap_tool_executor": self.wrap_tool_executor,
        }

    async def sleep(self, seconds: float) -> None:
        """The injectable backoff sleep (real while recording, virtual on replay)."""
        await self.clock.sleep(seconds)

    def start_turn(self) -> None:
        """Optional: tell the cassette a new turn starts (round and attempt numbering restart at 1)."""
        self.round, self.attempt = 1, 1

    # ------------------------------------------------------------ recording
    def _live_request(self, req: TurnRequest) -> dict[str, Any]:
        return self.normalizer.request(
            req,
            route_ref=self.route_ref,
            transport=self.transport,
            schema_contract=self.schema_contract,
            controls=self.controls,
        )

    def _header(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "kind": "header",
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "route_ref": self.route_ref,
            "transport": self.transport,
            "schema_contract": self.schema_contract,
            "tools_fingerprint": cassette_hash(tools, "tools"),
            "id_seed": self.id_seed,
            "tools": tool_fingerprints(tools),
            "tool_specs": tools,
            "provider": self._provider_answers(),
            "recorded_at": self.clock.now_rfc3339(),
        }

    def _transform(self, record: dict[str, Any]) -> dict[str, Any]:
        out = self.normalizer.scrub(record)
        return self.redact_hook(out) if self.redact_hook is not None else out

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write one record (recording only; the header is written first if needed)."""
        if self._writer is None:
            self._writer = CassetteWriter(self.path, self._transform)
            self._writer.write(self._header([]))
        self._written[record.get("kind", "")] = self._written.get(record.get("kind", ""), 0) + 1
        return self._writer.write(record)

    def next_seq(self) -> int:
        """The next record sequence number (interactions and tool records share it)."""
        seq, self._seq = self._seq, self._seq + 1
        return seq

    async def _record(self, req: TurnRequest) -> TurnResponse:
        if self.inner is None:
            raise ValueError("recording a cassette needs the real provider (inner, or attach())")
        body = self._live_request(req)
        if self._writer is None:
            self._writer = CassetteWriter(self.path, self._transform)
            header = self._writer.write(self._header(body["tools"]))
            self._header_tools = (body["tools"], header["tools_fingerprint"])
        components = component_fingerprints(body)
        stored = body
        if self._header_tools is not None and (
            body["tools"] is self._header_tools[0] or components["tools"] == self._header_tools[1]
        ):
            stored = {**body, "tools": self._header_tools[1]}  # the header's tool_specs, by fingerprint
        base = {
            "kind": "interaction",
            "seq": self.next_seq(),
            "round": self.round,
            "attempt": self.attempt,
            "key": request_key(body),
            "components": components,
            "request": stored,
        }
        started, backoff, t0 = self.clock.now_rfc3339(), self.clock.take_slept(), time.monotonic()
        timing = {"started_at": started, "duration_ms": 0, "backoff_ms": backoff}
        try:
            response = await self.inner.complete_turn(req)
        except Exception as exc:
            timing["duration_ms"] = int((time.monotonic() - t0) * 1000)
            self.write({**base, "outcome": error_outcome(exc), "timing": timing})
            self.attempt += 1
            raise
        timing["duration_ms"] = int((time.monotonic() - t0) * 1000)
        outcome = to_dict(response)
        if outcome.get("request_diagnostics"):
            outcome["request_diagnostics"] = redact_json(outcome["request_diagnostics"])
        self.write({**base, "outcome": {"type": "response", "response": outcome}, "timing": timing})
        self.round, self.attempt = self.round + 1, 1
        return response

    # ------------------------------------------------------------ replaying
    def note_failure(self, err: CassetteError) -> CassetteError:
        """Remember the first cassette failure (the lineage may wrap it) and return it for raising."""
        if self.failure is None:
            self.failure = err
        return err

    def preflight(
        self, tools: Sequence[ProviderToolSpec] | None = None, *, body: Mapping[str, Any] | None = None
    ) -> None:
        """Check the header against this run before any model call (turn-loop spec §4.3 Drift (1)): transport, route ref,
        schema contract and the lowered tools. Runs by itself on the first replayed attempt; a loop may call it
        at turn setup with the turn's tool list.

        Raises:
            CassetteDrift: ``kind="preflight"`` (``component="tools"`` names the changed tools); in ``lenient``
                mode the drift is logged instead.
        """
        if self.file is None or self._preflighted:
            return
        if body is None:
            body = self._live_request(TurnRequest(conversation=(), tools=tuple(tools or ())))
        live_tools = body["tools"]
        live = {
            "transport": self._transport or getattr(self.inner, "transport", None),
            "route_ref": self._route_ref or getattr(self.inner, "route_ref", None),
            "schema_contract": self._schema_contract or _inner_contract(self.inner),
            "tools_fingerprint": cassette_hash(live_tools, "tools"),
            "tools": tool_fingerprints(live_tools),
        }
        self._preflighted = True
        drift = preflight_drift(self.file.header, live, str(self.path))
        if drift is not None:
            if self.mode == "lenient":
                self.drifts.append(drift)
                return
            raise self.note_failure(drift)

    async def _replay(self, req: TurnRequest) -> TurnResponse:
        assert self.file is not None
        body = self._live_request(req)
        self.preflight(body=body)
        interactions = self.file.interactions
        if self._cursor >= len(interactions):
            raise self.note_failure(
                CassetteExhausted(
                    f"cassette {self.path}: provider attempt {self._cursor + 1} has no recorded interaction "
                    f"({len(interactions)} recorded; the run made more attempts than the recording); {RERECORD_HINT}",
                    seq=self._cursor,
                    recorded=len(interactions),
                    path=str(self.path),
                )
            )
        rec = interactions[self._cursor]
        self._cursor += 1
        timing = rec.get("timing") or {}
        if timing.get("started_at"):
            self.clock.freeze_at(timing["started_at"])
        if rec.get("key") != request_key(body):
            drift = request_drift(rec, body, str(self.path))
            if self.mode != "lenient":
                raise self.note_failure(drift)
            self.drifts.append(drift)
        self.clock.advance((timing.get("duration_ms") or 0) / 1000)
        outcome = rec.get("outcome") or {}
        if outcome.get("type") == "response":
            self.round, self.attempt = self.round + 1, 1
            return response_from_dict(outcome.get("response") or {})
        self.attempt += 1
        raise rebuild_error(outcome)

    # ------------------------------------------------------------ tools
    async def execute_tool(self, call: Any, run: ToolRunner | None = None, **kwargs: Any) -> Any:
        """Record, replay or verify one tool call (see ``cassette_tools``); the result unpacks as
        ``(envelope, receipt, is_error)``."""
        return await self.tape.execute(call, run, **kwargs)

    def wrap_tool_executor(self, run: ToolRunner | None) -> Callable[..., Any]:
        """``run(call, **kw)`` (result unpacking as ``envelope, receipt, is_error``) wrapped so a replay answers
        from the cassette without running the tool."""

        async def execute(call: Any, **kwargs: Any) -> Any:
            return await self.tape.execute(call, run, **kwargs)

        return execute

    @contextlib.contextmanager
    def network_paused(self) -> Iterator[None]:
        """Lift this cassette's network guard for the duration (verify runs tools live)."""
        was = self.guard.active
        self.guard.stop()
        try:
            yield
        finally:
            if was:
                self.guard.start()

    # ------------------------------------------------------------ ending
    @property
    def network_attempts(self) -> list[Any]:
        """Addresses of outbound connections the guard refused during this replay."""
        return list(self.guard.attempts)

    def close(self, terminal: str | None = None, *, check: bool = True) -> None:
        """End the cassette (idempotent). Recording: write the footer and move the file into place. Replaying:
        lift the network guard, then (when ``check`` and no cassette failure happened) report leftovers.

        Raises:
            CassetteDrift: ``kind="unconsumed"`` with ``count`` (not in ``lenient`` mode, which logs it).
        """
        if self._closed:
            return
        self._closed = True
        if self.mode == "record":
            if self._writer is None:
                self._writer = CassetteWriter(self.path, self._transform)
                self._writer.write(self._header([]))
            self._writer.write(
                {
                    "kind": "footer",
                    "interactions": self._written["interaction"],
                    "tools": self._written["tool"],
                    "terminal": terminal,
                }
            )
            self._writer.commit()
            return
        self.guard.stop()
        if not check or self.failure is not None or self.file is None:
            return
        left_i, left_t = len(self.file.interactions) - self._cursor, self.tape.left
        if left_i > 0 or left_t > 0:
            firsts = ([self.file.interactions[self._cursor].get("seq")] if left_i > 0 else []) + (
                [self.file.tools[self.tape.cursor].get("seq")] if left_t > 0 else []
            )
            drift = unconsumed_drift(max(left_i, 0), left_t, min(s for s in firsts if s is not None), str(self.path))
            if self.mode == "lenient":
                self.drifts.append(drift)
                return
            raise self.note_failure(drift)

    def __enter__(self) -> CassetteProvider:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.close(check=exc_type is None)

    async def __aenter__(self) -> CassetteProvider:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.close(check=exc_type is None)

    def __getattr__(self, name: str) -> Any:
        # optional Provider members (context_management_policy, generate_image, …) come from the real provider
        inner = self.__dict__.get("inner")
        if inner is not None and not name.startswith("_"):
            return getattr(inner, name)
        raise AttributeError(name)


def _inner_contract(inner: Any) -> str | None:
    """The schema contract a real transport uses (``inner.schema_contract`` or ``inner.resolved.schema_contract``)."""
    if inner is None:
        return None
    found = getattr(inner, "schema_contract", None) or getattr(
        getattr(inner, "resolved", None), "schema_contract", None
    )
    return str(found) if found else None


def secrets_token() -> str:
    """A fresh ``id_seed`` (16 hex characters)."""
    return secrets.token_hex(8)
