"""Write notebooks/02-patches-and-worktrees.ipynb (run: ``python notebooks/make_02_patches.py``).

The tutorial patches real files of a clone of this repository, so its
patches are generated from the files as they are now (``difflib``): rerun
this script after changing the end of ``holon_nb/tools/_text.py`` or the top
of ``README.md``; ``tests/notebooks/test_patches_notebook.py`` fails until then.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import nbformat
from _tutorial import ignore_output, tutorial_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "notebooks" / "02-patches-and-worktrees.ipynb"

ADDITION = '''

def one_line(text: str, width: int = 60) -> str:
    """``text`` on one line, at most ``width`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
'''

TEST_FILE = """from holon_nb.tools._text import one_line


def test_short_text_is_kept_on_one_line():
    assert one_line("a  b\\nc") == "a b c"


def test_long_text_is_cut_with_an_ellipsis():
    assert one_line("x" * 100, width=10) == "x" * 9 + "…"
"""


def _diff(path: str, old: str, new: str) -> str:
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{path}" if old else "/dev/null", f"b/{path}"))


def build() -> nbformat.NotebookNode:
    text_py = (ROOT / "holon_nb" / "tools" / "_text.py").read_text()
    fix = _diff("holon_nb/tools/_text.py", text_py, text_py + ADDITION)
    fix += _diff("tests/unit/tools/test_one_line.py", "", TEST_FILE)
    readme = (ROOT / "README.md").read_text().splitlines(keepends=True)
    readme_edit = _diff("README.md", "".join(readme[:4]), readme[0] + "\nTried in a worktree.\n" + "".join(readme[1:4]))
    # a stale hunk: its context is not in the file, so the whole patch fails and nothing is written
    stale = fix.split("--- /dev/null")[0] + (
        '--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -1,2 +1,2 @@\n [project]\n-name = "not-this-project"\n'
        '+name = "renamed"\n'
    )
    escape = readme_edit + "--- /dev/null\n+++ b/../../outside.txt\n@@ -0,0 +1 @@\n+written outside the clone\n"

    cells = [
        new_markdown_cell(
            "# Patches and git worktrees\n\n"
            "An agent edits files with `ApplyPatch` and tries risky changes in a throwaway git worktree.\n"
            "This notebook does both on real input: a fresh `git clone` of this repository in a temporary folder.\n\n"
            "- `%%patch` is `ApplyPatch`: the cell body is a unified diff (or a `*** Begin Patch` block).\n"
            "- `%workspace` shows and changes which directories the agent may work in (`GetWorkspaceState`,\n"
            "  `AttachWorkspace`, `SwitchWorkspace`, `DetachWorkspace`).\n"
            "- `%worktree` creates, lists and removes linked git worktrees (`CreateWorktree`, `RemoveWorktree`)."
        ),
        new_code_cell(
            "import hashlib, importlib.util, os, subprocess, sys, tempfile\n"
            "from pathlib import Path\n\n"
            'os.environ["TUTORIAL_PYTHON"] = sys.executable  # the shell commands below run tests with this Python\n'
            'if importlib.util.find_spec("pytest") is None:  # the tests below run with pytest\n'
            "    raise ModuleNotFoundError(\"this tutorial runs tests with pytest: pip install pytest, or pip install '.[test]'\")\n"
            "notebook_dir = os.getcwd()\n"
            'found = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)\n'
            "if found.returncode != 0:  # the tutorial clones the checkout it sits in\n"
            '    raise RuntimeError("run this tutorial from a git checkout of holon_nb (git clone <url>; cd holon_nb/notebooks): "\n'
            "                       + found.stderr.strip())\n"
            "repo = found.stdout.strip()\n"
            'scratch = Path(tempfile.mkdtemp(prefix="holon-nb-02-"))\n'
            'clone = scratch / "holon_nb"\n'
            'subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "--quiet", repo, str(clone)], check=True)\n'
            'print("cloned into a scratch directory (removed at the end):", clone.name)'
        ),
        new_code_cell(
            "import holon_nb\nholon_nb.clear_home()  # this notebook's own holon home starts empty: each run shows only its own state\n%load_ext holon_nb\nrt = holon_nb.get_runtime()"
        ),
        new_markdown_cell(
            "## Attach the clone and make it active\n\n"
            "The notebook's own directory is the default workspace. `AttachWorkspace` adds the clone to what the agent\n"
            "may use (it changes nothing else); `SwitchWorkspace` makes it the *active projection*: commands then run in\n"
            "it and relative patch paths resolve against it. `$name` in these lines is a Python variable."
        ),
        new_code_cell("%workspace attach $clone"),
        new_code_cell("%workspace switch $clone"),
        ignore_output(new_code_cell("%workspace"), "lists the worktrees of the checkout the notebook is in"),
        new_markdown_cell(
            "## Try a change in a worktree\n\n"
            "`CreateWorktree` adds a linked worktree on a new branch next to the clone and activates it\n"
            "(`exclusive_write`: no other agent may *enter* it while this one is there; that is coordination\n"
            "between agents, not a file lock). Commands now run inside it."
        ),
        new_code_cell("%worktree create tutorial-one-line --base HEAD"),
        new_code_cell("%exec git status --short --branch && pwd"),
        new_markdown_cell(
            "Now the patch: it adds a function to `holon_nb/tools/_text.py` and a test for it. Relative paths resolve\n"
            "against the active execution root, the worktree. The receipt shows each file's diff."
        ),
        new_code_cell("%%patch\n" + fix),
        new_markdown_cell(
            "Run the new test in the worktree. `--yield-ms 0` makes it a background task at once, with a live view;\n"
            "`%holon wait` blocks until it ends and its final receipt lands in its own cell. `$TUTORIAL_PYTHON` is\n"
            "expanded by the shell (the kernel's Python, set in the first cell)."
        ),
        new_code_cell(
            '%exec --yield-ms 0 -- PYTHONPATH=. "$TUTORIAL_PYTHON" -m pytest -q -p no:cacheprovider '
            "tests/unit/tools/test_one_line.py"
        ),
        new_code_cell("%holon wait --timeout 120"),
        new_markdown_cell(
            "## A failed patch changes nothing\n\n"
            "This patch has a good hunk for `text.py` and a stale one for `pyproject.toml`. `ApplyPatch` is\n"
            "all-or-nothing: the stale hunk fails (`context_not_found`, with the nearby lines of the file) and\n"
            "no file is touched, the good hunk's file included. The digest of every file proves it."
        ),
        new_code_cell(
            "def tree_digest(root):\n"
            '    """sha256 over every file\'s path and bytes under root (.git excluded)."""\n'
            "    h = hashlib.sha256()\n"
            '    for p in sorted(Path(root).rglob("*")):\n'
            '        if p.is_file() and ".git" not in p.parts:\n'
            '            h.update(str(p.relative_to(root)).encode() + b"\\0" + p.read_bytes())\n'
            "    return h.hexdigest()\n\n"
            'worktree = Path(rt.call("GetWorkspaceState").result["active"]["execution_root"])\n'
            "before = tree_digest(worktree)"
        ),
        new_code_cell("%%patch\n" + stale),
        new_code_cell('print("every file unchanged:", tree_digest(worktree) == before)'),
        new_markdown_cell(
            "## A patch cannot write outside the workspace\n\n"
            "Writes are confined to the bound roots (the attached workspaces and the agent home), with symlinks\n"
            "resolved. One escaping path refuses the whole patch (`path_escape`), so `README.md` is not changed either."
        ),
        new_code_cell("%%patch\n" + escape),
        new_code_cell(
            'print("outside.txt exists:", (scratch / "outside.txt").exists() or (worktree.parent / "outside.txt").exists())\n'
            'print("every file unchanged:", tree_digest(worktree) == before)'
        ),
        new_markdown_cell(
            "## Switch back and remove the worktree\n\n"
            "`RemoveWorktree` never forces: a worktree with uncommitted changes is kept (`retained_dirty`, with the\n"
            "changed files listed). Commit the change on its branch, and the removal goes through; the branch stays."
        ),
        new_code_cell("%workspace switch $clone"),
        ignore_output(new_code_cell("%worktree list"), "lists the worktrees of the checkout the notebook is in"),
        new_code_cell(
            'state = rt.call("GetWorkspaceState").result\n'
            'wt_id = next(r["execution_root_id"] for r in state["execution_roots"]\n'
            '             if r["root_kind"] == "git_worktree_root" and not r.get("removed_at")\n'
            '             and "tutorial-one-line" in r["execution_root_id"])\n'
            'print("worktree directory:", wt_id.rsplit("/", 1)[-1])'
        ),
        new_code_cell("%worktree remove {wt_id}"),
        new_code_cell(
            'rt.call("ExecCommand", {"cmd": "git add -A && git -c user.name=Tutorial "\n'
            "                              \"-c user.email=tutorial@example.invalid commit -qm 'Add one_line' && git log -1 --format='%H %s'\",\n"
            '                       "workdir": str(worktree)})'
        ),
        new_code_cell("%worktree remove {wt_id}"),
        ignore_output(
            new_code_cell("%exec git branch --list 'tutorial-*' && git worktree list"),
            "shows the branch the tutorial's clone was made from (main in CI, a feature branch elsewhere)",
        ),
        new_markdown_cell(
            "## Clean up\n\nMake the notebook's directory active again, detach the clone and delete the scratch folder."
        ),
        ignore_output(
            new_code_cell("%workspace switch $notebook_dir"),
            "its projection differs when this checkout is a linked git worktree rather than a clone",
        ),
        new_code_cell(
            'clone_id = next(w["workspace_id"] for w in rt.call("GetWorkspaceState").result["workspaces"]\n'
            '                if w["workspace_anchor"] == str(clone))\n'
            "%workspace detach {clone_id}"
        ),
        new_code_cell("import shutil\nshutil.rmtree(scratch)"),
    ]
    # commits made by the tutorial have new hashes on every run; the tutorial prints full hashes, since an
    # abbreviated one grows from 7 to 8+ digits as the clone's object count grows (git's core.abbrev=auto)
    return tutorial_notebook(
        cells, normalize=[{"regex": r"\b[0-9a-f]{40}\b|\b[0-9a-f]{7}\b", "replace": "<sha>"}], shared_dir=True
    )  # it clones this checkout


if __name__ == "__main__":
    nbformat.write(build(), OUT)
    print("wrote", OUT)
