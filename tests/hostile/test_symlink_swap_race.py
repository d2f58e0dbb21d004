"""ApplyPatch against a process that swaps a workspace directory for a symlink (issue 9 item 5).

A second process keeps renaming ``W/sub`` away and putting a symlink to a
directory outside the workspace in its place, then back, as fast as it can,
while 1,000 ApplyPatch calls add, update and delete files under ``sub/``.
Before directory descriptors, some writes followed the symlink and landed
outside (59 of 1,500). Whatever each call answers, no byte outside the
workspace may change: the tree beside it is hashed before and after.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from holon_nb.runtime import Runtime

SWAPPER = textwrap.dedent("""
    import os, sys, time
    w, outside, stop = sys.argv[1:]
    sub, real = os.path.join(w, "sub"), os.path.join(w, "sub.real")
    swaps = 0

    def settle():
        if os.path.islink(sub):
            os.unlink(sub)
        if os.path.isdir(real):
            if os.path.isdir(sub):  # the patch created sub/ meanwhile: fold it back in
                for name in os.listdir(sub):
                    os.replace(os.path.join(sub, name), os.path.join(real, name))
                os.rmdir(sub)
            os.rename(real, sub)

    while not os.path.exists(stop):
        try:
            os.rename(sub, real)
            os.symlink(outside, sub)
            time.sleep(0.0003)
            settle()
            swaps += 1
            time.sleep(0.0003)
        except OSError:
            try:
                settle()
            except OSError:
                pass
    settle()
    print(swaps)
""")


def _digest(root: Path, skip: set[str]) -> dict[str, tuple[str, bytes | str]]:
    out: dict[str, tuple[str, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames[:] = [d for d in dirnames if d not in skip]
            filenames = [f for f in filenames if f not in skip]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", oct(os.lstat(p).st_mode))
            else:
                out[rel] = (oct(os.lstat(p).st_mode), Path(p).read_bytes())
    return out


def test_no_write_lands_outside_while_a_directory_is_swapped(tmp_path: Path) -> None:
    w = tmp_path / "W"
    (w / "sub").mkdir(parents=True)
    (w / "sub" / "f.txt").write_text("bait\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("bait\n")  # what a redirected update would overwrite
    for i in range(0, 1000, 2):
        (outside / f"n{i}.txt").write_text(f"{i}\n")  # what a redirected delete would remove
    (tmp_path / "beside.txt").write_text("untouched\n")
    before = _digest(tmp_path, {"W", "home", "stop"})

    stop = tmp_path / "stop"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(w), str(outside), str(stop)], stdout=subprocess.PIPE, text=True
    )
    statuses: dict[str, int] = {}
    real_w = os.path.realpath(w)
    try:
        with Runtime(home=tmp_path / "home", workspace=w) as rt:
            for i in range(1000):
                if i % 3 == 0:
                    patch = f"--- /dev/null\n+++ b/sub/n{i}.txt\n@@ -0,0 +1 @@\n+{i}\n"
                elif i % 3 == 1:
                    patch = f"--- a/sub/n{i - 1}.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-{i - 1}\n"
                else:
                    old, new = ("bait", "changed") if i % 2 == 0 else ("changed", "bait")
                    patch = f"--- a/sub/f.txt\n+++ b/sub/f.txt\n@@ -1 +1 @@\n-{old}\n+{new}\n"
                env = rt.call("ApplyPatch", {"patch": patch}).envelope
                key = env["status"] if env["status"] == "success" else env["error"]["kind"]
                statuses[key] = statuses.get(key, 0) + 1
                assert env.get("error", {}).get("kind") != "internal_error", env
                for path in (env.get("result") or {}).get("changed_paths", []):
                    assert path.startswith(real_w + os.sep), path  # the receipt names the file written
    finally:
        stop.write_text("")
        swaps = int(swapper.communicate(timeout=60)[0].strip() or 0)
    after = _digest(tmp_path, {"W", "home", "stop"})
    assert after == before, sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))[:20]
    assert statuses.get("success", 0) > 0 and swaps > 0, (statuses, swaps)
    print(f"statuses={statuses} swaps={swaps}")
