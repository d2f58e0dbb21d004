"""``AgentTurnView``: the live view of one agent turn, built from stock ipywidgets.

The view follows the turn's events (turn-loop spec §1.11): streamed text,
each round's assistant text, each tool call with its receipt (collapsed
``<details>``), usage, and the turn's end. A Stop button cancels the turn;
an approval question (``%config HolonNB.approval``) appears in the view as
three buttons: Approve once, Approve for this session, Deny. State changes
only through whole-value assignments from the thread that feeds it; every
value is escaped and scrubbed (D12) by the caller.

``render_transcript`` gives the plain text a saved or headless notebook
keeps once the turn has ended.

The view is a beacon (:mod:`holon_nb.notebook._liveness`): displayed right after
its standby owner, :meth:`AgentTurnView.fallback_bundle` (the transcript so far,
as interrupted by a kernel restart), which CSS shows instead of the view once
the kernel restarted under the page or the notebook was reopened without the
view's widget model.
"""

from __future__ import annotations

import base64
import concurrent.futures
import copy
import html
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ipywidgets import HTML, Button, HBox, Layout, VBox

from ..render import preview_html
from ..render._ansi import ansi_to_html
from ..render._card import card_root, render_card
from ..render._palette import fg, muted_style
from ..render.human import clip, glance, pretty_input, render_human, shorten_paths
from ..tools._registry import REGISTRY
from ._liveness import BEACON, FALLBACK_MIMETYPE, OWNER, STANDBY, STYLE

#: Marker in the display bundle of a holon_nb view whose ``text/plain`` is its final, readable state.
VIEW_MIMETYPE = "application/vnd.holon.view+json"

__all__ = ["AgentTurnView", "TurnTrace", "render_transcript", "render_transcript_html"]

_COLOURS = {
    "running": "#0969da",
    "waiting": "#9a6700",  # waiting: %%agent --follow between turns
    "completed": "#1a7f37",
    "aborted": "#cf222e",
    "deferred_to_fallback": "#9a6700",
    "provider_failed_needs_recovery": "#cf222e",
    "baseline_over_budget": "#cf222e",
    "interrupted": "#cf222e",  # only in a standby owner: the kernel restarted under the turn
}
#: The status of a trace drawn in a standby owner (never a turn's own terminal kind).
INTERRUPTED = "interrupted"
_MUTED = muted_style()
_PRE = (
    "margin:2px 0;padding:4px 6px;background:rgba(127,127,127,0.08);white-space:pre-wrap;max-height:24em;overflow:auto"
)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


