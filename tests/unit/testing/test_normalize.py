"""holon_nb.testing.normalize and compare: the masks and the diffs, on plain values (no kernel)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import nbformat
import pytest

from holon_nb.testing._compare import apply_display_updates, cell_items, compare_cells, compare_notebooks
from holon_nb.testing.normalize import (
    RESULT_MIMETYPE,
    Normalizer,
    Roots,
    json_differences,
    mask_json,
    parse_rules,
    terminal_text,
)


def test_terminal_text_keeps_each_lines_final_state_and_drops_ansi() -> None:
    assert terminal_text("\r10%\r50%\r\x1b[32m100%\x1b[0m\n") == "100%\n"  # NT-03
    assert terminal_text("abc\rX\n") == "Xbc\n"
    assert terminal_text("a\r\nb") == "a\nb"
    assert terminal_text("ab\bc") == "ac"
    assert terminal_text("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "link"


def test_runtime_text_masks_ids_times_and_paths(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    norm = Normalizer(Roots(home=(str(home),), workspace=(str(ws),), tmp=("/tmp",)))
    text = (
        f"task_0123456789abcde ended 2026-12-01T15:07:32.123Z in {home}/spool/x and {ws}/a.py, "
        f"/tmp/tmpab12cd/f.txt, /tmp/holon-nb-run-k2j3/home/agents"
    )
    assert norm.runtime_text(text) == (
        "task_<id> ended <time> in <HOME>/spool/x and <WS>/a.py, <TMP>/<tmp>/f.txt, <HOME>/agents"
    )
    assert (
        norm.runtime_text("turn completed after 2 round(s), 0.3 s; 1 passed in 0.05s, 12 ms; sleep 3 s")
        == "turn completed after 2 round(s), <duration>; 1 passed in <duration>, <duration>; sleep 3 s"
    )
    assert (
        norm.runtime_text(
            "<__main__.Note at 0x7f457c0250d0> <DisplayHandle display_id=118a56127f42348f8893440da7181c57>"
            " 6f1c2d1e-9a4b-4c1d-8e2f-0123456789ab"
        )
        == "<__main__.Note at 0x<addr>> <DisplayHandle display_id=<uuid>> <uuid>"
    )
    # not an id: 14 hex digits, upper case
    assert norm.runtime_text("task_0123456789abcd TASK_0123456789ABCDE") == "task_0123456789abcd TASK_0123456789ABCDE"
    # a root is only a root at a path boundary
    assert Normalizer(Roots(tmp=("/tmp",))).runtime_text("/tmpfoo/x") == "/tmpfoo/x"


def test_user_text_keeps_data_that_looks_like_runtime_noise(tmp_path: Path) -> None:
    # issue 24 B4: the runtime masks erased real data in user output
    ws = tmp_path / "ws"
    norm = Normalizer(Roots(workspace=(str(ws),), tmp=("/tmp",)))
    data = (
        "md5 9e107d9d372bb6826bd81d3542a419d6, id 6f1c2d1e-9a4b-5c1d-8e2f-0123456789ab, "
        "measured 2026-12-01T15:07:32Z, half-life 0.25 s, report /tmp/report.csv, register at 0x1000"
    )
    assert norm.text(data) == data
    own = (
        f"{ws}/out.txt /tmp/holon-nb-run-k2j3/home/agents /tmp/holon-nb-copy-ab_1/book/x.csv task_0123456789abcde"
        " <__main__.Note object at 0x7f457c0250d0> <DisplayHandle display_id=118a56127f42348f8893440da7181c57>"
    )
    assert norm.text(own) == (
        "<WS>/out.txt <HOME>/agents <WS>/x.csv task_<id> <__main__.Note object at 0x<addr>>"
        " <DisplayHandle display_id=<uuid>>"
    )
    asked = Normalizer(Roots(tmp=("/tmp",)), masks=["timestamps", "durations", "addresses", "uuids", "tmp"])
    # every mask on the fixed text above (no clock is read: the "time" and the "duration" are literals)
    every_mask = (
        "md5 <uuid>, id <uuid>, measured <time>, half-life <duration>, report <TMP>/<tmp>, register at 0x<addr>"
    )
    assert asked.text(data) == every_mask
    assert Normalizer(masks=["durations"]).text("took 0.25 s at 2026-12-01T15:07:32Z") == (
        "took <duration> at 2026-12-01T15:07:32Z"
    )
    with pytest.raises(ValueError, match="unknown mask seconds: choose from timestamps"):
        Normalizer(masks=["seconds"])
    # receipts keep every mask: they are the runtime's own output
    assert norm.json({"msg": data})["msg"] == every_mask


def test_json_masks_ms_at_and_usage_but_keeps_null() -> None:
    value = {
        "duration_ms": 12,
        "ended_at": None,
        "started_at": "2026-01-01T00:00:00Z",
        "usage": {"input": 10, "output": {"cached": 3}},
        "exit_status": 0,
    }
    assert mask_json(value) == {
        "duration_ms": "<masked>",
        "ended_at": None,
        "started_at": "<masked>",
        "usage": {"input": "<n>", "output": {"cached": "<n>"}},
        "exit_status": 0,
    }


def test_user_rules_apply_after_builtins_and_bad_ones_are_named() -> None:
    rules = parse_rules([{"regex": r"\d+ s", "replace": "N s"}, "pid=\\d+ => pid=N"])
    assert Normalizer(rules=rules).text("took 3 s pid=42") == "took N s pid=N"
    with pytest.raises(ValueError, match="does not compile"):
        parse_rules([{"regex": "(", "replace": ""}])
    with pytest.raises(ValueError, match="expected"):
        parse_rules([42])


def test_json_differences_are_pointers_with_both_values() -> None:
    a = {"result": {"exit_status": 0, "a/b": [1, 2], "gone": True}}
    b = {"result": {"exit_status": 1, "a/b": [1], "new": "x"}}
    assert json_differences(a, b) == [
        ("/result/a~1b/1", 2, "<missing>"),
        ("/result/exit_status", 0, 1),
        ("/result/gone", True, "<missing>"),
        ("/result/new", "<missing>", "x"),
    ]
    assert json_differences({"k": [1, {"z": 1}]}, {"k": [1, {"z": 1}]}) == []


def _receipt(**result):
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {
            RESULT_MIMETYPE: {"tool_name": "ExecCommand", "status": "success", "result": result},
            "text/plain": f"text {result}",
            "text/html": "<b>x</b>",
        },
    }


def _cell(*outputs, tags=()):
    cell = nbformat.v4.new_code_cell("%exec true\nmore")
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    cell.metadata["tags"] = list(tags)
    return cell


def test_receipt_compared_structurally_siblings_ignored() -> None:
    norm = Normalizer(Roots(tmp=("/tmp",)))
    saved = _cell(_receipt(task_id="task_0123456789abcde", duration_ms=12, path="/tmp/tmpA/x", exit_status=0))
    fresh = _cell(_receipt(task_id="task_fedcba987654321", duration_ms=990, path="/tmp/tmpB/x", exit_status=0))
    fresh.outputs[0].data["text/plain"] = "another rendering"
    assert compare_cells(1, saved, fresh, norm) is None  # NT-01 on values
    fresh.outputs[0].data[RESULT_MIMETYPE]["result"]["exit_status"] = 1
    del fresh.outputs[0].data[RESULT_MIMETYPE]["result"]["path"]
    diff = compare_cells(1, saved, fresh, norm)  # NT-02 on values
    assert diff is not None and diff.first_line == "%exec true"
    assert [p[0] for p in diff.pointers] == ["/result/exit_status", "/result/path"]
    assert "/result/exit_status: saved 0, this run 1" in diff.message
    assert '/result/path: saved "<TMP>/<tmp>/x", this run "<missing>"' in diff.message


def test_streams_coalesced_and_text_diff_is_unified() -> None:
    norm = Normalizer()
    saved = _cell({"output_type": "stream", "name": "stdout", "text": "a\n100%\n"})
    fresh = _cell(
        {"output_type": "stream", "name": "stdout", "text": "a\n"},
        {"output_type": "stream", "name": "stdout", "text": "\r5%\r\x1b[1m100%\x1b[0m\n"},
    )
    assert compare_cells(0, saved, fresh, norm) is None
    fresh.outputs.append(nbformat.from_dict({"output_type": "stream", "name": "stdout", "text": "extra\n"}))
    diff = compare_cells(0, saved, fresh, norm)
    assert diff is not None and "+extra" in diff.message and "--- saved" in diff.message


def _png(
    w: int,
    h: int,
    box: tuple[int, int, int, int] | None = None,
    fmt: str = "PNG",
    mark: tuple[int, int, int, int] | None = None,
) -> str:
    """A white ``w``×``h`` image with a black rectangle ``box`` (left, top, right, bottom) and a red one
    ``mark``, base64."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (w, h), "white")
    if box is not None:
        ImageDraw.Draw(img).rectangle(box, fill="black")
    if mark is not None:
        ImageDraw.Draw(img).rectangle(mark, fill="red")
    buf = io.BytesIO()
    img.save(buf, fmt)
    return base64.b64encode(buf.getvalue()).decode()


