"""Recorded durations, longest-first order and shards (issue 30; holon_nb.testing._suites._order)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon_nb.testing._suites._order import (
    Shard,
    arrange,
    bins,
    longest_first,
    parse_shard,
    read_durations,
    weights,
    write_durations,
)


def test_parse_shard_takes_k_of_n_and_refuses_the_rest() -> None:
    assert parse_shard("2/4") == Shard(2, 4)
    for bad in ("0/4", "5/4", "2", "a/b", "1/0", "1/2/3"):
        with pytest.raises(pytest.UsageError):
            parse_shard(bad)


def test_bins_pack_longest_first_into_the_lightest_bin() -> None:
    weight = {"a": 10.0, "b": 7.0, "c": 6.0, "d": 4.0, "e": 3.0, "f": 1.0}
    packed = bins(weight, 2)
    assert packed == [["a", "d", "f"], ["b", "c", "e"]]
    assert [sum(weight[g] for g in b) for b in packed] == [15.0, 16.0]
    assert bins(weight, 2) == packed  # deterministic
    assert sorted(g for b in bins(weight, 4) for g in b) == sorted(weight)  # a partition
    assert bins({"a": 1.0}, 3) == [["a"], [], []]


def test_ties_go_by_name_so_every_machine_splits_alike() -> None:
    weight = {f"n{i}.ipynb": 1.0 for i in range(8)}
    assert bins(weight, 4) == [
        ["n0.ipynb", "n4.ipynb"],
        ["n1.ipynb", "n5.ipynb"],
        ["n2.ipynb", "n6.ipynb"],
        ["n3.ipynb", "n7.ipynb"],
    ]


def test_weights_use_durations_then_their_mean_then_file_sizes() -> None:
    groups = {"a.ipynb": ["a.ipynb::notebook"], "b.ipynb": ["b.ipynb::notebook"], "c.ipynb": ["c.ipynb::notebook"]}
    sizes = {"a.ipynb": 100, "b.ipynb": 300, "c.ipynb": 200}
    assert weights(groups, {}, sizes) == {"a.ipynb": 100.0, "b.ipynb": 300.0, "c.ipynb": 200.0}
    recorded = {"a.ipynb::notebook": 4.0, "b.ipynb::notebook": 2.0}
    assert weights(groups, recorded, sizes) == {"a.ipynb": 4.0, "b.ipynb": 2.0, "c.ipynb": 3.0}
    cells = {"a.ipynb": ["a.ipynb::cell_0", "a.ipynb::cell_2"]}  # per-cell items: a file weighs their sum
    assert weights(cells, {"a.ipynb::cell_0": 1.5, "a.ipynb::cell_2": 0.5}, {}) == {"a.ipynb": 2.0}


def test_arrange_keeps_a_files_items_together_and_puts_the_longest_first() -> None:
    items = [
        ("a.ipynb::cell_0", "a.ipynb"),
        ("a.ipynb::cell_1", "a.ipynb"),
        ("b.ipynb::notebook", "b.ipynb"),
        ("c.ipynb::notebook", "c.ipynb"),
    ]
    durations = {"a.ipynb::cell_0": 1.0, "a.ipynb::cell_1": 0.0, "b.ipynb::notebook": 5.0, "c.ipynb::notebook": 3.0}
    kept, dropped = arrange(items, durations, {}, None, reorder=True)
    assert (kept, dropped) == ([2, 3, 0, 1], [])
    assert arrange(items, durations, {}, None, reorder=False) == ([0, 1, 2, 3], [])
    first, second = (arrange(items, durations, {}, Shard(k, 2), reorder=False) for k in (1, 2))
    assert first == ([2], [0, 1, 3]) and second == ([0, 1, 3], [2])


def test_longest_first_keeps_notebooks_on_one_folder_lock_apart() -> None:
    """Three copies of a suite whose ``shared_dir`` notebooks (a, b) lock their copy's folder: on two workers no
    two neighbours in the order share a lock while a free group remains; one worker keeps the plain order."""
    weight = {"1/a": 9.0, "2/a": 9.0, "1/b": 8.0, "2/b": 8.0, "1/c": 7.0, "2/c": 7.0}
    locks = {"1/a": "1", "2/a": "2", "1/b": "1", "2/b": "2", "1/c": None, "2/c": None}
    plain = longest_first(weight, sorted(weight))
    assert plain == ["1/a", "2/a", "1/b", "2/b", "1/c", "2/c"]
    assert longest_first(weight, sorted(weight), locks, workers=1) == plain
    spread = longest_first(weight, sorted(weight), locks, workers=2)
    assert spread == plain  # already apart: a lock never follows itself
    crowded = {"1/a": 9.0, "1/b": 8.0, "2/a": 7.0, "1/c": 6.0}
    assert longest_first(crowded, sorted(crowded), locks, workers=2) == ["1/a", "2/a", "1/b", "1/c"]
    assert longest_first(crowded, sorted(crowded), locks, workers=3) == ["1/a", "2/a", "1/c", "1/b"]
    only_one_folder = {"1/a": 9.0, "1/b": 8.0}
    assert longest_first(only_one_folder, sorted(only_one_folder), locks, workers=2) == ["1/a", "1/b"]
    items = [(f"{g}.ipynb::notebook", f"{g}.ipynb") for g in sorted(crowded)]
    durations = {f"{g}.ipynb::notebook": w for g, w in crowded.items()}
    file_locks = {f"{g}.ipynb": locks[g] for g in crowded}
    kept, _ = arrange(items, durations, {}, None, True, file_locks, 2)
    assert [items[i][1] for i in kept] == ["1/a.ipynb", "2/a.ipynb", "1/b.ipynb", "1/c.ipynb"]


def test_durations_files_are_pytest_splits_format(tmp_path: Path) -> None:
    path = tmp_path / ".test_durations"
    path.write_text(json.dumps({"tests/test_x.py::test_y": 0.25, "nb/a.ipynb::notebook": 3, "bad": "x", "neg": -1}))
    assert read_durations(path) == {"tests/test_x.py::test_y": 0.25, "nb/a.ipynb::notebook": 3.0}
    assert read_durations(tmp_path / "missing") == {}
    (tmp_path / "broken").write_text("{")
    assert read_durations(tmp_path / "broken") == {}
    write_durations(tmp_path / "sub" / "d.json", {"b": 2.0, "a": 1.0})
    text = (tmp_path / "sub" / "d.json").read_text()
    assert json.loads(text) == {"a": 1.0, "b": 2.0} and text.index('"a"') < text.index('"b"')
