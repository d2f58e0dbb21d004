"""ViewImage on a 20 MiB image and on 50-megapixel headers: wall time and peak memory (issue 14).

Goal: the checks read headers without decoding pixels; peak RSS growth under 64 MiB.

Files (written once, in a temporary directory, by the parent process):

- ``noise-20mib.png``: a real PNG of random RGB noise, 2,640×2,640 (6.97 MP), just under 20 MiB
  (20,971,520 bytes), so every byte is read and hashed;
- ``header-50mp.png``: a PNG header declaring 10,000×5,000 (exactly the 50,000,000-pixel limit: accepted)
  with no pixel data;
- ``header-50mp-plus.png``: 10,000×5,001 (refused: over the limit);
- ``over-20mib.png``: the noise PNG padded to 20 MiB + 1 byte (refused from ``stat``, never read).

Each case runs in a fresh child process (so ``VmHWM`` measures that case alone): a runtime is opened,
Pillow imported, then the baseline peak RSS is taken; the case runs ``RUNS`` times. Two measurements:

- ``probe``: :func:`holon_nb.runtime.images._probe.probe_image` alone (stat, bounded read, SHA-256, sniff,
  header through Pillow's plugin, pixel check) — the validation ViewImage does before any model;
- ``call``: ``rt.call("ViewImage", …)`` with no vision model configured (``vision_adapter_unavailable``):
  the full dispatch path, including the notebook thumbnail (which does decode pixels, for images up to
  16 MP; see :mod:`holon_nb.runtime.images._preview`).

Run: ``python benchmarks/bench_view_image.py``. Figures depend on the machine's load.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from _common import hwm_kib, save

RUNS = 5
CASES = ("noise-20mib.png", "header-50mp.png", "header-50mp-plus.png", "over-20mib.png")


def _png_header(width: int, height: int) -> bytes:
    """Signature, IHDR declaring width x height, a tiny IDAT (the start of a deflate stream of zeros), IEND."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compressobj().compress(b"\0" * 65536)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _write_files(folder: Path) -> None:
    from PIL import Image

    side = 2640
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(folder / "noise-20mib.png", compress_level=1)
    size = (folder / "noise-20mib.png").stat().st_size
    assert size <= 20 * 1024 * 1024, size
    (folder / "header-50mp.png").write_bytes(_png_header(10_000, 5_000))
    (folder / "header-50mp-plus.png").write_bytes(_png_header(10_000, 5_001))
    data = (folder / "noise-20mib.png").read_bytes()
    (folder / "over-20mib.png").write_bytes(data + b"\0" * (20 * 1024 * 1024 + 1 - len(data)))


def _child(folder: Path, case: str, mode: str) -> dict:
    import PIL.Image  # noqa: F401 - imported before the baseline, as in a warm kernel

    from holon_nb import Runtime
    from holon_nb.runtime.images._probe import probe_image
    from holon_nb.tools._errors import ToolFailure

    path = folder / case
    with Runtime(home=folder / f"home-{case}-{mode}", workspace=folder) as rt:
        base = hwm_kib()
        times = []
        outcome = ""
        for _ in range(RUNS):
            t0 = time.perf_counter()
            if mode == "probe":
                try:
                    facts = probe_image(path)
                    outcome = f"ok {facts.mime} {facts.width}x{facts.height}"
                    del facts  # the next run must not overlap this one's 20 MiB
                except ToolFailure as exc:
                    outcome = f"{exc.error.kind}: {exc.error.details.get('validation_error')}"
            else:
                res = rt.call("ViewImage", {"path": str(path), "prompt": "what is it?"})
                outcome = res.error["kind"] if res.error else "success"
                if res.previews:
                    outcome += f" (+thumbnail {res.previews[0]['width']}x{res.previews[0]['height']})"
                del res
            times.append((time.perf_counter() - t0) * 1000)
        peak = hwm_kib()
    times.sort()
    return {
        "case": case,
        "mode": mode,
        "bytes": path.stat().st_size,
        "outcome": outcome,
        "median_ms": round(times[len(times) // 2], 2),
        "max_ms": round(times[-1], 2),
        "peak_rss_growth_mib": round((peak - base) / 1024, 1),
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(_child(Path(sys.argv[2]), sys.argv[3], os.environ["BENCH_MODE"])))
        return
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))
        and k not in ("HOLON_MODEL", "HOLON_NB_PROVIDERS", "HOLON_VISION_MODEL")
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_files(folder)
        for case in CASES:
            for mode in ("probe", "call"):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(folder), case],
                    check=True,
                    capture_output=True,
                    text=True,
                    env={**env, "BENCH_MODE": mode},
                )
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    goal_ok = all(r["peak_rss_growth_mib"] < 64 for r in rows if r["mode"] == "probe")
    save("view_image", {"runs_per_case": RUNS, "rows": rows, "probe_peak_rss_growth_under_64_mib": goal_ok})


if __name__ == "__main__":
    main()
