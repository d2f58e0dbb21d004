"""Write the notebooks of the determinism set (issue 24): output that changes from run to run by nature.

    python tests/notebooks/determinism/make_determinism.py [NAME.ipynb ...]
    holon-nb test tests/notebooks/determinism --holon-nb-update

Each notebook holds one kind of run-to-run noise, made stable the way a notebook author would: a
seed, a mask preset or a normaliser in ``metadata.holon_nb``. The second command records the outputs;
test_determinism.py then checks that a fresh run passes against them (no false failure), and
``holon-nb test tests/notebooks/determinism --holon-nb-repeat 20`` checks it twenty times.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

PROGRESS = """\
import sys, time
def progress(total, width=20):
    for i in range(total + 1):
        done = width * i // total
        sys.stderr.write(f"\\r{i * 100 // total:3d}%|{'#' * done}{' ' * (width - done)}| {i}/{total}")
        sys.stderr.flush()
        time.sleep(0.01)
    sys.stderr.write("\\n")
"""

BOOKS: dict[str, tuple[str, dict[str, object], list[str]]] = {
    "d1-random.ipynb": (
        "Random data: seeded generators print the same numbers; an unseeded token is masked.",
        {"masks": ["uuids"], "normalize": [r"unseeded draw: 0\.\d+ => unseeded draw: <random>"]},
        [
            "import random\nrandom.seed(7)\nprint([random.randint(0, 99) for _ in range(8)])",
            "import numpy as np\nrng = np.random.default_rng(42)\nprint(rng.normal(size=4).round(6))\nrng.integers(0, 1000, size=6)",
            "import uuid\nprint('run token:', uuid.uuid4())\nprint('unseeded draw:', random.Random().random())",
        ],
    ),
    "d2-timestamps.ipynb": (
        "Timestamps and durations: the `timestamps` and `durations` presets mask them in user output.",
        {"masks": ["timestamps", "durations"]},
        [
            "import datetime, time\nstarted = time.perf_counter()\nprint('started at', datetime.datetime.now(datetime.timezone.utc).isoformat())",
            "time.sleep(0.05)\nprint(f'took {time.perf_counter() - started:.3f} s')",
            "datetime.datetime(2024, 2, 29, 12, 0).isoformat()  # a date in the data: compared",
        ],
    ),
    "d3-progress.ipynb": (
        "A progress bar redrawn with `\\r` (as tqdm does, on stderr); its final line is compared.",
        {},
        [
            PROGRESS,
            "progress(50)\nprint('done')",
            "for step in ('load', 'fit', 'save'):\n    progress(10)\n    print(step)",
        ],
    ),
    "d4-warnings.ipynb": (
        "Warnings: from the cell itself, from a library, and shown once per location.",
        {},
        [
            "import warnings\nwarnings.simplefilter('default')",
            "warnings.warn('the old API is deprecated', DeprecationWarning)\nprint('after the warning')",
            "import numpy as np\nprint(np.array([1.0, 0.0]) / np.array([0.0, 0.0]))",
            "def f():\n    warnings.warn('called f', UserWarning)\nfor _ in range(3):\n    f()",
        ],
    ),
    "d5-pandas.ipynb": (
        "A pandas DataFrame (its HTML and text) from seeded data.",
        {},
        [
            "import numpy as np, pandas as pd\nrng = np.random.default_rng(3)\n"
            "df = pd.DataFrame({'x': rng.integers(0, 100, 6), 'y': rng.normal(size=6).round(3),\n"
            "                   'when': pd.date_range('2024-01-01', periods=6, freq='D')})\ndf",
            "df.describe()",
            "df.style.format({'y': '{:.1f}'}).hide(axis='index')",
        ],
    ),
    "d6-matplotlib.ipynb": (
        "A matplotlib figure (PNG, inline backend) and an SVG of seeded data (needs matplotlib).",
        {},
        [
            "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
            "import matplotlib.pyplot as plt, numpy as np\nrng = np.random.default_rng(5)",
            "fig, ax = plt.subplots(figsize=(4, 3))\nax.plot(rng.normal(size=50).cumsum())\nax.set_title('walk')\nplt.show()",
            "import io\nfrom IPython.display import SVG, display\nbuf = io.StringIO()\nfig.savefig(buf, format='svg')\n"
            "display(SVG(buf.getvalue()))\nplt.close(fig)",
        ],
    ),
}


def main(names: list[str]) -> None:
    """Write the notebooks ``names`` (all when empty), without outputs: ``--holon-nb-update`` records them."""
    for name, (title, meta, cells) in BOOKS.items():
        if names and name not in names:
            continue
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        if meta:
            nb.metadata["holon_nb"] = meta
        nb.cells.append(nbformat.v4.new_markdown_cell(f"# {title}"))
        nb.cells += [nbformat.v4.new_code_cell(src) for src in cells]
        nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    main(sys.argv[1:])
