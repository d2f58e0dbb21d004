"""The deterministic test provider: a FIFO of scripted steps (turn-loop spec §4.1-§4.2).

Python API at parity with upstream's ``ScriptedAgentProvider`` (``Step.text``,
``Step.tool_use``, ``Step.response``, ``Step.failure``, ``.with_usage(i, o)``,
``requests()``, ``request_count()``, ``remaining_steps()``), plus holon_nb's
typed ``Step.error`` (a classified :class:`ProviderTransportError` the lineage
wrapper retries), ``Step.tool_uses`` (several calls in one response) and
``expect`` checks, and a file format for notebook fixtures (YAML or JSON)::

    format: holon_nb.script/v1
    route_ref: scripted@default/scripted
    steps:
      - tool_use: {id: call_1, name: GetAgent, input: {}}
        usage: {input: 10, output: 5}
      - error: {kind: rate_limited, status: 429}
      - text: finished after scripted tool result
        usage: {input: 7, output: 3}
        expect: {last_message: {tool_results: [{tool_use_id: call_1, is_error: false}]}}
      - response: {blocks: [{type: text, text: partial}], stop_reason: max_tokens}

Each request is logged, then the next step is popped; request content is not
matched except by ``expect`` (checked before the step is consumed). Running out
of steps raises :class:`ScriptExhausted` with the exact upstream text
``scripted agent provider exhausted after <n> request(s)``.

Example::

    p = ScriptedProvider([Step.tool_use("call_1", "GetAgent", {}).with_usage(10, 5),
                          Step.text("done").with_usage(7, 3)])
    rt.providers.register(p.route_ref, p)
    rt.run_turn("hi", model=p.route_ref)
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tools._errors import HolonNBError
from .base import (
    AssistantBlocks,
    Block,
    ProviderTransportError,
    TextBlock,
    TokenUsage,
    ToolUseBlock,
    TurnRequest,
    TurnResponse,
    UserText,
    UserToolResults,
    block_from_dict,
    to_dict,
)

__all__ = [
    "SCRIPT_FORMAT",
    "SCRIPTED_ROUTE_REF",
    "ScriptError",
    "ScriptExhausted",
    "ScriptExpectationError",
    "ScriptedFailure",
    "ScriptedProvider",
    "Step",
    "StubProvider",
    "load_script",
]

#: The ``format`` tag of a script file.
SCRIPT_FORMAT = "holon_nb.script/v1"
#: The scripted provider's route ref (turn-loop spec §4.2).
SCRIPTED_ROUTE_REF = "scripted@default/scripted"
_STEP_KINDS = ("text", "tool_use", "tool_uses", "response", "error", "failure")
_EXPECT_KEYS = ("last_message", "tools_include", "tools_exclude", "system_contains")


class ScriptError(HolonNBError, ValueError):
    """A script file or step definition is malformed (names the step and the problem)."""


class ScriptExhausted(ProviderTransportError):
    """More requests than steps: ``scripted agent provider exhausted after <n> request(s)`` (kind ``unknown``,
    ``fail_fast``)."""

    def __init__(self, count: int):
        super().__init__(
            "unknown", f"scripted agent provider exhausted after {count} request(s)", disposition="fail_fast"
        )
        self.request_count = count


class ScriptedFailure(HolonNBError):
    """The untyped parity failure of ``Step.failure(message)`` (the lineage wrapper classifies it
    ``unknown``/``fail_fast``)."""


class ScriptExpectationError(HolonNBError, AssertionError):
    """An ``expect`` check failed against the incoming request (turn-loop spec §4.2).

    Attributes:
        step_index: 0-based index of the step whose expectation failed.
        path: The failing path, e.g. ``expect.last_message.tool_results[0].is_error``.
    """

    def __init__(self, step_index: int, path: str, detail: str):
        super().__init__(f"scripted step {step_index}: {path}: {detail}")
        self.step_index = step_index
        self.path = path


@dataclass(frozen=True)
class Step:
    """One scripted provider step: a response, a typed error, or an untyped failure.

    Build steps with the class methods; ``with_usage`` and ``expecting`` return copies.

    Attributes:
        reply: The response to return, or None.
        typed_error: The fields of a classified error to raise (the lineage wrapper may retry it).
        failure_message: An untyped failure message (never retried).
        expect: Checks on the incoming request (keys ``last_message``, ``tools_include``,
            ``tools_exclude``, ``system_contains``).
    """

    reply: TurnResponse | None = None
    typed_error: dict[str, Any] | None = None
    failure_message: str | None = None
    expect: Mapping[str, Any] | None = None

    # ------------------------------------------------------------ builders
    @classmethod
    def text(cls, text: str, stop_reason: str = "end_turn") -> Step:
        """A response with one text block."""
        return cls(reply=TurnResponse(blocks=(TextBlock(text),), stop_reason=stop_reason))

    @classmethod
    def tool_use(cls, id: str, name: str, input: Any = None, stop_reason: str = "tool_use") -> Step:  # noqa: A002
        """A response with one function call (``input`` None means ``{}``)."""
        return cls.tool_uses([(id, name, {} if input is None else input)], stop_reason=stop_reason)

    @classmethod
    def tool_uses(cls, calls: Iterable[tuple[str, str, Any]], stop_reason: str = "tool_use") -> Step:
        """A response with several calls ``[(id, name, input), …]`` in one round."""
        blocks = tuple(ToolUseBlock(id=i, name=n, input={} if a is None else a) for i, n, a in calls)
        return cls(reply=TurnResponse(blocks=blocks, stop_reason=stop_reason))

    @classmethod
    def response(cls, blocks: Iterable[Block], stop_reason: str | None = None) -> Step:
        """A response made of the given blocks (text, tool_use, thinking, …)."""
        return cls(reply=TurnResponse(blocks=tuple(blocks), stop_reason=stop_reason))

    @classmethod
    def failure(cls, message: str) -> Step:
        """An untyped failure (:class:`ScriptedFailure`), classified ``unknown``/``fail_fast``."""
        return cls(failure_message=message)

    @classmethod
    def error(
        cls,
        kind: str,
        *,
        status: int | None = None,
        code: str | None = None,
        disposition: str | None = None,
        message: str | None = None,
        token_usage: tuple[int, int] | None = None,
    ) -> Step:
        """A classified :class:`ProviderTransportError` (``disposition`` defaults from turn-loop spec §2.4)."""
        return cls(
            typed_error={
                "kind": kind,
                "status": status,
                "code": code,
                "disposition": disposition,
                "message": message,
                "token_usage": token_usage,
            }
        )

    def with_usage(self, input_tokens: int, output_tokens: int) -> Step:
        """A copy whose response reports this token usage."""
        if self.reply is None:
            raise ScriptError("with_usage applies to a response step, not an error or failure")
        return dataclasses.replace(
            self,
            reply=dataclasses.replace(self.reply, input_tokens=int(input_tokens), output_tokens=int(output_tokens)),
        )

    def expecting(self, **expect: Any) -> Step:
        """A copy that checks the incoming request first (keys of turn-loop spec §4.2 ``expect``).

        Raises:
            ScriptError: for an unknown key.
        """
        unknown = sorted(set(expect) - set(_EXPECT_KEYS))
        if unknown:
            raise ScriptError(f"unknown expect key(s) {unknown}; allowed: {list(_EXPECT_KEYS)}")
        return dataclasses.replace(self, expect=dict(expect))

    # ------------------------------------------------------------ running
    def build_error(self) -> ProviderTransportError:
        """The :class:`ProviderTransportError` of an ``error`` step."""
        e = dict(self.typed_error or {})
        usage = e.get("token_usage")
        return ProviderTransportError(
            e.get("kind") or "unknown",
            e.get("message")
            or f"scripted {e.get('kind')} error" + (f" (status {e['status']})" if e.get("status") is not None else ""),
            disposition=e.get("disposition"),
            status=e.get("status"),
            code=e.get("code"),
            token_usage=TokenUsage(int(usage[0]), int(usage[1])) if usage else None,
        )


class ScriptedProvider:
    """A provider answering from a FIFO of :class:`Step` (turn-loop spec §4.1-§4.2).

    Args:
        steps: The steps, consumed one per request.
        route_ref: Its route ref (default ``scripted@default/scripted``).

    Attributes:
        model_refs: ``["scripted"]`` (parity).
    """

    model_refs = ["scripted"]

    def __init__(self, steps: Iterable[Step] = (), route_ref: str = SCRIPTED_ROUTE_REF):
        self.route_ref = route_ref
        self._steps: deque[Step] = deque(steps)
        self._requests: list[TurnRequest] = []
        self._consumed = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """Load a script file (YAML or JSON); see :func:`load_script`."""
        return load_script(path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<script>") -> ScriptedProvider:
        """Build from the parsed file form ``{format, route_ref?, steps: [...]}``.

        Raises:
            ScriptError: naming the step and the problem.
        """
        if not isinstance(data, Mapping):
            raise ScriptError(f"{source}: a script is a mapping with `format` and `steps`")
        fmt = data.get("format", SCRIPT_FORMAT)
        if fmt != SCRIPT_FORMAT:
            raise ScriptError(f"{source}: format {fmt!r} is not {SCRIPT_FORMAT!r}")
        steps = data.get("steps")
        if not isinstance(steps, list):
            raise ScriptError(f"{source}: `steps` must be a list")
        return cls(
            [_step_from_dict(s, i, source) for i, s in enumerate(steps)],
            route_ref=str(data.get("route_ref") or SCRIPTED_ROUTE_REF),
        )

    def push(self, *steps: Step) -> None:
        """Append steps to the end of the script."""
        self._steps.extend(steps)

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """Log the request and answer with the next step.

        Raises:
            ScriptExhausted: when no step is left.
            ScriptExpectationError: when the step's ``expect`` does not hold (the step stays queued).
            ProviderTransportError: for an ``error`` step.
            ScriptedFailure: for a ``failure`` step.
        """
        self._requests.append(req)
        if not self._steps:
            raise ScriptExhausted(len(self._requests))
        step = self._steps[0]
        if step.expect:
            _check_expect(step.expect, req, self._consumed)
        self._steps.popleft()
        self._consumed += 1
        if step.failure_message is not None:
            raise ScriptedFailure(step.failure_message)
        if step.typed_error is not None:
            raise step.build_error()
        assert step.reply is not None
        return step.reply

    # ------------------------------------------------------------ introspection (parity)
    def requests(self) -> list[TurnRequest]:
        """Every request received, in order (including one that found the script exhausted)."""
        return list(self._requests)

    def request_count(self) -> int:
        """How many requests were received."""
        return len(self._requests)

    def remaining_steps(self) -> int:
        """How many steps are left."""
        return len(self._steps)

    def __repr__(self) -> str:
        return f"<ScriptedProvider {self.route_ref} requests={len(self._requests)} remaining={len(self._steps)}>"


class StubProvider:
    """Returns one fixed text for every request (parity with upstream's ``StubProvider``)."""

    model_refs = ["stub"]

    def __init__(self, text: str = "ok", route_ref: str = "stub@default/stub"):
        self.text = text
        self.route_ref = route_ref

    async def complete_turn(self, req: TurnRequest) -> TurnResponse:
        """Answer ``text``."""
        return TurnResponse(blocks=(TextBlock(self.text),), stop_reason="end_turn")


# ---------------------------------------------------------------- file form


def load_script(path: str | Path) -> ScriptedProvider:
    """Load a ``holon_nb.script/v1`` file (``.yaml``/``.yml`` or ``.json``).

    Raises:
        FileNotFoundError: when the file is missing.
        ScriptError: when it is malformed (names the step and the problem).
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix.lower() == ".json":
        data = json.loads(text)
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScriptError(f"{p}: not valid YAML: {exc}") from None
    return ScriptedProvider.from_dict(data, source=str(p))


def _usage(raw: Any, where: str) -> tuple[int, int]:
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: `usage` must be {{input: N, output: N}}")
    try:
        return int(raw.get("input", raw.get("input_tokens", 0))), int(raw.get("output", raw.get("output_tokens", 0)))
    except (TypeError, ValueError):
        raise ScriptError(f"{where}: `usage` values must be integers") from None


def _call(raw: Any, where: str) -> tuple[str, str, Any]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str) or not isinstance(raw.get("name"), str):
        raise ScriptError(f"{where}: a tool call is {{id: str, name: str, input: {{...}}}}")
    return raw["id"], raw["name"], raw.get("input", {})


def _step_from_dict(raw: Any, index: int, source: str) -> Step:
    """Step ``index`` of a script from its mapping (one step kind, optional ``usage``/``expect``/``stop_reason``).

    Raises:
        ScriptError: the mapping is not a step; the message names ``source``, the step and the key.
    """
    where = f"{source}: step {index}"
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: a step is a mapping")
    kinds = [k for k in _STEP_KINDS if k in raw]
    if len(kinds) != 1:
        raise ScriptError(f"{where}: a step has exactly one of {list(_STEP_KINDS)}, found {kinds or 'none'}")
    unknown = sorted(set(raw) - set(_STEP_KINDS) - {"usage", "expect", "stop_reason"})
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {unknown}")
    step = _step_of_kind(kinds[0], raw[kinds[0]], raw.get("stop_reason"), where)
    if "usage" in raw:
        if step.reply is None:
            raise ScriptError(f"{where}: `usage` applies to a response step")
        step = step.with_usage(*_usage(raw["usage"], where))
    if "expect" in raw:
        if not isinstance(raw["expect"], Mapping):
            raise ScriptError(f"{where}: `expect` must be a mapping")
        try:
            step = step.expecting(**dict(raw["expect"]))
        except ScriptError as exc:
            raise ScriptError(f"{where}: {exc}") from None
    return step


def _step_of_kind(kind: str, value: Any, stop: Any, where: str) -> Step:
    """The step a ``kind: value`` entry of :data:`_STEP_KINDS` describes (``stop``: the step's ``stop_reason``)."""
    if kind == "text":
        if not isinstance(value, str):
            raise ScriptError(f"{where}: `text` must be a string")
        return Step.text(value, stop or "end_turn")
    if kind == "tool_use":
        return Step.tool_uses([_call(value, where)], stop or "tool_use")
    if kind == "tool_uses":
        if not isinstance(value, list) or not value:
            raise ScriptError(f"{where}: `tool_uses` must be a non-empty list of calls")
        return Step.tool_uses([_call(c, f"{where}.tool_uses[{i}]") for i, c in enumerate(value)], stop or "tool_use")
    if kind == "response":
        if not isinstance(value, Mapping) or not isinstance(value.get("blocks"), list):
            raise ScriptError(f"{where}: `response` is {{blocks: [...], stop_reason: ...}}")
        try:
            blocks = [block_from_dict(dict(b)) for b in value["blocks"]]
        except (TypeError, ValueError, KeyError) as exc:
            raise ScriptError(f"{where}: bad block: {exc}") from None
        step = Step.response(blocks, value.get("stop_reason", stop))
        return step.with_usage(*_usage(value["usage"], where)) if "usage" in value else step
    if kind == "error":
        if not isinstance(value, Mapping) or not isinstance(value.get("kind"), str):
            raise ScriptError(f"{where}: `error` is {{kind: ..., status?, code?, disposition?, message?}}")
        usage = _usage(value["token_usage"], where) if value.get("token_usage") is not None else None
        return Step.error(
            value["kind"],
            status=value.get("status"),
            code=value.get("code"),
            disposition=value.get("disposition"),
            message=value.get("message"),
            token_usage=usage,
        )
    if not isinstance(value, str):
        raise ScriptError(f"{where}: `failure` must be a message string")
    return Step.failure(value)


# ---------------------------------------------------------------- expectations


def message_view(message: Any) -> dict[str, Any]:
    """The form ``expect.last_message`` is matched against: the message's JSON form, with a
    ``user_tool_results`` message's ``results`` also under ``tool_results`` and a text message's
    text under ``text``."""
    out = to_dict(message)
    if isinstance(message, UserToolResults):
        out["tool_results"] = out["results"]
    elif isinstance(message, AssistantBlocks):
        out["text"] = "\n\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))
    elif isinstance(message, UserText):
        pass
    return out


def _match(expected: Any, actual: Any, path: str) -> None:
    """Subset match: dicts by key, lists element-wise with equal length, scalars by equality."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            raise _Mismatch(path, f"expected an object, got {json.dumps(actual, default=str)[:200]}")
        for key, value in expected.items():
            if key not in actual:
                raise _Mismatch(f"{path}.{key}", "missing in the request")
            _match(value, actual[key], f"{path}.{key}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            got = len(actual) if isinstance(actual, list) else type(actual).__name__
            raise _Mismatch(path, f"expected a list of {len(expected)}, got {got}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            _match(e, a, f"{path}[{i}]")
        return
    if expected != actual:
        raise _Mismatch(path, f"expected {json.dumps(expected)}, got {json.dumps(actual, default=str)[:200]}")


class _Mismatch(HolonNBError):
    def __init__(self, path: str, detail: str):
        super().__init__(detail)
        self.path = path
        self.detail = detail


def _check_expect(expect: Mapping[str, Any], req: TurnRequest, index: int) -> None:
    try:
        if "last_message" in expect:
            if not req.conversation:
                raise _Mismatch("expect.last_message", "the request has no messages")
            _match(expect["last_message"], message_view(req.conversation[-1]), "expect.last_message")
        names = [t.name for t in req.tools]
        for i, name in enumerate(expect.get("tools_include") or ()):
            if name not in names:
                raise _Mismatch(f"expect.tools_include[{i}]", f"tool {name} is not offered")
        for i, name in enumerate(expect.get("tools_exclude") or ()):
            if name in names:
                raise _Mismatch(f"expect.tools_exclude[{i}]", f"tool {name} is offered")
        if "system_contains" in expect and str(expect["system_contains"]) not in req.prompt_frame.system_prompt:
            raise _Mismatch("expect.system_contains", f"{expect['system_contains']!r} is not in the system prompt")
    except _Mismatch as m:
        raise ScriptExpectationError(index, m.path, m.detail) from None
