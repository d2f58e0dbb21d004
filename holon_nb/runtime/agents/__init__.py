"""Agents without a model: lifecycle, CreateAgent/InvokeAgent runs, templates, summaries,
conversations and approvals (agents spec §1-§2, §5; turn-loop spec §1.9).

Owns: :mod:`.plane` (``AgentPlane``, ``rt.agents``), :mod:`.lifecycle`, :mod:`.invocations`, :mod:`.runs`,
:mod:`.templates`, :mod:`.summary` (GetAgent's facts), :mod:`.conversations` (durable turns and
transcripts) and :mod:`.approvals` (``ApprovalBroker``, asking before a model's tool call).

May use: ``runtime.work``, ``runtime.tasks``, ``runtime.models``, ``runtime.core``, ``holon_nb.providers``,
``holon_nb.tools``.

Consumes: the ports of :mod:`.ports`, given by the runtime's composition root (``Runtime._compose``), and
nothing else of the runtime. An invoked agent's turn starts through the ``TurnStarter`` port (the turn
service, above this plane), never through an import of ``runtime.turns``.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