def test_rich_outputs_html_ignored_beside_plain_widget_ids_ignored_svg_as_markup() -> None:
    norm = Normalizer()

    def display(data):
        return {"output_type": "display_data", "metadata": {}, "data": data}

    saved = _cell(
        display({"image/png": _png(4, 3)}),
        display({"text/plain": "X", "text/html": "<i>1</i>"}),
        display({"application/vnd.jupyter.widget-view+json": {"model_id": "a"}, "text/plain": "IntSlider"}),
    )
    fresh = _cell(
        display({"image/png": _png(4, 3) + ""}),
        display({"text/plain": "X", "text/html": "<i>2</i>"}),
        display({"application/vnd.jupyter.widget-view+json": {"model_id": "b"}, "text/plain": "IntSlider"}),
    )
    assert compare_cells(0, saved, fresh, norm) is None
    fresh.outputs[2].data["text/plain"] = "IntSlider(value=3)"  # an ipywidget's repr: ignored
    assert compare_cells(0, saved, fresh, norm) is None
    view = "application/vnd.holon.view+json"  # a holon_nb view (an %%agent turn): its text/plain is compared
    saved.outputs[2].data[view] = fresh.outputs[2].data[view] = {"view": "agent-turn"}
    assert "view text/plain differs" in compare_cells(0, saved, fresh, norm).message
    fresh.outputs[2].data["text/plain"] = "IntSlider"
    svg = '<svg height="100" width="100">\n<circle cx="50" fill="red" r="40"/></svg>'
    saved.outputs.append(nbformat.from_dict(display({"image/svg+xml": svg})))
    fresh.outputs.append(
        nbformat.from_dict(display({"image/svg+xml": svg.replace('fill="red" r="40"', 'r="40" fill="red"')}))
    )
    assert compare_cells(0, saved, fresh, norm) is None  # an SVG as normalised markup: attribute order
    fresh.outputs[-1].data["image/svg+xml"] = svg.replace('fill="red"', 'fill="blue"')
    diff = compare_cells(0, saved, fresh, norm)
    assert diff is not None and '-  <circle cx="50" fill="red" r="40"/>' in diff.message
    assert '+  <circle cx="50" fill="blue" r="40"/>' in diff.message


