"""CreateAgent (agents spec §5.5; cases 32-35): records, reuse, bootstrap, workspaces, templates, models."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import err, ok
from creation_helpers import state

from holon_nb.runtime import Runtime


def test_case32_private_child_cannot_create_or_invoke(rt: Runtime) -> None:
    rt.store.ensure_agent("C", "private_child", parent_id="default")
    before = state(rt.store.path)
    for name, args in (
        ("CreateAgent", {"agent_id": "x"}),
        ("InvokeAgent", {"message": "go"}),
        ("InvokeAgent", {"message": "  ", "bogus": 1}),
    ):  # the gate comes before validation
        e = err(rt.call(name, args, agent="C"), "unsupported_agent_profile_capability")
        assert e["details"] == {
            "tool_name": name,
            "required_family": "agent_creation",
            "profile_preset": "private_child",
        }
    assert state(rt.store.path) == before


@pytest.mark.parametrize("agent_id", ["../x", ".", "..", "a/b", "", "   ", "-lead", "a..b", "x" * 65, "ü"])
def test_case33_malformed_agent_id(rt: Runtime, agent_id: str) -> None:
    before = state(rt.store.path)
    e = err(rt.call("CreateAgent", {"agent_id": agent_id}), "invalid_tool_input")
    assert e["details"]["field"] == "agent_id" and e["details"]["tool_name"] == "CreateAgent"
    assert state(rt.store.path) == before


def test_case34_reserved_temporary_prefix(rt: Runtime) -> None:
    e = err(rt.call("CreateAgent", {"agent_id": "tmp_x"}), "invalid_tool_input")
    assert e["details"]["field"] == "agent_id" and e["details"]["validation_error"] == "reserved temporary prefix"
    assert rt.store.agent("tmp_x") is None


def test_case35_template_on_existing_agent(rt: Runtime) -> None:
    ok(rt.call("CreateAgent", {"agent_id": "rb"}))
    before = state(rt.store.path)
    e = err(
        rt.call("CreateAgent", {"agent_id": "rb", "template": "holon-default", "initial_message": "hi"}),
        "template_requires_new_agent",
    )
    assert e["details"]["agent_id"] == "rb" and e["domain"] == "conflict"
    assert state(rt.store.path) == before  # no side effect: no bootstrap message either


def test_new_agent_record_and_bootstrap_message(rt: Runtime) -> None:
    r = rt.call("CreateAgent", {"agent_id": " rb ", "initial_message": "  read the docs  "})
    res = ok(r)
    assert res["agent_id"] == "rb" and res["created"] is True
    assert r.envelope["summary_text"] == "created public named agent rb"
    assert res["model_resolution"]["resolution_status"] == "inherited"
    rec = rt.store.agent("rb")
    assert rec is not None
    assert (rec["profile"], rec["kind"], rec["visibility"], rec["ownership"], rec["status"]) == (
        "public_named",
        "named",
        "public",
        "self_owned",
        "active",
    )
    assert rec["lineage_parent_agent_id"] == "default" and rec["parent_id"] is None
    [msg] = rt.work.queued("rb")
    assert msg["id"] == res["bootstrap_message_id"] and msg["text"] == "read the docs"
    assert msg["kind"] == "internal_followup" and msg["priority"] == "normal"
    assert msg["origin"] == {"kind": "system", "subsystem": "spawn_agent"}
    assert msg["authority"] == "operator_instruction"  # the calling (direct) turn's authority
    assert msg["work_item_id"] is None
    assert msg["metadata"] == {
        "spawn_preset": "public_named",
        "creator_agent_id": "default",
        "spawned_agent_id": "rb",
        "bootstrap": True,
    }
    ident = ok(rt.call("GetAgent", {"agent_id": "rb"}))["agent"]["identity"]
    assert ident["kind"] == "named" and ident["profile_preset"] == "public_named"
    assert ident["lineage_parent_agent_id"] == "default" and "parent_agent_id" not in ident
    assert (Path(rt.home) / "agents" / "rb" / "task-output").is_dir()
    # a created agent is callable and may itself create agents (public_named)
    ok(rt.call("CreateAgent", {"agent_id": "rb2"}, agent="rb"))
    assert rt.store.agent("rb2")["lineage_parent_agent_id"] == "rb"


def test_reuse_existing_public_agent(rt: Runtime) -> None:
    ok(rt.call("CreateAgent", {"agent_id": "rb"}))
    r = rt.call("CreateAgent", {"agent_id": "rb", "initial_message": "again"})
    res = ok(r)
    assert res["created"] is False and r.envelope["summary_text"] == "reused public named agent rb"
    assert [m["text"] for m in rt.work.queued("rb")] == ["again"]
    res = ok(rt.call("CreateAgent", {"agent_id": "default"}, agent="rb"))  # the default agent is reusable
    assert res["created"] is False and "bootstrap_message_id" not in res


def test_identity_conflict_and_removed_agents(rt: Runtime) -> None:
    rt.store.ensure_agent("kid", "private_child", parent_id="default")
    e = err(rt.call("CreateAgent", {"agent_id": "kid"}), "agent_identity_conflict")
    assert e["details"]["profile_preset"] == "private_child"
    ok(rt.call("CreateAgent", {"agent_id": "old"}))
    with rt.store.tx() as db:
        db.execute("UPDATE agents SET status='deleted' WHERE id='old'")
    err(rt.call("CreateAgent", {"agent_id": "old"}), "agent_deleted")


def test_inherits_attached_workspaces_not_the_active_entry(rt: Runtime, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    attached = ok(rt.call("AttachWorkspace", {"path": str(other)}))
    ws_id = attached.get("workspace_id") or attached["workspace"]["workspace_id"]
    ok(rt.call("SwitchWorkspace", {"workspace_id": ws_id}))
    assert rt.workspaces.state("default")["active"]["workspace_id"] == ws_id
    ok(rt.call("CreateAgent", {"agent_id": "rb"}))
    st = rt.workspaces.state("rb")
    assert ws_id in st["attached_workspace_ids"]
    assert "agent_home:default" not in st["attached_workspace_ids"]
    assert st["active"]["workspace_id"] != ws_id  # the caller's active entry is not inherited
    res = ok(rt.call("ExecCommand", {"cmd": "pwd", "workdir": str(other)}, agent="rb"))
    assert res["exit_status"] == 0


def test_template_from_a_local_directory(rt: Runtime, tmp_path: Path) -> None:
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tpl / "AGENTS.md").write_text("You review pull requests.\n")
    ok(rt.call("CreateAgent", {"agent_id": "rev", "template": str(tpl)}))
    assert (Path(rt.home) / "agents" / "rev" / "AGENTS.md").read_text() == "You review pull requests.\n"
    assert rt.store.agent("rev")["template"] == str(tpl)
    # agent:<id> copies that agent's AGENTS.md
    ok(rt.call("CreateAgent", {"agent_id": "rev2", "template": "agent:rev"}))
    assert (Path(rt.home) / "agents" / "rev2" / "AGENTS.md").read_text() == "You review pull requests.\n"
    ok(rt.call("CreateAgent", {"agent_id": "plain", "template": "builtin:default"}))
    assert not (Path(rt.home) / "agents" / "plain" / "AGENTS.md").exists()


@pytest.mark.parametrize(
    "template,kind",
    [
        ("/nonexistent/template", "invalid_tool_input"),
        ("agent:ghost", "invalid_tool_input"),
        ("agent_home:../../etc", "invalid_tool_input"),
        ("no-such-catalog-id", "invalid_tool_input"),
        ("https://github.com/acme/agent-template", "unsupported_runtime_capability"),
    ],
)
def test_bad_templates_have_no_side_effect(rt: Runtime, template: str, kind: str) -> None:
    before = state(rt.store.path)
    e = err(rt.call("CreateAgent", {"agent_id": "t1", "template": template}), kind)
    assert e["details"]["field"] == "template"
    assert rt.store.agent("t1") is None and state(rt.store.path) == before


def test_model_field_validation(rt: Runtime) -> None:
    e = err(
        rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "Not A Provider", "model": "x"}}),
        "invalid_tool_input",
    )
    assert e["details"]["field"] == "model.provider"
    e = err(
        rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "openai", "model": "  "}}), "invalid_tool_input"
    )
    assert e["details"]["field"] == "model.model"
    e = err(rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "openai"}}), "invalid_tool_input")
    assert "missing field `model`" in e["details"]["parse_error"]
    e = err(
        rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "openai", "model": "x", "top_p": 1}}),
        "invalid_tool_input",
    )
    assert "unknown field `top_p`" in e["details"]["parse_error"]
    assert rt.store.agent("m") is None


def test_model_must_be_available(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    known = rt.model_catalog.provider_models("openai")
    assert known, "the built-in catalog lists openai models"
    name = known[0]["id"]
    e = err(
        rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "openai", "model": name}}),
        "model_request_rejected",
    )
    assert e["details"]["reason"] == "credential_missing"
    err(
        rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "nosuchprovider", "model": "x"}}),
        "model_request_rejected",
    )
    assert rt.store.agent("m") is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    res = ok(
        rt.call("CreateAgent", {"agent_id": "m", "model": {"provider": "openai", "model": name, "temperature": 0.2}})
    )
    mr = res["model_resolution"]
    assert mr["resolution_status"] == "accepted" and mr["resolved_model"] == name
    assert mr["resolved_parameters"] == {"temperature": 0.2}
    assert rt.agents.lifecycle.effective_model("m") == {"provider": "openai", "model": name, "temperature": 0.2}
    # a child of m inherits m's model
    res = ok(rt.call("CreateAgent", {"agent_id": "m2"}, agent="m"))
    assert res["model_resolution"] == {
        "resolved_provider": "openai",
        "resolved_model": name,
        "resolution_status": "inherited",
        "resolved_parameters": {"temperature": 0.2},
    }
    assert rt.agents.lifecycle.effective_model("m2")["model"] == name
