"""The magics driven in IPython's in-process test shell (no mocks of IPython).

Tasks stopped right after they start use ``--no-login`` (see test_live.py).
"""

from __future__ import annotations

import gc
import json
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import holon_nb
from holon_nb.tools._errors import ToolCallError

RESULT = "application/vnd.holon.tool-result+json"
MIMETYPES = {"text/plain", "text/html", RESULT}


def test_exec_displays_one_bundle_with_three_mimetypes(run: Any) -> None:
    bundles = run("exec", "echo hi")
    assert len(bundles) == 1
    assert MIMETYPES <= set(bundles[0])
    env = bundles[0][RESULT]
    assert env["tool_name"] == "ExecCommand" and env["status"] == "success"
    assert env["result"]["exit_status"] == 0
    assert "hi" in bundles[0]["text/plain"] and "hi" in bundles[0]["text/html"]


def test_magic_returns_none(ip: Any) -> None:
    with capture_output():
        assert ip.run_line_magic("exec", "true") is None
        assert ip.run_line_magic("tool", "ListTasks {}") is None


def test_tool_bad_json_is_an_error_receipt_not_an_exception(run: Any, receipts: Any) -> None:
    bundles = run("tool", 'ExecCommand {"cmd": "echo hi"')
    (env,) = receipts(bundles)
    assert env["status"] == "error"
    assert env["error"]["kind"] == "invalid_tool_input"
    assert "not valid JSON" in env["error"]["details"]["parse_error"]
    assert "_raw" not in env["error"]["details"]["parse_error"]  # an internal stand-in, not the user's field
    assert MIMETYPES <= set(bundles[0])


def test_tool_reaches_every_registered_tool(ip: Any, run: Any, receipts: Any) -> None:
    for spec in holon_nb.get_runtime().registry:
        (env,) = receipts(run("tool", f"{spec.name} {{}}"))
        assert env["tool_name"] == spec.name
        assert not (env["status"] == "error" and env["error"]["kind"] == "unknown_tool")


def test_tool_cell_takes_json_body(run: Any, receipts: Any) -> None:
    bundles = run("tool", "ExecCommandBatch", '{"items": [{"cmd": "echo one"}, {"cmd": "echo two"}]}\n')
    (env,) = receipts(bundles)
    assert env["result"]["completed_count"] == 2


def test_raise_option_raises_tool_call_error_after_display(ip: Any) -> None:
    with capture_output() as cap, pytest.raises(ToolCallError) as info:
        ip.run_line_magic("tool", "ExecCommand --raise not json")
    assert info.value.envelope["error"]["kind"] == "invalid_tool_input"
    assert len(cap.outputs) == 1  # the error receipt was displayed first


def test_raise_written_after_the_json_is_the_option(ip: Any, run: Any, receipts: Any) -> None:
    (env,) = receipts(run("tool", 'ExecCommand {"cmd": "echo hi", "login": false} --raise'))
    assert env["status"] == "success" and env["result"]["stdout_preview"] == "hi"
    with capture_output(), pytest.raises(ToolCallError) as info:
        ip.run_line_magic("tool", 'TaskStatus {"task_id": "task_000000000000000"}  --raise')
    assert info.value.envelope["error"]["kind"] == "task_not_found"
    (env,) = receipts(run("tool", "ExecCommand echo --raise"))  # not JSON before it: sent as it is
    assert env["error"]["kind"] == "invalid_tool_input"
    from holon_nb.tools._errors import CommandFailed

    with capture_output(), pytest.raises(CommandFailed, match="exit status 2"):  # as %exec --raise does
        ip.run_line_magic("tool", 'ExecCommand {"cmd": "exit 2", "login": false} --raise')


def test_config_raise_on_tool_error_takes_effect(ip: Any, run: Any) -> None:
    run("tool", 'TaskStatus {"task_id": "task_000000000000000"}')  # no raise by default
    ip.run_line_magic("config", "HolonNB.raise_on_tool_error = True")
    with capture_output(), pytest.raises(ToolCallError):
        ip.run_line_magic("tool", 'TaskStatus {"task_id": "task_000000000000000"}')
    with capture_output(), pytest.raises(ToolCallError):
        ip.run_line_magic("exec", "--workdir /no/such/dir -- true")


