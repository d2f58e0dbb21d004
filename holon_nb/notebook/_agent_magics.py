"""Agent turns in the notebook: ``%%agent``, ``%agents``, ``%models``, and the approval questions.

``%%agent`` runs one turn with the cell as the operator's message. The turn
runs in the background (a thread waiting on the runtime's loop), so the cell
returns at once and the kernel stays free to process clicks (Stop, approval
buttons) on ipykernel 6 and 7. A live view (:class:`AgentTurnView`) follows
the turn's events, drawn by the notebook's one live-view mechanism
(:class:`~holon_nb.notebook._liveness.LiveHub`); when the turn ends the same output is updated with the
plain transcript, so saved and headless notebooks keep it. Right before the
view, its standby owner (the transcript so far, as interrupted; at most a second
old) is what a kernel restart or a reopened notebook shows instead of the dead
view (:mod:`holon_nb.notebook._liveness`); it is spent (hidden) when the turn
ends. ``%holon wait`` (and the headless harness's final wait) also waits for
running turns.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from IPython.core.error import UsageError
from IPython.core.magic import cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..runtime.core._events import RuntimeEvent
from ..runtime.core._ids import DEFAULT_AGENT_ID
from ..runtime.core._store import now_rfc3339
from ..tools._errors import AgentTurnFailed
from ._display import Note, Table
from ._image_magics import envelope_previews
from ._liveness import LiveView, Standby
from ._magics import SessionMagics, raise_option
from ._parsing import parse_quoted

if TYPE_CHECKING:  # pragma: no cover
    from ._agent_view import AgentTurnView, TurnTrace  # loads ipywidgets: imported when a turn is shown
    from ._session import _Session

__all__ = ["AgentMagics", "TurnHub", "waking_excerpt"]

log = logging.getLogger("holon_nb.notebook")


class _Run(LiveView):
    """One background turn: its trace, view and thread; the live hub draws it (liveness.py)."""

    def __init__(self, trace: TurnTrace, view: AgentTurnView):
        super().__init__(trace.agent_id)
        self.trace = trace
        self.view = view
        self.thread: threading.Thread | None = None
        self.result: Any = None
        self.results: list[Any] = []  # every turn of the run (more than one when it follows wakes)
        self.follower: Any = None
        self.error: str = ""
        self.waited = False  # named as ended by a %holon wait note
        self.done = threading.Event()

    def draw(self, stale: bool) -> None:
        self.view.refresh()

    def close(self) -> None:
        self.view.close()


class TurnHub:
    """Runs ``%%agent`` turns in the background and feeds their live views.

    Args:
        session: The loaded extension's session.
    """

    def __init__(self, session: _Session):
        self._session = session
        self._rt = session.rt
        self._hub = session.hub
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}  # agent id -> its running turn
        self._all: list[_Run] = []
        self._hub.feed(self._on_event)
        self._rt.approvals.asker = self._ask
        # a replayed conversation's history starts where its first recorded turn started (see start())
        self.chain_start = now_rfc3339()

    # ------------------------------------------------------------ runtime thread
    def _on_event(self, ev: RuntimeEvent) -> None:
        agent = ev.data.get("agent_id")
        if agent is None or "turn_id" not in ev.data:
            return
        with self._lock:
            run = self._runs.get(agent)
        if run is None or run.done.is_set():
            return
        if ev.kind != "turn_started" and run.trace.turn_id and ev.data.get("turn_id") != run.trace.turn_id:
            return
        scrub = self._rt.scrubber()
        with run.view._lock:
            run.trace.apply(ev.kind, scrub.value(dict(ev.data)))
        self._hub.mark(run)

    async def _ask(self, request: Any) -> str:
        """The approval asker: the question appears in the asking agent's live view."""
        agent = getattr(request, "agent_id", None) or DEFAULT_AGENT_ID
        with self._lock:
            run = self._runs.get(agent)
        if run is None:
            raise RuntimeError(
                "no live view to ask in (turns started from Python are not asked; set "
                "HolonNB.approval = 'never' or run the turn with %%agent)"
            )
        tool = getattr(request, "tool_name", "?")
        with run.view._lock:
            run.trace.items.append(
                {"kind": "note", "text": f"approval asked for {tool}: {getattr(request, 'reason', '') or 'policy'}"}
            )
        self._hub.mark(run)
        future = run.view.ask(tool, getattr(request, "arguments", None) or {}, getattr(request, "reason", "") or "")
        try:
            decision = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        finally:
            if not future.done():
                future.cancel()
        with run.view._lock:
            run.trace.items.append({"kind": "note", "text": f"approval for {tool}: {decision}"})
        return decision

    # ------------------------------------------------------------ kernel thread
    def start(
        self,
        message: str,
        agent: str | None,
        model: str | None,
        max_rounds: int | None,
        provider: Any = None,
        cassette: Any = None,
        follow: int | None = None,
    ) -> _Run:
        """Display a live view and start the turn in the background.

        ``follow``: after the turn, run up to this many turns started by the agent's woken waits
        (:class:`~holon_nb.runtime.turns._follow.TurnFollower`), in the same view.

        Raises:
            UsageError: when the agent already runs a turn.
        """
        agent_id = agent or DEFAULT_AGENT_ID
        with self._lock:
            if agent_id in self._runs and not self._runs[agent_id].done.is_set():
                raise UsageError(f"agent {agent_id} is already running a turn; wait for it (%holon wait) or Stop it")
        ref = model or os.environ.get("HOLON_MODEL", "") or "(HOLON_MODEL)"
        shown = getattr(cassette, "route_ref", None) if cassette is not None and cassette.mode != "record" else None
        from ._agent_view import AgentTurnView, TurnTrace

        trace = TurnTrace(agent_id, shown or getattr(provider, "route_ref", None) or ref, message)
        trace.previewer = lambda agent, env: envelope_previews(env, self._rt.tasks.agent_home(agent))
        trace.path_labels = self._rt.path_labels
        view = AgentTurnView(trace, on_stop=lambda: self.stop(agent_id))
        run = _Run(trace, view)
        with self._lock:
            self._runs[agent_id] = run
            self._all.append(run)
        # first its standby owner (hidden while the view lives), then the view: see liveness.py
        run.standby = Standby(agent_id, view.fallback_bundle)
        self._hub.show(run, view)
        kwargs: dict[str, Any] = {"agent": agent_id, "model": model, "max_rounds": max_rounds}
        if provider is not None:
            kwargs["provider"] = provider
        if cassette is not None:
            from ..runtime.turns._records import TurnHooks

            hooks = cassette.turn_hooks()
            if cassette.mode != "record":  # the cassette is the provider: no real one is built or attached
                hooks.pop("wrap_provider")
                kwargs["provider"] = cassette
            kwargs["hooks"] = TurnHooks(**hooks)
            if cassette.mode != "record":
                # a cassette whose first request had no earlier turns starts a conversation: its history
                # (and that of the cassettes replayed after it) begins now, so re-running replays again
                first = (cassette.recorded_interactions or [{}])[0]
                if len((first.get("request") or {}).get("conversation") or []) <= 1:
                    self.chain_start = now_rfc3339()
                kwargs["history_since"] = self.chain_start

        if follow is not None:
            from ..runtime.turns._follow import TurnFollower

            run.follower = TurnFollower(self._rt, agent_id, max_wakes=follow)

        def woke(msg: dict[str, Any]) -> None:
            with view._lock:
                trace.items.append(
                    {"kind": "note", "text": f"woken by {msg.get('kind')} {msg.get('id')}: {waking_excerpt(msg)}"}
                )
                trace.status, trace.ended_at = "running", None
            self._hub.mark(run)

        def waiting(open_waits: int) -> None:
            with view._lock:
                # the hint holds only while the Stop button is offered (the view drops it once the follow ends)
                trace.items.append(
                    {
                        "kind": "note",
                        "while_waiting": " (Stop ends this)",
                        "text": f"following: waiting for one of {open_waits} open wait(s) to be woken",
                    }
                )
                trace.status = "waiting"
            self._hub.mark(run)

        def work() -> None:
            try:
                if run.follower is not None:
                    turn_kwargs = {k: v for k, v in kwargs.items() if k != "agent"}
                    run.results = run.follower.run(message, on_wake=woke, on_waiting=waiting, **turn_kwargs)
                    run.result = run.results[-1]
                else:
                    run.result = self._rt.turns.run_sync(message, **kwargs)
                    run.results = [run.result]
                if cassette is not None:
                    cassette.close(terminal=run.result.terminal)
                if run.result.error and not run.error:
                    run.error = run.result.error
            except Exception as exc:  # reported in the view, never raised into the kernel later
                run.error = f"{type(exc).__name__}: {exc}"
                with view._lock:
                    trace.status = trace.status if trace.status != "running" else "aborted"
                    trace.reason = trace.reason or run.error
                    trace.ended_at = trace.ended_at or __import__("time").monotonic()
            finally:
                if cassette is not None:
                    try:  # lifts the replay's network guard however the turn ended
                        cassette.close(check=False)
                    except Exception:
                        log.debug("cassette close failed", exc_info=True)
                failure = getattr(cassette, "failure", None)
                if failure is not None:  # the cassette's own words beat the lineage's wrapping of them
                    run.error = f"{type(failure).__name__}: {failure}"
                self._finish(run)

        run.thread = threading.Thread(target=work, name=f"holon-nb-turn-{agent_id}", daemon=True)
        run.thread.start()
        return run

    def _finish(self, run: _Run) -> None:
        result = run.result
        with run.view._lock:
            if result is not None:
                run.trace.status = result.terminal
                run.trace.reason = result.reason or ""
                run.trace.final_text = result.final_text or ""
                usages = [r.usage.to_dict() for r in (run.results or [result])]
                run.trace.usage = {
                    "input_tokens": sum(u["input_tokens"] for u in usages),
                    "output_tokens": sum(u["output_tokens"] for u in usages),
                }
                if run.follower is not None:
                    why = {
                        "idle": "the agent has nothing left to wait for",
                        "max_turns_exceeded": "the --follow limit",
                        "stopped": "Stop",
                        "turn_not_completed": "a turn did not complete",
                        "timeout": "no wake came in time",
                    }.get(run.follower.ended_because, run.follower.ended_because)
                    run.trace.items.append(
                        {"kind": "note", "text": f"followed {len(run.results) - 1} wake(s); stopped following: {why}"}
                    )
                run.trace.rounds = max(run.trace.rounds, len(result.rounds))
                if run.trace.ended_at is None:
                    run.trace.ended_at = __import__("time").monotonic()
            if run.error:
                run.view.note = run.error
                run.trace.error = run.error
        try:
            run.view.refresh()
            # the live view becomes its static transcript (no widget left to break), its standby owner spent
            self._hub.retire(run, run.view.static_bundle(), raw=True)
        except Exception:
            log.debug("agent view final update failed", exc_info=True)
        run.done.set()

    def stop(self, agent_id: str) -> str:
        """Cancel the agent's running turn (Stop button); a run following wakes stops following too."""
        with self._lock:
            run = self._runs.get(agent_id)
        if run is not None and run.follower is not None and not run.done.is_set():
            running = self._rt.turns.active(agent_id) is not None
            run.follower.stop("stopped from the notebook")
            self._interrupt_code()
            return "stop requested" if running else "stopped waiting for a wake"
        cancelled = self._rt.turns.cancel(agent_id, reason="stopped from the notebook")
        self._interrupt_code()
        return "stop requested" if cancelled else "no turn running"

    def _interrupt_code(self) -> None:
        """A stopped turn's Notebook-tool code (RunCode, ExecuteCell) is interrupted too, not left to its timeout."""
        from ._kernel._port import KernelNotebook

        port = self._rt.notebook
        if isinstance(port, KernelNotebook):
            port.interrupt_code()

    def report(self) -> None:
        """Re-send each ended turn's final view and spent standby owner from the current cell (kernel thread), once.

        A turn that ends in the background updates its cell's output from its own thread; a headless
        client drops messages that do not belong to the cell it is executing, so ``%holon wait`` (and the
        harness's final wait) sends the final transcript again from inside its own execution.
        """
        with self._lock:
            ended = [r for r in self._all if r.done.is_set()]
        self._hub.confirm(list(ended))

    def results(self) -> list[Any]:
        """TurnResults of the turns that ended, oldest first."""
        with self._lock:
            return [res for r in self._all if r.done.is_set() for res in (r.results or [r.result]) if res is not None]

    def ended_since_last_wait(self) -> list[str]:
        """Agents whose turn ended since the last call (``%holon wait`` names each once)."""
        with self._lock:
            ended = [r for r in self._all if r.done.is_set() and not r.waited]
            for run in ended:
                run.waited = True
            return [r.trace.agent_id for r in ended]

    def running(self) -> list[str]:
        """Agents whose turn is still running."""
        with self._lock:
            return [a for a, r in self._runs.items() if not r.done.is_set()]

    def wait(self, timeout: float | None = None) -> list[str]:
        """Block until every running turn ended (or ``timeout`` seconds); return agents still running."""
        with self._lock:
            runs = [r for r in self._all if not r.done.is_set()]
        deadline = None if timeout is None else __import__("time").monotonic() + timeout
        for run in runs:
            left = None if deadline is None else max(0.0, deadline - __import__("time").monotonic())
            run.done.wait(left)
        return self.running()

    def close(self) -> None:
        """Stop the turns' follows and running turns; the hub's close stops the events."""
        with self._lock:
            following = [r.follower for r in self._all if r.follower is not None and not r.done.is_set()]
        for follower in following:  # a follow waiting for a wake has no turn to cancel: end its wait
            follower.stop("the extension was unloaded")
        for agent in self.running():
            self._rt.turns.cancel(agent, reason="the extension was unloaded")
        if getattr(self._rt.approvals, "asker", None) is self._ask:
            self._rt.approvals.asker = None


