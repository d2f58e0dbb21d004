"""Regenerate the tutorials and their committed outputs (one command; docs/notebook-tests.md).

    python notebooks/make_all.py            # generators, then holon-nb test --holon-nb-update notebooks/
    python notebooks/make_all.py --record   # also re-record the cassettes (make_04_agent.py --record)

Each ``make_0*.py`` writes its notebook without outputs; the update run then executes every tutorial
(model calls replayed from its cassettes) and saves this run's outputs as the expected ones. Exits with
the test run's status: non-zero when a tutorial fails (a cell raised, a task was left running).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    for script in sorted(HERE.glob("make_0*.py")):
        subprocess.run([sys.executable, str(script), *sys.argv[1:]], check=True, cwd=HERE)
    return subprocess.run(
        [sys.executable, "-m", "holon_nb.cli", "test", "--holon-nb-update", str(HERE), "-p", "no:cacheprovider", "-q"]
    ).returncode


if __name__ == "__main__":
    sys.exit(main())