def test_usage_errors(ip: Any) -> None:
    for name, line in [
        ("task", ""),
        ("task_stop", ""),
        ("exec", ""),
        ("exec", "--yield-ms"),
        ("exec", "--yeld-ms 5 ls"),
        ("holon", "frobnicate"),
        ("task_output", "--timeout-ms x T"),
    ]:
        with capture_output(), pytest.raises(UsageError):
            ip.run_line_magic(name, line)
    with capture_output(), pytest.raises(UsageError):
        ip.run_cell_magic("exec", "", "\n  \n")


def test_trailing_comments_are_dropped_from_option_parsing_magics(ip: Any, run: Any, receipts: Any) -> None:
    # the README's first session writes them so; before, each was a UsageError or part of the query
    (env,) = receipts(run("tasks", "  # the active tasks"))
    assert env["tool_name"] == "ListTasks" and env["status"] == "success"
    assert "nothing was running" in run("holon", "wait   # wait for it")[0]["text/plain"]
    assert "ExecCommand" in run("holon", "tools # every tool")[0]["text/plain"]
    run("memory", "search release notes   # search everything")
    rt = holon_nb.get_runtime()
    (row,) = rt.store.query("SELECT args FROM tool_executions WHERE tool_name='MemorySearch'")
    assert json.loads(row["args"]) == {"query": "release notes"}
    (env,) = receipts(run("tool", "ListTasks {}  # JSON, then a comment"))
    assert env["status"] == "success"
    (env,) = receipts(run("workitem", "create Fix bug #12  # a note"))
    assert env["result"]["work_item"]["objective"] == "Fix bug #12"
    (env,) = receipts(run("timer", 'create --in 1h --summary "see # 3"  # a note'))
    assert env["result"]["timer"]["summary"] == "see # 3"
    # %exec hands the line to the shell, which reads ` # …` as a comment itself
    (env,) = receipts(run("exec", "echo 'a # b' # c"))
    assert env["result"]["stdout_preview"] == "a # b"


def test_exec_options_map_to_tool_fields(ip: Any, run: Any, receipts: Any, tmp_path: Any) -> None:
    (tmp_path / "sub").mkdir()
    (env,) = receipts(run("exec", "--workdir sub --no-login --shell sh --max-output-tokens 50 -- pwd"))
    assert env["result"]["stdout_preview"].endswith("/sub")
    assert env["result"]["command_diagnostics"]["effective_max_output_tokens"] == 50
    rt = holon_nb.get_runtime()
    (row,) = [r for r in rt.store.query("SELECT args FROM tool_executions WHERE tool_name='ExecCommand'")]
    assert json.loads(row["args"]) == {
        "cmd": "pwd",
        "workdir": "sub",
        "shell": "sh",
        "max_output_tokens": 50,
        "login": False,
    }


def test_shell_text_is_not_expanded_by_python(ip: Any, run: Any, receipts: Any) -> None:
    ip.user_ns["HOLON_PY_ONLY"] = "from-python"
    (env,) = receipts(run("exec", 'echo "[$HOLON_PY_ONLY]" {HOLON_PY_ONLY}'))
    assert env["result"]["stdout_preview"] == "[] {HOLON_PY_ONLY}"
    (env,) = receipts(run("tool", 'ExecCommand {"cmd": "echo [$HOLON_PY_ONLY]"}'))
    assert env["result"]["stdout_preview"] == "[]"


def test_cell_exec_runs_a_batch(run: Any, receipts: Any) -> None:
    (env,) = receipts(run("exec", "--stop-on-error", "echo one\n\nfalse\necho never\n"))
    r = env["result"]
    assert (r["item_count"], r["completed_count"], r["failed_count"], r["skipped_count"]) == (3, 1, 1, 1)


