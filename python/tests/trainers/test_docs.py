"""The docs' Python examples run as written, against the real trainers.

A fenced ``python`` block right after the marker ``<!-- example: trainers -->``
in a Markdown file of the repository (the docs' example convention:
internal/docexamples runs every other example, and leaves these to this tier) is
collected here and executed verbatim in a scratch directory that
holds the files it names; ``MODEL`` is the only name the text leaves to the
reader, and it is bound to the tiny model.
"""

from __future__ import annotations

import math
import re

import pyarrow.parquet as pq
import pytest

from conftest import REPO_ROOT

MARKER = "<!-- example: trainers -->"
BLOCK = re.compile(r"^" + re.escape(MARKER) + r"\s*```python\n(.*?)```", re.S | re.M)
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")), REPO_ROOT / "python" / "README.md",
        *sorted((REPO_ROOT / "examples").glob("*/README.md"))]


def examples():
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        markers = sum(line.strip() == MARKER for line in text.splitlines())
        assert markers == len(BLOCK.findall(text)), f"{doc}: a marker not followed by a python block"
        for i, code in enumerate(BLOCK.findall(text)):
            out.append(pytest.param(code, id=f"{doc.relative_to(REPO_ROOT)}#{i + 1}"))
    return out


def test_the_docs_have_runnable_examples():
    # The TRL quickstart of the README and the trainer section of docs/pairs.md.
    assert len(examples()) >= 2


@pytest.mark.parametrize("code", examples())
def test_doc_example_runs_verbatim(code, pairs_split, tiny_model_dir, tmp_path, monkeypatch):
    # The files the examples name, small enough for one step on a CPU, where
    # the docs write them: under out/, the directory git ignores.
    (tmp_path / "out").mkdir()
    train = pq.read_table(pairs_split["train"]).slice(0, 8)
    pq.write_table(train, tmp_path / "out" / "tictoc-pairs-train.parquet")
    pq.write_table(pq.read_table(pairs_split["test"]).slice(0, 8), tmp_path / "out" / "tictoc-pairs-test.parquet")
    monkeypatch.chdir(tmp_path)
    env = {"MODEL": str(tiny_model_dir), "__name__": "__doc_example__"}
    exec(compile(code, "<doc example>", "exec"), env)  # noqa: S102 - our own docs
    trainer = env.get("trainer")
    if trainer is not None:
        assert trainer.state.global_step >= 1, "the example trained"
        final = [h["train_loss"] for h in trainer.state.log_history if "train_loss" in h]
        assert final and math.isfinite(final[-1]), trainer.state.log_history


def test_reward_managers_named_for_verl_091_exist():
    """python/README's VeRL 0.9.1 row names only managers VeRL 0.9.1's reward
    loop registers (it once named `batch`, which 0.9.1 rejects)."""
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls

    text = (REPO_ROOT / "python" / "README.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| VeRL 0.9.1"))
    names = re.findall(r"`([a-z_]+)`", row.split("|")[1])
    assert set(names) >= {"naive", "dapo"}, row
    for name in names:
        assert get_reward_manager_cls(name) is not None, name
    with pytest.raises(Exception, match="batch"):
        get_reward_manager_cls("batch")
