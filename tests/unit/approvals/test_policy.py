"""Approval policy and broker (issue 5 "Approvals"): who is asked, what a denial looks like, session approvals.

These tests drive ``rt.approvals.check`` as the turn loop does (a model round's CallContext);
tests/unit/approvals/test_turn_approvals.py drives whole scripted turns.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from holon_nb.runtime import Runtime, RuntimeSettings
from holon_nb.runtime.agents._approvals import ApprovalPolicy, ApprovalRequest, approval_reason, needs_approval
from holon_nb.runtime.core._context import _Context
from holon_nb.tools._context import CallContext
from holon_nb.tools._dispatch import parse_args
from holon_nb.tools._spec import Family, Profile


class Asker:
    """Answers from a list and records each request."""

    def __init__(self, *answers: Any):
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def _ctx(
    rt: Runtime,
    agent: str = "default",
    profile: Profile = Profile.PUBLIC_NAMED,
    exposed: frozenset[str] | None = None,
    stop_reason: str | None = None,
) -> _Context:
    names = frozenset(s.name for s in rt.registry.model_facing(profile)) if exposed is None else exposed
    return rt.tool_context(
        CallContext(
            agent_id=agent,
            profile=profile,
            exposed=names,
            round=1,
            stop_reason=stop_reason,
            execution_id="tool_000000000000001",
        ),
    )


def _check(rt: Runtime, name: str, args: Any, ctx: _Context | None = None) -> dict[str, Any] | None:
    return rt._loop.call(rt.approvals.check, name, args, ctx or _ctx(rt))


def _policy(rt: Runtime, value: str) -> None:
    rt.settings = rt.settings.replace(approval=value)


def _needs(rt: Runtime, name: str, args: dict[str, Any], policy: str) -> bool:
    spec = rt.registry.get(name)
    assert spec is not None
    return needs_approval(spec, parse_args(spec, args), _ctx(rt), policy)


def test_policy_matrix(rt: Runtime, tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    cases = [
        ("GetAgent", {}, (False, False, True)),
        ("AttachWorkspace", {"path": str(outside)}, (False, True, True)),
        ("DetachWorkspace", {"workspace_id": "x"}, (False, True, True)),
        ("CreateAgent", {"agent_id": "x"}, (False, True, True)),
        ("InvokeAgent", {"message": "x"}, (False, True, True)),
        ("ExecCommand", {"cmd": "true"}, (False, False, True)),
        ("ExecCommand", {"cmd": "true", "workdir": "sub"}, (False, False, True)),
        ("ExecCommand", {"cmd": "true", "workdir": str(workspace)}, (False, False, True)),
        ("ExecCommand", {"cmd": "true", "workdir": str(outside)}, (False, True, True)),
        ("ExecCommand", {"cmd": "true", "workdir": ".."}, (False, True, True)),
        (
            "ExecCommandBatch",
            {"items": [{"cmd": "true"}, {"cmd": "true", "workdir": str(outside)}]},
            (False, True, True),
        ),
        ("ExecCommandBatch", {"items": [{"cmd": "true"}], "workdir": str(outside)}, (False, True, True)),
        ("ApplyPatch", {"patch": "*** Begin Patch\n*** End Patch\n"}, (False, False, True)),
    ]
    for name, args, expected in cases:
        got = tuple(_needs(rt, name, args, p) for p in ("never", "on_request", "always"))
        assert got == expected, (name, args, got)
    web = dataclasses.replace(rt.registry.get("GetAgent"), name="WebFetchLike", family=Family.WEB)
    assert [needs_approval(web, None, _ctx(rt), p) for p in ("never", "on_request", "always")] == [False, True, True]


def test_symlink_into_the_root_is_inside_and_a_symlink_out_is_outside(
    rt: Runtime, tmp_path: Path, workspace: Path
) -> None:
    (workspace / "link_out").symlink_to(tmp_path)
    (tmp_path / "link_in").symlink_to(workspace / "sub")
    assert _needs(rt, "ExecCommand", {"cmd": "true", "workdir": "link_out"}, "on_request")
    assert not _needs(rt, "ExecCommand", {"cmd": "true", "workdir": str(tmp_path / "link_in")}, "on_request")


def test_reason_names_the_rule() -> None:
    assert ApprovalPolicy.parse("On_Request") is ApprovalPolicy.ON_REQUEST
    assert ApprovalPolicy.parse("nonsense") is ApprovalPolicy.ALWAYS  # fails closed


def test_default_is_never_and_asks_nothing(rt: Runtime) -> None:
    asker = Asker()
    rt.approvals.asker = asker
    assert rt.approvals.policy is ApprovalPolicy.NEVER
    assert _check(rt, "AttachWorkspace", {"path": "/"}) is None
    assert _check(rt, "CreateAgent", {"agent_id": "x"}) is None
    assert asker.requests == [] and rt.approvals.history == []


def test_no_asker_denies_with_a_clear_message(rt: Runtime) -> None:
    _policy(rt, "on_request")
    env = _check(rt, "CreateAgent", {"agent_id": "x"})
    assert env is not None and env["status"] == "error" and env["tool_name"] == "CreateAgent"
    e = env["error"]
    assert e["kind"] == "approval_denied" and e["domain"] == "policy" and e["retryable"] is False
    assert "no approval prompt is installed" in e["message"]
    assert e["details"]["decided_by"] == "no_asker" and e["details"]["policy"] == "on_request"
    assert "agent_creation" in e["details"]["reason"]
    assert rt.store.agent("x") is None


def test_deny_once_and_session_approvals(rt: Runtime) -> None:
    _policy(rt, "on_request")
    events: list[Any] = []
    rt.subscribe(lambda ev: events.append(ev) if ev.kind.startswith("approval_") else None)
    asker = Asker("deny", "approve_once", "approve_session")
    rt.approvals.asker = asker
    env = _check(rt, "CreateAgent", {"agent_id": "x"})
    assert env is not None and env["error"]["kind"] == "approval_denied"
    assert "the user denied CreateAgent" in env["error"]["message"]
    assert _check(rt, "CreateAgent", {"agent_id": "x"}) is None  # approve_once
    assert _check(rt, "CreateAgent", {"agent_id": "y"}) is None  # approve_session
    assert rt.approvals.standing == {"CreateAgent"}
    assert _check(rt, "CreateAgent", {"agent_id": "z"}) is None  # not asked again
    assert _check(rt, "InvokeAgent", {"message": "m"}) is not None  # another tool is asked (no answers left → fails)
    assert len(asker.requests) == 4
    req = asker.requests[0]
    assert (req.tool_name, req.family, req.agent_id, req.policy) == (
        "CreateAgent",
        "agent_creation",
        "default",
        "on_request",
    )
    assert req.arguments == {"agent_id": "x"} and req.round == 1 and req.request_id.startswith("approval_")
    decisions = [(r.decision, r.source) for r in rt.approvals.history]
    assert decisions == [
        ("deny", "asker"),
        ("approve_once", "asker"),
        ("approve_session", "asker"),
        ("approve_session", "session"),
        ("deny", "asker_failed"),
    ]
    assert [e.kind for e in events].count("approval_requested") == 4
    rt.approvals.revoke("CreateAgent")
    assert rt.approvals.standing == frozenset()


def test_bad_answers_and_failing_askers_deny(rt: Runtime) -> None:
    _policy(rt, "always")
    rt.approvals.asker = Asker("yes", RuntimeError("widget gone"))
    for _ in range(2):
        env = _check(rt, "GetAgent", {})
        assert env is not None and env["error"]["details"]["decided_by"] == "asker_failed"
    rt.approvals.asker = lambda request: "approve_once"  # a plain function works too
    assert _check(rt, "GetAgent", {}) is None


def test_calls_dispatch_refuses_anyway_are_not_asked(rt: Runtime) -> None:
    _policy(rt, "always")
    asker = Asker()
    rt.approvals.asker = asker
    assert _check(rt, "GetAgent", {"bogus": 1}) is None  # invalid_tool_input
    assert _check(rt, "GetAgent", "{not json") is None
    assert _check(rt, "NoSuchTool", {}) is None  # unknown_tool
    assert _check(rt, "GetAgent", {}, _ctx(rt, exposed=frozenset({"ListTasks"}))) is None  # not exposed
    assert (
        _check(rt, "CreateAgent", {"agent_id": "x"}, _ctx(rt, stop_reason="max_tokens")) is None
    )  # truncated mutation
    rt.store.ensure_agent("C", "private_child", parent_id="default")
    ctx = _ctx(
        rt, agent="C", profile=Profile.PRIVATE_CHILD, exposed=frozenset(s.name for s in rt.registry)
    )  # exposed but gated
    assert _check(rt, "AttachWorkspace", {"path": "/"}, ctx) is None
    assert asker.requests == []


def test_setting_comes_from_runtime_settings(tmp_path: Path, workspace: Path) -> None:
    with Runtime(home=tmp_path / "h", workspace=workspace, settings=RuntimeSettings(approval="always")) as rt:
        assert rt.approvals.policy is ApprovalPolicy.ALWAYS
        env = _check(rt, "GetAgent", {})
        assert env is not None and json.loads(json.dumps(env))["error"]["kind"] == "approval_denied"
        spec = rt.registry.get("GetAgent")
        assert approval_reason(spec, parse_args(spec, {}), _ctx(rt)) is not None  # policy read via ctx.setting


def test_request_arguments_are_scrubbed_for_display(rt: Runtime, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-very-secret-123")
    _policy(rt, "always")
    asker = Asker("approve_once")
    rt.approvals.asker = asker
    assert _check(rt, "ExecCommand", {"cmd": "deploy --token tok-very-secret-123"}) is None
    assert asker.requests[0].arguments == {"cmd": "deploy --token [redacted]"}