def test_display_updates_and_clear_output_are_applied() -> None:
    outs = [
        {"output_type": "stream", "name": "stdout", "text": "gone\n"},
        {"output_type": "clear_output", "wait": False},
        {
            "output_type": "display_data",
            "data": {"text/plain": "old"},
            "metadata": {},
            "transient": {"display_id": "d1"},
        },
        {
            "output_type": "update_display_data",
            "data": {"text/plain": "new"},
            "metadata": {},
            "transient": {"display_id": "d1"},
        },
    ]
    shown = apply_display_updates(outs)
    assert [o["data"]["text/plain"] for o in shown] == ["new"]
    assert [i.value for i in cell_items({"outputs": outs, "metadata": {}}, Normalizer())] == ["new"]


def test_errors_only_compared_in_raises_exception_cells_and_tags_select_cells() -> None:
    err = {"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []}
    tagged = _cell(err, tags=["raises-exception"])
    other = _cell({**err, "ename": "TypeError"}, tags=["raises-exception"])
    diff = compare_cells(0, tagged, other, Normalizer())
    assert diff is not None and "ValueError" in diff.message and "TypeError" in diff.message
    nb_a, nb_b = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    out_a = {"output_type": "stream", "name": "stdout", "text": "a"}
    out_b = {"output_type": "stream", "name": "stdout", "text": "b"}
    nb_a.cells = [_cell(out_a, tags=["holon-ignore-output"]), _cell(out_a), _cell(out_a, tags=["holon-skip"])]
    nb_b.cells = [_cell(out_b, tags=["holon-ignore-output"]), _cell(out_b), _cell(out_b, tags=["holon-skip"])]
    assert [d.index for d in compare_notebooks(nb_a, nb_b, Normalizer())] == [1]
    nb_a.metadata["tags"] = ["holon-lax"]
    assert compare_notebooks(nb_a, nb_b, Normalizer()) == []
    nb_a.cells[1].metadata["tags"] = ["holon-check-output"]
    assert [d.index for d in compare_notebooks(nb_a, nb_b, Normalizer())] == [1]


def test_git_roots_are_the_checkout_and_its_main_worktree(tmp_path: Path) -> None:
    import subprocess

    from holon_nb.testing.normalize import git_roots

    main, wt = tmp_path / "main", tmp_path / "wt"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(main),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    (wt / "notebooks").mkdir()
    assert git_roots(wt / "notebooks") == [str(wt), str(main)]
    assert git_roots(main) == [str(main)]
    assert git_roots(tmp_path) == []
    roots = Roots.current(workspace=wt / "notebooks")
    assert Normalizer(roots).text(f"{wt}/notebooks/a {wt}/x {main}/y") == "<WS>/a <REPO>/x <REPO>/y"


def test_site_packages_paths_read_the_same_from_any_environment() -> None:
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    roots = Roots.current()
    assert site in roots.site
    saved = Roots.from_mapping({"site": ["/other/venv/lib/python3.11/site-packages"]})
    norm = Normalizer(saved.merged(roots))
    here = norm.text(f"{site}/ipykernel/resources/logo-64x64.png 2180 bytes")
    there = norm.text("/other/venv/lib/python3.11/site-packages/ipykernel/resources/logo-64x64.png 2180 bytes")
    assert here == there == "<site-packages>/ipykernel/resources/logo-64x64.png 2180 bytes"
    assert Roots.from_mapping(roots.as_mapping()) == roots


def _display(data):
    return {"output_type": "display_data", "metadata": {}, "data": data}


STYLER = """<style type="text/css">
#T_1a2b3_row0_col0 { background-color: red; }
</style>
<table id="T_1a2b3">
  <thead><tr><th class="blank level0" >&nbsp;</th><th id="T_1a2b3_level0_col0" class="col_heading level0 col0" >a</th></tr></thead>
  <tbody><tr><td id="T_1a2b3_row0_col0" class="data row0 col0" >1</td></tr></tbody>
</table>
"""


def test_html_is_compared_when_the_plain_text_is_a_placeholder_repr() -> None:
    # issue 24 B2: display(HTML(...)) and a pandas Styler show only a default repr as text/plain
    from holon_nb.testing._compare import CompareOptions

    norm = Normalizer()
    saved = _cell(
        _display({"text/plain": "<IPython.core.display.HTML object>", "text/html": "<b>total: 3</b>"}),
        _display({"text/plain": "<pandas.io.formats.style.Styler at 0x7f00aa>", "text/html": STYLER}),
        _display({"text/html": "<p>only markup</p>"}),
    )
    fresh = _cell(
        _display({"text/plain": "<IPython.core.display.HTML object>", "text/html": "<b>total:\n 3</b>"}),
        _display(
            {
                "text/plain": "<pandas.io.formats.style.Styler at 0x7f00bb>",
                "text/html": STYLER.replace("1a2b3", "9f8e7").replace('id="T_9f8e7_row0_col0" class', "class"),
            }
        ),
        _display({"text/html": "<p>only   markup</p>"}),
    )
    fresh.outputs[1].data["text/html"] = (
        fresh.outputs[1]
        .data["text/html"]
        .replace('class="data row0 col0"', 'class="data row0 col0" id="T_9f8e7_row0_col0"')
    )
    assert compare_cells(0, saved, fresh, norm) is None  # whitespace, attribute order, styler uuid
    fresh.outputs[0].data["text/html"] = "<b>total: 4</b>"
    diff = compare_cells(0, saved, fresh, norm)
    assert diff is not None and "output 0: text/html differs" in diff.message
    assert "-  total: 3\n+  total: 4" in diff.message
    fresh.outputs[0].data["text/html"] = "<b>total: 3</b>"
    fresh.outputs[1].data["text/html"] = fresh.outputs[1].data["text/html"].replace(">1</td>", ">2</td>")
    assert "-        1\n+        2" in compare_cells(0, saved, fresh, norm).message
    fresh.outputs[1].data["text/html"] = STYLER
    fresh.outputs[2].data["text/html"] = "<p>only markup!</p>"
    assert "text/html differs" in compare_cells(0, saved, fresh, norm).message

    # a real text/plain wins by default; a switch compares both, or ignores one
    table = _cell(_display({"text/plain": "   a\n0  1", "text/html": "<table><td>1</td></table>"}))
    changed = _cell(_display({"text/plain": "   a\n0  1", "text/html": "<table><td>2</td></table>"}))
    assert compare_cells(0, table, changed, norm) is None
    both = CompareOptions(mimetypes=("text/plain", "text/html"))
    assert "text/html differs" in compare_cells(0, table, changed, norm, options=both).message
    assert compare_cells(0, saved, fresh, norm, options=CompareOptions(ignore_mimetypes=("text/html",))) is None


def test_a_notebook_chooses_its_compared_mimetypes_in_its_metadata() -> None:
    from holon_nb.testing._compare import CompareOptions
    from holon_nb.testing.check import compare_options

    nb = nbformat.v4.new_notebook(metadata={"holon_nb": {"mimetypes": ["text/html"], "ignore_mimetypes": ["image/*"]}})
    got = compare_options(nb, CompareOptions(mimetypes=("text/plain",), ignore_mimetypes=("text/latex",)))
    assert got.mimetypes == ("text/html",) and got.ignore_mimetypes == ("text/latex", "image/*")
    assert got.ignored("image/png") and not got.ignored("text/html")
    with pytest.raises(ValueError, match="metadata.holon_nb.mimetypes must be a list"):
        compare_options(nbformat.v4.new_notebook(metadata={"holon_nb": {"mimetypes": "text/html"}}), CompareOptions())


def test_raster_images_compare_by_content_within_tolerances() -> None:
    # issue 24 B3: same size, other picture was a pass; a 1-pixel size jitter was a fail
    norm = Normalizer()
    saved = _cell(_display({"image/png": _png(100, 80, (10, 10, 40, 40))}))
    jitter = _cell(_display({"image/png": _png(101, 80, (10, 10, 40, 40))}))  # renderer jitter: 1 px wider
    assert compare_cells(0, saved, jitter, norm) is None
    moved = _cell(_display({"image/png": _png(100, 80, (50, 30, 80, 60))}))  # same size, the box moved
    diff = compare_cells(0, saved, moved, norm)
    assert diff is not None and "output 0: image/png differs: " in diff.message
    assert "% of pixels differ by more than 10% (tolerated: 0.00%); 100x80 pixels" in diff.message
    assert "24.02% of pixels" in diff.message  # two disjoint 31x31 boxes: 2 * 961 / (100 * 80)
    bigger = _cell(_display({"image/png": _png(200, 160, (20, 20, 80, 80))}))
    assert "saved 100x80 pixels, this run 200x160 (size tolerance 2%)" in compare_cells(0, saved, bigger, norm).message
    from holon_nb.testing._compare import CompareOptions
    from holon_nb.testing._images import ImageTolerance

    loose = CompareOptions(image=ImageTolerance(fraction=0.5))
    assert compare_cells(0, saved, moved, norm, options=loose) is None
    broken = _cell(_display({"image/png": "bm90IGFuIGltYWdl"}))
    assert "compared byte for byte" in compare_cells(0, saved, broken, norm).message


def test_a_small_mark_in_an_image_is_a_difference() -> None:
    # pytest-notebook's 128x128_altered.png adds a red stroke on 0.8 % of the pixels: the former default
    # (1 % of the pixels may differ) passed it. No pixel may differ beyond the threshold by default.
    norm = Normalizer()
    saved = _cell(_display({"image/png": _png(100, 80, (10, 10, 40, 40))}))
    marked = _cell(_display({"image/png": _png(100, 80, (10, 10, 40, 40), mark=(90, 70, 97, 77))}))
    diff = compare_cells(0, saved, marked, norm)
    assert diff is not None and "0.80% of pixels differ by more than 10% (tolerated: 0.00%)" in diff.message


def _with_software(data: str, software: str) -> str:
    """``data`` (a base64 PNG) re-encoded with a ``Software`` text chunk."""
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Software", software)
    buf = io.BytesIO()
    Image.open(io.BytesIO(base64.b64decode(data))).save(buf, "PNG", pnginfo=info)
    return base64.b64encode(buf.getvalue()).decode()


def test_an_image_drawn_by_other_software_is_listed_as_not_compared() -> None:
    from holon_nb.testing._compare import CompareOptions, compare_notebooks
    from holon_nb.testing._images import ImageTolerance

    norm = Normalizer()
    old = _with_software(_png(100, 80, (10, 10, 40, 40)), "matplotlib version 2.2.2, http://matplotlib.org/")
    new = _with_software(_png(120, 90, (10, 10, 50, 50)), "Matplotlib version3.11.2, https://matplotlib.org/")
    same = _with_software(_png(120, 90, (10, 10, 60, 60)), "Matplotlib version3.11.2, https://matplotlib.org/")
    saved, fresh = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    saved.cells = [_cell(_display({"image/png": old})), _cell(_display({"image/png": new}))]
    fresh.cells = [_cell(_display({"image/png": new})), _cell(_display({"image/png": same}))]
    notes: list[str] = []
    diffs = compare_notebooks(saved, fresh, norm, notes=notes)
    # the first pair: listed, neither passed nor failed on pixels; the second (same software): compared
    assert [d.index for d in diffs] == [1]
    assert notes == [
        "cell 0 (%exec true): output 0: image/png saved by matplotlib version 2.2.2, http://matplotlib.org/; "
        "this run by Matplotlib version3.11.2, https://matplotlib.org/"
    ]
    strict = CompareOptions(image=ImageTolerance(strict=True))
    notes.clear()
    assert [d.index for d in compare_notebooks(saved, fresh, norm, options=strict, notes=notes)] == [0, 1]
    assert notes == []


def test_a_raster_image_beside_latex_is_compared_as_its_latex() -> None:
    from holon_nb.testing._compare import CompareOptions
    from holon_nb.testing._images import ImageTolerance

    norm = Normalizer()
    saved = _cell(_display({"text/latex": "$x^{2}$", "text/plain": " 2\nx", "image/png": _png(20, 20, (2, 2, 9, 9))}))
    redrawn = _cell(
        _display({"text/latex": "$x^{2}$", "text/plain": " 2\nx", "image/png": _png(22, 20, (3, 2, 12, 9))})
    )
    assert compare_cells(0, saved, redrawn, norm) is None  # another renderer's pixels for the same LaTeX
    changed = _cell(_display({"text/latex": "$x^{3}$", "text/plain": " 3\nx", "image/png": _png(20, 20, (2, 2, 9, 9))}))
    diff = compare_cells(0, saved, changed, norm)
    assert diff is not None and "text/latex differs" in diff.message
    strict = CompareOptions(image=ImageTolerance(strict=True))
    assert "image/png differs" in compare_cells(0, saved, redrawn, norm, options=strict).message
    no_latex = CompareOptions(ignore_mimetypes=("text/latex",))  # the LaTeX not compared: the image is
    assert "image/png differs" in compare_cells(0, saved, redrawn, norm, options=no_latex).message


def test_the_runtimes_own_cards_get_every_mask() -> None:
    # issue 24 B4: a holon_nb board or note (HTML card beside its text) is runtime output, not user data
    card = "<div class='holon-card tex2jax_ignore holon-board-view'>board</div>"
    saved = _cell(_display({"text/plain": "timer next 2026-12-01T21:42:18Z", "text/html": card}))
    fresh = _cell(_display({"text/plain": "timer next 2026-12-03T13:13:46Z", "text/html": card}))
    assert compare_cells(0, saved, fresh, Normalizer()) is None
    del saved.outputs[0].data["text/html"], fresh.outputs[0].data["text/html"]
    assert "-timer next 2026-12-01T21:42:18Z" in compare_cells(0, saved, fresh, Normalizer()).message


def test_an_expected_error_is_compared_by_name_and_message() -> None:
    # issue 24 B5: only the exception name was compared
    def error(evalue):
        return {"output_type": "error", "ename": "ValueError", "evalue": evalue, "traceback": []}

    norm = Normalizer(Roots(workspace=("/work/book",)))
    saved = _cell(error("no row 3 in /work/book/data.csv"), tags=["raises-exception"])
    assert (
        compare_cells(0, saved, _cell(error("no row 3 in /work/book/data.csv"), tags=["raises-exception"]), norm)
        is None
    )
    diff = compare_cells(0, saved, _cell(error("no row 4 in /work/book/data.csv"), tags=["raises-exception"]), norm)
    assert (
        diff is not None
        and "-ValueError: no row 3 in <WS>/data.csv\n+ValueError: no row 4 in <WS>/data.csv" in diff.message
    )


def test_ansi_colours_are_stripped_unless_compared() -> None:
    # issue 24 B6: --holon-nb-compare-ansi
    saved = _cell({"output_type": "stream", "name": "stdout", "text": "\x1b[32mPASS\x1b[0m\n"})
    fresh = _cell({"output_type": "stream", "name": "stdout", "text": "\x1b[31mPASS\x1b[0m\n"})
    assert compare_cells(0, saved, fresh, Normalizer()) is None
    diff = compare_cells(0, saved, fresh, Normalizer(keep_ansi=True))
    assert diff is not None and "-\x1b[32mPASS" in diff.message and "+\x1b[31mPASS" in diff.message
    progress = _cell({"output_type": "stream", "name": "stdout", "text": "\r10%\r\x1b[1m100%\x1b[0m\n"})
    assert Normalizer(keep_ansi=True).stream(progress.outputs[0].text) == "100%\n"  # a rewritten line: its final state


def test_widget_views_compare_by_their_models_saved_state() -> None:
    # issue 24 B7: widget views were ignored, so a slider's changed value passed
    def book(value, description="n", model_id="m1"):
        nb = nbformat.v4.new_notebook()
        view = {"application/vnd.jupyter.widget-view+json": {"model_id": model_id, "version_major": 2}}
        nb.cells.append(_cell(_display({**view, "text/plain": f"IntSlider(value={value})"})))
        state = {"model_name": "IntSliderModel", "state": {"value": value, "description": description, "max": 9}}
        nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {model_id: state}}}
        return nb

    norm = Normalizer()
    assert compare_notebooks(book(3), book(3, model_id="m2"), norm) == []  # model ids are random
    (diff,) = compare_notebooks(book(3), book(4), norm)
    assert "output 0: widget differs at 1 place(s):\n  /value: saved 3, this run 4" in diff.message
    (diff,) = compare_notebooks(book(3), book(3, description="k"), norm)
    assert '/description: saved "n", this run "k"' in diff.message
    unsaved = book(3)
    del unsaved.metadata["widgets"]
    assert compare_notebooks(unsaved, book(4), norm) == []  # no saved state: nothing to compare with
    trimmed = book(3)  # an older ipywidgets leaves default values out of the saved state
    del trimmed.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]["m1"]["state"]["value"]
    assert compare_notebooks(trimmed, book(4), norm) == []