class TurnTrace:
    """What a view knows about a turn so far (fed from events; thread-safe through the view's lock).

    Attributes:
        agent_id, model_ref, turn_id: Identity of the turn.
        status: ``running``, ``waiting`` (``%%agent --follow`` between turns) or the terminal kind.
        items: Ordered entries ``{"kind": "text"|"tool"|"note", …}``.
        usage: ``{input_tokens, output_tokens}`` so far.
        final_text: The turn-final text once ended.
    """

    def __init__(self, agent_id: str, model_ref: str, message: str):
        self.agent_id = agent_id
        self.model_ref = model_ref
        self.message = message
        # () -> (absolute path, label) pairs receipts show shorter (Runtime.path_labels)
        self.path_labels: Callable[[], tuple[tuple[str, str], ...]] = tuple
        self.turn_id = ""
        self.turns = 0  # turns shown (more than one under %%agent --follow)
        self.status = "running"
        self.reason = ""
        self.rounds = 0
        self.items: list[dict[str, Any]] = []
        self.streaming = ""
        self.usage = {"input_tokens": 0, "output_tokens": 0}
        self.final_text = ""
        self.error = ""
        self.started = time.monotonic()
        self.ended_at: float | None = None
        #: ``(agent_id, envelope) -> [thumbnail]`` for ViewImage/GenerateImage results (set by the magic)
        self.previewer: Callable[[str, dict[str, Any]], list[dict[str, Any]]] | None = None

    def elapsed(self) -> float:
        """Seconds since the turn started (frozen at its end)."""
        return (self.ended_at or time.monotonic()) - self.started

    def apply(self, kind: str, data: dict[str, Any]) -> None:
        """Fold one turn event into the trace."""
        if kind == "turn_started":
            self.turns += 1
            self.turn_id = data.get("turn_id", self.turn_id)
            self.model_ref = data.get("model_ref") or self.model_ref
        elif kind == "round_started":
            self.rounds = int(data.get("round", self.rounds + 1))
            self.streaming = ""
        elif kind == "text_delta":
            self.streaming += str(data.get("text", ""))
        elif kind == "assistant_round":
            text = data.get("text")
            if text is None:
                text = "\n\n".join(
                    b.get("text", "")
                    for b in data.get("blocks") or []
                    if isinstance(b, dict) and b.get("type") == "text" and b.get("text", "").strip()
                )
            if text and text.strip():
                self.items.append({"kind": "text", "round": self.rounds, "text": text})
            usage = data.get("usage") or {}
            self.usage["input_tokens"] += int(usage.get("input_tokens", 0) or 0)
            self.usage["output_tokens"] += int(usage.get("output_tokens", 0) or 0)
            self.streaming = ""
        elif kind == "tool_call":
            self.items.append(
                {
                    "kind": "tool",
                    "round": self.rounds,
                    "id": data.get("tool_use_id"),
                    "name": data.get("name"),
                    "input": data.get("input"),
                    "receipt": None,
                    "is_error": None,
                    "summary": "",
                }
            )
        elif kind == "tool_result":
            entry = next(
                (i for i in reversed(self.items) if i["kind"] == "tool" and i.get("id") == data.get("tool_use_id")),
                None,
            )
            if entry is None:
                entry = {
                    "kind": "tool",
                    "round": self.rounds,
                    "id": data.get("tool_use_id"),
                    "name": (data.get("envelope") or {}).get("tool_name"),
                    "input": None,
                }
                self.items.append(entry)
            env = data.get("envelope") or {}
            entry.update(
                receipt=data.get("receipt"),
                is_error=bool(data.get("is_error")),
                envelope=env or None,
                duration_ms=data.get("duration_ms"),
                summary=env.get("summary_text") or ((env.get("error") or {}).get("kind") or ""),
                status=env.get("status"),
            )
            if self.previewer is not None and env.get("tool_name") in ("ViewImage", "GenerateImage"):
                try:
                    entry["previews"] = self.previewer(self.agent_id, env)
                except Exception:  # a thumbnail is never worth breaking the view
                    entry["previews"] = []
        elif kind == "interjection":
            self.items.append({"kind": "note", "text": f"interjection: {data.get('text', '')}"})
        elif kind == "turn_local_recap":
            self.items.append(
                {
                    "kind": "note",
                    "text": (
                        f"rounds 1-{data.get('rounds')} now go to the model as a recap, the newest "
                        f"{data.get('exact_rounds')} exact (about {data.get('estimated_tokens')} of "
                        f"{data.get('budget')} tokens of prompt budget)"
                    ),
                }
            )
        elif kind == "turn_terminal":
            self.status = data.get("terminal") or data.get("kind") or "completed"
            self.reason = data.get("reason", "")
            self.final_text = data.get("final_text") or ""
            totals = data.get("usage")  # this turn's (``usage_totals`` is the agent's whole conversation)
            if isinstance(totals, dict) and totals:
                self.usage = {
                    "input_tokens": int(totals.get("input_tokens", 0) or 0),
                    "output_tokens": int(totals.get("output_tokens", 0) or 0),
                }
            self.ended_at = time.monotonic()
            self.streaming = ""


def short_model_ref(ref: str) -> str:
    """A model ref as a reader wants it: a scripted model's script by its file name, not its temporary path."""
    if ref.startswith("scripted/") and "/" in ref[len("scripted/") :]:
        return "scripted/" + ref.rstrip("/").rsplit("/", 1)[-1]
    return ref


def _note_text(trace: TurnTrace, item: dict[str, Any]) -> str:
    """A note's text; its ``while_waiting`` hint (e.g. "(Stop ends this)") only while the trace still waits on it."""
    hint = item.get("while_waiting") if trace.status == "waiting" and trace.items and trace.items[-1] is item else ""
    return item["text"] + (hint or "")


def render_transcript(trace: TurnTrace, paths: tuple[tuple[str, str], ...] = ()) -> str:
    """The turn as plain text: message, each round's text and tool calls with human receipts, the end.

    Args:
        trace: The turn's trace.
        paths: ``(absolute path, label)`` pairs receipts show shorter (holon home, workspace);
            default: ``trace.path_labels()``.
    """
    paths = paths or trace.path_labels()
    return shorten_paths(_transcript(trace, paths), paths)


