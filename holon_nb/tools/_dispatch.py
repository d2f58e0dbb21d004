"""The one dispatch path: every magic, ``Runtime.call`` and model tool call goes here.

Order (commands spec §2.1, spec README consistency notes): round exposure →
truncated-mutation guard → registry lookup → profile gate → JSON parse →
input limits (depth, lone surrogates, integers past 4,300 digits; :func:`.coerce.input_problem`) →
schema-directed coercion (D4) → strict validation → normalisation (commands spec §2.4) →
handler → envelope. Nothing escapes as an exception (D5).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._coerce import IntegerTooLong, coerce_args, input_problem, loads_bounded
from ._context import GUARDED_MUTATION_TOOLS, TRUNCATION_STOP_REASONS, CallContext, ToolContext
from ._envelope import ToolError, error_envelope, success_envelope
from ._errors import ToolFailure
from ._registry import REGISTRY, Registry
from ._schema import input_schema_view
from ._spec import PROFILE_FAMILIES, ToolSpec

if TYPE_CHECKING:  # pydantic loads with the first tool model, not with this module
    from pydantic import BaseModel, ValidationError

__all__ = [
    "dispatch",
    "start_early",
    "EarlyStart",
    "parse_args",
    "typed_payload",
    "RESULT_DRIFT",
    "RESULT_DRIFTS",
    "STRICT_RESULTS",
    "RESULT_FIELDS",
    "MAX_TEXT_FIELD_CHARS",
    "UNLIMITED_FIELDS",
    "check_text_sizes",
]

log = logging.getLogger("holon_nb.dispatch")

#: Result-only field names that callers sometimes pass as input (commands spec §2.5).
RESULT_FIELDS = frozenset(
    {
        "status",
        "task_handle",
        "disposition",
        "exit_status",
        "output_preview",
        "initial_output_preview",
        "stdout_preview",
        "truncated",
        "summary_text",
    }
)

_RETRYABLE_ERRNOS = {errno.EINTR, errno.ETIMEDOUT, errno.EAGAIN, errno.EWOULDBLOCK}


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _variant(value: Any) -> str:
    """A rejected enum value as the caller wrote it: a string bare (serde style), anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)[:80]
    except (TypeError, ValueError):
        return type(value).__name__


#: A Python literal in pydantic's ``expected`` text: a quoted string, None, True or False.
_PY_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\b(None|True|False)\b")
_JSON_WORDS = {"None": "null", "True": "true", "False": "false"}


def _json_spelling(expected: str) -> str:
    """pydantic's ``'a', 'b' or None`` as serde spells it: ```a`, `b` or `null```."""
    return _PY_LITERAL.sub(lambda m: f"`{m[1]}`" if m[1] is not None else f"`{_JSON_WORDS[m[2]]}`", expected)


def _format_validation(exc: ValidationError) -> tuple[str, list[str]]:
    """Render pydantic errors with serde-style phrases; return (text, unknown keys)."""
    phrases: list[str] = []
    unknown: list[str] = []
    for e in exc.errors(include_url=False):
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        name = str(loc[-1]) if loc else ""
        where = _loc(loc[:-1])
        at = f" at {where}" if where else ""
        kind = e["type"]
        if kind == "extra_forbidden":
            phrase = f"unknown field `{name}`{at}"
            unknown.append(name)
        elif kind == "missing":
            phrase = f"missing field `{name}`{at}"
        elif kind in ("literal_error", "enum"):
            expected = _json_spelling(str((e.get("ctx") or {}).get("expected", "")))
            phrase = f"unknown variant `{_variant(e.get('input'))}` for `{_loc(loc)}`, expected {expected}"
        else:
            phrase = f"invalid type or value for `{_loc(loc)}`: {e['msg']} (got {json.dumps(e.get('input'), default=repr)[:80]})"
        phrases.append(phrase)
    return "; ".join(phrases), unknown