def test_an_nbval_sanitize_file_becomes_user_rules(tmp_path: Path) -> None:
    # issue 24 A3: nbval's own sanitize file (tests/notebooks/fidelity/SOURCES.md)
    from holon_nb.testing.normalize import read_sanitize_file

    cfg = Path(__file__).parents[2] / "notebooks" / "fidelity" / "nbval_sanitize_defaults.cfg"
    rules = read_sanitize_file(cfg)
    assert len(rules) == 6
    norm = Normalizer(rules=rules)
    assert norm.text("on 2026-12-03 at 13:02:11, Figure size 640x480 with 1 Axes") == (
        "on DATESTAMP at TIMESTAMP, Figure size WIDTHxHEIGHT with 1 Axes"
    )
    bad = tmp_path / "bad.cfg"
    bad.write_text("[x]\nregex: (\nreplace: y\n")
    with pytest.raises(ValueError, match=r"bad.cfg, line 2: regex '\(' does not compile"):
        read_sanitize_file(bad)
    bad.write_text("regex: a\n\nreplace: b\n")
    with pytest.raises(ValueError, match="line 1: 'regex:' without a 'replace:' line after it"):
        read_sanitize_file(bad)


def test_ignore_stdout_and_stderr_tags() -> None:
    # issue 24 A4: a warning on stderr (a deprecation that comes and goes) should not fail the result
    def streams(out, err, tags=()):
        return _cell(
            {"output_type": "stream", "name": "stderr", "text": err},
            {"output_type": "stream", "name": "stdout", "text": out},
            tags=tags,
        )

    norm = Normalizer()
    assert "stderr differs" in compare_cells(0, streams("1\n", "warn A\n"), streams("1\n", "warn B\n"), norm).message
    tagged = ["holon-ignore-stderr"]
    assert compare_cells(0, streams("1\n", "warn A\n", tagged), streams("1\n", "warn B\n", tagged), norm) is None
    assert (
        "stdout differs" in compare_cells(0, streams("1\n", "a\n", tagged), streams("2\n", "b\n", tagged), norm).message
    )
    tagged = ["holon-ignore-stdout"]
    assert compare_cells(0, streams("1\n", "a\n", tagged), streams("2\n", "a\n", tagged), norm) is None


