"""The working directory of a tested notebook (notebook-tests spec §2, ``metadata.holon_nb.shared_dir``):
what a private copy holds, when a folder is too large to copy, and the folder lock."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import nbformat
import pytest

from holon_nb.testing import _harness as harness
from holon_nb.testing import _workdir as workdir
from holon_nb.testing._workdir import COPY_PREFIX, FolderTooLarge, folder_lock, private_copy, shared_dir
from holon_nb.testing.check import check_notebook
from holon_nb.testing.normalize import Normalizer, Roots


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "nbs"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "rows.csv").write_text("a,b\n1,2\n")
    (folder / "nb.ipynb").write_text("{}")
    (folder / "nb.executed.ipynb").write_text("{}")
    (folder / "nb.holon" / "cassettes").mkdir(parents=True)
    (folder / "nb.holon" / "cassettes" / "agent-1.jsonl").write_text("{}\n")
    for junk in (".git", ".ipynb_checkpoints", "__pycache__", ".holon", "home"):
        (folder / junk).mkdir()
        (folder / junk / "x").write_text("x")
    (folder / "link").symlink_to(folder / "data")
    return folder


def test_a_private_copy_holds_the_fixtures_and_leaves_out_caches_and_the_holon_home(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    copy = private_copy(folder / "nb.ipynb", holon_home=str(folder / "home"))
    try:
        assert copy.name == "nbs" and copy.parent.name.startswith(COPY_PREFIX)
        names = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*"))
        assert names == [
            "data",
            "data/rows.csv",
            "link",
            "nb.holon",
            "nb.holon/cassettes",
            "nb.holon/cassettes/agent-1.jsonl",
            "nb.ipynb",
        ]
        assert (copy / "link").is_symlink()
        (copy / "data" / "rows.csv").write_text("changed")  # a real copy: the folder is untouched
        assert (folder / "data" / "rows.csv").read_text() == "a,b\n1,2\n"
    finally:
        import shutil

        shutil.rmtree(copy.parent)


def test_the_copy_path_is_masked_as_the_workspace(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    copy = private_copy(folder / "nb.ipynb")
    try:
        norm = Normalizer(Roots.current(workspace=folder))
        assert norm.text(f"wrote {copy}/data/out.csv") == "wrote <WS>/data/out.csv"
        assert norm.text(f"wrote {folder}/data/out.csv") == "wrote <WS>/data/out.csv"
    finally:
        import shutil

        shutil.rmtree(copy.parent)


def test_a_folder_too_large_to_copy_fails_before_any_kernel_and_names_shared_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    for i in range(6):
        (folder / f"f{i}.txt").write_text("x")
    saved_run = nbformat.v4.new_code_cell("print(1)", execution_count=1)  # run once: there is something to compare
    saved_run.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=[saved_run]), folder / "nb.ipynb")
    monkeypatch.setattr(workdir, "MAX_FILES", 3)
    kernels: list[str] = []
    monkeypatch.setattr(harness, "kernel_manager", lambda name: kernels.append(name))
    with pytest.raises(FolderTooLarge, match=r"too large .* metadata.holon_nb.shared_dir: true"):
        check_notebook(folder / "nb.ipynb")
    assert kernels == []  # no kernel was started
    assert not list(Path(workdir.tempfile.gettempdir()).glob(COPY_PREFIX + "*/big"))


def test_shared_dir_reads_the_notebook_metadata() -> None:
    assert shared_dir({"holon_nb": {"shared_dir": True}})
    assert not shared_dir({"holon_nb": {"shared_dir": False}})
    assert not shared_dir({}) and not shared_dir({"holon_nb": "yes"}) and not shared_dir(None)


def _hold(folder: str, log: str, label: str) -> None:
    with folder_lock(Path(folder)):
        with open(log, "a") as f:
            f.write(f"{label} in\n")
        time.sleep(0.3)
        with open(log, "a") as f:
            f.write(f"{label} out\n")


def test_the_folder_lock_keeps_two_processes_apart(tmp_path: Path) -> None:
    log = tmp_path / "log"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hold, args=(str(tmp_path), str(log), name)) for name in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    lines = log.read_text().splitlines()
    assert len(lines) == 4
    assert lines[0].split()[0] == lines[1].split()[0] and lines[2].split()[0] == lines[3].split()[0]
    assert [line.split()[1] for line in lines] == ["in", "out", "in", "out"]


def test_a_file_removed_while_the_folder_is_copied_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # another xdist worker's kernel writes and removes spool files in a holon home inside the folder: a file
    # listed by the copy and gone before it was read is skipped, not a failed run (seen under load in nt09)
    folder = tmp_path / "nbs"
    (folder / "home" / "gw0" / "spool").mkdir(parents=True)
    (folder / "nb.ipynb").write_text("{}")
    spool = folder / "home" / "gw0" / "spool" / "cmd-combined.log"
    spool.write_text("x")
    real_copy2 = workdir.shutil.copy2

    def copy2_after_the_worker_removed_its_spool(src: str, dst: str) -> str:
        if src == str(spool):
            spool.unlink()
        return real_copy2(src, dst)

    monkeypatch.setattr(workdir.shutil, "copy2", copy2_after_the_worker_removed_its_spool)
    copy = private_copy(folder / "nb.ipynb")
    try:
        assert (copy / "nb.ipynb").read_text() == "{}"
        assert not (copy / "home" / "gw0" / "spool" / "cmd-combined.log").exists()
    finally:
        import shutil

        shutil.rmtree(copy.parent)