def parse_args(spec: ToolSpec[Any, Any], raw: Any, *, checked: bool = False) -> BaseModel:
    """Decode, coerce and strictly validate arguments for ``spec``.

    Args:
        spec: The tool declaration.
        raw: A dict, or JSON text (text that is not JSON becomes ``{"_raw": text}``).
        checked: ``raw`` passed :func:`~.coerce.input_problem` already (dispatch checks first).

    Returns:
        The validated (and normalised) input model instance.

    Raises:
        ToolFailure: ``invalid_tool_input`` with ``details {tool_name, parse_error}``.
    """
    checked = checked and isinstance(raw, dict)  # JSON text is decoded below: its value was never checked
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("utf-8", errors="replace")
    json_error = None
    if isinstance(raw, str):
        text = raw
        try:
            raw = loads_bounded(text) if text.strip() else {}
        except IntegerTooLong as exc:  # valid JSON no tool can take: refused like a too-deep input
            raise ToolFailure(_guard_failure(spec.name, str(exc))) from None
        except ValueError as exc:  # like a model's malformed arguments: validation then fails on `_raw`
            raw = {"_raw": text}
            json_error = f"arguments are not valid JSON ({exc})"
    from pydantic import ValidationError  # loaded already: the spec's model is a pydantic model

    problem = None if checked else input_problem(raw)
    if problem is None:
        schema = input_schema_view(spec.input_model)
        try:
            value = coerce_args(raw, schema)
        except RecursionError:
            problem = ("arguments nested too deeply", None)
        else:
            if _coerced(raw, value):  # coercion may have decoded a JSON string field
                problem = input_problem(value)
    if problem is not None:
        raise ToolFailure(_guard_failure(spec.name, *problem))
    if not isinstance(value, dict):
        raise ToolFailure(
            _parse_failure(spec, raw, f"invalid type: expected an argument object, got {type(value).__name__}")
        )
    try:
        args = spec.input_model.model_validate(value, strict=True)
    except ValidationError as exc:
        text, unknown = _format_validation(exc)
        if json_error:  # the stand-in field `_raw` is ours, not the caller's: say only what is wrong
            text = "; ".join(p for p in text.split("; ") if "`_raw`" not in p)
        failure = _parse_failure(spec, raw, f"{json_error}; {text}" if json_error and text else json_error or text)
        if json_error:
            failure.recovery_hint = "Send the arguments as one JSON object. " + (failure.recovery_hint or "")
        hint_fields = [u for u in unknown if u in RESULT_FIELDS]
        if hint_fields:  # on every tool, before the tool's own hint (commands spec §2.5; issue 25 item 6)
            failure.recovery_hint = f"`{hint_fields[0]}` is a result field, not a startup input; remove it. " + (
                failure.recovery_hint or ""
            )
        raise ToolFailure(failure) from None
    if spec.normalize is not None:
        args = spec.normalize(args, spec.name)
    return args


def _coerced(raw: Any, value: Any) -> bool:
    """Whether :func:`coerce_args` changed anything at the top level (it returns unchanged values as given)."""
    if not (isinstance(raw, dict) and isinstance(value, dict)):
        return raw is not value
    return any(value[k] is not v for k, v in raw.items())


# ---------------------------------------------------------------- text size limits (issue 9)
# A 16 MB work-item objective held the home's write lock 21 s: every string of a validated input is at most
# MAX_TEXT_FIELD_CHARS characters, except fields whose text goes to a file or a process (UNLIMITED_FIELDS).

#: Longest text accepted in one input field (characters; 1 Mi). Records, messages and memory
#: documents hold text this long without slowing the store; the memory index keeps the first
#: 32,000 characters of each document searchable.
MAX_TEXT_FIELD_CHARS = 1024 * 1024

#: ``(tool, top-level field)`` pairs whose text goes to a file or a process, not to a record.
UNLIMITED_FIELDS = frozenset({("ApplyPatch", "patch"), ("ApplyPatch", "input"), ("TaskInput", "input")})