def _transcript(trace: TurnTrace, paths: tuple[tuple[str, str], ...]) -> str:
    lines = [
        f"agent {trace.agent_id} · model {short_model_ref(trace.model_ref)} · turn {trace.turn_id or '?'}",
        f"> {trace.message.strip()}",
        "",
    ]
    for item in trace.items:
        if item["kind"] == "text":
            lines += [f"[round {item['round']}] assistant:", item["text"].rstrip(), ""]
        elif item["kind"] == "tool":
            pending = INTERRUPTED if trace.status == INTERRUPTED else "pending"
            mark = "error" if item.get("is_error") else (item.get("status") or pending)
            args = json.dumps(item.get("input"), ensure_ascii=False, sort_keys=True)
            lines.append(clip(f"[round {item['round']}] {item.get('name')} ({mark}) {args}", 160))
            if item.get("envelope"):  # the same human receipt a magic shows, minus the tool name already given
                human = render_human(item["envelope"], item.get("duration_ms"), REGISTRY, paths=paths).splitlines()
                lines += ["  " + human[0].split(" · ", 1)[-1], *("  " + line for line in human[1:40])]
            elif item.get("receipt") is not None:
                lines += ["  " + line for line in str(item["receipt"]).splitlines()[:40]]
            lines += [
                f"  [thumbnail {p['width']}x{p['height']} of {p.get('label', '')}]" for p in item.get("previews") or ()
            ]
            lines.append("")
        else:
            lines += [_note_text(trace, item), ""]
    if trace.turns > 1:  # %%agent --follow: the end line is the last turn's; tokens are all turns'
        lines.append(
            f"last of {trace.turns} turns: {trace.status}"
            + (f" ({trace.reason})" if trace.reason else "")
            + f" after {trace.rounds} round(s); all turns {trace.elapsed():.1f} s, tokens in "
            f"{trace.usage['input_tokens']}, out {trace.usage['output_tokens']}"
        )
    else:
        lines.append(
            f"turn {trace.status}"
            + (f" ({trace.reason})" if trace.reason else "")
            + f" after {trace.rounds} round(s), {trace.elapsed():.1f} s; tokens in "
            f"{trace.usage['input_tokens']}, out {trace.usage['output_tokens']}"
        )
    if trace.error:
        lines.append(f"error: {trace.error}")
    if trace.final_text.strip():
        lines += ["", "final text:", trace.final_text.rstrip()]
    return "\n".join(lines)


def render_transcript_html(trace: TurnTrace, streaming: bool = True) -> str:
    """The turn as HTML (escaped): rounds' text, collapsible tool receipts (paths shown shorter), usage, the end."""
    return card_root(_transcript_parts(trace, streaming), classes="holon-transcript")


def _tool_call_html(item: dict[str, Any], mark: str, colour: str, paths: tuple[tuple[str, str], ...]) -> str:
    """One tool call as a collapsed ``<details>``: a glance at its result, then its input (pretty) and the
    same receipt card a direct call shows (diffs of ApplyPatch, command output, tables)."""
    env = item.get("envelope")
    human = render_human(env, item.get("duration_ms"), REGISTRY, paths=paths) if env else ""
    glimpse = item.get("summary") or glance(human)
    summary = (
        f"<b>{_e(item.get('name'))}</b> <span style='color:{colour}'>{_e(mark)}</span> "
        f"<span style='{_MUTED}'>{_e(glimpse)}</span>"
    )
    args = shorten_paths(pretty_input(item.get("input")), paths)
    body = (
        f"<div class='holon-tool-input'><span style='{_MUTED}'>input</span><pre style='{_PRE}'>{_e(args)}</pre></div>"
    )
    if env:
        body += render_card(env, str(item.get("receipt") or ""), item.get("duration_ms"), human, paths)
    elif item.get("receipt") is not None:
        body += f"<pre style='{_PRE}'>{ansi_to_html(shorten_paths(str(item['receipt']), paths))}</pre>"
    return (
        f"<details class='holon-tool-call' style='margin:2px 0 2px 12px'><summary>{summary}</summary>{body}</details>"
    )


