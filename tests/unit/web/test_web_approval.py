"""Web tools under HolonNB.approval = "on_request": every model call of WebFetch is asked, each time."""

from __future__ import annotations

from _web_support import LocalServer, page

from holon_nb.providers.scripted import ScriptedProvider, Step
from holon_nb.runtime import Runtime
from holon_nb.runtime.agents._approvals import ApprovalRequest

REF = "scripted@default/scripted"


def test_on_request_asks_before_each_web_fetch_and_deny_sends_nothing(rt: Runtime) -> None:
    with LocalServer({"/": page("hello", "text/plain")}) as server:
        rt.settings = rt.settings.replace(approval="on_request", web_allowed_hosts=(f"127.0.0.1:{server.port}",))
        answers = ["deny", "approve_once"]
        asked: list[ApprovalRequest] = []

        async def asker(request: ApprovalRequest) -> str:
            asked.append(request)
            return answers.pop(0)

        rt.approvals.asker = asker
        rt.providers.register(
            REF,
            ScriptedProvider(
                [
                    Step.tool_use("call_1", "WebFetch", {"url": server.url()}),
                    Step.tool_use("call_2", "WebFetch", {"url": server.url()}),
                    Step.text("done"),
                ]
            ),
        )
        result = rt.run_turn("read the page twice", model=REF)
        first, second = (c.envelope for c in result.tool_calls)
        assert first["error"]["kind"] == "approval_denied"
        assert second["status"] == "success" and second["result"]["status"] == 200
        assert [r.tool_name for r in asked] == ["WebFetch", "WebFetch"] and asked[0].family == "web"
        assert len(server.requests) == 1  # the denied call never reached the server
        # a direct call (the user acting through a magic or Runtime.call) is never asked
        assert rt.call("WebFetch", {"url": server.url()}).ok and len(asked) == 2
