"""The success ``result`` models of the built-in tools: one pydantic model per ``ToolSpec.result_name``.

A tool's handler returns a payload dict (or an instance of its model); dispatch validates it against the
tool's ``output_model`` and puts the model's JSON form in the envelope's ``result``
(:func:`holon_nb.tools._dispatch.typed_payload`). The models say what a result holds today: field names and
optionality follow the handlers (and the runtime services they call), the specs in ``docs/`` and the tool
contract where they name a field; nested records (a task, a work item, a timer, an agent) stay
``dict[str, Any]`` for now.

Modules, by family: :mod:`.commands`, :mod:`.tasks`, :mod:`.workspaces` (ApplyPatch and the workspace
plane), :mod:`.work` (work items, waiting, timers), :mod:`.agents` (messages, agents, agent creation,
Sleep), :mod:`.services` (memory, models, web, images, external triggers).
"""

# internal (docs/api.md): the package exports no names itself; the tool modules import from its modules
__all__: list[str] = []