def test_secrets_are_redacted_in_all_three_mimetypes(ip: Any, run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-token-value"
    monkeypatch.setenv("HOLON_TEST_TOKEN", secret)
    with capture_output():
        ip.run_line_magic("reload_ext", "holon_nb")  # the runtime copies the environment when it starts
    (bundle,) = run("exec", "echo $HOLON_TEST_TOKEN")
    for mime in MIMETYPES:
        text = bundle[mime] if isinstance(bundle[mime], str) else json.dumps(bundle[mime])
        assert secret not in text, mime
        assert "[redacted]" in text, mime


def test_config_changes_reach_runtime_settings(ip: Any) -> None:
    rt = holon_nb.get_runtime()
    ip.run_line_magic("config", "HolonNB.default_tool_output_tokens = 123")
    ip.run_line_magic("config", "HolonNB.max_task_log_bytes = 4096")
    ip.run_line_magic("config", "HolonNB.patch_outside_workspace = True")
    ip.run_line_magic("config", "HolonNB.prompt_budget_tokens = 50000")
    assert rt.settings.prompt_budget_tokens == 50000 and rt.turns.budget() == 50000
    ip.run_line_magic("config", "HolonNB.prompt_budget_tokens = -1")  # logged, not applied
    ip.run_line_magic("config", "HolonNB.prompt_budget_tokens = True")
    assert rt.turns.budget() == 50000 and rt.settings.prompt_budget_tokens == 50000
    assert rt.settings.default_tool_output_tokens == 123
    assert rt.settings.max_task_log_bytes == 4096
    assert rt.settings.patch_outside_workspace is True
    with capture_output() as cap:
        ip.run_line_magic("exec", "true")
    assert cap.outputs[0].data[RESULT]["result"]["command_diagnostics"]["effective_max_output_tokens"] == 123


def test_rejected_config_value_is_not_kept(ip: Any, run: Any, receipts: Any) -> None:
    rt = holon_nb.get_runtime()
    before = rt.settings.default_tool_output_tokens
    ip.run_line_magic("config", "HolonNB.default_tool_output_tokens = -5")  # logged, not applied
    assert ip.run_line_magic("config", "HolonNB.default_tool_output_tokens") == before
    assert rt.settings.default_tool_output_tokens == before
    (r,) = receipts(run("exec", "echo after-bad-config"))
    assert r["result"]["stdout_preview"] == "after-bad-config"


def test_config_lists_holonnb(ip: Any) -> None:
    with capture_output() as cap:
        ip.run_line_magic("config", "HolonNB")
    for name in (
        "raise_on_tool_error",
        "default_tool_output_tokens",
        "max_tool_output_tokens",
        "max_task_log_bytes",
        "patch_outside_workspace",
        "live_update_hz",
    ):
        assert name in cap.stdout
    assert "bytes" in cap.stdout and "Hz" in cap.stdout


def test_holon_tools_and_config_tables(run: Any) -> None:
    (tools,) = run("holon", "tools")
    for spec in holon_nb.get_runtime().registry:  # the opt-in Notebook family only once it is on (issue 28)
        assert (spec.name in tools["text/plain"]) is (spec.family.value != "notebook"), spec.name
    assert "local_environment" in tools["text/plain"] and "hidden" in tools["text/plain"]
    run("config", "HolonNB.notebook_tools = True")
    (tools,) = run("holon", "tools")
    assert all(spec.name in tools["text/plain"] for spec in holon_nb.get_runtime().registry)
    assert "RunCode                notebook" in tools["text/plain"] and "(asks first)" in tools["text/plain"]
    (config,) = run("holon", "config")
    assert "HolonNB.live_update_hz" in config["text/plain"]
    # a long meaning wraps within its column, every word kept (it was cut in its middle: "…")
    text = config["text/plain"]
    assert max(len(line) for line in text.splitlines()) <= 160
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("HolonNB.approval "))
    column = lines[start].index("Ask before")
    meaning = [lines[start][column:]] + [line[column:] for line in lines[start + 1 :] if not line[:column].strip()][:3]
    assert "on_request" in " ".join(meaning) and "always (every call)" in " ".join(meaning)
    (status,) = run("holon", "status")
    assert "tx_max_ms=" in status["text/plain"] and "busy_retries=" in status["text/plain"]  # whole, as README says


