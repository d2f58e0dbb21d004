"""Workspace tools: GetWorkspaceState, Attach/Detach/SwitchWorkspace, Create/RemoveWorktree (workspace spec §3-§8).

Input models, input normalisation (workspace spec §0.4 trimming; NUL, non-UTF-8 and leading
``-`` refusals) and handlers. State lives in the runtime's workspace service,
reached through ``ctx.workspaces`` (``holon_nb.runtime.workspaces._service.AgentWorkspaces``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ...render.human import fields, record, shape, table
from .._context import ToolContext
from .._envelope import ToolError
from .._errors import ToolFailure
from .._spec import Family, Rendering, ToolSpec
from ._workspace_receipt import render_workspace_state_receipt
from .results._workspaces import (
    AttachWorkspaceResult,
    CreateWorktreeResult,
    DetachWorkspaceResult,
    RemoveWorktreeResult,
    SwitchWorkspaceResult,
    WorkspaceStateResult,
)

__all__ = [
    "GetWorkspaceStateInput",
    "AttachWorkspaceInput",
    "DetachWorkspaceInput",
    "SwitchWorkspaceInput",
    "CreateWorktreeInput",
    "RemoveWorktreeInput",
    "SPECS",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class GetWorkspaceStateInput(_Strict):
    """GetWorkspaceState takes no arguments (workspace spec §3)."""


class AttachWorkspaceInput(_Strict):
    """Arguments of AttachWorkspace (§4)."""

    path: str = Field(
        description="Existing directory; relative paths join the active cwd. A repository "
        "subdirectory binds the repository root; a linked worktree binds its origin."
    )


class DetachWorkspaceInput(_Strict):
    """Arguments of DetachWorkspace (§5)."""

    workspace_id: str = Field(description="Attached workspace id (ws_...); the agent home cannot be detached.")


class SwitchWorkspaceInput(_Strict):
    """Arguments of SwitchWorkspace (§6): exactly one of ``workspace_id``, ``execution_root_id``, ``path``."""

    workspace_id: str | None = Field(
        None, description="Attached workspace id, or agent_home; activates its canonical root."
    )
    execution_root_id: str | None = Field(None, description="Registered, not removed execution root id.")
    path: str | None = Field(
        None,
        description="Existing directory inside an attached workspace or one of its linked worktrees; relative paths join the active cwd.",
    )
    cwd: str | None = Field(
        None,
        description="Working directory to enter; relative paths join the target root, absolute ones must lie inside it. null: the selector's default.",
    )


class CreateWorktreeInput(_Strict):
    """Arguments of CreateWorktree (workspace spec §7)."""

    workspace_id: str = Field(description="Attached workspace id of a git repository.")
    branch: str = Field(description="Short branch name (without refs/heads/; a name starting with refs/ is refused).")
    base_ref: str = Field(description="Commit-ish the new branch starts from.")
    label: str | None = Field(None, description="Naming hint for the worktree directory; null: the branch.")
    activate: bool = Field(True, description="Switch into the worktree after creating or reusing it.")
    on_existing: Literal["reuse", "error"] | None = Field(
        None,
        description="When one live worktree already has the branch: reuse it (null means reuse) or report already_exists.",
    )


class RemoveWorktreeInput(_Strict):
    """Arguments of RemoveWorktree (workspace spec §8)."""

    execution_root_id: str = Field(description="Registered linked worktree root id.")
    return_to: str | None = Field(
        None, description="Required when the worktree is active: canonical, agent_home, or another execution_root_id."
    )
    branch_policy: Literal["keep", "delete_if_merged"] | None = Field(
        None, description="keep (null) or delete_if_merged (needs merged_into)."
    )
    merged_into: str | None = Field(None, description="Git ref proving the worktree HEAD is merged (ancestry).")


# ---------------------------------------------------------------- normalisation (workspace spec §0.4)


def _invalid(tool: str, field: str, problem: str, hint: str, **details: Any) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="invalid_tool_input",
            message=f"{tool}: `{field}` {problem}",
            details={"tool_name": tool, "field": field, "validation_error": problem, **details},
            recovery_hint=hint,
        )
    )


def _text(tool: str, field: str, value: str | None, *, required: bool, dash: bool = False) -> str | None:
    """Trim a string field; refuse empty required values, NUL, non-UTF-8 text and (``dash``) a leading ``-``."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        if required:
            raise _invalid(tool, field, "must not be empty", f"Pass a non-empty `{field}`.")
        return None
    if "\x00" in value:
        raise _invalid(tool, field, "must not contain a NUL character", f"Remove the NUL character from `{field}`.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(tool, field, "is not valid UTF-8 text", f"Pass `{field}` as plain UTF-8 text.") from None
    if dash and value.startswith("-"):
        raise _invalid(tool, field, "must not start with '-'", f"Git options are not accepted in `{field}`.")
    return value


_Args = TypeVar("_Args", bound=BaseModel)


def _normalize(
    required: tuple[str, ...], optional: tuple[str, ...] = (), dash: tuple[str, ...] = ()
) -> Callable[[_Args, str], _Args]:
    def normalize(args: _Args, tool: str) -> _Args:
        update = {f: _text(tool, f, getattr(args, f), required=True, dash=f in dash) for f in required}
        update |= {f: _text(tool, f, getattr(args, f), required=False, dash=f in dash) for f in optional}
        return args.model_copy(update=update)

    return normalize


# ---------------------------------------------------------------- handlers


async def get_workspace_state(args: GetWorkspaceStateInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of GetWorkspaceState (workspace spec §3); read-only apart from repairing a vanished projection
    (reported as top-level ``projection_repair``, see :mod:`holon_nb.runtime.workspaces._service`)."""
    return await ctx.workspaces.state()


async def attach_workspace(args: AttachWorkspaceInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of AttachWorkspace (§4)."""
    return await ctx.workspaces.attach(ctx.workspaces.directory(args.path, "path", "AttachWorkspace"))


async def detach_workspace(args: DetachWorkspaceInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of DetachWorkspace (§5)."""
    return await ctx.workspaces.detach(args.workspace_id)


async def switch_workspace(args: SwitchWorkspaceInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of SwitchWorkspace (§6)."""
    fields = ["workspace_id", "execution_root_id", "path"]
    chosen = [f for f in fields if getattr(args, f) is not None]
    if len(chosen) != 1:
        raise ToolFailure(
            ToolError(
                kind="invalid_tool_input",
                message="SwitchWorkspace needs exactly one of workspace_id, execution_root_id, path",
                details={
                    "tool_name": "SwitchWorkspace",
                    "fields": fields,
                    "selector_count": len(chosen),
                    "validation_error": "exactly one selector is required",
                },
                recovery_hint="Pass exactly one of `workspace_id`, `execution_root_id` or `path` (and optionally `cwd`).",
            )
        )
    path = ctx.workspaces.directory(args.path, "path", "SwitchWorkspace") if args.path is not None else None
    return await ctx.workspaces.switch(
        workspace_id=args.workspace_id, execution_root_id=args.execution_root_id, path=path, cwd=args.cwd
    )


async def create_worktree(args: CreateWorktreeInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of CreateWorktree (workspace spec §7).

    Refusals added here: a ``branch`` starting with ``refs/`` → ``invalid_tool_input``
    (field ``branch``); a workspace that is not a git repository root (the agent home,
    a plain or vanished directory) → ``tool_execution_failed`` with
    ``details.reason = "not_a_git_repository"`` instead of an unresolvable ``base_ref``.
    """
    return await ctx.workspaces.create_worktree(
        args.workspace_id, args.branch, args.base_ref, args.label, args.activate, args.on_existing or "reuse"
    )


async def remove_worktree(args: RemoveWorktreeInput, ctx: ToolContext) -> dict[str, Any]:
    """Handler of RemoveWorktree (workspace spec §8); a worktree whose directory vanished is removed too
    (disposition ``removed``, ``error`` noting the directory was already gone)."""
    return await ctx.workspaces.remove_worktree(
        args.execution_root_id, args.return_to, args.branch_policy or "keep", args.merged_into
    )


_FILES = ("workspace/runtime file APIs",)

#: Human receipt (render/human) of GetWorkspaceState: the active projection, then the bindings as tables.
WORKSPACE_STATE = shape(
    record("active", "workspace_id", "projection_kind", "execution_root", "cwd", "access_mode"),
    fields("attached_workspace_ids"),
    table(
        "workspaces",
        "workspace_id",
        "workspace_alias",
        "workspace_kind",
        "repo_name",
        "workspace_anchor",
        order="created_at",
    ),
    table("execution_roots", "execution_root_id", "root_kind", "filesystem_path", order="created_at"),
    table("occupancies", "holder_agent_id", "access_mode", "execution_root_id"),
)
_BINDING = ("workspace binding control APIs",)

SPECS = (
    ToolSpec(
        name="GetWorkspaceState",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=GetWorkspaceStateInput,
        handler=get_workspace_state,
        result_name="WorkspaceStateResult",
        output_model=WorkspaceStateResult,
        rendering=Rendering.CUSTOM_TEXT,
        render_receipt=render_workspace_state_receipt,
        related_surfaces=_FILES,
        human=WORKSPACE_STATE,
    ),
    ToolSpec(
        name="AttachWorkspace",
        family=Family.AUTHORITY_EXPANDING,
        input_model=AttachWorkspaceInput,
        handler=attach_workspace,
        result_name="AttachWorkspaceResult",
        output_model=AttachWorkspaceResult,
        normalize=_normalize(("path",)),
        related_surfaces=_BINDING,
    ),
    ToolSpec(
        name="DetachWorkspace",
        family=Family.AUTHORITY_EXPANDING,
        input_model=DetachWorkspaceInput,
        handler=detach_workspace,
        result_name="DetachWorkspaceResult",
        output_model=DetachWorkspaceResult,
        normalize=_normalize(("workspace_id",)),
        related_surfaces=_BINDING,
    ),
    ToolSpec(
        name="SwitchWorkspace",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=SwitchWorkspaceInput,
        handler=switch_workspace,
        result_name="SwitchWorkspaceResult",
        output_model=SwitchWorkspaceResult,
        normalize=_normalize((), ("workspace_id", "execution_root_id", "path", "cwd")),
        related_surfaces=_FILES,
    ),
    ToolSpec(
        name="CreateWorktree",
        family=Family.LOCAL_ENVIRONMENT,
        input_model=CreateWorktreeInput,
        handler=create_worktree,
        result_name="CreateWorktreeResult",
        output_model=CreateWorktreeResult,
        normalize=_normalize(("workspace_id", "branch", "base_ref"), ("label",), dash=("branch", "base_ref")),
        related_surfaces=_FILES,
    ),
    ToolSpec(
        name="RemoveWorktree",
        family=Family.AUTHORITY_EXPANDING,
        input_model=RemoveWorktreeInput,
        handler=remove_worktree,
        result_name="RemoveWorktreeResult",
        output_model=RemoveWorktreeResult,
        normalize=_normalize(("execution_root_id",), ("return_to", "merged_into"), dash=("return_to", "merged_into")),
        related_surfaces=_FILES,
    ),
)
