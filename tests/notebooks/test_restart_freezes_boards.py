"""A front end's Restart Kernel freezes live ``%workitems`` boards before the kernel goes (issue 11, item 4).

A front end restarts a kernel with a ``shutdown_request`` (``restart: true``). A live board is display
output (never a widget, so nothing of it breaks when its kernel goes); a front end that still listens to
the old kernel should get its last state saying it stopped updating, before the kernel answers (a board
frozen at interpreter exit came after that answer). This test restarts a real kernel through its kernel
manager and reads what the old kernel sent on IOPub.
"""

from __future__ import annotations

import time
from pathlib import Path

from _support import execute, holon_kernel

WIDGET = "application/vnd.jupyter.widget-view+json"


def test_restart_draws_a_live_board_a_last_time_before_the_reply(tmp_path: Path) -> None:
    with holon_kernel(tmp_path) as (km, kc):
        execute(kc, '%workitem create "Check the restart freezes this board"')
        shown = [m for m in execute(kc, "%workitems") if m["msg_type"] == "display_data"]
        (board,) = [m for m in shown if "holon-board-view" in m["content"]["data"].get("text/html", "")]
        assert WIDGET not in board["content"]["data"]
        display_id = board["content"]["transient"]["display_id"]
        km.restart_kernel(now=False)  # shutdown_request with restart=True, as a front end's Restart
        updates, seen = [], []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except Exception:  # queue.Empty: nothing more from the old kernel
                if updates:
                    break
                continue
            seen.append(msg["msg_type"])
            if (
                msg["msg_type"] == "update_display_data"
                and msg["content"].get("transient", {}).get("display_id") == display_id
            ):
                updates.append(msg["content"]["data"])
                seen[-1] = "board update"
        assert updates, "the old kernel sent no update of the live board before it exited"
        final = updates[-1]
        assert WIDGET not in final  # a static board: it renders without a kernel
        assert "Check the restart freezes this board" in final["text/plain"]
        assert "no longer updated: the kernel was restarted" in final["text/plain"]
        # before the kernel says it is going (the shutdown_reply it broadcasts on IOPub): a front end
        # may stop listening to the old kernel from that reply on
        if "shutdown_reply" in seen:
            assert seen.index("board update") < seen.index("shutdown_reply"), seen
