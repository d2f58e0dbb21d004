"""Recorded durations, longest-first order and shards of a notebook suite (issue 30; docs/large-suites.md).

- **Durations.** After a run the plugin records how long each notebook item took (setup + call + teardown,
  seconds, by node id) and merges them into what it read: by default into the pytest cache
  (``config.cache``, key :data:`CACHE_KEY`, i.e. ``.pytest_cache/v/holon_nb/durations``): it is per checkout,
  ignored by version control, cleared by ``--cache-clear``, written once by the xdist controller (never by
  the workers, which would race), and a CI job can keep it between runs by caching ``.pytest_cache``. With
  ``--holon-nb-durations FILE`` they are read from FILE instead, and written back to it only with
  ``--holon-nb-store-durations``: a committed file that every CI shard reads alike. FILE has pytest-split's
  ``.test_durations`` format (one JSON object ``{node id: seconds}``), so either tool reads the other's file.
- **Order.** Notebook items run longest first (by their file's recorded duration; see :func:`weights`), so the
  longest notebook never starts last while the other workers sit idle; notebooks that share a folder lock
  (``shared_dir``) are kept apart, so that two workers do not take them at once and one waits. By default only on pytest-xdist
  workers (``--holon-nb-order auto``); a serial run keeps pytest's sorted file order.
- **Shards.** ``--holon-nb-shard K/N`` keeps the K-th of N shards: the notebook files are packed greedily
  into N bins, longest first, each into the bin with the least total so far (ties: the lower bin), so every
  machine that collects the same files with the same durations computes the same split. A notebook's items
  (``--holon-nb-per-cell``) stay in one shard: the notebook runs once per process.

Without recorded durations a file weighs its size in bytes (a notebook's size follows its cell count and
outputs); files missing from a durations file that knows others weigh the mean recorded duration, as
pytest-split estimates them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

__all__ = [
    "CACHE_KEY",
    "Shard",
    "arrange",
    "bins",
    "clean",
    "longest_first",
    "parse_shard",
    "read_durations",
    "weights",
    "write_durations",
]

#: Key of the recorded durations in the pytest cache.
CACHE_KEY = "holon_nb/durations"


class Shard(NamedTuple):
    """The 1-based shard ``k`` of ``n`` shards."""

    k: int
    n: int


def parse_shard(text: str) -> Shard:
    """Parse ``K/N`` (1-based K).

    Raises:
        pytest.UsageError: for anything else (pytest exits with its usage status, 4).
    """
    parts = text.strip().split("/")
    try:
        k, n = (int(p) for p in parts)
    except ValueError:
        raise pytest.UsageError(f"--holon-nb-shard wants K/N (say 2/4), got {text!r}") from None
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--holon-nb-shard {text}: K must be between 1 and N")
    return Shard(k, n)


def read_durations(path: Path) -> dict[str, float]:
    """``{node id: seconds}`` of a durations file (pytest-split's format); ``{}`` when it is missing or not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return clean(data)


def clean(data: object) -> dict[str, float]:
    """The ``{str: non-negative number}`` entries of ``data`` (anything else dropped)."""
    if not isinstance(data, dict):
        return {}
    return {
        str(k): float(v) for k, v in data.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
    }


def write_durations(path: Path, durations: Mapping[str, float]) -> None:
    """Write ``durations`` to ``path`` (sorted keys, one per line, as pytest-split writes), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(sorted(durations.items())), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def weights(
    groups: Mapping[str, Sequence[str]], durations: Mapping[str, float], sizes: Mapping[str, int]
) -> dict[str, float]:
    """The weight of each group (a notebook file: ``{file node id: [its item node ids]}``).

    A group whose items have recorded durations weighs their sum; when any group has one, the others weigh
    the mean of those sums; when none has, each weighs its file's size (``sizes``, bytes; 1 when unknown).
    """
    recorded = {
        g: sum(durations[i] for i in items if i in durations)
        for g, items in groups.items()
        if any(i in durations for i in items)
    }
    if not recorded:
        return {g: float(max(1, sizes.get(g, 1))) for g in groups}
    mean = sum(recorded.values()) / len(recorded)
    return {g: recorded.get(g, mean) for g in groups}


def bins(weight: Mapping[str, float], count: int) -> list[list[str]]:
    """Greedy longest-first packing of the groups into ``count`` bins: each group, heaviest first (ties by
    name), goes to the bin with the least total so far (ties: the lower bin). Deterministic."""
    out: list[list[str]] = [[] for _ in range(count)]
    totals = [0.0] * count
    for group in sorted(weight, key=lambda g: (-weight[g], g)):
        k = min(range(count), key=lambda b: (totals[b], b))
        out[k].append(group)
        totals[k] += weight[group]
    return out


def longest_first(
    weight: Mapping[str, float],
    order: Iterable[str],
    locks: Mapping[str, str | None] | None = None,
    workers: int = 1,
) -> list[str]:
    """The groups of ``order`` sorted by weight, heaviest first (ties keep ``order``).

    ``locks`` names the folder lock a group's notebook holds while it runs (``shared_dir`` notebooks of one
    folder run one at a time: :func:`~holon_nb.testing._workdir.folder_lock`), None for none. With ``workers``
    > 1 a group whose lock one of the ``workers - 1`` groups placed just before it holds is moved back behind
    the heaviest group that is free of them: xdist hands out the next items as workers free up, so neighbours in
    the order run side by side, and two neighbours on one lock would leave a worker waiting on the other.
    When no free group remains the heaviest goes next anyway. Deterministic.
    """
    listed = list(order)
    position = {g: i for i, g in enumerate(listed)}
    ranked = sorted(listed, key=lambda g: (-weight.get(g, 0.0), position[g]))
    if not locks or workers < 2:
        return ranked
    out: list[str] = []
    while ranked:
        recent = {locks.get(g) for g in out[-(workers - 1) :]} - {None}
        pick = next((g for g in ranked if locks.get(g) not in recent), ranked[0])
        ranked.remove(pick)
        out.append(pick)
    return out


def arrange(
    items: Sequence[tuple[str, str]],
    durations: Mapping[str, float],
    sizes: Mapping[str, int],
    shard: Shard | None,
    reorder: bool,
    locks: Mapping[str, str | None] | None = None,
    workers: int = 1,
) -> tuple[list[int], list[int]]:
    """Which notebook items a run keeps, in which order, and which it deselects.

    Args:
        items: ``(item node id, file node id)`` of each notebook item, in collection order.
        durations: Recorded ``{item node id: seconds}``.
        sizes: ``{file node id: bytes}``.
        shard: Keep only this shard's files; None keeps all.
        reorder: Put the kept items longest file first (a file's items stay together, in their order).
        locks: ``{file node id: the folder lock its notebook holds, or None}``; with ``workers`` (the number of
            xdist workers), the order keeps notebooks on one lock apart (:func:`longest_first`).

    Returns:
        ``(kept, deselected)``: indices into ``items``.
    """
    groups: dict[str, list[str]] = {}
    for node, group in items:
        groups.setdefault(group, []).append(node)
    weight = weights(groups, durations, sizes)
    chosen = set(groups)
    if shard is not None:
        chosen = set(bins(weight, shard.n)[shard.k - 1])
    kept = [i for i, (_, g) in enumerate(items) if g in chosen]
    deselected = [i for i, (_, g) in enumerate(items) if g not in chosen]
    if reorder:
        files = list(dict.fromkeys(items[i][1] for i in kept))
        rank = {g: r for r, g in enumerate(longest_first(weight, files, locks, workers))}
        kept.sort(key=lambda i: (rank[items[i][1]], i))
    return kept, deselected
