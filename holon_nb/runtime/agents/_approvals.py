"""Approvals: a policy that may ask the user before a model's tool call is dispatched (issue 5).

Policy (``RuntimeSettings.approval``, ``%config HolonNB.approval``):

- ``never`` (default): nothing is asked;
- ``on_request``: asks for the ``authority_expanding``, ``agent_creation`` and ``web``
  families, and for ExecCommand (and ExecCommandBatch items) whose ``workdir`` resolves
  outside the active execution root;
- ``always``: asks for every call.

Whatever the policy, a tool declared ``asks_approval`` (the opt-in Notebook family's RunCode, EditNotebook
and ExecuteCell, issue 28) is asked unless ``RuntimeSettings.notebook_approve_all`` trusts the session
(``%config HolonNB.notebook_approve_all = True``, or ``%%agent --approve-all``).

The check applies to calls a model makes during a turn (the turn loop calls
:meth:`ApprovalBroker.check` before dispatch); direct calls — a magic,
``Runtime.call`` — are the user acting and are never asked. A call that would
fail before its handler anyway (unknown tool, profile gate, invalid arguments)
is not asked either: dispatch answers it.

The answer comes from an *asker*, ``async (ApprovalRequest) -> "approve_once" |
"approve_session" | "deny"`` installed by the notebook layer on
``rt.approvals.asker``. ``approve_session`` records a standing approval of that tool
for the rest of the session (until the runtime closes): it is not asked again.
``deny`` — and any asker failure, no asker installed while the policy requires
asking, or no answer within ``RuntimeSettings.approval_timeout_s`` (default 120 s;
``<= 0`` waits forever) — gives the model an error envelope of kind ``approval_denied``
(domain ``policy``) and the turn goes on. One question is asked at a time. An
expected failure (no asker, a failing asker, a timeout) logs one warning line, never
a traceback.

Cancelling the turn while a question is open (``rt.turns.cancel``) withdraws it: the
asker's await is cancelled and ``approval_decided`` reports source ``cancelled``.

Events: ``approval_requested`` (request_id, tool_name, agent_id, reason, timeout_s) and
``approval_decided`` (request_id, tool_name, decision, source: ``asker`` | ``session``
| ``no_asker`` | ``asker_failed`` | ``timeout`` | ``cancelled``).
"""

from __future__ import annotations

import enum
import inspect
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ...tools._context import GUARDED_MUTATION_TOOLS, TRUNCATION_STOP_REASONS, CallContext
from ...tools._dispatch import parse_args
from ...tools._envelope import ToolError, error_envelope
from ...tools._errors import ToolFailure
from ...tools._spec import PROFILE_FAMILIES, Family, ToolSpec
from ..core._store import new_id

if TYPE_CHECKING:
    from ...tools._context import ToolContext
    from ...tools._registry import Registry
    from ._ports import ApprovalSettings, EventSink, ScrubberSource, ToolContexts

__all__ = [
    "ASKING_FAMILIES",
    "ApprovalBroker",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Asker",
    "Decision",
    "approval_reason",
    "needs_approval",
]

log = logging.getLogger("holon_nb.approvals")

Decision = Literal["approve_once", "approve_session", "deny"]
_DECISIONS = ("approve_once", "approve_session", "deny")


class ApprovalPolicy(str, enum.Enum):
    """When a model's tool call needs the user's approval."""

    NEVER = "never"
    ON_REQUEST = "on_request"
    ALWAYS = "always"

    @classmethod
    def parse(cls, value: Any) -> ApprovalPolicy:
        """The policy named by ``value``; an unknown value fails closed (``always``) with a warning."""
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            log.warning("unknown approval policy %r: asking for every call", value)
            return cls.ALWAYS


#: Families ``on_request`` asks for.
ASKING_FAMILIES = frozenset(
    {Family.AUTHORITY_EXPANDING, Family.AGENT_CREATION, Family.WEB, Family.MCP, Family.MCP_SHARED}
)
_WORKDIR_TOOLS = ("ExecCommand", "ExecCommandBatch")


