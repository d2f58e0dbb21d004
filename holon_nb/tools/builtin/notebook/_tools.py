"""The Notebook family (issue 28): the agent sees and changes the notebook it lives in. Opt-in.

Off by default: ``%config HolonNB.notebook_tools = True`` turns it on for every public agent of the
kernel, ``HolonNB.notebook_tools_agents = ["analyst"]`` for the agents named. While off, the family is
not advertised to any model and every call answers ``notebook_tools_disabled``. Private children never
get it (its family is not in their profile: agents spec §1.2 rule, as AuthorityExpanding).

Tools: ListVariables, InspectVariable, KernelHistory (read the kernel); RunCode (run Python in the user
namespace); ReadNotebook, EditNotebook, ExecuteCell (the notebook document). RunCode, EditNotebook and
ExecuteCell ask the user in the cell before they run (``ToolSpec.asks_approval``), whatever the approval
policy, unless ``HolonNB.notebook_approve_all`` (or ``%%agent --approve-all``) trusts the session.

The handlers reach the kernel only through :class:`~._port.NotebookPort` (``ctx.notebook``), in a worker
thread: a slow ``__repr__`` or a long run never blocks the runtime's loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from pydantic import Field

from ....render.human import fields, shape, table, text_block
from ..._context import ToolContext
from ..._envelope import ToolError
from ..._errors import ToolFailure
from ..._spec import Family, Stability, ToolSpec
from .._work_inputs import Strict
from ..results._notebook import (
    EditNotebookResult,
    ExecuteCellResult,
    InspectVariableResult,
    KernelHistoryResult,
    ListVariablesResult,
    ReadNotebookResult,
    RunCodeResult,
)
from ._port import NotebookPort

_T = TypeVar("_T")

__all__ = [
    "SPECS",
    "NOTEBOOK_TOOLS",
    "notebook_tools_enabled",
    "ListVariablesInput",
    "InspectVariableInput",
    "KernelHistoryInput",
    "RunCodeInput",
    "ReadNotebookInput",
    "EditNotebookInput",
    "ExecuteCellInput",
]

#: Most seconds a RunCode or ExecuteCell call may ask for.
MAX_TIMEOUT_S = 600
Seconds = Annotated[int, Field(ge=1, le=MAX_TIMEOUT_S)]
#: Seconds of a RunCode or ExecuteCell call that gives none.
DEFAULT_TIMEOUT_S = 30


class ListVariablesInput(Strict):
    """Arguments of ListVariables."""

    pattern: str | None = Field(None, description="An fnmatch pattern over names (`df*`); null lists all.")
    limit: int = Field(50, ge=1, le=500, description="Most variables to list (1-500; default 50).")


class InspectVariableInput(Strict):
    """Arguments of InspectVariable."""

    name: str = Field(min_length=1, max_length=200, description="The variable's name in the user namespace.")
    max_chars: int = Field(4000, ge=100, le=20000, description="Most characters of text (100-20000; default 4000).")


class KernelHistoryInput(Strict):
    """Arguments of KernelHistory."""

    last: int = Field(5, ge=1, le=50, description="How many recent cells (1-50; default 5).")
    max_chars: int = Field(2000, ge=100, le=20000, description="Most characters per cell's outputs (default 2000).")


class RunCodeInput(Strict):
    """Arguments of RunCode."""

    code: str = Field(min_length=1, max_length=100_000, description="Python code to run in the user namespace.")
    timeout_s: Seconds | None = Field(
        None, description="Whole seconds (1-600) before the run is interrupted; null means 30."
    )


class ReadNotebookInput(Strict):
    """Arguments of ReadNotebook: a range of indices, or one cell by id."""

    start: int | None = Field(None, ge=0, description="First cell index (0-based); null means 0.")
    end: int | None = Field(None, ge=0, description="Index past the last cell to read; null means the end.")
    cell_id: str | None = Field(None, max_length=200, description="Read only the cell with this id.")


class EditNotebookInput(Strict):
    """Arguments of EditNotebook."""

    op: Literal["insert", "replace", "delete", "move"] = Field(description="The edit.")
    index: int | None = Field(
        None, ge=0, description="The cell (insert: the position of the new cell; null with insert appends)."
    )
    cell_id: str | None = Field(None, max_length=200, description="The cell by id instead of index.")
    to_index: int | None = Field(None, ge=0, description="move: the cell's new index.")
    source: str | None = Field(None, max_length=100_000, description="insert/replace: the cell's source.")
    cell_type: Literal["code", "markdown"] = Field("code", description="insert: the new cell's type.")


class ExecuteCellInput(Strict):
    """Arguments of ExecuteCell."""

    index: int | None = Field(None, ge=0, description="The cell's index.")
    cell_id: str | None = Field(None, max_length=200, description="The cell by id instead of index.")
    timeout_s: Seconds | None = Field(
        None, description="Whole seconds (1-600) before it is interrupted; null means 30."
    )


def notebook_tools_enabled(settings: Callable[[str], Any], agent_id: str) -> bool:
    """True when the Notebook family is on for ``agent_id``: ``notebook_tools``, or the agent listed in
    ``notebook_tools_agents`` (``settings`` is ``ctx.setting``; a runtime without them has it off)."""
    try:
        if settings("notebook_tools"):
            return True
        return agent_id in (settings("notebook_tools_agents") or ())
    except AttributeError:
        return False


def _port(ctx: ToolContext, tool: str) -> NotebookPort:
    if not notebook_tools_enabled(ctx.setting, ctx.call.agent_id):
        raise ToolFailure(
            ToolError(
                kind="notebook_tools_disabled",
                message=f"{tool} is in the notebook family, which is off for agent {ctx.call.agent_id}",
                details={"tool_name": tool, "agent_id": ctx.call.agent_id},
                recovery_hint="The user turns it on with %config HolonNB.notebook_tools = True "
                "(or HolonNB.notebook_tools_agents for chosen agents).",
            )
        )
    port = ctx.notebook
    if port is None:
        raise ToolFailure(
            ToolError(
                kind="notebook_unavailable",
                message=f"{tool} needs a Jupyter kernel with holon_nb loaded; this runtime has none",
                details={"tool_name": tool},
                recovery_hint="Use the notebook tools from a notebook (%load_ext holon_nb).",
            )
        )
    port_: NotebookPort = port
    return port_


async def _in_thread(fn: Callable[[], _T]) -> _T:
    return await anyio.to_thread.run_sync(fn)


def _summary(result: dict[str, Any], text: str) -> dict[str, Any]:
    return {**result, "summary_text": text}


async def list_variables(args: ListVariablesInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ListVariables."""
    port = _port(ctx, "ListVariables")
    out = await _in_thread(lambda: port.variables(args.pattern, args.limit))
    return _summary(out, f"{out['total']} variable(s)" + (f", {args.limit} shown" if out["truncated"] else ""))