def _transcript_parts(trace: TurnTrace, streaming: bool) -> str:
    parts = []
    paths = trace.path_labels()
    for item in trace.items:
        if item["kind"] == "text":
            parts.append(f"<div style='margin:4px 0;white-space:pre-wrap'>{_e(item['text'])}</div>")
        elif item["kind"] == "tool":
            if item.get("receipt") is None and trace.status == INTERRUPTED:  # a standby owner's
                mark, colour = INTERRUPTED, "#cf222e"
            elif item.get("receipt") is None:
                mark, colour = "running", "#0969da"
            elif item.get("is_error"):
                mark, colour = "error", "#cf222e"
            else:
                mark, colour = item.get("status") or "success", "#1a7f37"
            rendered = item.get("html")
            if rendered is None:
                rendered = _tool_call_html(item, mark, colour, paths)
                if item.get("receipt") is not None:  # a finished call renders once (the view redraws often)
                    item["html"] = rendered
            parts.append(rendered)
            if item.get("previews"):  # shown outside the collapsed receipt: the picture is the point
                parts.append(
                    "<div style='margin:2px 0 2px 24px'>"
                    + "".join(preview_html(p) for p in item["previews"])
                    + "</div>"
                )
        else:
            parts.append(f"<div style='{_MUTED};font-style:italic'>{_e(_note_text(trace, item))}</div>")
    if streaming and trace.streaming:
        parts.append(f"<div style='white-space:pre-wrap;{_MUTED}'>{_e(trace.streaming)}▌</div>")
    return "".join(parts) or f"<div style='{_MUTED}'>(waiting for the model)</div>"