@dataclass(frozen=True)
class ApprovalRequest:
    """One question to the user.

    Attributes:
        request_id: ``approval_<15 hex>``.
        tool_name: The tool the model called.
        family: Its capability family (wire label).
        agent_id: The calling agent.
        arguments: The call's arguments as the model sent them (a dict), secret values scrubbed (D6/D12).
        reason: Why the policy asks (one sentence).
        policy: The policy in force (``on_request`` or ``always``).
        execution_id: The tool execution id, when the turn loop assigned one.
        round: The model round, if known.
    """

    request_id: str
    tool_name: str
    family: str
    agent_id: str
    arguments: dict[str, Any]
    reason: str
    policy: str
    execution_id: str = ""
    round: int | None = None


Asker = Callable[[ApprovalRequest], Awaitable[str] | str]


def _outside(workdir: str | None, ctx: ToolContext) -> str | None:
    """The resolved ``workdir`` when it lies outside the active execution root, else None."""
    if workdir is None:
        return None
    base = str(ctx.cwd)
    path = os.path.realpath(workdir if os.path.isabs(workdir) else os.path.join(base, workdir))
    root = os.path.realpath(str(ctx.workspaces.execution_root))
    if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return path


def approval_reason(
    spec: ToolSpec[Any, Any], args: Any, ctx: ToolContext, policy: ApprovalPolicy | str | None = None
) -> str | None:
    """Why ``policy`` asks before this call, or None when it does not.

    Args:
        spec: The tool.
        args: Its parsed input model.
        ctx: The call's context (``ctx.cwd``, ``ctx.workspaces.execution_root``).
        policy: The policy; None means the runtime setting ``approval`` (``ctx.setting``).

    Returns:
        A sentence such as ``"ExecCommand workdir /tmp is outside the active execution root /w"``.
    """
    if policy is None:
        try:
            policy = ctx.setting("approval")
        except AttributeError:
            policy = ApprovalPolicy.NEVER
    policy = ApprovalPolicy.parse(policy)
    if spec.asks_approval and not _trusted(ctx):
        return f"{spec.name} runs code in or changes the notebook: asked unless the session is trusted (--approve-all)"
    if policy is ApprovalPolicy.NEVER:
        return None
    if policy is ApprovalPolicy.ALWAYS:
        return f"the approval policy is always: every call of a model is asked ({spec.name})"
    if spec.family in ASKING_FAMILIES:
        return f"{spec.name} is in the {spec.family.value} family"
    if spec.name in _WORKDIR_TOOLS:
        top = getattr(args, "workdir", None)
        dirs = [top] + [item.workdir or top for item in getattr(args, "items", None) or ()]
        for workdir in dirs:
            outside = _outside(workdir, ctx)
            if outside is not None:
                root = os.path.realpath(str(ctx.workspaces.execution_root))
                return f"{spec.name} workdir {outside} is outside the active execution root {root}"
    return None


def _trusted(ctx: ToolContext) -> bool:
    """``notebook_approve_all``: the session trusts the Notebook family's code runs and edits (issue 28)."""
    try:
        return bool(ctx.setting("notebook_approve_all"))
    except AttributeError:
        return False


def needs_approval(
    spec: ToolSpec[Any, Any], args: Any, ctx: ToolContext, policy: ApprovalPolicy | str | None = None
) -> bool:
    """True when ``policy`` (default: the runtime setting) asks the user before this call (module docstring)."""
    return approval_reason(spec, args, ctx, policy) is not None


@dataclass
class _Record:
    request: ApprovalRequest
    decision: str
    source: str