def test_help_comes_from_magic_arguments(ip: Any) -> None:
    doc = ip.find_line_magic("exec").__doc__
    assert "--yield-ms" in doc and "milliseconds" in doc
    doc = ip.find_line_magic("task_input").__doc__
    assert "--no-newline" in doc and "newline is appended" in doc


def test_task_input_appends_newline_and_interprets_escapes(run: Any, receipts: Any) -> None:
    (env,) = receipts(run("exec", '--stdin --yield-ms 200 read -r a; read -r b; echo "got:$a|$b"'))
    task_id = env["result"]["task_handle"]["task_id"]
    (sent,) = receipts(run("task_input", f"{task_id} one\\ntwo"), "TaskInput")
    assert sent["result"]["accepted_input"] is True
    assert sent["result"]["bytes_written"] == len("one\ntwo\n")
    # the call's receipt, and the task's final receipt when it ends while this cell runs (replacing its live view)
    outs = receipts(run("task_output", f"{task_id} --timeout-ms 5000"), "TaskOutput")
    assert outs and all("got:one|two" in out["result"]["task"]["output_preview"] for out in outs)


def test_task_input_no_newline_before_the_id_or_as_the_last_word(run: Any, receipts: Any) -> None:
    (env,) = receipts(run("exec", "--stdin --yield-ms 200 --no-login cat"))
    task_id = env["result"]["task_handle"]["task_id"]
    (first,) = receipts(run("task_input", f"--no-newline {task_id} ab"), "TaskInput")
    (second,) = receipts(run("task_input", f"{task_id} c\\td --no-newline"), "TaskInput")
    (third,) = receipts(run("task_input", f"{task_id} -- e --no-newline"), "TaskInput")  # after --: as it is
    assert [r["result"]["bytes_written"] for r in (first, second, third)] == [2, 3, len("e --no-newline\n")]
    with pytest.raises(UsageError, match="nothing to send"):
        run("task_input", f"{task_id} --no-newline")
    # cat echoes what it read once it is scheduled: wait for that (a loaded machine may take a while)
    deadline = time.monotonic() + 30
    while True:
        (out,) = receipts(run("task_output", f"{task_id} --no-block"), "TaskOutput")
        if "abc\tde --no-newline\n" in out["result"]["task"]["output_preview"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    run("task_stop", task_id)
    assert "abc\tde --no-newline\n" in out["result"]["task"]["output_preview"]


def test_task_input_expands_the_id_but_not_the_text(ip: Any, run: Any, receipts: Any) -> None:
    (env,) = receipts(run("exec", '--stdin --yield-ms 200 read -r a; echo "got:$a"'))
    ip.user_ns["tid"] = env["result"]["task_handle"]["task_id"]
    ip.user_ns["secret"] = "expanded"
    (sent,) = receipts(run("task_input", "{tid} $HOME {secret}"), "TaskInput")
    assert sent["result"]["accepted_input"] is True
    outs = receipts(run("task_output", "{tid} --timeout-ms 5000"), "TaskOutput")  # and the final one (above)
    assert outs and all("got:$HOME {secret}" in out["result"]["task"]["output_preview"] for out in outs)


def test_task_stop_and_status(run: Any, receipts: Any) -> None:
    (env,) = receipts(run("exec", "--no-login --yield-ms 0 sleep 30"))
    task_id = env["result"]["task_handle"]["task_id"]
    # under load the stopped task can end while this cell runs: its final receipt replaces its live view
    # and is displayed here too, so pick TaskStop's own receipt
    (stop,) = receipts(run("task_stop", task_id), "TaskStop")
    assert stop["result"]["stop_requested"] is True
    (out, *_) = receipts(run("task_output", f"{task_id} --timeout-ms 5000"), "TaskOutput")
    assert out["result"]["task"]["status"] == "cancelled"
    from holon_nb.notebook import wait_and_report

    with capture_output():  # the live view's replacement by the final receipt lands here, not in the next cell
        wait_and_report(10)
    (nb,) = receipts(run("task_output", f"{task_id} --no-block"), "TaskOutput")
    assert nb["result"]["retrieval_status"] == "success"


def test_exec_raise_fails_on_a_command_that_failed(ip: Any, run: Any, receipts: Any) -> None:
    from holon_nb.tools._errors import CommandFailed

    assert receipts(run("exec", "--no-login false"))[0]["result"]["exit_status"] == 1  # no --raise: a receipt
    for line, how in (
        ("--raise --no-login -- exit 3", "exit status 3"),
        ("--raise --no-login -- kill -9 $$", "SIGKILL"),
    ):
        with capture_output() as cap, pytest.raises(CommandFailed) as info:
            ip.run_line_magic("exec", line)
        assert how in str(info.value) and info.value.failures[0][1].endswith(how)
        assert info.value.envelope["status"] == "success"
        assert [o.data[RESULT]["tool_name"] for o in cap.outputs] == ["ExecCommand"]  # the receipt came first
    assert receipts(run("exec", "--raise --no-login true"))[0]["result"]["exit_status"] == 0


def test_exec_cell_raise_names_each_failed_command(ip: Any) -> None:
    from holon_nb.tools._errors import CommandFailed, ToolCallError

    with capture_output(), pytest.raises(CommandFailed) as info:
        ip.run_cell_magic("exec", "--raise --yield-ms 2000", "true\nfalse\nsleep 5\necho done\n")
    assert [cmd for cmd, _ in info.value.failures] == ["false", "sleep 5"]
    assert info.value.failures[0][1] == "exit status 1" and "yield_time_ms" in info.value.failures[1][1]
    assert isinstance(info.value, ToolCallError)  # one except clause catches both
    with capture_output():
        ip.run_cell_magic("exec", "--raise", "true\necho ok\n")
    with capture_output() as cap:  # comment lines are not commands
        ip.run_cell_magic("exec", "", "# set up\necho one\n  # then\necho two\n")
    (env,) = [o.data[RESULT] for o in cap.outputs if RESULT in o.data]
    assert [i["cmd"] for i in env["result"]["items"]] == ["echo one", "echo two"]


def test_reload_keeps_one_runtime_and_one_pump(ip: Any, run: Any, thread_count: Any) -> None:
    old = holon_nb.get_runtime()
    with capture_output():
        ip.run_line_magic("reload_ext", "holon_nb")
        ip.run_line_magic("reload_ext", "holon_nb")
    assert old.closed
    assert thread_count("holon-nb-runtime") == 1
    assert thread_count("holon-nb-live") == 1
    assert sum(1 for c in ip.configurables if type(c).__name__ == "HolonNB") == 1
    assert len(run("exec", "echo once")) == 1


def test_reload_frees_the_old_session_and_its_runtime(ip: Any, run: Any) -> None:
    # IPython's Magics.__init__ appends each magics instance to shell.configurables; left there after an
    # unload, they kept the old session and its closed runtime alive for the kernel's life
    assert len(run("exec", "echo before")) == 1
    old = weakref.ref(holon_nb.get_runtime())
    with capture_output():
        ip.run_line_magic("reload_ext", "holon_nb")
    gc.collect()
    assert old() is None
    assert sum(1 for c in ip.configurables if type(c).__name__ == "HolonMagics") == 1
    assert len(run("exec", "echo after")) == 1


def test_unload_removes_magics_and_runtime(ip: Any, thread_count: Any) -> None:
    rt = holon_nb.get_runtime()
    ip.run_line_magic("unload_ext", "holon_nb")
    try:
        assert rt.closed and thread_count("holon-nb-runtime") == 0 and thread_count("holon-nb-live") == 0
        assert ip.find_line_magic("exec") is None and ip.find_cell_magic("tool") is None
        with pytest.raises(RuntimeError):
            holon_nb.get_runtime()
    finally:
        ip.run_line_magic("load_ext", "holon_nb")


def _state(rt: Any) -> str:
    tasks = [dict(r) for r in rt.store.query("SELECT * FROM tasks ORDER BY id")]
    return json.dumps([tasks, rt.messages()], sort_keys=True, default=str)


def test_status_and_inspection_magics_change_no_state(ip: Any, run: Any, receipts: Any) -> None:
    from holon_nb.notebook import wait_and_report

    (env,) = receipts(run("exec", "--yield-ms 0 echo done"), "ExecCommand")  # (its final receipt may follow at once)
    task_id = env["result"]["task_handle"]["task_id"]
    with capture_output():
        assert wait_and_report(10) == []
    rt = holon_nb.get_runtime()
    before = _state(rt)
    (status,) = run("holon", "status")
    assert "runtime_threads" in status["text/plain"]
    run("tasks")
    run("task", task_id)
    run("holon", "config")
    assert _state(rt) == before


def test_task_of_another_runtime_is_an_error_receipt(run: Any, receipts: Any) -> None:
    (env,) = receipts(run("task", "task_0123456789abcde"))
    assert env["error"]["kind"] == "task_not_found"


def test_exec_promotion_does_not_wait_for_the_command(run: Any, receipts: Any) -> None:
    (env,) = receipts(run("exec", "--no-login --yield-ms 0 sleep 120"))
    assert env["result"]["disposition"] == "promoted_to_task"
    task_id = env["result"]["task_handle"]["task_id"]
    # the magic came back while its command runs on (how soon: benchmarks/bench_prompt_returns.py)
    assert holon_nb.get_runtime().call("TaskStatus", {"task_id": task_id}).result["task"]["status"] == "running"
    run("task_stop", task_id)


def test_commands_do_not_inherit_the_kernels_forced_colours(
    ip: Any, run: Any, receipts: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # what ipykernel sets for everything a kernel starts
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    monkeypatch.setenv("CLICOLOR", "1")
    (env,) = receipts(run("exec", "--no-login env | grep -E '^(FORCE_COLOR|CLICOLOR_FORCE|CLICOLOR)=' | sort"))
    assert env["result"]["stdout_preview"] == "CLICOLOR=1"
    ip.run_line_magic("config", "HolonNB.command_colours = True")
    try:
        (env,) = receipts(run("exec", "--no-login env | grep -E '^(FORCE_COLOR|CLICOLOR_FORCE)=' | sort"))
        assert env["result"]["stdout_preview"] == "CLICOLOR_FORCE=1\nFORCE_COLOR=1"
    finally:
        ip.run_line_magic("config", "HolonNB.command_colours = False")


def test_holon_prune_says_what_it_removed(run, tmp_path) -> None:
    import os
    import time

    import holon_nb

    rt = holon_nb.get_runtime()
    res = rt.call("ExecCommand", {"cmd": "seq 20000", "max_output_tokens": 100}).envelope["result"]
    path = res["artifacts"][0]["path"]
    old = time.time() - 30 * 86400
    os.utime(path, (old, old))
    dry = run("holon", "prune --dry-run")
    assert "would remove 1 file(s)" in dry[0]["text/plain"] and path in dry[0]["text/plain"]
    assert os.path.exists(path)
    done = run("holon", "prune")
    assert "removed 1 file(s)" in done[0]["text/plain"] and not os.path.exists(path)


def test_exec_runs_login_commands_through_the_shell_snapshot_unless_turned_off(
    ip: Any, run: Any, receipts: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "profile-home"
    home.mkdir()
    (home / ".profile").write_text('echo run >> "$HOME/runs.log"\nexport HOLON_NB_PROFILE_VAR=from-profile\n')
    monkeypatch.setenv("HOME", str(home))  # a new environment: captured again on the next login command
    holon_nb.get_runtime().tasks.snapshots.wait_s = 60.0  # a loaded machine must not make it a fallback
    for _ in range(3):
        (env,) = receipts(run("exec", "--shell sh echo $HOLON_NB_PROFILE_VAR"))
        assert env["result"]["stdout_preview"] == "from-profile"
    assert (home / "runs.log").read_text().count("run") == 1  # the capture only
    ip.run_line_magic("config", "HolonNB.shell_snapshot = False")
    try:
        (env,) = receipts(run("exec", "--shell sh echo $HOLON_NB_PROFILE_VAR"))
        assert env["result"]["stdout_preview"] == "from-profile"
        assert (home / "runs.log").read_text().count("run") == 2  # a full login shell
    finally:
        ip.run_line_magic("config", "HolonNB.shell_snapshot = True")