class AgentTurnView(VBox):
    """Live view of one agent turn: header, transcript, approval questions, Stop.

    Args:
        trace: The trace it shows (fed by the caller).
        on_stop: Called (kernel thread) when Stop is clicked; returns a short note.
    """

    def __init__(self, trace: TurnTrace, on_stop: Callable[[], str] | None = None, **kwargs: Any):
        self.trace = trace
        self._on_stop = on_stop
        self._lock = threading.RLock()
        self._header = HTML()
        self._body = HTML()
        self._questions = VBox()
        self._stop = Button(
            description="Stop",
            button_style="danger",
            icon="stop",
            tooltip="Cancel this turn",
            layout=Layout(width="90px"),
        )
        self._stop.on_click(self._clicked)
        self.note = ""
        super().__init__(children=(self._header, self._body, self._questions, self._stop), **kwargs)
        self.add_class(BEACON)  # its standby owner, displayed right before it, shows once it is dead
        self.refresh()

    def _html(self, streaming: bool = True, trace: TurnTrace | None = None, note: str = "") -> tuple[str, str]:
        """Header and body of the view (of ``trace``, default its own) as HTML card roots (call under the lock);
        ``note`` is said after the view's own."""
        t = trace or self.trace
        colour = _COLOURS.get(t.status, "#57606a")
        header = (
            f"<b>agent {_e(t.agent_id)}</b> <span style='{_MUTED}'>{_e(short_model_ref(t.model_ref))}</span> "
            f"<span style='background:{colour};color:#fff;border-radius:8px;padding:0 6px'>{_e(t.status)}</span>"
            f" <span style='{_MUTED}'>{f'turn {t.turns} · ' if t.turns > 1 else ''}round {t.rounds}"
            f" · {t.elapsed():.0f} s · tokens in "
            f"{t.usage['input_tokens']}, out {t.usage['output_tokens']}</span>"
        )
        for said in (self.note, note):
            if said:
                header += f" <i>{_e(said)}</i>"
        body = _transcript_parts(t, streaming)
        last_text = next((i["text"] for i in reversed(t.items) if i["kind"] == "text"), "")
        if t.status != "running" and t.final_text.strip() and t.final_text.strip() != last_text.strip():
            body += (
                f"<div style='margin-top:6px;border-top:1px solid {fg('border')};padding-top:4px'>"
                f"<span style='{_MUTED}'>final text</span><div style='white-space:pre-wrap'>"
                f"{_e(t.final_text)}</div></div>"
            )
        return card_root(header, classes="holon-turn-header"), card_root(body, classes="holon-transcript")

    def static_bundle(self) -> dict[str, Any]:
        """The ended turn as static output: ``text/plain`` transcript, ``text/html`` header and transcript.

        What replaces the live view's display once the turn (or ``--follow`` run) ended, so a saved,
        reopened or restarted notebook shows the transcript, never a broken widget. Thumbnails of
        ViewImage/GenerateImage results stay in the HTML; the first is also an image output.
        """
        with self._lock:
            header, body = self._html(streaming=False)
            data: dict[str, Any] = {
                "text/plain": render_transcript(self.trace),
                "text/html": f"<div class='holon-turn-static'>{header}{body}</div>",
                VIEW_MIMETYPE: {"view": "agent-turn"},
            }
            previews = [p for i in self.trace.items for p in i.get("previews") or ()]
        if previews:
            data[previews[0]["mime"]] = base64.b64encode(previews[0]["data"]).decode("ascii")
        return data

    def fallback_bundle(self, when: str) -> dict[str, Any]:
        """The standby owner displayed right before the view: the transcript so far as of ``when``, as interrupted.

        Hidden in JupyterLab and Notebook 7 while the view is live; shown (and the view hidden) once the
        kernel restarted under the page or the notebook was reopened without the view's widget model
        (:mod:`holon_nb.notebook._liveness`): a kernel restart or shutdown ends the turn it ran.

        Args:
            when: When the state shown was last updated (local time, as text).
        """
        why = f"by a kernel restart or shutdown; last updated {when}"
        with self._lock:
            trace = copy.copy(self.trace)  # the same items, drawn as interrupted (nothing is changed)
            trace.status, trace.reason, trace.streaming = INTERRUPTED, why, ""
            trace.ended_at = trace.ended_at or time.monotonic()
            header, body = self._html(streaming=False, trace=trace, note=f"{INTERRUPTED} {why}")
            text = render_transcript(trace)
        return {
            "text/plain": text,
            "text/html": f"<div class='holon-turn-static {OWNER} {STANDBY}'>{header}{body}</div>{STYLE}",
            FALLBACK_MIMETYPE: {"of": trace.agent_id, "state": "standby"},
        }

    def close(self) -> None:
        """Close the view and the widgets it is built of (their frontend models go too)."""
        for child in (self._header, self._body, self._stop, *self._questions.children, self._questions):
            child.close()
        super().close()

    def refresh(self) -> None:
        """Redraw header and body from the trace (whole-value assignments)."""
        with self._lock:
            t = self.trace
            header, body = self._html()
            if self._header.value != header:
                self._header.value = header
            if self._body.value != body:
                self._body.value = body
            ended = t.status not in ("running", "waiting")  # waiting: --follow waits for a wake
            shown = "none" if ended else ""  # a followed turn that ends, then waits or is woken, offers Stop again
            if (self._stop.layout.display or "") != shown:
                self._stop.layout.display = shown

    def _clicked(self, _b: Button) -> None:
        if self._on_stop is not None and self.trace.status in ("running", "waiting"):
            self.note = self._on_stop()
            self.refresh()

    def ask(self, tool_name: str, args: Any, reason: str) -> concurrent.futures.Future:
        """Show an approval question; the future resolves to ``approve_once``, ``approve_session`` or ``deny``."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        question = (
            f"<b>Approve {_e(tool_name)}?</b> <span style='{_MUTED}'>{_e(reason)}</span>"
            f"<pre style='{_PRE}'>{_e(pretty_input(args, 2000))}</pre>"
        )
        root = "border-left:3px solid #9a6700;padding:2px 6px"
        text = HTML(card_root(question, root, "holon-approval"))

        def answered(line: str) -> None:  # the answer goes inside the root (MathJax classes, scoped CSS)
            text.value = card_root(question + f"<div style='{_MUTED}'>{_e(line)}</div>", root, "holon-approval")

        buttons = [
            Button(description=label, button_style=style, layout=Layout(width="auto"))
            for label, style in (("Approve once", "success"), ("Approve for this session", "info"), ("Deny", "danger"))
        ]
        box = VBox([text, HBox(buttons)])

        def answer(decision: str, label: str) -> Callable[[Button], None]:
            def click(_b: Button) -> None:
                if not future.done():
                    future.set_result(decision)
                    answered(f"answered: {label}")
                    for b in buttons:
                        b.disabled = True

            return click

        for b, (decision, label) in zip(
            buttons,
            (("approve_once", "Approve once"), ("approve_session", "Approve for this session"), ("deny", "Deny")),
            strict=False,
        ):
            b.on_click(answer(decision, label))

        def withdrawn(f: concurrent.futures.Future) -> None:
            if f.cancelled():  # timed out (HolonNB.approval_timeout_s) or the turn was stopped
                answered("not answered: the question was withdrawn (denied)")
                for b in buttons:
                    b.disabled = True

        future.add_done_callback(withdrawn)
        with self._lock:
            self._questions.children = (*self._questions.children, box)
        return future

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = render_transcript(self.trace)
        previews = [p for i in self.trace.items for p in i.get("previews") or ()]
        if previews:  # a saved notebook (GitHub, nbviewer: no widget manager) shows the thumbnails too
            data["text/html"] = render_transcript_html(self.trace, streaming=False)
            data[previews[0]["mime"]] = base64.b64encode(previews[0]["data"]).decode("ascii")
        # tells notebook tests that this view's text/plain is its transcript, compared like any output
        # (other widget views are ignored, notebook-tests spec §3.3); front ends have no renderer for it
        data[VIEW_MIMETYPE] = {"view": "agent-turn"}
        return data
