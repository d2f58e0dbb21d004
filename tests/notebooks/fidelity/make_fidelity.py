"""Write the planted-change notebooks of the fidelity suite (issue 24).

    python tests/notebooks/fidelity/make_fidelity.py

Each notebook covers one class of change that ``holon-nb test`` once let through. Every planted
cell is run as version 1 (``run_notebook``, outputs kept), then its source is replaced by version 2,
whose fresh output really differs; the cell's ``metadata.holon_nb_fidelity.expect`` is the text the
failure report must contain (test_fidelity.py). Setup cells have no ``expect``.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
import uuid
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

BAD_REPR = """\
from IPython.display import display
class Report:
    def __init__(self, ok): self.ok = ok
    def _repr_html_(self):
        if not self.ok:
            raise RuntimeError("the report cannot render")
        return "<b>report</b>"
"""

PNG = """\
import base64, io
from PIL import Image, ImageDraw
from IPython.display import display
def png(box, size=(120, 90), fill="black"):
    img = Image.new("RGB", size, "white")
    ImageDraw.Draw(img).rectangle(box, fill=fill)
    buf = io.BytesIO(); img.save(buf, "PNG")
    return {"image/png": base64.b64encode(buf.getvalue()).decode(), "text/plain": "<Figure>"}
"""

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><circle cx="50" cy="50" r="40" fill="{}"/></svg>'
)

#: notebook name -> (setup cells, [(version 1, version 2, tags, expected text in the report)])
SUITE: dict[str, tuple[list[str], list[tuple[str, str, list[str], str]]]] = {
    "b1-errors": (
        [BAD_REPR],
        [
            (
                "try:\n    1 / 0\nexcept ZeroDivisionError:\n    get_ipython().showtraceback()",
                "print('no error any more')",
                [],
                "-ZeroDivisionError: division by zero",
            ),
            ("display(Report(ok=True))", "display(Report(ok=False))", [], "raised RuntimeError"),
        ],
    ),
    "b2-html": (
        ["from IPython.display import HTML, display\nimport pandas as pd"],
        [
            ("display(HTML('<b>total: 3</b>'))", "display(HTML('<b>total: 4</b>'))", [], "+  total: 4"),
            (
                "pd.DataFrame({'a': [1, 2]}).style.highlight_max()",
                "pd.DataFrame({'a': [1, 3]}).style.highlight_max()",
                [],
                "+        3",
            ),
            (
                "display({'text/html': '<p>rows: <i>7</i></p>'}, raw=True)",
                "display({'text/html': '<p>rows: <i>8</i></p>'}, raw=True)",
                [],
                "+    8",
            ),
        ],
    ),
    "b3-images": (
        [PNG],
        [
            (
                "display(png((10, 10, 50, 50)), raw=True)",
                "display(png((60, 30, 100, 70)), raw=True)",
                [],
                "of pixels differ",
            ),
            (
                "display(png((10, 10, 50, 50)), raw=True)",
                "display(png((10, 10, 50, 50), fill='red'), raw=True)",
                [],
                "of pixels differ",
            ),
            (
                f"display({{'image/svg+xml': {SVG.format('red')!r}}}, raw=True)",
                f"display({{'image/svg+xml': {SVG.format('blue')!r}}}, raw=True)",
                [],
                '+  <circle cx="50" cy="50" fill="blue" r="40"/>',
            ),
        ],
    ),
    "b4-user-data": (
        ["import hashlib, uuid"],
        [
            (
                "print(hashlib.md5(b'v1').hexdigest())",
                "print(hashlib.md5(b'v2').hexdigest())",
                [],
                f"+{hashlib.md5(b'v2').hexdigest()}",
            ),
            (
                "print(uuid.uuid5(uuid.NAMESPACE_DNS, 'a.example'))",
                "print(uuid.uuid5(uuid.NAMESPACE_DNS, 'b.example'))",
                [],
                f"+{uuid.uuid5(uuid.NAMESPACE_DNS, 'b.example')}",
            ),
            (
                "print('measured at 2026-01-05T10:00:00Z')",
                "print('measured at 2026-01-05T11:00:00Z')",
                [],
                "+measured at 2026-01-05T11:00:00Z",
            ),
            ("print('half-life: 0.25 s')", "print('half-life: 0.35 s')", [], "+half-life: 0.35 s"),
            (
                "print('report written to /tmp/report.csv')",
                "print('report written to /tmp/summary.csv')",
                [],
                "+report written to /tmp/summary.csv",
            ),
            ("print('register at 0x1000')", "print('register at 0x2000')", [], "+register at 0x2000"),
        ],
    ),
    "b5-exception-message": (
        [],
        [
            (
                "raise ValueError('no row 3 in the table')",
                "raise ValueError('no row 4 in the table')",
                ["raises-exception"],
                "+ValueError: no row 4 in the table",
            ),
        ],
    ),
    "b6-ansi": (
        [],
        [("print('\\x1b[32mPASS\\x1b[0m')", "print('\\x1b[31mPASS\\x1b[0m')", [], "+\x1b[31mPASS")],
    ),
    "b7-widgets": (
        ["import ipywidgets as w"],
        [
            (
                "w.IntSlider(value=3, description='n')",
                "w.IntSlider(value=4, description='n')",
                [],
                "/value: saved 3, this run 4",
            ),
            ("w.Text(value='alpha')", "w.Text(value='beta')", [], '/value: saved "alpha", this run "beta"'),
            (
                "w.Checkbox(description='verbose')",
                "w.Checkbox(description='quiet')",
                [],
                '/description: saved "verbose"',
            ),
        ],
    ),
}


def write(name: str) -> Path:
    """Run ``name``'s version-1 cells, keep their outputs, put version 2 in their place; return the path."""
    from holon_nb.testing._harness import run_notebook

    setup, planted = SUITE[name]
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_markdown_cell(f"# Fidelity suite: {name}\n\nWritten by make_fidelity.py."))
    nb.cells += [nbformat.v4.new_code_cell(src) for src in setup]
    for v1, _, tags, _ in planted:
        nb.cells.append(nbformat.v4.new_code_cell(v1, metadata={"tags": tags} if tags else {}))
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / f"{name}.ipynb", Path(tmp) / "out.ipynb"
        nbformat.write(nb, src)
        run_notebook(src, output=out, timeout=60, keep_going=True, progress=False)
        ran = nbformat.read(out, as_version=4)
    first = 1 + len(setup)
    for offset, (_, v2, _, expect) in enumerate(planted):
        cell = ran.cells[first + offset]
        cell.source = v2
        cell.metadata["holon_nb_fidelity"] = {"expect": expect}
    for cell in ran.cells:
        if cell.cell_type == "code":
            cell.metadata.get("holon_nb", {}).pop("trailing_outputs_from", None)
            if cell.metadata.get("holon_nb") == {}:
                del cell.metadata["holon_nb"]
    path = HERE / f"{name}.ipynb"
    nbformat.write(ran, path)
    return path


def main() -> int:
    """Write every notebook of :data:`SUITE` (or those named on the command line)."""
    for name in sys.argv[1:] or list(SUITE):
        print("wrote", write(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