@magics_class
class AgentMagics(SessionMagics):
    """``%%agent``, ``%agents``, ``%models``."""

    _default_cassettes = 0  # %%agent turns given the default cassette so far (per kernel session)

    @cell_magic
    @magic_arguments()
    @argument("--agent", default=None, help="The agent (default: the notebook's agent); a new id creates it.")
    @argument(
        "--model",
        default=None,
        help="Model ref provider@endpoint/model (default: HolonNB.model, then $HOLON_MODEL); "
        "scripted/<file.yaml> runs a scripted provider.",
    )
    @argument("--max-rounds", type=int, default=None, help="Stop after this many model rounds (default: no cap).")
    @argument(
        "--cassette",
        default=None,
        help="Record/replay cassette (.jsonl, relative to the notebook's directory); default HolonNB.cassette.",
    )
    @argument(
        "--mode",
        dest="cassette_mode",
        default=None,
        choices=("auto", "record", "replay", "verify", "lenient", "off"),
        help="Cassette mode (default HolonNB.cassette_mode: $HOLON_NB_CASSETTE_MODE, else auto).",
    )
    @argument("--wait", action="store_true", help="Block the cell until the turn ends.")
    @argument(
        "--approve-all",
        action="store_true",
        help="Trust this session: the Notebook tools (RunCode, EditNotebook, ExecuteCell) run without asking "
        "from now on (sets HolonNB.notebook_approve_all).",
    )
    @argument(
        "--follow",
        type=int,
        nargs="?",
        const=5,
        default=None,
        metavar="N",
        help="After the turn, keep the agent going: when a wait it declared is woken (its background "
        "task ends, its timer fires, %%holon say), run the next turn in this view, up to N times "
        "(default 5), until it has nothing left to wait for or Stop.",
    )
    def agent(self, line: str, cell: str) -> None:
        """Run one agent turn with the cell as the operator's message.

        The model's text streams into a live view, each tool call appears with
        its receipt (click to expand), and the turn's end is shown with its
        token usage. Stop cancels the turn. The turn runs in the background: the
        cell returns at once; ``%holon wait`` blocks until it ends.

        Example::

            %%agent --model openai/gpt-5.4 --max-rounds 20
            The test in tests/test_parse.py fails. Find out why and fix it.
        """
        args = parse_quoted(self.agent, line)
        message = cell.strip()
        if not message:
            raise UsageError("%%agent needs the message in the cell body")
        if args.max_rounds is not None and args.max_rounds < 1:
            raise UsageError(f"%%agent --max-rounds must be 1 or more, got {args.max_rounds}")
        if args.follow is not None and args.follow < 0:
            raise UsageError(f"%%agent --follow must be 0 or more, got {args.follow}")
        s = self._session
        if args.approve_all and not s.config.notebook_approve_all:
            s.config.notebook_approve_all = True  # observed: pushed to the runtime's settings now
        model = args.model or s.config.model or None
        mode = args.cassette_mode or s.config.cassette_mode
        cassette = args.cassette or s.config.cassette or None
        headless = bool(os.environ.get(NOTEBOOK_ENV) and os.environ.get(MODE_ENV))  # holon-nb run/test --cassettes
        scripted = (model or "").startswith("scripted/")  # a script answers: no model is called
        if not cassette and mode != "off" and headless and not (scripted and args.follow is not None):
            if args.follow is not None:  # a scripted --follow turn calls no model and needs no cassette
                raise UsageError(
                    f"%%agent --follow cannot be replayed from a cassette (a cassette holds one turn) "
                    f"and this run uses cassettes ({MODE_ENV}={mode}): use a scripted model, or run "
                    f"with --cassettes off (holon-nb test --holon-nb-cassettes off) to call the model"
                )
            self._default_cassettes += 1  # under holon-nb run/test: the notebook's own cassette folder
            default = default_cassette(os.environ[NOTEBOOK_ENV], self._default_cassettes)
            # a scripted turn needs no cassette: replayed when one was recorded, else its script answers
            # (record/auto still record it); the turn keeps its number either way
            if not (scripted and mode == "replay" and not default.exists()):
                cassette = str(default)
        cas = None
        if cassette and mode != "off":
            cas = _cassette(s, cassette, mode)
        if cas is not None and args.follow is not None:
            raise UsageError("%%agent --follow cannot be used with a cassette (a cassette holds one turn)")
        run = s.turns.start(message, args.agent, model, args.max_rounds, cassette=cas, follow=args.follow)
        if args.wait:
            try:
                run.done.wait()
                s.turns.report()  # the final transcript again, from this cell's own execution
            except KeyboardInterrupt:
                note = s.turns.stop(run.trace.agent_id)
                run.done.wait(10)
                display(Note(f"interrupted: {note}; the turn ended {run.trace.status}"))
                return
            if run.error:
                hint = ""
                if "scripted agent provider exhausted" in str(run.error):  # upstream's exact text, kept
                    hint = (
                        " — the script has no step left: a scripted model keeps its place across the turns "
                        "of this runtime, so re-running the cell asks for more steps; %reload_ext holon_nb "
                        "(or a kernel restart) starts the script over"
                    )
                raise AgentTurnFailed(f"the turn of {run.trace.agent_id} failed: {run.error}{hint}")

    @line_magic
    @magic_arguments()
    @raise_option
    def agents(self, line: str) -> None:
        """The agents this holon home knows: id, profile, parent, turns, tokens, running now. Changes nothing."""
        parse_quoted(self.agents, line)
        s = self._session
        rows = []
        running = set(s.turns.running())
        for rec in s.rt.store.agents():
            totals = s.rt.conversations.totals(rec["id"]) if hasattr(s.rt, "conversations") else {}
            rows.append(
                [
                    rec["id"],
                    rec["profile"],
                    rec["parent_id"] or "",
                    totals.get("turns", ""),
                    totals.get("total_input_tokens", ""),
                    totals.get("total_output_tokens", ""),
                    "running" if rec["id"] in running else "",
                ]
            )
        display(
            Table(
                f"{len(rows)} agent{'' if len(rows) == 1 else 's'}",
                ["agent", "profile", "parent", "turns", "tokens in", "tokens out", "now"],
                rows,
            )
        )

    @line_magic
    @magic_arguments()
    @argument("provider", nargs="?", default=None, help="List this provider's models (ListProviderModels).")
    @argument("--all", dest="include_unavailable", action="store_true", help="Include unavailable ones.")
    @raise_option
    def models(self, line: str) -> None:
        """Model providers (ListModelProviders), or one provider's models (ListProviderModels)."""
        args = parse_quoted(self.models, line)
        payload: dict[str, Any] = {"include_unavailable": True} if args.include_unavailable else {}
        if args.provider:
            payload["provider"] = args.provider
            result = self._call("ListProviderModels", payload, args.raise_error)
            if result.ok and not (result.result or {}).get("models"):
                display(
                    Note(
                        f"no models listed for {args.provider}: holon_nb does not ask a server for its models. "
                        "Any model name works in --model (e.g. --model "
                        f'{args.provider}/<model>); to list some, add "models": ["<model>", …] to its '
                        "entry in HolonNB.providers or $HOLON_NB_PROVIDERS, or see %models --all."
                    )
                )
        else:
            self._call("ListModelProviders", payload, args.raise_error)


