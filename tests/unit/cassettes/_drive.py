"""A minimal turn driver for cassette mechanics tests: lineage over a (cassette-wrapped) provider, real tool
calls through ``Runtime.call``. The full turn loop is exercised in test_turn_loop.py; this one keeps the
cassette's own behaviour testable on its own (same seams: one provider per attempt under the lineage
wrapper, one executor per tool call, injectable sleep/clock)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from holon_nb import Runtime
from holon_nb.providers._lineage import LineageCandidate, LineageFailed, LineageProvider
from holon_nb.providers.base import (
    AssistantBlocks,
    ContextBlock,
    ProviderToolSpec,
    ToolResultBlock,
    TurnRequest,
    UserBlocks,
    UserToolResults,
)
from holon_nb.providers.cassettes._cassette import CassetteProvider
from holon_nb.tools._registry import REGISTRY


def tool_specs(
    names: tuple[str, ...] = ("ExecCommand", "GetAgent", "WaitFor"), descriptions: dict[str, str] | None = None
) -> tuple[ProviderToolSpec, ...]:
    """Provider tool specs of registry tools (source schemas), descriptions overridable."""
    out = []
    for name in names:
        spec = REGISTRY.get(name)
        assert spec is not None, name
        schema = spec.input_model.model_json_schema()
        from holon_nb.providers._schema_lowering import source_tool_schema

        out.append(ProviderToolSpec(name, (descriptions or {}).get(name, spec.description), source_tool_schema(schema)))
    return tuple(out)


@dataclass
class Outcome:
    final_text: str = ""
    blocks: list[Any] = field(default_factory=list)
    receipts: list[str] = field(default_factory=list)
    timelines: list[dict[str, Any]] = field(default_factory=list)
    usage: tuple[int, int] = (0, 0)
    error: BaseException | None = None


def drive(
    rt: Runtime,
    cas: CassetteProvider,
    message: str,
    tools: tuple[ProviderToolSpec, ...] = (),
    provider_name: str = "scripted",
) -> Outcome:
    """Run one turn: rounds until a response without calls; tool calls through ``rt.call`` (wrapped by the
    cassette). Returns what happened (a provider failure lands in ``error``)."""
    out = Outcome()

    def run_tool(call: Any) -> tuple[dict[str, Any], str, bool]:
        res = rt.call(call.name, call.input)
        return res.envelope, res.receipt, not res.ok

    async def main() -> None:
        lineage = LineageProvider(
            [LineageCandidate(cas.route_ref, provider_name, cas)],
            sleep=cas.sleep,
            now=cas.clock.now,
            monotonic=cas.clock.monotonic,
        )
        execute = cas.wrap_tool_executor(lambda call: anyio.to_thread.run_sync(run_tool, call))
        conv: list[Any] = [UserBlocks((ContextBlock(message),))]
        inp = outp = 0
        while True:
            try:
                resp, timeline = await lineage.complete_turn_with_diagnostics(
                    TurnRequest(conversation=tuple(conv), tools=tools, continuation_scope_id="default")
                )
            except LineageFailed as exc:
                out.timelines.append(exc.timeline.to_dict())
                out.error = exc
                return
            out.timelines.append(timeline.to_dict())
            out.blocks.append(resp.blocks)
            inp, outp = inp + resp.input_tokens, outp + resp.output_tokens
            conv.append(AssistantBlocks(resp.blocks))
            if not resp.tool_uses:
                out.final_text = resp.text
                break
            results = []
            for call in resp.tool_uses:
                _env, receipt, is_error = await execute(call)
                out.receipts.append(receipt)
                results.append(ToolResultBlock(call.id, receipt, is_error=is_error))
            conv.append(UserToolResults(tuple(results)))
        out.usage = (inp, outp)

    anyio.run(main)
    return out


def without_timings(timelines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timelines minus wall-clock fields (started_at, completed_at, duration_ms)."""
    out = []
    for t in timelines:
        t = dict(t)
        t["attempts"] = [
            {k: v for k, v in a.items() if k not in ("started_at", "completed_at", "duration_ms")}
            for a in t["attempts"]
        ]
        out.append(t)
    return out
