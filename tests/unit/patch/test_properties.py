"""Property tests: difflib diffs of random edits apply exactly; corrupted diffs fail and change nothing.

Files hold unique lines (a random text plus a ``#<id>;`` tag), so every hunk's
context has exactly one place to go and any corruption below is guaranteed to
break the patch: a mutated, duplicated or dropped (mid-block) context/removed
line, a line cut short, or a broken header. Line endings (LF or CRLF per
file), a BOM, a missing final newline, empty files, adds and deletes vary.
"""

from __future__ import annotations

import difflib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holon_nb import Runtime

#: 60 examples by default (CI budget); PATCH_PROP_EXAMPLES=400 for a deeper local run.
PROPS = settings(
    max_examples=int(os.environ.get("PATCH_PROP_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_TEXT = st.text(alphabet=st.sampled_from(list("abcxyz019 \t_.,;:()[]{}<>=*/#!?'\"`~é中ß\\@")), max_size=12)
_NAMES = ["f0.txt", "f1.md", "d/f2.py", "d/e/f3.txt"]
_counter = itertools.count()


@dataclass
class FileCase:
    name: str
    original: list[str] | None  # line texts; None = absent
    target: list[str] | None
    style: str
    bom: bool
    final_nl_before: bool
    final_nl_after: bool

    def lines(self, texts: list[str], final_nl: bool) -> list[str]:
        out = [t + self.style for t in texts]
        if out and not final_nl:
            out[-1] = texts[-1]
        return out

    def data(self, texts: list[str] | None, final_nl: bool) -> bytes | None:
        if texts is None:
            return None
        return (("\ufeff" if self.bom else "") + "".join(self.lines(texts, final_nl))).encode("utf-8")

    def diff(self, prefix: str, context: int) -> str:
        a = [] if self.original is None else self.lines(self.original, self.final_nl_before)
        b = [] if self.target is None else self.lines(self.target, self.final_nl_after)
        old = "/dev/null" if self.original is None else f"a/{prefix}{self.name}"
        new = "/dev/null" if self.target is None else f"b/{prefix}{self.name}"
        out = []
        for line in difflib.unified_diff(a, b, old, new, n=context):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


@st.composite
def unique_lines(draw: Any, ids: Any, min_size: int = 0, max_size: int = 25) -> list[str]:
    """Lines unique within one example: ``ids`` is the example's own counter (deterministic on replay)."""
    texts = draw(st.lists(_TEXT, min_size=min_size, max_size=max_size))
    return [f"{t}#{next(ids)};" for t in texts]


@st.composite
def file_cases(draw: Any) -> list[FileCase]:
    names = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=4, unique=True))
    ids = itertools.count()
    cases = []
    for name in names:
        kind = draw(st.sampled_from(["modify", "modify", "modify", "add", "delete"]))
        style = draw(st.sampled_from(["\n", "\r\n"]))
        original = None if kind == "add" else draw(unique_lines(ids, min_size=1 if kind == "delete" else 0))
        if kind == "delete":
            target = None
        elif kind == "add":
            target = draw(unique_lines(ids, min_size=1))
            style = "\n"  # a new file takes \n
        else:
            target = []
            for line in original:
                action = draw(st.sampled_from(["keep", "keep", "keep", "drop", "replace", "insert"]))
                if action in ("keep", "insert"):
                    target.append(line)
                if action in ("replace", "insert"):
                    target.extend(draw(unique_lines(ids, min_size=1, max_size=3)))
            if draw(st.booleans()):
                target[0:0] = draw(unique_lines(ids, max_size=2))
        case = FileCase(
            name,
            original,
            target,
            style,
            bom=kind == "modify" and draw(st.booleans()),
            final_nl_before=draw(st.booleans()),
            final_nl_after=draw(st.booleans()),
        )
        if kind == "add":
            case.final_nl_before = True
        if original is not None and (not original or (len(original) == 1 and not case.final_nl_before)):
            case.style = "\n"  # a file without any terminator has the \n style (per D1)
        if case.data(original, case.final_nl_before) == case.data(target, case.final_nl_after):
            continue  # no diff to apply
        cases.append(case)
    return cases


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("props")
    (base / "W").mkdir()
    rt = Runtime(home=base / "home", workspace=base / "W")
    yield rt, base / "W"
    rt.close()


def _setup(root: Path, cases: list[FileCase]) -> str:
    example = root / f"ex{next(_counter)}"
    example.mkdir()
    for case in cases:
        data = case.data(case.original, case.final_nl_before)
        if data is not None:
            path = example / case.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return example.name + "/"


@given(cases=file_cases(), context=st.integers(0, 3), data=st.data())
@PROPS
def test_random_diffs_apply_exactly(runtime, cases: list[FileCase], context: int, data: st.DataObject) -> None:
    rt, root = runtime
    prefix = _setup(root, cases)
    order = data.draw(st.permutations(cases))
    patch = "".join(c.diff(prefix, context) for c in order)
    if not patch:
        return
    env = rt.call("ApplyPatch", {"patch": patch}).envelope
    assert env["status"] == "success", (env, patch)
    for case in cases:
        path = root / prefix / case.name
        expected = case.data(case.target, case.final_nl_after)
        if expected is None:
            assert not path.exists()
        else:
            assert path.read_bytes() == expected, (case, patch)
    assert not [d for d in env["result"].get("diagnostics", []) if d["kind"] == "hunk_count_mismatch"]


def _corrupt(patch: str, how: str, data: st.DataObject) -> str | None:
    lines = patch.split("\n")
    body = [i for i, ln in enumerate(lines) if ln[:1] in (" ", "-") and not ln.startswith("--- ")]
    if how == "header":
        headers = [i for i, ln in enumerate(lines) if ln.startswith(("@@ ", "+++ "))]
        i = data.draw(st.sampled_from(headers))
        lines[i] = lines[i].rsplit(" ", 1)[0] if lines[i].startswith("@@ ") else "+++"
        return "\n".join(lines)
    if not body:
        return None
    if how == "mutate":
        i = data.draw(st.sampled_from(body))
        lines[i] = lines[i][0] + "never in any file §"
    elif how == "duplicate":
        i = data.draw(st.sampled_from(body))
        lines.insert(i + 1, lines[i])
    elif how == "drop":
        middles = [i for i in body if i - 1 in body and i + 1 in body]
        if not middles:
            return None
        del lines[data.draw(st.sampled_from(middles))]
    else:  # truncate inside a context/removed line, cutting at least its final ';'
        i = data.draw(st.sampled_from(body))
        # the cut must take the ';' itself: a CRLF file's line ends in '\r', and cutting only that
        # leaves a line the engine rightly matches (CR tolerance), so the patch would be valid
        keep = data.draw(st.integers(1, lines[i].rstrip("\r").rfind(";")))
        return "\n".join(lines[:i] + [lines[i][:keep]])
    return "\n".join(lines)


@given(
    cases=file_cases(),
    context=st.integers(0, 3),
    data=st.data(),
    how=st.sampled_from(["mutate", "duplicate", "drop", "truncate", "header"]),
)
@PROPS
def test_corrupted_diffs_fail_and_change_nothing(
    runtime, tree, cases: list[FileCase], context: int, data: st.DataObject, how: str
) -> None:
    rt, root = runtime
    prefix = _setup(root, cases)
    patch = "".join(c.diff(prefix, context) for c in cases)
    if not patch:
        return
    bad = _corrupt(patch, how, data)
    if bad is None:
        return
    before = tree(root / prefix)
    env = rt.call("ApplyPatch", {"patch": bad}).envelope
    assert env["status"] == "error", (how, bad)
    assert env["error"]["kind"] != "internal_error", env
    assert tree(root / prefix) == before
