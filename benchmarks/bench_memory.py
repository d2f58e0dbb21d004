"""MemorySearch over 100,000 stored documents, side by side with ripgrep over the same texts.

Setup: 100,000 documents of 40-80 words (a fixed pseudo-random vocabulary of
20,000 words) are stored through ``MemoryService.index`` in batches of 1,000
(one transaction per batch), and the same texts are written as one file per
document in a temporary directory. Three marker words are planted in 10,
1,000 and 10,000 documents (rare / medium / common).

Measured, per marker word: the median latency of ``rt.call("MemorySearch",
{"query": word})`` (the full dispatch path: validation, index catch-up,
bm25-ranked top 10, the recorded execution) and of ``rg -l -i -F -w word DIR``
(every matching file, unranked). ``rg_over_memory_search`` is the ratio of
the two medians (above 1: MemorySearch is faster).

Run: ``python benchmarks/bench_memory.py [DOCS]`` (needs ``rg`` on PATH).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import median_ms, save

from holon_nb import Runtime

MARKERS = {"rare": ("zyxquillon", 10), "medium": ("quorvantel", 1_000), "common": ("brimstack", 10_000)}
BATCH = 1_000
_SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ve", "ri", "do", "pa", "ze", "gu", "bo", "fi", "ha", "jo"]


def _vocabulary(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _documents(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 20_000)
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like word frequencies
    docs = [" ".join(rng.choices(vocab, weights, k=rng.randint(40, 80))) for _ in range(n)]
    for word, count in MARKERS.values():
        for i in rng.sample(range(n), min(count, n)):
            docs[i] += " " + word
    return docs


def main(n: int = 100_000, runs: int = 21, rg_runs: int = 5) -> None:
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("ripgrep (rg) is not installed: apt-get install -y ripgrep")
    docs = _documents(n)
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        files = Path(tmp) / "files"
        files.mkdir()
        t0 = time.perf_counter()
        for start in range(0, n, BATCH):
            with rt.store.tx() as db:
                for i in range(start, min(start + BATCH, n)):
                    rt.memory.index(
                        db,
                        agent_id="default",
                        source_ref=f"brief:brief_{i:015x}",
                        source_kind="brief",
                        text=docs[i],
                        title=f"Brief {i}",
                    )
        index_s = time.perf_counter() - t0
        for i, text in enumerate(docs):
            (files / f"{i:06d}.txt").write_text(text)
        db_mib = rt.store.path.stat().st_size / 2**20
        out: dict[str, object] = {
            "documents": n,
            "index_seconds": round(index_s, 2),
            "documents_per_second": round(n / index_s),
            "database_mib": round(db_mib, 1),
            "sqlite_runs": runs,
            "rg_runs": rg_runs,
            "queries": {},
        }
        for label, (word, count) in MARKERS.items():
            res = rt.call("MemorySearch", {"query": word, "limit": 10})
            assert res.ok and len(res.result["results"]) == min(10, count), res.receipt[:500]
            listed = subprocess.run(
                [rg, "-l", "-i", "-F", "-w", word, str(files)], capture_output=True, text=True, check=False
            )
            assert len(listed.stdout.split()) == min(count, n), (label, len(listed.stdout.split()))
            search_ms = median_ms(lambda w=word: rt.call("MemorySearch", {"query": w, "limit": 10}), runs, warmup=2)
            service_ms = median_ms(lambda w=word: rt.memory.search("default", w, limit=10), runs, warmup=2)
            rg_ms = median_ms(
                lambda w=word: subprocess.run(
                    [rg, "-l", "-i", "-F", "-w", w, str(files)], capture_output=True, check=False
                ),
                rg_runs,
                warmup=1,
            )
            out["queries"][label] = {  # type: ignore[index]
                "word": word,
                "matching_documents": min(count, n),
                "memory_search_call_median_ms": round(search_ms, 2),
                "memory_service_search_median_ms": round(service_ms, 2),
                "rg_median_ms": round(rg_ms, 1),
                "rg_over_memory_search": round(rg_ms / search_ms, 1),
            }
    save("memory_search", out)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
