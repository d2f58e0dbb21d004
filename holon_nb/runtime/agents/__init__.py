"""Agents without a model: lifecycle, CreateAgent/InvokeAgent runs, templates, summaries,
conversations and approvals (agents spec §1-§2, §5; turn-loop spec §1.9).

Owns: :mod:`.plane` (``AgentPlane``, ``rt.agents``), :mod:`.lifecycle`, :mod:`.invocations`, :mod:`.runs`,
:mod:`.templates`, :mod:`.summary` (GetAgent's facts), :mod:`.conversations` (durable turns and
transcripts) and :mod:`.approvals` (``ApprovalBroker``, asking before a model's tool call).

May use: ``runtime.work``, ``runtime.tasks``, ``runtime.models``, ``runtime.core``, ``holon_nb.providers``,
``holon_nb.tools``.

Consumes: the approval broker, the ports of :mod:`.ports`; the rest of the plane, the runtime as
``RuntimeHost`` (it starts agents' turns and reads every plane). Both are given by the runtime's composition
root.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