def _cassette(session: _Session, path: str, mode: str) -> Any:
    """The cassette of one ``%%agent`` turn (path relative to the notebook's directory).

    Raises:
        UsageError: for a missing cassette in replay mode or an unreadable file.
    """
    from ..providers.cassettes._cassette import CassetteProvider
    from ..providers.cassettes._errors import CassetteError

    full = Path(path)
    if not full.is_absolute():
        full = Path(os.getcwd()) / full
    try:
        return CassetteProvider(
            None,
            full,
            mode,
            workspace=session.rt.workspace,
            holon_home=session.rt.home,
            secrets=session.rt.scrubber().values,
        )
    except (CassetteError, ValueError) as exc:
        notebook = os.environ.get(NOTEBOOK_ENV)
        hint = f"; record it with: holon-nb run {notebook} --cassettes record" if notebook else ""
        raise UsageError(f"cassette {full}: {exc}{hint}") from None


#: Set by ``holon-nb run``/``test`` in the kernel's environment: the notebook being run.
def waking_excerpt(msg: dict[str, Any], width: int = 160) -> str:
    """The waking message's first line as the ``--follow`` view notes it: whole words, ``…`` when cut
    (or when more lines follow)."""
    from ..render.human import shorten

    lines = [line for line in str(msg.get("text") or "").strip().splitlines() if line.strip()]
    if not lines:
        return ""
    first = shorten(lines[0], width)
    return first if first.endswith("…") or len(lines) == 1 else first + " …"


NOTEBOOK_ENV = "HOLON_NB_NOTEBOOK"
MODE_ENV = "HOLON_NB_CASSETTE_MODE"


def default_cassette(notebook: str, n: int) -> Path:
    """The cassette of the ``n``-th ``%%agent`` turn without ``--cassette`` in a headless run of ``notebook``:
    ``<stem>.holon/cassettes/agent-<n>.jsonl`` beside it (notebook-tests spec §5)."""
    nb = Path(notebook)
    return nb.with_name(f"{nb.stem}.holon") / "cassettes" / f"agent-{n}.jsonl"


def render_transcript(trace: TurnTrace) -> str:
    """The plain text of an ended turn (see :func:`holon_nb.notebook._agent_view.render_transcript`)."""
    from ._agent_view import render_transcript as render

    return render(trace)


__all__ += ["render_transcript", "Note"]
