"""How `timeaware.ray` puts a sharded run's output in place (its commit step,
no Ray needed): the new parts replace the previous run's, the previous run's
other parts leave, the user's own files stay and the manifest goes in last;
a failure at any step gives every path its previous file back. The whole
runs through a real Ray cluster are in python/tests/trainers/test_ray.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from timeaware import ray as tray


def tree(top: Path) -> dict[str, bytes]:
    """Every file under top, hidden ones included, with its bytes."""
    return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


def previous_run(top: Path) -> Path:
    """A previous split run in 3 parts, with a file of the user's, and a
    staging directory holding a new run in 2 parts, unsplit."""
    out = top / "pairs"
    for side in ("train", "test"):
        (out / side).mkdir(parents=True)
        for i in range(3):
            (out / side / f"part-0000{i}-of-00003.parquet").write_text(f"old {side} {i}")
    (out / "notes.txt").write_text("mine")
    (top / "pairs.manifest.json").write_text('{"run": "old"}\n')
    stage = top / ".pairs.run-x"
    stage.mkdir()
    for i in range(2):
        (stage / f"part-0000{i}-of-00002.parquet").write_text(f"new {i}")
    return stage


PARTS = ["part-00000-of-00002.parquet", "part-00001-of-00002.parquet"]


def test_a_commit_replaces_the_previous_run_and_keeps_the_users_files(tmp_path):
    stage = previous_run(tmp_path)
    tray._commit(stage, tmp_path / "pairs", PARTS, tmp_path / "pairs.manifest.json", '{"run": "new"}\n')
    assert tree(tmp_path) == {
        "pairs/notes.txt": b"mine",
        "pairs/part-00000-of-00002.parquet": b"new 0",
        "pairs/part-00001-of-00002.parquet": b"new 1",
        "pairs.manifest.json": b'{"run": "new"}\n',
    }, "no backup, no temporary file, and no empty train/ or test/ left"


def test_a_commit_into_a_new_directory(tmp_path):
    stage = tmp_path / ".x.run-1"
    (stage / "train").mkdir(parents=True)
    (stage / "train" / "part-00000-of-00001.jsonl").write_text("row\n")
    tray._commit(stage, tmp_path / "x", ["train/part-00000-of-00001.jsonl"], tmp_path / "x.manifest.json", "{}\n")
    assert tree(tmp_path / "x") == {"train/part-00000-of-00001.jsonl": b"row\n"}
    assert json.loads((tmp_path / "x.manifest.json").read_text()) == {}


@pytest.mark.parametrize("fail_at", range(1, 4), ids=["first part", "second part", "manifest"])
def test_a_commit_that_fails_gives_every_path_its_previous_file(tmp_path, monkeypatch, fail_at):
    stage = previous_run(tmp_path)
    before = {k: v for k, v in tree(tmp_path).items() if not k.startswith(".pairs.run-x")}
    real, calls = os.replace, []

    def replace(src, dst):
        # The commit's own renames onto its targets; those of the rollback
        # (from a backup) go through.
        if ".bak-" not in str(src):
            calls.append(dst)
            if len(calls) == fail_at:
                raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(tray.os, "replace", replace)
    with pytest.raises(OSError, match="No space left"):
        tray._commit(stage, tmp_path / "pairs", PARTS, tmp_path / "pairs.manifest.json", '{"run": "new"}\n')
    after = {k: v for k, v in tree(tmp_path).items() if not k.startswith(".pairs.run-x")}
    assert after == before, "the previous parts, the user's file and the manifest, and nothing else"


def test_a_commit_on_a_file_system_without_hard_links_still_rolls_back(tmp_path, monkeypatch):
    stage = previous_run(tmp_path)
    before = {k: v for k, v in tree(tmp_path).items() if not k.startswith(".pairs.run-x")}

    def no_link(src, dst):
        raise OSError(1, "Operation not permitted")

    real = os.replace

    def replace(src, dst):
        if ".pairs.manifest.json.tmp-" in str(src):  # the new manifest, not the rollback's
            raise OSError(5, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(tray.os, "link", no_link)
    monkeypatch.setattr(tray.os, "replace", replace)
    with pytest.raises(OSError, match="Input/output error"):
        tray._commit(stage, tmp_path / "pairs", PARTS, tmp_path / "pairs.manifest.json", "{}\n")
    after = {k: v for k, v in tree(tmp_path).items() if not k.startswith(".pairs.run-x")}
    assert after == before