def test_a_warning_from_a_cell_names_the_kernel_folder_without_its_pid() -> None:
    # the determinism set: a warning raised in a cell names ipykernel's per-pid folder, new each run
    warning = "/tmp/ipykernel_18163/219594660.py:2: UserWarning: called f\n  warnings.warn('called f')"
    expected = "/tmp/ipykernel_<pid>/219594660.py:2: UserWarning: called f\n  warnings.warn('called f')"
    assert Normalizer(Roots(tmp=("/tmp",))).text(warning) == expected
    assert Normalizer().text(warning.replace("18163", "20182")) == expected
    # the cell's file (a hash of its code) is kept, and so is user text that merely looks alike
    assert Normalizer().text("/tmp/ipykernel_1/1.py /tmp/ipykernel_1/2.py my-ipykernel_7/x") == (
        "/tmp/ipykernel_<pid>/1.py /tmp/ipykernel_<pid>/2.py my-ipykernel_7/x"
    )


def test_final_wait_outputs_of_an_ignored_last_cell_are_compared() -> None:
    """Issue 26 item 1: a task that failed after the last cell (its final receipt appended by the final wait)
    fails the comparison even when the last cell's own outputs are ignored."""
    own_a = {"output_type": "stream", "name": "stdout", "text": "cleanup at 12:00"}
    own_b = {"output_type": "stream", "name": "stdout", "text": "cleanup at 12:01"}
    late = {"output_type": "stream", "name": "stdout", "text": "Traceback (most recent call last):\nFileNotFoundError"}
    saved, run = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    saved.cells = [_cell(own_a), _cell(own_a, tags=["holon-ignore-output"])]
    run.cells = [_cell(own_a), _cell(own_b, late, tags=["holon-ignore-output"])]
    run.cells[1].metadata["holon_nb"] = {"trailing_outputs_from": 1}
    (diff,) = compare_notebooks(saved, run, Normalizer())
    assert diff.index == 1 and diff.message.startswith("after the last cell (final wait): ")
    assert "FileNotFoundError" in diff.message
    run.cells[1].outputs = [own_b]  # no late output: the cell's own outputs stay ignored
    del run.cells[1].metadata["holon_nb"]
    assert compare_notebooks(saved, run, Normalizer()) == []