def _strings(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 64:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(getattr(type(value), "model_fields", None), dict):  # a pydantic model (pydantic loads lazily)
        for name in type(value).model_fields:
            yield from _strings(getattr(value, name), f"{path}.{name}" if path else name, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]", depth + 1)


def check_text_sizes(tool: str, args: BaseModel) -> None:
    """Refuse an input whose text fields exceed :data:`MAX_TEXT_FIELD_CHARS`.

    Raises:
        ToolFailure: ``invalid_tool_input`` with ``details {tool_name, field, validation_error,
            length, max_chars}``.
    """
    for name in type(args).model_fields:
        if (tool, name) in UNLIMITED_FIELDS:
            continue
        value = getattr(args, name)
        if (
            value is None
            or isinstance(value, (bool, int, float))
            or (isinstance(value, str) and len(value) <= MAX_TEXT_FIELD_CHARS)
        ):
            continue  # most fields: nothing to walk (issue 12)
        for path, text in _strings(value, name):
            if len(text) > MAX_TEXT_FIELD_CHARS:
                error = f"is {len(text)} characters long; the limit is {MAX_TEXT_FIELD_CHARS}"
                raise ToolFailure(
                    ToolError(
                        kind="invalid_tool_input",
                        message=f"invalid `{path}` for {tool}: {error}",
                        details={
                            "tool_name": tool,
                            "field": path,
                            "validation_error": error,
                            "length": len(text),
                            "max_chars": MAX_TEXT_FIELD_CHARS,
                        },
                        recovery_hint=f"Keep `{path}` under {MAX_TEXT_FIELD_CHARS} characters: put long text in a file "
                        "and pass its path, or summarise it.",
                    )
                )


def _guard_failure(name: str, parse_error: str, field: str | None = None) -> ToolError:
    """``invalid_tool_input`` for input no tool can take (too deep, lone surrogates, huge integers); see :func:`.coerce.input_problem`."""
    details: dict[str, Any] = {"tool_name": name, "parse_error": parse_error}
    if field is not None:
        details["field"] = field
    return ToolError(
        kind="invalid_tool_input",
        message=f"input for {name} does not match the tool schema",
        details=details,
        recovery_hint=(
            "Send arguments as one JSON object of valid Unicode text, nested at most a few levels, "
            f"with integers in the ranges the published schema of {name} describes."
        ),
    )


def _parse_failure(spec: ToolSpec[Any, Any], raw: Any, parse_error: str) -> ToolError:
    hint = spec.parse_hint(raw, parse_error) if spec.parse_hint else None
    return ToolError(
        kind="invalid_tool_input",
        message=f"input for {spec.name} does not match the tool schema",
        details={"tool_name": spec.name, "parse_error": parse_error},
        recovery_hint=hint
        or f"Match the published input schema for {spec.name}; see its description for valid examples.",
    )


def classify_exception(tool_name: str, exc: BaseException) -> ToolError:
    """Classify an unexpected failure (commands spec §3.2 order, D5)."""
    cur: BaseException | None = exc
    while cur is not None:
        if isinstance(cur, ToolFailure):
            return cur.error
        if isinstance(cur, OSError):
            return ToolError(
                kind="io_error",
                message=f"{type(cur).__name__}: {cur.strerror or cur}"[:512],
                details={"errno": cur.errno, "path": getattr(cur, "filename", None)},
                retryable=cur.errno in _RETRYABLE_ERRNOS,
            )
        if isinstance(cur, sqlite3.OperationalError) and ("locked" in str(cur) or "busy" in str(cur)):
            waited = getattr(cur, "waited_s", None)  # the store's StoreBusy: it retried that long
            return ToolError(
                kind="runtime_db_busy",
                message="the runtime database is busy: another process holds its write lock",
                details={"waited_s": round(waited, 1)} if waited is not None else None,
                recovery_hint="Another kernel or process on this holon home holds a long write; retry the call "
                "(HolonNB.store_busy_timeout_s sets how long a call waits).",
                retryable=True,
            )
        cur = cur.__cause__ or cur.__context__
    return ToolError(
        kind="internal_error",
        message=f"internal error while running {tool_name}",
        details={"exception_type": type(exc).__name__},
        retryable=False,
    )


# ---------------------------------------------------------------- typed results (issue 27 item 3)

#: Strict mode (tests; ``HOLON_NB_STRICT_RESULTS=1`` in the environment): a payload whose JSON form changes
#: when validated (a ``bool`` where an ``int`` is declared, a default filled in...) counts as drift too, and
#: every drift is recorded in :data:`RESULT_DRIFTS` (the test suite fails a test that left one there).
STRICT_RESULTS = os.environ.get("HOLON_NB_STRICT_RESULTS", "") not in ("", "0")

#: Outside strict mode a tool's first :data:`CHECK_FIRST` results are validated, then one in :data:`CHECK_EVERY`
#: (issue 27 item 7): there a drift is only logged, validation cost ~35 us of a short command's ~0.5 ms, and the
#: test suite, in strict mode, validates every result.
CHECK_FIRST, CHECK_EVERY = 16, 64

#: results returned by each tool in this process outside strict mode (:func:`typed_payload`'s sample)
_RESULTS_SEEN: dict[str, int] = {}

#: ``(tool, message)`` of each drift seen in this process (strict mode only; bounded to 100).
RESULT_DRIFTS: list[tuple[str, str]] = []


#: ``details.exception_type`` of the ``internal_error`` a payload that does not fit its model gives.
RESULT_DRIFT = "ResultDrift"


def typed_payload(spec: ToolSpec[Any, Any], payload: Any) -> dict[str, Any]:
    """Validate a handler's success payload against ``spec.output_model``; return the envelope payload.

    Args:
        spec: The tool declaration.
        payload: What the handler returned: a dict, which may carry a top-level ``summary_text`` (kept
            aside, not validated), or an instance of ``spec.output_model``.

    Returns:
        The payload for :func:`.envelope.success_envelope`: a dict payload as given, once it validated (its
        JSON form is the model's: ``model_dump(mode="json", exclude_unset=True)`` of the validated model
        equals it, which strict mode checks on every call, so receipts stay byte-identical; returning the
        dict saves the dump, ~half the cost); a model instance as its JSON form (optional fields the handler
        did not set stay absent).

    Raises:
        ToolFailure: in strict mode only (the test suite), ``internal_error`` naming the result model and the
            first field that does not fit (``details {exception_type: ResultDrift, result_name, result_field,
            validation_error}``) when the payload does not fit its model, or when validation would change its
            JSON form. Outside strict mode only a sample of each tool's results is validated (its first
            :data:`CHECK_FIRST`, then one in :data:`CHECK_EVERY`); a drift found there is logged (an error on
            the ``holon_nb`` logger) and the payload is returned as it is: the handler's side effects (a command
            that ran, a record written) have happened, and turning its result into an error would hide them.
    """
    model = spec.output_model
    if isinstance(payload, model):
        out: dict[str, Any] = payload.model_dump(mode="json", exclude_unset=True)
        return out
    if not STRICT_RESULTS:
        seen = _RESULTS_SEEN[spec.name] = _RESULTS_SEEN.get(spec.name, 0) + 1
        if seen > CHECK_FIRST and seen % CHECK_EVERY:
            return payload  # not in this sample: as it came (a validated one is returned as it came too)
    from pydantic import ValidationError  # loaded already: the spec's models are pydantic models

    body: Any = payload
    if isinstance(payload, dict) and "summary_text" in payload:  # lifted into the envelope, not in the model
        body = {k: v for k, v in payload.items() if k != "summary_text"}
    try:
        typed = model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        drift = _drift(spec, _loc(tuple(first["loc"])) or "(result)", first["msg"])
        if STRICT_RESULTS:
            raise drift from None
        return payload  # logged; the user keeps what the call did and returned (its effects have happened)
    if STRICT_RESULTS:
        from ..render import dumps_envelope

        dumped = typed.model_dump(mode="json", exclude_unset=True)
        if dumps_envelope({"result": dumped}) != dumps_envelope({"result": body}):
            changed = sorted(k for k in set(dumped) | set(body) if dumped.get(k, ...) != body.get(k, ...))
            raise _drift(spec, ", ".join(changed) or "(result)", "validation changed its JSON form")
    return payload


def _drift(spec: ToolSpec[Any, Any], field: str, problem: str) -> ToolFailure:
    message = f"{spec.name} returned a result that does not fit {spec.result_name}: `{field}` {problem}"
    log.error("%s", message)
    if STRICT_RESULTS and len(RESULT_DRIFTS) < 100:
        RESULT_DRIFTS.append((spec.name, message))
    return ToolFailure(
        ToolError(
            kind="internal_error",
            message=f"internal error while running {spec.name}: its result does not fit {spec.result_name}",
            details={
                "exception_type": RESULT_DRIFT,
                "result_name": spec.result_name,
                "result_field": field,
                "validation_error": problem[:200],
            },
            retryable=False,
        )
    )


def _gate(name: str, call: CallContext, registry: Registry) -> tuple[ToolSpec[Any, Any] | None, ToolError | None]:
    if call.exposed is not None and name not in call.exposed and name != "Sleep":
        return None, ToolError(
            kind="tool_not_exposed_for_round",
            message=f"tool {name} is not available in this round",
            details={"tool_name": name},
            recovery_hint="Call only the tools advertised for this round.",
        )
    if call.stop_reason in TRUNCATION_STOP_REASONS and name in GUARDED_MUTATION_TOOLS:
        return None, ToolError(
            kind="truncated_mutation_tool_call",
            message=f"{name} was not executed because the model output was truncated ({call.stop_reason})",
            details={"tool_name": name, "stop_reason": call.stop_reason, "round": call.round},
            recovery_hint="Re-issue the call in a new round with complete arguments.",
            retryable=True,
        )
    spec = registry.get(name)
    if spec is None:
        return None, ToolError(
            kind="unknown_tool",
            message=f"unknown tool {name}",
            details={"tool_name": name},
            recovery_hint="Use one of the registered tool names (`holon-nb tools` lists them).",
        )
    if spec.family not in PROFILE_FAMILIES[call.profile]:
        return None, ToolError(
            kind="unsupported_agent_profile_capability",
            message=f"{name} requires the {spec.family.value} family, which profile {call.profile.value} does not allow",
            details={"tool_name": name, "required_family": spec.family.value, "profile_preset": call.profile.value},
            recovery_hint="Ask a public named agent (for example the parent) to do this.",
        )
    return spec, None


def _admit(name: str, args: Any, call: CallContext, reg: Registry) -> tuple[ToolSpec[Any, Any], Any]:
    """The checks before a handler runs: the gate, the input guards, ``prepare``, parsing, text sizes.

    Returns:
        ``(spec, parsed arguments)``.

    Raises:
        ToolFailure: the call's error (its envelope says why the tool did not run).
    """
    spec, refusal = _gate(name, call, reg)
    if refusal is not None:
        raise ToolFailure(refusal)
    assert spec is not None
    if not isinstance(args, (str, bytes, bytearray)):
        problem = input_problem(args)  # before ``prepare``, which may walk the arguments
        if problem is not None:
            raise ToolFailure(_guard_failure(name, *problem))
    try:
        prepared = args if spec.prepare is None else spec.prepare(args, call)
    except RecursionError:  # JSON text nested past what the decoder in ``prepare`` can read
        raise ToolFailure(_guard_failure(name, "arguments nested too deeply")) from None
    parsed = parse_args(spec, prepared, checked=prepared is args)  # a dict checked above, as given
    check_text_sizes(spec.name, parsed)  # issue 9: oversized text never reaches the store
    return spec, parsed


@dataclass(frozen=True)
class EarlyStart:
    """What :func:`start_early` began: the arguments it checked and parsed, and what the tool's step returned
    (``handle``, e.g. a started command). The call's :func:`dispatch` takes the arguments as they are
    (``admitted``), and its handler takes the handle up through its context."""

    parsed: Any
    handle: Any


def start_early(name: str, args: Any, ctx: ToolContext, *, registry: Registry | None = None) -> EarlyStart | None:
    """The tool's first step run on the calling thread, before its call reaches the runtime's loop
    (:attr:`ToolSpec.start_early`; issue 27 item 7: ExecCommand's command starts while the loop wakes).

    Returns:
        The step's result with the parsed arguments; None when the tool has no such step, or the call would
        not pass :func:`dispatch`'s checks, or the step declined or failed. The call then runs as usual, and
        its envelope says what went wrong.
    """
    reg = REGISTRY if registry is None else registry
    spec = reg.get(name)
    first_step = None if spec is None else spec.start_early
    if first_step is None or not isinstance(args, dict):
        return None
    try:
        parsed = _admit(name, args, ctx.call, reg)[1]
        handle = first_step(parsed, ctx)
    except Exception:  # ToolFailure or OSError among them: dispatch on the loop meets it again and reports it
        log.debug("tool %s: not started early", name, exc_info=True)
        return None
    return None if handle is None else EarlyStart(parsed, handle)


async def dispatch(
    name: str,
    args: Any,
    ctx: ToolContext,
    *,
    registry: Registry | None = None,
    admitted: Any = None,
) -> dict[str, Any]:
    """Run one tool call and return its canonical envelope (a plain dict).

    Args:
        name: The tool name as called.
        args: A dict, or JSON text (non-JSON text becomes ``{"_raw": text}``).
        ctx: The runtime's context for this call; ``ctx.call`` says who calls.
        registry: The registry to use (tests pass their own); default :data:`REGISTRY`.
        admitted: ``args`` as :func:`start_early` checked and parsed them for this call (not checked again).

    Returns:
        The envelope: ``{"tool_name", "status", "summary_text"?, "result"?, "error"?}``.
        Never raises for any input.
    """
    reg = REGISTRY if registry is None else registry
    try:
        if admitted is None:
            spec, parsed = _admit(name, args, ctx.call, reg)
        else:  # checked and parsed on the calling thread, for this call (start_early)
            found, parsed = reg.get(name), admitted
            assert found is not None
            spec = found
        payload = await spec.handler(parsed, ctx)
        return success_envelope(name, typed_payload(spec, payload))
    except ToolFailure as failure:
        return error_envelope(name, failure.error)
    except Exception as exc:  # last-resort guard (D5); cancellation still propagates
        error = classify_exception(name, exc)
        if error.kind == "runtime_db_busy":  # a condition, not a bug: one line, the envelope says the rest
            log.warning("tool %s: %s", name, exc)
        else:
            log.exception("tool %s failed", name)
        return error_envelope(name, error)