class ApprovalBroker:
    """The session's approval state and the way to ask: ``rt.approvals``.

    Built by the runtime's composition root with the ports of :mod:`.ports`, and nothing else of the runtime.

    Args:
        settings: Returns the runtime's current settings (``approval``, ``approval_timeout_s``).
        registry: The tool registry (which tools a profile may call, their families).
        publish: The runtime's event sink (``approval_requested``, ``approval_decided``).
        scrubber: The runtime's current D6 scrubber (a question shows the arguments scrubbed).
        tool_context: The ``ToolContext`` of a call given as its ``CallContext``.

    Attributes:
        asker: ``async (ApprovalRequest) -> "approve_once" | "approve_session" | "deny"`` (a plain
            function returning the decision works too); None means nobody can be asked, so a call
            that needs approval is denied with a message saying so. Called on the runtime thread.
        history: The decisions of this session, oldest first (at most 200).
    """

    def __init__(
        self,
        *,
        settings: Callable[[], ApprovalSettings],
        registry: Registry,
        publish: EventSink,
        scrubber: ScrubberSource,
        tool_context: ToolContexts,
    ):
        self._settings = settings
        self.registry = registry
        self._publish = publish
        self._scrubber = scrubber
        self._tool_context = tool_context
        self.asker: Asker | None = None
        self.history: list[_Record] = []
        self._standing: set[str] = set()
        self._lock: anyio.Lock | None = None

    @property
    def policy(self) -> ApprovalPolicy:
        """The policy in force (``rt.settings.approval``; default ``never``)."""
        return ApprovalPolicy.parse(self._settings().approval)

    @property
    def standing(self) -> frozenset[str]:
        """Tool names approved for the rest of this session."""
        return frozenset(self._standing)

    def approve_for_session(self, tool_name: str) -> None:
        """Record a standing approval of ``tool_name`` (what ``approve_session`` does)."""
        self._standing.add(tool_name)

    def revoke(self, tool_name: str | None = None) -> None:
        """Forget the standing approval of ``tool_name``, or all of them."""
        if tool_name is None:
            self._standing.clear()
        else:
            self._standing.discard(tool_name)

    @property
    def timeout_s(self) -> float | None:
        """Seconds to wait for an answer (``rt.settings.approval_timeout_s``); None means forever (``<= 0``)."""
        value = self._settings().approval_timeout_s
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            log.warning("approval_timeout_s %r is not a number: using 120 s", value, exc_info=False)
            return 120.0
        return seconds if seconds > 0 else None

    def _remember(self, request: ApprovalRequest, decision: str, source: str) -> None:
        self.history.append(_Record(request, decision, source))
        del self.history[:-200]
        self._publish(
            "approval_decided",
            None,
            request_id=request.request_id,
            tool_name=request.tool_name,
            agent_id=request.agent_id,
            decision=decision,
            source=source,
        )

    async def ask(self, request: ApprovalRequest) -> tuple[str, str]:
        """Ask the installed asker; return ``(decision, source)``.

        No asker → ``("deny", "no_asker")``; an asker that raises or answers something else →
        ``("deny", "asker_failed")``; no answer within :attr:`timeout_s` → ``("deny", "timeout")``
        (each logged as one warning line). Cancellation propagates.
        """
        if self.asker is None:
            log.warning(
                "%s needs the user's approval (%s) but no approval prompt is installed: denied",
                request.tool_name,
                request.reason,
                exc_info=False,
            )
            return "deny", "no_asker"
        timeout = self.timeout_s
        self._publish(
            "approval_requested",
            None,
            request_id=request.request_id,
            tool_name=request.tool_name,
            agent_id=request.agent_id,
            reason=request.reason,
            timeout_s=timeout,
        )
        answer: Any = None
        try:
            with anyio.move_on_after(timeout) as waited:
                answer = self.asker(request)
                if inspect.isawaitable(answer):
                    answer = await answer
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:  # noqa: BLE001 - an expected condition: one line, no traceback
            log.warning(
                "asking the user to approve %s failed (%s: %s): denied",
                request.tool_name,
                type(exc).__name__,
                exc,
                exc_info=False,
            )
            return "deny", "asker_failed"
        if waited.cancelled_caught:
            log.warning("no approval answer for %s within %g s: denied", request.tool_name, timeout, exc_info=False)
            return "deny", "timeout"
        if answer not in _DECISIONS:
            log.warning(
                "approval asker answered %r (expected one of %s): denying",
                answer,
                ", ".join(_DECISIONS),
                exc_info=False,
            )
            return "deny", "asker_failed"
        return str(answer), "asker"

    async def check(self, name: str, args: Any, ctx: ToolContext | CallContext) -> dict[str, Any] | None:
        """Decide whether a model's call may run; call it right before ``dispatch`` (runtime thread).

        Args:
            name: The tool name the model called.
            args: The raw arguments (dict or JSON text), as dispatch will get them.
            ctx: The call's ToolContext (or its CallContext, for which the runtime's context is built).

        Returns:
            None when the call may be dispatched; otherwise the ``approval_denied`` error envelope
            to return to the model instead (the turn goes on).
        """
        spec = self.registry.get(name)
        if self.policy is ApprovalPolicy.NEVER and (spec is None or not spec.asks_approval):
            return None
        ctx = self._context(ctx)
        call = ctx.call
        if call.exposed is not None and name not in call.exposed and name != "Sleep":
            return None  # tool_not_exposed_for_round: dispatch refuses it without running anything
        if call.stop_reason in TRUNCATION_STOP_REASONS and name in GUARDED_MUTATION_TOOLS:
            return None  # truncated_mutation_tool_call, likewise
        if spec is None or spec.family not in PROFILE_FAMILIES[call.profile]:
            return None  # unknown tool or profile gate: likewise
        try:
            parsed = parse_args(spec, args if spec.prepare is None else spec.prepare(args, ctx.call))
            reason = approval_reason(spec, parsed, ctx, self.policy)
        except ToolFailure:
            return None  # invalid input: dispatch answers invalid_tool_input without running anything
        except Exception as exc:  # e.g. the workspace projection cannot be read: fail closed, ask
            log.exception("approval check of %s failed", name)
            reason = (
                f"the approval rules for {name} could not be evaluated ({type(exc).__name__}), so the user is asked"
            )
        if reason is None:
            return None
        request = ApprovalRequest(
            request_id=new_id("approval"),
            tool_name=name,
            family=spec.family.value,
            agent_id=ctx.call.agent_id,
            arguments=self._scrubber().value(_as_dict(args)),
            reason=reason,
            policy=self.policy.value,
            execution_id=ctx.call.execution_id,
            round=ctx.call.round,
        )
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # one question at a time; a session approval given meanwhile counts
            if name in self._standing:
                self._remember(request, "approve_session", "session")
                return None
            try:
                decision, source = await self.ask(request)
            except anyio.get_cancelled_exc_class():  # the turn was stopped: the question is withdrawn
                self._remember(request, "deny", "cancelled")
                raise
        self._remember(request, decision, source)
        if decision == "approve_session":
            self._standing.add(name)
        if decision != "deny":
            return None
        return error_envelope(name, _denied(request, source, self.timeout_s))

    def _context(self, ctx: ToolContext | CallContext) -> ToolContext:
        return self._tool_context(ctx) if isinstance(ctx, CallContext) else ctx