async def inspect_variable(args: InspectVariableInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of InspectVariable."""
    port = _port(ctx, "InspectVariable")
    out = await _in_thread(lambda: port.inspect(args.name, args.max_chars))
    return _summary(out, f"{out['name']}: {out['type']}")


async def kernel_history(args: KernelHistoryInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of KernelHistory."""
    port = _port(ctx, "KernelHistory")
    out = await _in_thread(lambda: port.history(args.last, args.max_chars))
    return _summary(out, f"{len(out['cells'])} cell(s)")


async def run_code(args: RunCodeInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of RunCode."""
    port = _port(ctx, "RunCode")
    out, images = await _in_thread(lambda: port.run_code(args.code, float(args.timeout_s or DEFAULT_TIMEOUT_S)))
    for label, data in images:  # rich outputs shown in the cell: thumbnails beside the receipt (issue 28)
        ctx.images.preview(data, f"RunCode {label}")
    return _summary(out, f"code {out['status']}")


async def read_notebook(args: ReadNotebookInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ReadNotebook."""
    port = _port(ctx, "ReadNotebook")
    out = await _in_thread(lambda: port.read_cells(args.start, args.end, args.cell_id))
    return _summary(out, f"{len(out['cells'])} of {out['cell_count']} cell(s) ({out['backend']})")


def _needs(tool: str, field: str, error: str) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"invalid `{field}` for {tool}: {error}",
            details={"tool_name": tool, "field": field, "validation_error": error},
            recovery_hint=f"See the {tool} description for which fields each op needs.",
        )
    )


