"""Profile gate (agents spec §1.2–§1.3): families allowed by public_named and private_child.

This plane's tools are ``core_agent`` and ``local_environment``, open to both
profiles; an ``authority_expanding`` tool registered for the test shows the
gate refusing a private child before any argument validation, with no side effect.
"""

from __future__ import annotations

from pathlib import Path

from _support import err, ok
from pydantic import BaseModel, ConfigDict

from holon_nb.runtime import Runtime
from holon_nb.tools import REGISTRY, Family, Profile, ToolSpec
from holon_nb.tools._spec import PROFILE_FAMILIES
from holon_nb.tools.builtin.results._base import ResultModel

CALLS: list[str] = []


class _AttachInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    path: str


async def _attach(args: _AttachInput, ctx) -> dict:
    CALLS.append(args.path)
    return {"summary_text": "attached"}


class Probe(ResultModel):
    """The probe's (empty) result."""


ATTACH = ToolSpec(
    name="AttachWorkspaceProbe",
    family=Family.AUTHORITY_EXPANDING,
    input_model=_AttachInput,
    handler=_attach,
    result_name="Probe",
    output_model=Probe,
)


def test_profile_families_match_the_contract() -> None:
    assert PROFILE_FAMILIES[Profile.PUBLIC_NAMED] == frozenset(Family)
    assert PROFILE_FAMILIES[Profile.PRIVATE_CHILD] == {
        Family.CORE_AGENT,
        Family.LOCAL_ENVIRONMENT,
        Family.WEB,
        Family.EXTERNAL_TRIGGER,
        Family.MCP_SHARED,  # issue 29: an MCP server's tools when its entry says private_children: true
    }
    child = [s.name for s in REGISTRY.model_facing(Profile.PRIVATE_CHILD)]
    public = [s.name for s in REGISTRY.model_facing(Profile.PUBLIC_NAMED)]
    gated = {
        s.name
        for s in REGISTRY.model_facing(Profile.PUBLIC_NAMED)
        if s.family in (Family.AUTHORITY_EXPANDING, Family.AGENT_CREATION, Family.NOTEBOOK)
    }
    assert {"AttachWorkspace", "DetachWorkspace", "RemoveWorktree"} <= gated
    assert child == [name for name in public if name not in gated]


def test_private_child_gated_before_validation(tmp_path: Path) -> None:
    with Runtime(home=tmp_path / "h", workspace=tmp_path, registry=REGISTRY.with_specs(ATTACH)) as rt:
        rt.store.ensure_agent("child_1", Profile.PRIVATE_CHILD.value, parent_id="default")
        CALLS.clear()
        e = err(rt.call("AttachWorkspaceProbe", {"bogus": 1}, agent="child_1"), "unsupported_agent_profile_capability")
        assert e["details"] == {
            "tool_name": "AttachWorkspaceProbe",
            "required_family": "authority_expanding",
            "profile_preset": "private_child",
        }
        err(rt.call("AttachWorkspaceProbe", {"path": "/x"}, agent="child_1"), "unsupported_agent_profile_capability")
        assert CALLS == []
        # the default notebook agent is public_named and may call it
        assert rt.call("AttachWorkspaceProbe", {"path": "/x"}).envelope["summary_text"] == "attached"
        assert CALLS == ["/x"]
        # this plane's tools are open to a private child, and its tasks are its own
        tid = ok(rt.call("ExecCommand", {"cmd": "sleep 100", "yield_time_ms": 0}, agent="child_1"))["task_handle"][
            "task_id"
        ]
        assert [t["id"] for t in ok(rt.call("ListTasks", {}, agent="child_1"))["tasks"]] == [tid]
        assert ok(rt.call("ListTasks", {}))["tasks"] == []
        ok(rt.call("TaskStop", {"task_id": tid}, agent="child_1"))