def _as_dict(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return dict(args)
    if isinstance(args, (str, bytes, bytearray)):
        try:
            value = json.loads(args)
        except ValueError:
            return {"_raw": args if isinstance(args, str) else bytes(args).decode("utf-8", "replace")}
        return value if isinstance(value, dict) else {"_raw": value}
    return {"_raw": repr(args)}


def _denied(request: ApprovalRequest, source: str, timeout_s: float | None = None) -> ToolError:
    details: dict[str, Any] = {
        "tool_name": request.tool_name,
        "policy": request.policy,
        "reason": request.reason,
        "decision": "deny",
        "decided_by": source,
        "request_id": request.request_id,
    }
    if source == "no_asker":
        message = (
            f"{request.tool_name} needs the user's approval ({request.reason}), and no approval prompt is "
            f"installed, so it was not run"
        )
        hint = (
            "Nobody can approve calls in this session: continue without this call, or ask the user to set "
            "%config HolonNB.approval = 'never' or to run it themselves."
        )
    elif source == "asker_failed":
        message = f"{request.tool_name} was not run: asking the user for approval failed ({request.reason})"
        hint = "Continue without this call, or ask the user in your reply."
    elif source == "timeout":
        waited = details["timeout_s"] = timeout_s
        message = (
            f"{request.tool_name} was not run: it needs the user's approval ({request.reason}), and no "
            f"answer came within {waited:g} s"
        )
        hint = "Nobody answered: continue without this call, or ask the user in your reply."
    else:
        message = f"the user denied {request.tool_name} ({request.reason}); it was not run"
        hint = "Do not retry the same call; continue another way or ask the user what they want."
    return ToolError(kind="approval_denied", message=message, details=details, recovery_hint=hint)
