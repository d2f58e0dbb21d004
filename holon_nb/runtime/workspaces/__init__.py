"""Workspaces, execution roots and git worktrees (workspace spec §1-§8).

Owns: :mod:`.service` (``WorkspaceService``, ``AgentWorkspaces``), :mod:`.paths` (confinement and
discovery), :mod:`.store` (the workspace tables), :mod:`.targets` (switch targets, root records),
:mod:`.worktrees` (CreateWorktree, RemoveWorktree), :mod:`.git` and :mod:`.refusals`.

May use: ``runtime.core``, ``holon_nb.tools``.

Consumes: the ports of :mod:`.ports` (the agent homes, a call onto the loop), given by the runtime's
composition root.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