async def edit_notebook(args: EditNotebookInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of EditNotebook.

    Raises:
        ToolFailure: ``invalid_tool_input`` when the op lacks a field it needs (``source`` for insert and
            replace, a cell for replace/delete/move, ``to_index`` for move); ``cell_not_found`` for a cell
            that does not exist (any more); ``notebook_edit_unsupported`` where the document cannot be edited.
    """
    if args.op in ("insert", "replace") and args.source is None:
        raise _needs("EditNotebook", "source", f"required for op {args.op}")
    if args.op != "insert" and args.index is None and args.cell_id is None:
        raise _needs("EditNotebook", "index", f"op {args.op} needs `index` or `cell_id`")
    if args.op == "move" and args.to_index is None:
        raise _needs("EditNotebook", "to_index", "required for op move")
    port = _port(ctx, "EditNotebook")
    target = {"index": args.index, "cell_id": args.cell_id, "to_index": args.to_index}
    out = await _in_thread(lambda: port.edit(args.op, target, args.source, args.cell_type))
    done = "applied" if out["applied"] else "offered"
    return _summary(out, f"{args.op} {done} ({out['backend']})")


async def execute_cell(args: ExecuteCellInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of ExecuteCell."""
    if args.index is None and args.cell_id is None:
        raise _needs("ExecuteCell", "index", "give `index` or `cell_id`")
    port = _port(ctx, "ExecuteCell")
    out = await _in_thread(
        lambda: port.execute_cell(args.index, args.cell_id, float(args.timeout_s or DEFAULT_TIMEOUT_S))
    )
    return _summary(out, f"cell {out.get('index', out.get('cell_id'))} {out['status']}")


#: The family's tool names, in presentation order.
NOTEBOOK_TOOLS = (
    "ListVariables",
    "InspectVariable",
    "KernelHistory",
    "RunCode",
    "ReadNotebook",
    "EditNotebook",
    "ExecuteCell",
)

_SURFACES = ("%config HolonNB.notebook_tools",)


def _traceback(result: dict[str, Any]) -> list[str]:
    error = result.get("error") or {}
    lines = [str(line) for line in error.get("traceback") or []] or [f"{error.get('ename')}: {error.get('evalue')}"]
    return text_block("text", "error")({"text": "\n".join(lines)}) if error else []


#: RunCode's and ExecuteCell's human receipt: what a person reads of a run (streams as text, not table cells).
_RUN_HUMAN = shape(
    fields("index", "cell_id:cell id", "status", "note", "truncated"),
    text_block("stdout", "stdout"),
    text_block("stderr", "stderr"),
    table("outputs", "kind", "mime", "text", title="outputs"),
    _traceback,
)
_INSPECT_HUMAN = shape(fields("name", "type", "truncated"), text_block("text", "value"))


def _spec(
    name: str, input_model: Any, handler: Any, output: Any, *, asks: bool = False, human: Any = None
) -> ToolSpec[Any, Any]:
    return ToolSpec(
        name=name,
        family=Family.NOTEBOOK,
        input_model=input_model,
        handler=handler,
        result_name=output.__name__,
        output_model=output,
        stability=Stability.EXPERIMENTAL,
        related_surfaces=_SURFACES,
        asks_approval=asks,
        human=human,
    )


SPECS = (
    _spec("ListVariables", ListVariablesInput, list_variables, ListVariablesResult),
    _spec("InspectVariable", InspectVariableInput, inspect_variable, InspectVariableResult, human=_INSPECT_HUMAN),
    _spec("KernelHistory", KernelHistoryInput, kernel_history, KernelHistoryResult),
    _spec("RunCode", RunCodeInput, run_code, RunCodeResult, asks=True, human=_RUN_HUMAN),
    _spec("ReadNotebook", ReadNotebookInput, read_notebook, ReadNotebookResult),
    _spec("EditNotebook", EditNotebookInput, edit_notebook, EditNotebookResult, asks=True),
    _spec("ExecuteCell", ExecuteCellInput, execute_cell, ExecuteCellResult, asks=True, human=_RUN_HUMAN),
)