def test_a_root_cut_short_by_a_receipt_is_masked_and_saved_outputs_name_no_root(tmp_path: Path) -> None:
    """Issue 26 item 12: what --holon-nb-update saves names no folder of this machine, a cut one included."""
    from holon_nb.testing._saved import mask_saved_paths

    site = "/opt/venv/lib/python3.11/site-packages"
    norm = Normalizer(Roots(site=(site,), workspace=(str(tmp_path),), tmp=("/tmp",)))
    assert norm.paths("sha x /opt/venv/lib/py… [+57 chars]") == "sha x <site-packages>… [+57 chars]"
    assert norm.paths("/usr/lib/py… stays") == "/usr/lib/py… stays"
    nb = nbformat.v4.new_notebook()
    receipt = {"tool_name": "ViewImage", "result": {"path": f"{site}/ipykernel/logo.png"}}
    nb.cells = [
        _cell(
            {"output_type": "stream", "name": "stdout", "text": f"wrote {tmp_path}/out.txt\n"},
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {RESULT_MIMETYPE: receipt, "text/plain": "ViewImage · success\n  /opt/venv/lib/py…"},
            },
        )
    ]
    assert mask_saved_paths(nb, norm) is True
    saved = nbformat.writes(nb)
    assert site not in saved and str(tmp_path) not in saved and "/opt/venv" not in saved
    assert "<site-packages>/ipykernel/logo.png" in saved and "<WS>/out.txt" in saved
    assert mask_saved_paths(nb, norm) is False  # idempotent: a second update changes nothing


def test_receipt_text_from_an_older_renderer_is_found() -> None:
    """Issue 26 item 12: equal receipt JSON with another text/plain is stale text (--holon-nb-update rewrites it)."""
    from holon_nb.testing._compare import receipt_text_differs

    receipt = {"tool_name": "ExecCommand", "status": "success", "result": {"exit_status": 0}}

    def out(text: str) -> dict:
        return {"output_type": "display_data", "metadata": {}, "data": {RESULT_MIMETYPE: receipt, "text/plain": text}}

    norm = Normalizer()
    assert (
        receipt_text_differs(
            _cell(out("ExecCommand · 12 ms\n  exit 0")), _cell(out("ExecCommand · 9 ms\n  exit 0")), norm
        )
        is False
    )
    assert (
        receipt_text_differs(_cell(out("old layout: exit 0")), _cell(out("ExecCommand · 9 ms\n  exit 0")), norm) is True
    )
