"""Throughput of the D6 streaming scrubber that task logs and artifacts are written through (issue 9).

Feeds 64 MiB of command-like output in 256 KiB chunks (the process layer's read size) through
``Scrubber.stream()`` with three secrets configured: once with no secret in the text, once with
a secret in every chunk. Prints MiB/s; no goal is asserted (run it on a quiet machine to compare).

    python benchmarks/bench_scrub_stream.py
"""

from __future__ import annotations

import time

from holon_nb.render._scrubbing import Scrubber

SECRETS = {
    "A_TOKEN": "Zq9Xw7Vt3Ru5Sp1On8Ml6Kj",
    "B_API_KEY": "sk-test-0123456789abcdef",
    "C_PASSWORD": "hunter2hunter2",
}
CHUNK = ("0123456789 abcdefghij klmnopqrst uvwxyz\n" * 6554)[:262144]
MIB = 64


def run(label: str, chunk: str) -> None:
    stream = Scrubber(SECRETS).stream()
    started = time.perf_counter()
    for _ in range(MIB * 4):
        stream.feed(chunk)
    stream.flush()
    elapsed = time.perf_counter() - started
    print(f"{label:<22} {MIB} MiB in {elapsed:.2f} s = {MIB / elapsed:.0f} MiB/s")


if __name__ == "__main__":
    run("no secret", CHUNK)
    run("a secret per chunk", CHUNK[:1000] + SECRETS["A_TOKEN"] + CHUNK[1023:])
